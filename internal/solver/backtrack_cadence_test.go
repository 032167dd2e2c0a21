package solver

import (
	"context"
	"math"
	"testing"
)

// Backtracking's iterates do not depend on the cadence: its rounding
// allowance comes from the line's own values, never from the last
// evaluation's objective. Runs evaluated every iteration, every 1000th and
// by the default cadence take the same steps (kind, γ, batch, active set,
// passes) into the rounding regime, where the allowance decides, and end at
// the same x. (The scenarios' test checks this on the catalogue's models;
// this one runs in the solver's fast tests.)
func TestBacktrackIteratesIndependentOfCadenceFast(t *testing.T) {
	p := newLSQFace(1, 30, 5, 1)
	for _, c := range []struct {
		algo string
		sch  Schedule
	}{{"afw", Schedule{}}, {"pfw", Schedule{}}, {"ssfw-as", Schedule{Kind: "paper", Rho: 0.1, Alpha: 0.5}}} {
		run := func(every int) ([]Record, Result) {
			m := mustNew(t, p, Config{Algorithm: c.algo, Step: "backtrack", Schedule: c.sch, Seed: 2, Limits: Limits{MaxIters: 4000, EvalEvery: every}})
			var rec collect
			res, err := m.Run(context.Background(), &rec)
			if err != nil {
				t.Fatal(err)
			}
			return rec.recs, res
		}
		a, ra := run(1)
		for _, every := range []int{1000, 0} {
			b, rb := run(every)
			n := min(len(a), len(b))
			for i := 0; i < n; i++ {
				x, y := a[i], b[i]
				if x.K != y.K || x.Step != y.Step || math.Float64bits(x.Gamma) != math.Float64bits(y.Gamma) || x.Batch != y.Batch ||
					x.Active != y.Active || x.Passes != y.Passes || x.Drops != y.Drops || x.Cleanups != y.Cleanups {
					t.Fatalf("%s k=%d: eval_every 1 took %s γ=%v (active %d, passes %v), eval_every %d %s γ=%v (active %d, passes %v)",
						c.algo, x.K, x.Step, x.Gamma, x.Active, x.Passes, every, y.Step, y.Gamma, y.Active, y.Passes)
				}
			}
			// the stall rule watches the evaluated iterations, so a run
			// may stop earlier under one cadence; up to there the steps
			// agree
			if n < 300 {
				t.Fatalf("%s: only %d iterations to compare (%s, %s)", c.algo, n-1, ra.Summary.Status, rb.Summary.Status)
			}
			if len(a) == len(b) {
				for i := range ra.X {
					if math.Float64bits(ra.X[i]) != math.Float64bits(rb.X[i]) {
						t.Fatalf("%s: x[%d] = %v against %v", c.algo, i, ra.X[i], rb.X[i])
					}
				}
			}
		}
	}
}

// The last record of a run stopped by its pass limit is evaluated and is
// the summary, also when backtracking's extra batch evaluations in the
// last iteration crossed the limit after the cadence was asked.
func TestLastRecordOfPassLimitedRunIsEvaluatedFast(t *testing.T) {
	p := newLSQFace(1, 30, 5, 1)
	for _, algo := range []string{"afw", "ssfw-as"} {
		for _, passes := range []float64{3, 7.5, 20} {
			cfg := Config{Algorithm: algo, Step: "backtrack", Seed: 1, Limits: Limits{MaxIters: 100000, MaxPasses: passes, EvalEvery: 1000}}
			if algo == "ssfw-as" {
				cfg.Schedule = Schedule{Kind: "paper", Rho: 0.1, Alpha: 0.5}
			}
			m := mustNew(t, p, cfg)
			var rec collect
			res, err := m.Run(context.Background(), &rec)
			if err != nil {
				t.Fatal(err)
			}
			last := rec.recs[len(rec.recs)-1]
			if res.Summary.Status != StatusMaxPasses {
				t.Fatalf("%s, %v passes: status %s", algo, passes, res.Summary.Status)
			}
			if last.Objective == nil || last.Gap == nil {
				t.Fatalf("%s, %v passes: the last record (k=%d, %v passes) carries no objective or gap", algo, passes, last.K, last.Passes)
			}
			if *last.Objective != res.Summary.Objective || *last.Gap != res.Summary.Gap {
				t.Fatalf("%s, %v passes: the last record's objective %v and gap %v are not the summary's %v and %v", algo, passes, *last.Objective, *last.Gap, res.Summary.Objective, res.Summary.Gap)
			}
		}
	}
}
