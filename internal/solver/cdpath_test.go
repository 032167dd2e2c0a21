package solver_test

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
)

// runCDPath runs cd with path continuation stages on c to its
// coordinate-wise minimum and returns its result and records.
func runCDPath(t testing.TB, c cdCase, path int) (solver.Result, []solver.Record) {
	t.Helper()
	return runCDConfig(t, c, solver.Config{Algorithm: "cd", Path: path, Limits: solver.Limits{MaxIters: 100000}})
}

// lambdaCases are the problems of cdCases that have a penalty λ.
func lambdaCases(t testing.TB) []cdCase {
	var out []cdCase
	for _, c := range cdCases(t) {
		if c.pp.Coords().L1 > 0 {
			out = append(out, c)
		}
	}
	if len(out) != 6 {
		t.Fatalf("%d problems with a penalty λ among the cases, want lasso, lasso-wide, logistic and poisson, the last two also at a small λ", len(out))
	}
	return out
}

// TestCDPathMatchesFISTA: with continuation along λ, coordinate descent
// reaches the optimum FISTA and the cold start reach, to 1e-9 relative, on
// every problem with a penalty λ, and ends with a duality gap certificate
// of at most 1e-9·|F|, after every stage it was given. Every evaluated
// record, the stages' included, reports the problem's own objective and
// gap at its iterate: the gap bounds its suboptimality (F − F* ≤ gap).
func TestCDPathMatchesFISTA(t *testing.T) {
	for _, c := range lambdaCases(t) {
		cold, _ := runCD(t, c, "cd", 100000, 0)
		F0 := cold.Summary.Objective
		fres, _ := runCD(t, c, "fista", 200000, 1e-11*math.Abs(F0))
		Ff := fres.Summary.Objective
		for _, k := range []int{1, 4, 20} {
			t.Run(fmt.Sprintf("%s/path=%d", c.name, k), func(t *testing.T) {
				res, recs := runCDPath(t, c, k)
				sum := res.Summary
				F := sum.Objective
				t.Logf("path: %s %q F=%.15g gap=%.3g iters=%d passes=%.4g; cold F=%.15g passes=%.4g; fista F=%.15g", sum.Status, sum.Message, F, sum.Gap, sum.Iters, sum.Passes, F0, cold.Summary.Passes, Ff)
				if sum.Status != solver.StatusConverged {
					t.Errorf("ended %s: %s", sum.Status, sum.Message)
				}
				want := fmt.Sprintf("after %d continuation stages from λ_max", k)
				if k == 1 {
					want = "after 1 continuation stage from λ_max"
				}
				if !strings.Contains(sum.Message, want) {
					t.Errorf("the message %q does not say %q", sum.Message, want)
				}
				for _, ref := range []float64{Ff, F0} {
					if d := math.Abs(F-ref) / math.Abs(ref); !(d <= 1e-9) {
						t.Errorf("the optimum %.15g differs from %.15g by %.3g relative", F, ref, d)
					}
				}
				if !(sum.Gap <= 1e-9*math.Abs(F)) {
					t.Errorf("the final gap %.3g exceeds 1e-9·|F| = %.3g", sum.Gap, 1e-9*math.Abs(F))
				}
				fstar := math.Min(F, Ff)
				for _, r := range recs {
					if r.Evaluated() && !(*r.Objective-fstar <= *r.Gap*(1+1e-9)+1e-12*math.Abs(fstar)) {
						t.Errorf("record %d: F − F* = %.6g exceeds its gap %.6g: not the problem's certificate", r.K, *r.Objective-fstar, *r.Gap)
					}
				}
				if last := recs[len(recs)-1]; !last.Evaluated() || *last.Objective != F || *last.Gap != sum.Gap || last.Passes != sum.Passes {
					t.Errorf("the last record is not the summary's: %+v", last)
				}
			})
		}
	}
}

// TestCDPathReproducible: a run with continuation is a function of its
// problem and setting: two runs give the same records bit for bit (time
// aside), and the continuation changes the run (its records differ from
// the cold start's).
func TestCDPathReproducible(t *testing.T) {
	for _, c := range lambdaCases(t) {
		t.Run(c.name, func(t *testing.T) {
			strip := func(rs []solver.Record) []solver.Record {
				for i := range rs {
					rs[i].Time = 0
				}
				return rs
			}
			a, ra := runCDPath(t, c, 6)
			b, rb := runCDPath(t, c, 6)
			a.Summary.Time, b.Summary.Time = 0, 0
			if !reflect.DeepEqual(strip(ra), strip(rb)) || !reflect.DeepEqual(a, b) {
				t.Fatal("two runs with path = 6 differ")
			}
			_, rc := runCDPath(t, c, 0)
			if reflect.DeepEqual(strip(ra), strip(rc)) {
				t.Fatal("path = 6 gives the cold start's records")
			}
		})
	}
}

// TestCDPathBadInput: a negative number of stages, and stages on a problem
// without a penalty λ (the box problems: svm-dual, box), are refused with
// an error naming the setting and its rule.
func TestCDPathBadInput(t *testing.T) {
	cs := cdCases(t)
	byName := map[string]cdCase{}
	for _, c := range cs {
		byName[c.name] = c
	}
	for _, tc := range []struct {
		name string
		path int
		want string
	}{
		{"lasso", -1, "path: must be a number of continuation stages ≥ 0"},
		{"logistic", -3, "path: must be a number of continuation stages ≥ 0"},
		{"svm-dual", 5, "path: continuation runs along the penalty λ"},
		{"box", 1, "has no λ"},
	} {
		c := byName[tc.name]
		_, err := solver.NewCD(c.pp, c.lift, solver.Config{Algorithm: "cd", Path: tc.path, Limits: solver.Limits{MaxIters: 10}})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s with path = %d: error %v, want one saying %q", tc.name, tc.path, err, tc.want)
		}
	}
	for _, name := range []string{"svm-dual", "box"} {
		c := byName[name]
		if _, err := solver.NewCD(c.pp, c.lift, solver.Config{Algorithm: "cd", Limits: solver.Limits{MaxIters: 10}}); err != nil {
			t.Errorf("%s with path = 0: %v", name, err)
		}
	}
}
