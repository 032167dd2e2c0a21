package methods_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/fw"
	"github.com/fwlab/fwlab/fw/methods"
)

// lsProx is the least squares problem's proximal view: S = F, R the
// indicator of the product of simplices (its prox the Euclidean
// projection), y = x.
type lsProx struct{ p *leastSquares }

func (v lsProx) ProxDim() int { return v.p.Dim() }

func (v lsProx) ProxStart() []float64 {
	y := make([]float64, v.p.Dim())
	for b := 0; b < v.p.q; b++ {
		y[b*v.p.s] = 1
	}
	return y
}

func (v lsProx) Smooth(y, grad []float64) float64 {
	copy(grad, gradient(v.p, y))
	return v.p.Objective(y)
}

// Prox projects every block of x onto the simplex (sort and threshold).
func (v lsProx) Prox(dst, x []float64, step float64) {
	s := v.p.s
	for b := 0; b < v.p.q; b++ {
		xb := x[b*s : (b+1)*s]
		u := slices.Clone(xb)
		slices.Sort(u)
		slices.Reverse(u)
		sum, theta := 0.0, 0.0
		for i, ui := range u {
			sum += ui
			if t := (sum - 1) / float64(i+1); ui-t > 0 {
				theta = t
			}
		}
		for i, xi := range xb {
			dst[b*s+i] = math.Max(xi-theta, 0)
		}
	}
}

// SmoothLipschitz is ‖A‖_F²/n ≥ λ_max(AᵀA)/n, a valid bound.
func (v lsProx) SmoothLipschitz() float64 {
	f := 0.0
	for _, row := range v.p.a {
		f += dot(row, row)
	}
	return f / float64(len(v.p.a))
}

func (v lsProx) Lift(x, y []float64) { copy(x, y) }

// TestProxBaselinesOnAUsersProblem: fista and pgd, with the problem's L and
// with backtracking, reach the optimum afw certifies (a second method), and
// report the gap enumerated over the vertices at their last iterate.
func TestProxBaselinesOnAUsersProblem(t *testing.T) {
	for _, q := range []int{1, 3} {
		p, _ := newLeastSquares(60, q, 10)
		ref, err := methods.Run(context.Background(), p, methods.Options{Algorithm: "afw", GapTol: 1e-13, MaxIters: 20000}, nil)
		if err != nil || !(ref.Summary.Gap <= 1e-13) {
			t.Fatalf("afw: %v, %+v", err, ref.Summary)
		}
		fstar := p.Objective(ref.X)
		for _, opt := range []methods.Options{
			{Algorithm: "fista", MaxIters: 4000, GapTol: 1e-10},
			{Algorithm: "fista", Step: "backtrack", MaxIters: 4000, GapTol: 1e-10},
			{Algorithm: "pgd", MaxIters: 20000, GapTol: 1e-10},
		} {
			res, err := methods.RunProx(context.Background(), lsProx{p}, p, opt, nil)
			if err != nil {
				t.Fatal(err)
			}
			name := opt.Algorithm + "/" + opt.Step
			if gap := bruteGap(p, res.X); math.Abs(gap-res.Summary.Gap) > 1e-6*gap+1e-16 {
				t.Errorf("%s q=%d: reported gap %v, enumerated %v", name, q, res.Summary.Gap, gap)
			}
			if res.Summary.Status != fw.StatusConverged {
				t.Errorf("%s q=%d: %s after %d iterations, gap %v", name, q, res.Summary.Status, res.Summary.Iters, res.Summary.Gap)
			}
			if d := p.Objective(res.X) - fstar; math.Abs(d) > 1e-10 {
				t.Errorf("%s q=%d: F − F*(afw) = %v", name, q, d)
			}
		}
	}
}

// TestRunProxRejectsBadInput: the options a proximal method does not take
// and a malformed lift are refused by name.
func TestRunProxRejectsBadInput(t *testing.T) {
	p, _ := newLeastSquares(20, 1, 5)
	for _, c := range []struct {
		opt  methods.Options
		lift fw.Problem
		want string
	}{
		{methods.Options{Algorithm: "afw"}, p, "Algorithm: must be one of [fista pgd]"},
		{methods.Options{Algorithm: "fista", Schedule: "paper"}, p, "Schedule: fista uses full gradients"},
		{methods.Options{Algorithm: "pgd", R: 2}, p, "R, Workers, Caratheodory: pgd takes none of them"},
		{methods.Options{Algorithm: "pgd", Step: "open-loop"}, p, "Step: pgd takes paper (1/L), curvature (the same) or backtrack"},
		{methods.Options{Algorithm: "fista", L: -1}, p, "L: must be a positive number"},
		{methods.Options{Algorithm: "fista"}, brokenBlocks{p}, "problem: Blocks cover [0, 3), but Dim is 5"},
	} {
		_, err := methods.RunProx(context.Background(), lsProx{p}, c.lift, c.opt, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want an error containing %q", c.opt, err, c.want)
		}
	}
}
