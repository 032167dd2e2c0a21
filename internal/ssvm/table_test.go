package ssvm

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestFigure2Table measures the duality gaps of docs/ssvm.md: bcfw and
// bcfw-as on OCR for 20 passes at λ = 0.05, 0.01, 0.001, evaluated after
// every pass. It takes minutes, so it runs only when FWLAB_FIG2_TABLE=1
// (FWLAB_FIG2_OUT=FILE also writes the JSON series):
//
//	FWLAB_FIG2_TABLE=1 go test ./internal/ssvm -run TestFigure2Table -v -timeout 1h
func TestFigure2Table(t *testing.T) {
	if os.Getenv("FWLAB_FIG2_TABLE") != "1" {
		t.Skip("set FWLAB_FIG2_TABLE=1 to measure the Figure 2 table (minutes)")
	}
	if _, err := ResolveOCR(""); err != nil {
		t.Skipf("OCR data absent: %v", err)
	}
	fig, err := Figure2(context.Background(), Figure2Options{Passes: 20, EvalPerPass: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if out := os.Getenv("FWLAB_FIG2_OUT"); out != "" {
		b, _ := json.MarshalIndent(fig, "", " ")
		if err := os.WriteFile(out, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var sb strings.Builder
	sb.WriteString("| λ | algorithm | gap w̄ @5 | @10 | @20 | gap w @5 | @10 | @20 | rel. gap w̄ @20 | test err w̄ @20 | seconds |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range fig.Series {
		at := func(v []float64, pass float64) string {
			for j, p := range s.Passes {
				if p == pass {
					return fmt.Sprintf("%.4g", v[j])
				}
			}
			return "–"
		}
		fmt.Fprintf(&sb, "| %g | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.0f |\n", s.Lambda, s.Algo,
			at(s.Gap, 5), at(s.Gap, 10), at(s.Gap, 20), at(s.GapPlain, 5), at(s.GapPlain, 10), at(s.GapPlain, 20),
			at(s.RelGap, 20), at(s.TestErr, 20), s.Seconds)
	}
	t.Log("\n" + sb.String())
}
