package toy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

func l1FastCase(t testing.TB, p, n int, r float64, seed int64) tcase {
	b, err := NewL1BallFast(context.Background(), p, n, r, seed)
	if err != nil {
		t.Fatal(err)
	}
	tc := l1Case(t, 2, 2, r, 1) // the vertices and feasibility of a ball of radius r
	tc.name = fmt.Sprintf("l1ball-fast p=%d n=%d r=%g", p, n, r)
	tc.prob = b
	tc.verts = nil
	for j := 0; j < p; j++ {
		tc.verts = append(tc.verts, b.Vertex(j, false), b.Vertex(j, true))
	}
	tc.batchObjective = lsqObjective(&b.lsq)
	return tc
}

// TestL1BallFastOptimum certifies NewL1BallFast's F* independently of its
// construction: the Frank-Wolfe duality gap at x*, from the gradient
// Aᵀ(Ax* − y)/n computed from the data, bounds F(x*) − F*; it must vanish
// to rounding, and projected gradient descent (a second method, with step
// 1/λ_max(AᵀA/n) from an eigendecomposition) started at 0 must reach F*
// and x* without going below F*.
func TestL1BallFastOptimum(t *testing.T) {
	for _, c := range []struct {
		p, n int
		r    float64
		seed int64
	}{{2, 2, 1, 1}, {10, 10, 0.5, 2}, {30, 200, 2, 3}, {60, 100, 1, 4}, {200, 1000, 5, 5}} {
		t.Run(fmt.Sprintf("p=%d n=%d", c.p, c.n), func(t *testing.T) {
			b, err := NewL1BallFast(context.Background(), c.p, c.n, c.r, c.seed)
			if err != nil {
				t.Fatal(err)
			}
			xs, fs := b.XStar(), b.FStar()
			if f := b.Objective(xs); f != fs {
				t.Fatalf("F(x*) = %v, FStar %v", f, fs)
			}
			n1, nz := 0.0, 0
			for _, v := range xs {
				n1 += math.Abs(v)
				if v != 0 {
					nz++
				}
			}
			if math.Abs(n1-c.r) > 1e-12*c.r || nz != max(1, c.p/5) {
				t.Fatalf("‖x*‖₁ = %v (radius %v), %d nonzeros", n1, c.r, nz)
			}
			g := make([]float64, c.p)
			b.Smooth(xs, g)
			gmax := 0.0
			for _, v := range g {
				gmax = math.Max(gmax, math.Abs(v))
			}
			gap := dot(g, xs) + c.r*gmax // ⟨∇F(x*), x* − s⟩ with s the LMO's vertex
			t.Logf("FW gap at x* %.3g, F* %.6g", gap, fs)
			if math.Abs(gap) > 1e-12*(1+fs) {
				t.Fatalf("FW gap at x* = %v, want 0 to rounding (F* %v)", gap, fs)
			}
			for j, v := range xs {
				if v == 0 && math.Abs(g[j]) >= gmax*(1-1e-3) {
					t.Fatalf("no strict complementarity at %d: |g| %v, max %v", j, g[j], gmax)
				}
			}
			if c.p <= 60 {
				projectedGradient(t, b, xs, fs, c.r)
			}
		})
	}
}

// projectedGradient runs projected gradient descent from 0 and checks it
// converges to F* and x* from above.
func projectedGradient(t *testing.T, b *L1Ball, xs []float64, fs, r float64) {
	t.Helper()
	p := b.Dim()
	A := mat.NewDense(b.n, p, b.rows)
	var G mat.SymDense
	G.SymOuterK(1/float64(b.n), A.T())
	var es mat.EigenSym
	if !es.Factorize(&G, false) {
		t.Fatal("eigendecomposition failed")
	}
	vals := es.Values(nil)
	lmax, lmin := vals[len(vals)-1], vals[0]
	if !(lmin > 0) {
		t.Fatalf("AᵀA/n is singular (λ_min %v): the optimum is not unique", lmin)
	}
	x, g := make([]float64, p), make([]float64, p)
	iters := int(50*lmax/lmin) + 1000
	for it := 0; it < iters; it++ {
		f := b.Smooth(x, g)
		if f < fs-1e-12*(1+fs) {
			t.Fatalf("iteration %d: F = %v below F* = %v", it, f, fs)
		}
		axpy(x, -1/lmax, g)
		ProjectL1Ball(x, x, r)
	}
	f := b.Objective(x)
	d := 0.0
	for j := range x {
		d = math.Max(d, math.Abs(x[j]-xs[j]))
	}
	t.Logf("projected gradient, %d iterations: F − F* = %.3g, max |x − x*| = %.3g", iters, f-fs, d)
	if f-fs > 1e-10*(1+fs) || d > 1e-6*r {
		t.Fatalf("projected gradient ends at F − F* = %v, |x − x*| = %v", f-fs, d)
	}
}

// TestL1BallFastLipschitz compares the estimate made on first use with
// λ_max(AᵀA)/n from an eigendecomposition: not below it, at most the 1%
// margin above.
func TestL1BallFastLipschitz(t *testing.T) {
	for _, c := range [][2]int{{5, 5}, {40, 40}, {50, 400}} {
		b, err := NewL1BallFast(context.Background(), c[0], c[1], 1, 7)
		if err != nil {
			t.Fatal(err)
		}
		A := mat.NewDense(b.n, b.p, b.rows)
		var G mat.SymDense
		G.SymOuterK(1/float64(b.n), A.T())
		var es mat.EigenSym
		if !es.Factorize(&G, false) {
			t.Fatal("eigendecomposition failed")
		}
		vals := es.Values(nil)
		want := vals[len(vals)-1]
		L := b.LipschitzBound()
		if L != b.SmoothLipschitz() || L != b.LipschitzBound() {
			t.Fatalf("LipschitzBound %v, again %v, SmoothLipschitz %v", L, b.LipschitzBound(), b.SmoothLipschitz())
		}
		if L < want*(1-1e-9) || L > want*1.0101 {
			t.Fatalf("p=%d n=%d: estimate %v, λ_max/n %v", c[0], c[1], L, want)
		}
	}
}

// TestL1BallFastSolvers: afw and the model's incremental state on a fast
// instance reach its F*.
func TestL1BallFastSolvers(t *testing.T) {
	tc := l1FastCase(t, 100, 400, 1, 9)
	fs := tc.prob.(*L1Ball).FStar()
	m, err := solver.New(tc.prob, solver.Config{Algorithm: "afw", Step: "curvature", Limits: solver.Limits{MaxIters: 5000, EvalEvery: 1}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	hit := -1
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := m.Run(ctx, solver.RecorderFunc(func(r solver.Record) {
		if r.Objective != nil && hit < 0 && *r.Objective-fs <= 1e-9*fs {
			hit = r.K
			cancel()
		}
		if r.Objective != nil && *r.Objective < fs-1e-12*fs {
			t.Errorf("iteration %d: F = %v below F* = %v", r.K, *r.Objective, fs)
		}
	})); err != nil {
		t.Fatal(err)
	}
	if hit < 0 {
		t.Fatal("afw did not reach F* to 1e-9 in 5000 iterations")
	}
}

func TestL1BallFastBadInput(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name        string
		p, n        int
		r           float64
		field, rule string
	}{
		{"p small", 1, 10, 1, "p", "between 2"},
		{"p huge", MaxFastEntries + 1, MaxFastEntries + 1, 1, "p", "between 2"},
		{"samples < p", 30, 20, 1, "samples", "between p = 30"},
		{"too many entries", 10001, 10001, 1, "samples", "at most"},
		{"radius", 5, 10, 0, "radius", "> 0"},
		{"radius inf", 5, 10, math.Inf(1), "radius", "> 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewL1BallFast(ctx, c.p, c.n, c.r, 1)
			var fe *spec.FieldError
			if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(fe.Msg, c.rule) {
				t.Fatalf("got %v, want field %q with %q", err, c.field, c.rule)
			}
		})
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := NewL1BallFast(cctx, 30, 200, 1, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
}
