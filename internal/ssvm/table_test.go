package ssvm

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestFigure2Table measures the duality gaps of docs/ssvm.md: bcfw and
// bcfw-as on OCR for 20 passes (FWLAB_FIG2_PASSES to change) at λ = 0.05,
// 0.01, 0.001, evaluated after every 5th pass. It takes minutes, so it runs
// only when FWLAB_FIG2_TABLE=1 (FWLAB_FIG2_OUT=FILE also writes the JSON
// series; FWLAB_FIG2_SEED and FWLAB_FIG2_LAMBDAS=0.05,0.01 change the seed
// and the λ values):
//
//	FWLAB_FIG2_TABLE=1 go test ./internal/ssvm -run TestFigure2Table -v -timeout 1h
func TestFigure2Table(t *testing.T) {
	if os.Getenv("FWLAB_FIG2_TABLE") != "1" {
		t.Skip("set FWLAB_FIG2_TABLE=1 to measure the Figure 2 table (minutes)")
	}
	if _, err := ResolveOCR(""); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set, so this is a failure: OCR data absent: %v", err)
		}
		t.Skipf("OCR data absent: %v", err)
	}
	passes := 20
	if v := os.Getenv("FWLAB_FIG2_PASSES"); v != "" {
		var err error
		if passes, err = strconv.Atoi(v); err != nil || passes < 5 || passes%5 != 0 {
			t.Fatalf("FWLAB_FIG2_PASSES: want a multiple of 5, got %q", v)
		}
	}
	seed := int64(1)
	if v := os.Getenv("FWLAB_FIG2_SEED"); v != "" {
		var err error
		if seed, err = strconv.ParseInt(v, 10, 64); err != nil || seed < 0 {
			t.Fatalf("FWLAB_FIG2_SEED: want a non-negative integer, got %q", v)
		}
	}
	var lambdas []float64
	if v := os.Getenv("FWLAB_FIG2_LAMBDAS"); v != "" {
		for _, f := range strings.Split(v, ",") {
			l, err := strconv.ParseFloat(f, 64)
			if err != nil || !(l > 0) {
				t.Fatalf("FWLAB_FIG2_LAMBDAS: want positive numbers separated by commas, got %q", v)
			}
			lambdas = append(lambdas, l)
		}
	}
	c, _ := LoadOCR("")
	tr, _, _ := c.Split("train")
	n := len(tr.Words)
	fig, err := Figure2(context.Background(), Figure2Options{Lambdas: lambdas, Passes: float64(passes), EvalEvery: 5 * n, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	if out := os.Getenv("FWLAB_FIG2_OUT"); out != "" {
		b, _ := json.MarshalIndent(fig, "", " ")
		if err := os.WriteFile(out, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	marks := []float64{5, 10, 20}
	for p := 40; p <= passes; p += 20 {
		marks = append(marks, float64(p))
	}
	final := float64(passes)
	var sb strings.Builder
	sb.WriteString("| λ | algorithm |")
	for _, what := range []string{"gap w̄", "gap w"} {
		for _, p := range marks {
			fmt.Fprintf(&sb, " %s @%g |", what, p)
		}
	}
	fmt.Fprintf(&sb, " rel. gap w̄ @%g | test err w̄ @%g | seconds |\n|---|---|", final, final)
	sb.WriteString(strings.Repeat("---|", 2*len(marks)+3) + "\n")
	for _, s := range fig.Series {
		at := func(v []float64, pass float64) string {
			for j, p := range s.Passes {
				if p == pass {
					return fmt.Sprintf("%.4g", v[j])
				}
			}
			return "–"
		}
		fmt.Fprintf(&sb, "| %g | %s |", s.Lambda, s.Algo)
		for _, v := range [][]float64{s.Gap, s.GapPlain} {
			for _, p := range marks {
				fmt.Fprintf(&sb, " %s |", at(v, p))
			}
		}
		fmt.Fprintf(&sb, " %s | %s | %.0f |\n", at(s.RelGap, final), at(s.TestErr, final), s.Seconds)
	}
	t.Log("\n" + sb.String())
}
