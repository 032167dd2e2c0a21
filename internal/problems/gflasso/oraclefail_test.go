package gflasso

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
	"gonum.org/v1/gonum/mat"
)

// A linear program that fails during a gap evaluation fails the evaluation,
// and the run, with its message (a skipped row would make the gap no
// certificate); during a step it only leaves its row out.
func TestOracleFailureFailsTheGap(t *testing.T) {
	X, Y := mixedData(1, 40, 7)
	p, err := New(X, Y, Options{Lambda: 1, Gamma: 3, Threshold: 0.5, EnumMax: 1, ForceLP: true})
	if err != nil {
		t.Fatal(err)
	}
	if kinds := p.OracleKinds(); kinds[0] != "lp" {
		t.Fatalf("oracles %v, want an LP for the first component", kinds)
	}
	saved := simplex
	t.Cleanup(func() { simplex = saved })
	simplex = func(c []float64, A mat.Matrix, b []float64, tol float64, initialBasic []int) (float64, []float64, error) {
		return 0, nil, errors.New("singular basis (planted)")
	}
	want := "singular basis (planted)"

	// The problem's own gap.
	x := make([]float64, p.Dim())
	if _, err := p.Gap(x); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "block 0") {
		t.Fatalf("Gap: error %v, want the LP's message naming the block", err)
	}
	// The unchecked oracle falls back to a feasible vertex.
	g := make([]float64, p.Blocks()[0].Size)
	for i := range g {
		g[i] = -5
	}
	if v := p.LMO(0, g); v.Key != "0" {
		t.Fatalf("LMO with every LP failing: %s, want the zero vertex", v.Key)
	}
	// The Frank-Wolfe methods and SPG fail their first evaluation.
	for _, algo := range []string{"bc-ssfw-as", "bcfw", "spg"} {
		var m solver.Method
		lim := solver.Limits{MaxIters: 20, EvalEvery: 1}
		if algo == "spg" {
			m, err = NewSPG(p, SPGConfig{Mu: 1e-3, Limits: lim})
		} else {
			m, err = solver.New(p, fwConfig(algo, lim, 1))
		}
		if err != nil {
			t.Fatal(err)
		}
		res, err := m.Run(context.Background(), solver.RecorderFunc(func(r solver.Record) {
			if r.Gap != nil {
				t.Errorf("%s: a gap %v was recorded at k=%d", algo, *r.Gap, r.K)
			}
		}))
		if err != nil {
			t.Fatal(err)
		}
		if res.Summary.Status != solver.StatusFailed || !strings.Contains(res.Summary.Message, want) {
			t.Errorf("%s: status %s, message %q; want failed with the LP's message", algo, res.Summary.Status, res.Summary.Message)
		}
	}
	// A failure later in the run: the evaluations before it stand.
	calls := 0
	simplex = func(c []float64, A mat.Matrix, b []float64, tol float64, initialBasic []int) (float64, []float64, error) {
		if calls++; calls > 400 {
			return 0, nil, errors.New("singular basis (planted)")
		}
		return saved(c, A, b, tol, initialBasic)
	}
	m, err := solver.New(p, fwConfig("bc-ssfw-as", solver.Limits{MaxIters: 500, EvalEvery: 1}, 1))
	if err != nil {
		t.Fatal(err)
	}
	gaps, last := 0, -1
	res, err := m.Run(context.Background(), solver.RecorderFunc(func(r solver.Record) {
		last = r.K
		if r.Gap != nil {
			gaps++
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.Status != solver.StatusFailed || !strings.Contains(res.Summary.Message, want) || gaps < 2 || res.Summary.Iters != last {
		t.Errorf("late failure: %d gaps recorded, last record k=%d, summary %+v", gaps, last, res.Summary)
	}
}
