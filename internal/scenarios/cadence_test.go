package scenarios

import (
	"context"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

func runRecords(t *testing.T, r spec.Run) ([]solver.Record, solver.Result) {
	t.Helper()
	s, v, err := Resolve(&r)
	if err != nil {
		t.Fatal(err)
	}
	a := r.Algorithms[0]
	if err := a.Normalize(""); err != nil {
		t.Fatal(err)
	}
	inst, err := s.Build(context.Background(), v, r.Seed)
	if err != nil {
		t.Fatal(err)
	}
	m, err := inst.Method(a, LimitsOf(&r), r.Seed)
	if err != nil {
		t.Fatal(err)
	}
	var recs []solver.Record
	res, err := m.Run(context.Background(), solver.RecorderFunc(func(rc solver.Record) { recs = append(recs, rc) }))
	if err != nil {
		t.Fatal(err)
	}
	return recs, res
}

// Backtracking's iterates do not depend on the cadence: its rounding
// allowance comes from the line's own values, not from the last
// evaluation's objective. Runs evaluated every iteration and every 1000th
// take the same steps (kind, γ, batch, active set) and end at the same x.
func TestBacktrackIteratesIndependentOfCadence(t *testing.T) {
	for _, c := range []struct {
		problem string
		algo    string
		iters   int
	}{
		{"lasso", "ssfw-as", 3000},
		{"lasso", "afw", 3000},
		{"logistic", "ssfw-as", 2000},
		{"svm-dual", "afw", 2000},
	} {
		t.Run(c.problem+"/"+c.algo, func(t *testing.T) {
			run := func(every int) ([]solver.Record, solver.Result) {
				return runRecords(t, spec.Run{Problem: c.problem, Algorithms: []spec.Algo{{Algo: c.algo, Stepsize: "backtrack"}},
					Seed: 2, Iters: c.iters, EvalEvery: every, Replications: 1})
			}
			a, ra := run(1)
			b, rb := run(1000)
			n := min(len(a), len(b))
			for i := 0; i < n; i++ {
				x, y := a[i], b[i]
				if x.K != y.K || x.Step != y.Step || x.Gamma != y.Gamma || x.Batch != y.Batch || x.Active != y.Active || x.Passes != y.Passes || x.Drops != y.Drops || x.Cleanups != y.Cleanups {
					t.Fatalf("k=%d: eval_every 1 took %s γ=%v (active %d, passes %v), eval_every 1000 %s γ=%v (active %d, passes %v)",
						x.K, x.Step, x.Gamma, x.Active, x.Passes, y.Step, y.Gamma, y.Active, y.Passes)
				}
			}
			// the stall rule watches the evaluated iterations, so a run may
			// stop earlier under one cadence; up to there the steps agree
			if n < 1000 {
				t.Fatalf("only %d iterations to compare (%s, %s)", n-1, ra.Summary.Status, rb.Summary.Status)
			}
			if len(a) == len(b) {
				for i := range ra.X {
					if ra.X[i] != rb.X[i] {
						t.Fatalf("x[%d] = %v against %v", i, ra.X[i], rb.X[i])
					}
				}
			}
			t.Logf("%d and %d iterations, %s and %s", ra.Summary.Iters, rb.Summary.Iters, ra.Summary.Status, rb.Summary.Status)
		})
	}
}

// The last record of a run stopped by a limit is evaluated, also when its
// last iteration did more work than planned (backtracking's extra batch
// evaluations, the coupled row blocks' line search) and so crossed the pass
// limit after the cadence was asked.
func TestLastRecordOfPassLimitedRunIsEvaluated(t *testing.T) {
	for _, c := range []struct {
		name   string
		run    spec.Run
		passes []float64
	}{
		{"gflasso-row/bc-ssfw-as", spec.Run{Problem: "gflasso", Params: spec.Params{"blocks": "row"},
			Algorithms: []spec.Algo{{Algo: "bc-ssfw-as", Schedule: "full"}}}, []float64{3, 2.5, 4}},
		{"lasso/afw/backtrack", spec.Run{Problem: "lasso", Algorithms: []spec.Algo{{Algo: "afw", Stepsize: "backtrack"}}}, []float64{3, 7.5, 20}},
		{"lasso/ssfw-as/backtrack", spec.Run{Problem: "lasso", Algorithms: []spec.Algo{{Algo: "ssfw-as", Stepsize: "backtrack"}}}, []float64{3, 7.5, 20}},
	} {
		for _, passes := range c.passes {
			r := c.run
			r.Seed, r.Iters, r.Passes, r.EvalEvery, r.Replications = 1, 100000, passes, 1000, 1
			recs, res := runRecords(t, r)
			last := recs[len(recs)-1]
			if res.Summary.Status != solver.StatusMaxPasses {
				t.Fatalf("%s, %v passes: status %s", c.name, passes, res.Summary.Status)
			}
			if last.Objective == nil || last.Gap == nil {
				t.Fatalf("%s, %v passes: the last record (k=%d, %v passes) carries no objective or gap", c.name, passes, last.K, last.Passes)
			}
			if *last.Objective != res.Summary.Objective || *last.Gap != res.Summary.Gap {
				t.Fatalf("%s, %v passes: the last record's objective %v and gap %v are not the summary's %v and %v", c.name, passes, *last.Objective, *last.Gap, res.Summary.Objective, res.Summary.Gap)
			}
		}
	}
}
