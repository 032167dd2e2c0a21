package solver_test

import (
	"context"
	"math"
	"testing"

	"github.com/fwlab/fwlab/internal/problems/glm"
	"github.com/fwlab/fwlab/internal/problems/svmdual"
	"github.com/fwlab/fwlab/internal/problems/toy"
	"github.com/fwlab/fwlab/internal/solver"
)

// cdCase is a problem coordinate descent supports, with its P1 lift.
type cdCase struct {
	name string
	pp   solver.CoordProblem
	lift solver.Problem
}

func glmCase(t testing.TB, name string, loss glm.Loss, n, p, k int, frac float64, seed int64) cdCase {
	t.Helper()
	s, err := glm.Generate(loss, n, p, k, 1, seed)
	if err != nil {
		t.Fatal(err)
	}
	probe, err := glm.New(glm.Config{Loss: loss, X: s.X, Y: s.Y, Lambda: 1})
	if err != nil {
		t.Fatal(err)
	}
	pr, err := probe.WithLambda(frac*probe.LambdaMax(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return cdCase{name, pr, pr}
}

func cdCases(t testing.TB) []cdCase {
	cs := []cdCase{
		glmCase(t, "lasso", glm.Squared, 200, 50, 5, 0.1, 1),
		glmCase(t, "lasso-wide", glm.Squared, 100, 300, 8, 0.05, 2),
		glmCase(t, "logistic", glm.Logistic, 300, 40, 5, 0.3, 3),
		glmCase(t, "poisson", glm.Poisson, 300, 30, 5, 0.25, 4),
		// small penalties: the last coordinate steps' decreases are below
		// what the objective's rounding can tell
		glmCase(t, "logistic-small-lambda", glm.Logistic, 400, 100, 10, 0.02, 5),
		glmCase(t, "poisson-small-lambda", glm.Poisson, 400, 60, 8, 0.02, 6),
	}
	z, y, err := svmdual.Generate(200, 20, 3, 5)
	if err != nil {
		t.Fatal(err)
	}
	sv, err := svmdual.New(z, y, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	cs = append(cs, cdCase{"svm-dual", sv, sv})
	b, err := toy.NewBox(context.Background(), 60, 200, -1, 1, 6)
	if err != nil {
		t.Fatal(err)
	}
	cs = append(cs, cdCase{"box", b, b})
	return cs
}

func runCD(t testing.TB, c cdCase, algo string, iters int, gapTol float64) (solver.Result, []solver.Record) {
	t.Helper()
	return runCDConfig(t, c, solver.Config{Algorithm: algo, Limits: solver.Limits{MaxIters: iters, GapTol: gapTol}})
}

// runCDConfig runs cfg's algorithm (cd, or a proximal baseline) on c and
// returns its result and records.
func runCDConfig(t testing.TB, c cdCase, cfg solver.Config) (solver.Result, []solver.Record) {
	t.Helper()
	algo := cfg.Algorithm
	var m solver.Method
	var err error
	if algo == "cd" {
		m, err = solver.NewCD(c.pp, c.lift, cfg)
	} else {
		m, err = solver.NewProx(c.pp, c.lift, cfg)
	}
	if err != nil {
		t.Fatal(err)
	}
	var recs []solver.Record
	res, err := m.Run(context.Background(), solver.RecorderFunc(func(r solver.Record) { recs = append(recs, r) }))
	if err != nil {
		t.Fatal(err)
	}
	return res, recs
}

// TestCDMatchesFISTA: coordinate descent reaches the optimum FISTA reaches,
// to 1e-9 relative, on every problem it supports, and ends with a duality
// gap certificate (the FW gap of the lifted iterate, as for every method)
// of at most 1e-9·|F|.
func TestCDMatchesFISTA(t *testing.T) {
	for _, c := range cdCases(t) {
		t.Run(c.name, func(t *testing.T) {
			res, recs := runCD(t, c, "cd", 100000, 0)
			fres, _ := runCD(t, c, "fista", 200000, 1e-11*math.Abs(res.Summary.Objective))
			F, Ff := res.Summary.Objective, fres.Summary.Objective
			t.Logf("cd: %s %q F=%.15g gap=%.3g iters=%d passes=%.3g; fista: %s F=%.15g gap=%.3g iters=%d", res.Summary.Status, res.Summary.Message, F, res.Summary.Gap, res.Summary.Iters, res.Summary.Passes, fres.Summary.Status, Ff, fres.Summary.Gap, fres.Summary.Iters)
			if res.Summary.Status != solver.StatusConverged {
				t.Errorf("cd ended %s: %s", res.Summary.Status, res.Summary.Message)
			}
			if d := math.Abs(F-Ff) / math.Abs(Ff); !(d <= 1e-9) {
				t.Errorf("cd's optimum %.15g differs from fista's %.15g by %.3g relative", F, Ff, d)
			}
			if g := res.Summary.Gap; !(g <= 1e-9*math.Abs(F)) {
				t.Errorf("cd's final gap %.3g exceeds 1e-9·|F| = %.3g", g, 1e-9*math.Abs(F))
			}
			last := recs[len(recs)-1]
			if !last.Evaluated() || *last.Objective != F || *last.Gap != res.Summary.Gap {
				t.Errorf("the last record is not the summary's evaluation: %+v", last)
			}
		})
	}
}

// TestCDCovarianceUpdates: on tall problems with the squared loss, whose
// working sets are small next to the samples, coordinate descent keeps
// m_jᵀz by covariance updates instead of updating the residual. The two
// take the same coordinate steps in exact arithmetic: they reach the same
// point (to rounding), both certified by the gap, and the covariance
// updates' run counts less work.
func TestCDCovarianceUpdates(t *testing.T) {
	box, err := toy.NewBox(context.Background(), 40, 2000, -0.2, 0.2, 8)
	if err != nil {
		t.Fatal(err)
	}
	cases := []cdCase{
		glmCase(t, "lasso-tall", glm.Squared, 4000, 60, 6, 0.1, 11),
		glmCase(t, "lasso-small-lambda", glm.Squared, 3000, 120, 12, 0.01, 12),
		{"box-tall", box, box},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, _ := runCD(t, c, "cd", 100000, 0)
			restore := solver.SetCDCovariance(false)
			resid, _ := runCD(t, c, "cd", 100000, 0)
			restore()
			F, Fr := res.Summary.Objective, resid.Summary.Objective
			t.Logf("covariance: %s F=%.15g gap=%.3g iters=%d passes=%.4g; residual: %s F=%.15g gap=%.3g iters=%d passes=%.4g",
				res.Summary.Status, F, res.Summary.Gap, res.Summary.Iters, res.Summary.Passes,
				resid.Summary.Status, Fr, resid.Summary.Gap, resid.Summary.Iters, resid.Summary.Passes)
			for _, r := range []solver.Result{res, resid} {
				if r.Summary.Status != solver.StatusConverged || !(r.Summary.Gap <= 1e-9*math.Abs(r.Summary.Objective)) {
					t.Errorf("ended %s (%s) with gap %.3g at F = %.15g", r.Summary.Status, r.Summary.Message, r.Summary.Gap, r.Summary.Objective)
				}
			}
			if d := math.Abs(F-Fr) / math.Abs(Fr); !(d <= 1e-12) {
				t.Errorf("covariance updates reach F = %.15g, residual updates %.15g (%.3g relative)", F, Fr, d)
			}
			scale, diff := 0.0, 0.0
			for j := range res.X {
				scale = math.Max(scale, math.Abs(resid.X[j]))
				diff = math.Max(diff, math.Abs(res.X[j]-resid.X[j]))
			}
			if !(diff <= 1e-7*scale) {
				t.Errorf("the two solutions differ by %.3g (largest coefficient %.3g)", diff, scale)
			}
			if res.Summary.Passes == resid.Summary.Passes {
				t.Errorf("both runs counted %.6g passes: covariance updates were not used", res.Summary.Passes)
			}
			if c.name != "box-tall" && !(res.Summary.Passes < resid.Summary.Passes) {
				t.Errorf("covariance updates counted %.4g passes, residual updates %.4g: on a small working set they must cost less", res.Summary.Passes, resid.Summary.Passes)
			}
		})
	}
}
