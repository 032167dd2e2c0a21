package gflasso

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
	"gonum.org/v1/gonum/mat"
)

func TestSPGReachesReferenceOptimum(t *testing.T) {
	if testing.Short() {
		t.Skip("long run")
	}
	r := loadRef(t)
	p := refProblem(t, r, Options{})
	s, err := NewSPG(p, SPGConfig{Mu: 1e-5, Limits: solver.Limits{MaxIters: 80000, EvalEvery: 4000}})
	if err != nil {
		t.Fatal(err)
	}
	var recs []solver.Record
	res, err := s.Run(context.Background(), solver.RecorderFunc(func(rec solver.Record) { recs = append(recs, rec) }))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 80001 || res.Summary.Status != solver.StatusMaxIters || res.Summary.Iters != 80000 {
		t.Fatalf("%d records, summary %+v", len(recs), res.Summary)
	}
	fs := r.FStar.FStar
	rel := (res.Summary.Objective - fs) / fs
	t.Logf("SPG μ=1e-5: F − F* = %.3g relative after %d iterations (%.1f s), L = %.3g", rel, res.Summary.Iters, res.Summary.Time, s.Lipschitz())
	if rel > 1e-5 || rel < -1e-12 {
		t.Errorf("relative error %v, want within [0, 1e-5]", rel)
	}
	if got := p.Objective(res.X); got != res.Summary.Objective {
		t.Errorf("Objective(result X) = %v, summary %v", got, res.Summary.Objective)
	}
	// The FW gap certificate bounds the lifted point's P1 error from above.
	if res.Summary.Gap < res.Summary.Objective-fs-1e-9*fs {
		t.Errorf("gap %v below F − F* = %v", res.Summary.Gap, res.Summary.Objective-fs)
	}
}

func TestSPGRecordsAndLimits(t *testing.T) {
	X, Y := mixedData(1, 40, 7)
	p, err := New(X, Y, Options{Lambda: 1.5, Gamma: 2, Threshold: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	// μ from ε: μ = ε/(2D), D = ½|E|J.
	s, err := NewSPG(p, SPGConfig{Eps: 0.7, Limits: solver.Limits{MaxIters: 10}})
	if err != nil {
		t.Fatal(err)
	}
	D := 0.5 * float64(len(p.Graph().Edges)) * float64(p.J)
	if want := 0.7 / (2 * D); math.Abs(s.Mu()-want) > 1e-15 {
		t.Errorf("μ = %v, want %v", s.Mu(), want)
	}
	deg := make([]float64, p.K)
	for _, e := range p.Graph().Edges {
		deg[e.M] += e.W * e.W
		deg[e.L] += e.W * e.W
	}
	dm := 0.0
	for _, d := range deg {
		dm = math.Max(dm, d)
	}
	if want := p.LipschitzBound() + 4*2*dm/s.Mu(); math.Abs(s.Lipschitz()-want) > 1e-9*want {
		t.Errorf("L = %v, want %v", s.Lipschitz(), want)
	}
	tests := []struct {
		name   string
		lim    solver.Limits
		cancel bool
		status string
		iters  int
		evals  int
	}{
		{"iters", solver.Limits{MaxIters: 25, EvalEvery: 10}, false, solver.StatusMaxIters, 25, 5},                 // 0, 1, 10, 20, 25
		{"passes", solver.Limits{MaxIters: 100, MaxPasses: 7, EvalEvery: 3}, false, solver.StatusMaxPasses, 7, 5},  // 0, 1, 3, 6, 7
		{"gap", solver.Limits{MaxIters: 100000, GapTol: 1e300, EvalEvery: 5}, false, solver.StatusConverged, 0, 1}, // the start already qualifies
		{"cancel", solver.Limits{MaxIters: 100, EvalEvery: 50}, true, solver.StatusCancelled, 1, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewSPG(p, SPGConfig{Mu: 1e-3, Limits: tc.lim})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				cancel()
			}
			var recs []solver.Record
			res, err := s.Run(ctx, solver.RecorderFunc(func(r solver.Record) { recs = append(recs, r) }))
			if err != nil {
				t.Fatal(err)
			}
			if res.Summary.Status != tc.status || res.Summary.Iters != tc.iters || len(recs) != tc.iters+1 {
				t.Fatalf("summary %+v with %d records", res.Summary, len(recs))
			}
			evals := 0
			for i, r := range recs {
				step := solver.StepProx
				if i == 0 {
					step = solver.StepNone
				}
				if r.K != i || r.Passes != float64(i) || r.Step != step {
					t.Fatalf("record %d: %+v", i, r)
				}
				if r.Evaluated() {
					evals++
				}
			}
			if evals != tc.evals || !recs[0].Evaluated() || !recs[len(recs)-1].Evaluated() {
				t.Fatalf("%d evaluated records, want %d (first and last included)", evals, tc.evals)
			}
		})
	}
}

func TestSPGWithoutEdgesIsFISTAOnLasso(t *testing.T) {
	// γ = 0: SPG is plain FISTA on K independent lassos, and it must agree
	// with the per-task coordinate descent.
	X, Y := mixedData(5, 60, 8)
	p, err := New(X, Y, Options{Lambda: 3, Gamma: 0, Threshold: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSPG(p, SPGConfig{Mu: 1, Limits: solver.Limits{MaxIters: 3000, EvalEvery: 3000}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(context.Background(), solver.RecorderFunc(func(solver.Record) {}))
	if err != nil {
		t.Fatal(err)
	}
	want := 0.0
	for c := 0; c < p.K; c++ {
		_, f := lassoCD(X, Y, c, 3)
		want += f
	}
	if math.Abs(res.Summary.Objective-want) > 1e-9*want {
		t.Errorf("SPG with γ = 0: %v, per-task lasso: %v", res.Summary.Objective, want)
	}
}

// SPG's loss gradient XᵀX W − XᵀY (J ≤ N, with the Gram matrix) and
// Xᵀ(XW − Y) (J > N, without it) both equal a direct product.
func TestSPGLossGradientBothForms(t *testing.T) {
	for _, shape := range [][2]int{{40, 12}, {15, 60}} {
		n, j := shape[0], shape[1]
		X, Y := mixedData(4, n, j)
		p, err := New(X, Y, Options{Lambda: 1, Gamma: 0, Threshold: 0.5})
		if err != nil {
			t.Fatal(err)
		}
		s, err := NewSPG(p, SPGConfig{Limits: solver.Limits{MaxIters: 1}})
		if err != nil {
			t.Fatal(err)
		}
		if (s.xtx == nil) != (j > n) {
			t.Fatalf("%d×%d: Gram matrix kept %v", n, j, s.xtx != nil)
		}
		_, k := Y.Dims()
		rng := rand.New(rand.NewPCG(2, 3))
		W := make([]float64, j*k)
		for i := range W {
			W[i] = rng.NormFloat64()
		}
		g := make([]float64, j*k)
		s.smoothGrad(W, g)
		var r, want mat.Dense
		r.Mul(X, mat.NewDense(j, k, W))
		r.Sub(&r, Y)
		want.Mul(X.T(), &r)
		for a := 0; a < j; a++ {
			for c := 0; c < k; c++ {
				if d := math.Abs(g[a*k+c] - want.At(a, c)); d > 1e-10*(1+math.Abs(want.At(a, c))) {
					t.Fatalf("%d×%d: gradient (%d,%d) = %v, direct %v", n, j, a, c, g[a*k+c], want.At(a, c))
				}
			}
		}
	}
}
