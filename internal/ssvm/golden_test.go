package ssvm

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
)

var update = flag.Bool("update", false, "rewrite the golden traces in testdata/")

// goldenRec is the part of a record pinned by the golden traces.
type goldenRec struct {
	K      int      `json:"k"`
	Step   string   `json:"step"`
	Gamma  float64  `json:"gamma"`
	Batch  int      `json:"batch"`
	Active int      `json:"active"`
	Obj    *float64 `json:"objective,omitempty"`
	Gap    *float64 `json:"gap,omitempty"`
}

// TestGoldenTraces pins the first records of each algorithm on a small
// synthetic instance, so that a change in the numbers is a visible decision
// (go test ./internal/ssvm -run Golden -update rewrites them).
func TestGoldenTraces(t *testing.T) {
	p := smallChain(t, 25, 5, 0.05)
	got := map[string][]goldenRec{}
	for _, algo := range []string{AlgoBCFWAS, AlgoBCFW, AlgoSSG} {
		m, err := p.NewMethod(Options{Algo: algo, Average: true,
			Schedule: solver.Schedule{Kind: "geometric", M0: 5, Growth: 1.5},
			Limits:   solver.Limits{MaxIters: 40, EvalEvery: 10}, Seed: 9})
		if err != nil {
			t.Fatal(err)
		}
		recs, _ := recordAll(t, m)
		for _, r := range recs {
			got[algo] = append(got[algo], goldenRec{r.K, r.Step, r.Gamma, r.Batch, r.Active, r.Objective, r.Gap})
		}
	}
	path := filepath.Join("testdata", "golden_chain.json")
	if *update {
		b, _ := json.MarshalIndent(got, "", " ")
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	var want map[string][]goldenRec
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	for algo, w := range want {
		g := got[algo]
		if len(g) != len(w) {
			t.Fatalf("%s: %d records, golden %d", algo, len(g), len(w))
		}
		for k := range w {
			if !reflect.DeepEqual(g[k], w[k]) {
				t.Fatalf("%s: record %d differs from the golden trace:\n got  %+v\n want %+v", algo, k, g[k], w[k])
			}
		}
	}
}
