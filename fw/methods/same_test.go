package methods

import (
	"context"
	"testing"

	"github.com/fwlab/fwlab/fw"
	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/spec"
)

// TestSameRecordsAsTheDashboard: a catalogue problem run through Run (or
// RunProx for the proximal baselines), with
// Options holding what a run spec's algorithm says (defaults left empty),
// gives the records and the summary the dashboard's path (the spec
// resolved, the instance built, scenarios.Jobs) gives, every field but
// the wall-clock time.
func TestSameRecordsAsTheDashboard(t *testing.T) {
	for _, c := range []struct {
		problem string
		algos   []spec.Algo
	}{
		{"simplex", []spec.Algo{{Algo: "ssfw-as"}, {Algo: "afw"}, {Algo: "pfw", Stepsize: "backtrack"}, {Algo: "fw"},
			{Algo: "ssfw-as", Schedule: "geometric", M0: 3, Growth: 1.2}, {Algo: "fista"}, {Algo: "pgd", Stepsize: "backtrack"}}},
		{"svm-dual", []spec.Algo{{Algo: "afw", Stepsize: "paper"}, {Algo: "fw", Stepsize: "short"}, {Algo: "ssfw-as", Rho: 0.2, Alpha: 0.3}}},
		{"toy-polygon", []spec.Algo{{Algo: "afw"}, {Algo: "pfw"}, {Algo: "fw", Caratheodory: true}}},
	} {
		raw := append([]spec.Algo(nil), c.algos...)
		r := spec.Run{Problem: c.problem, Algorithms: c.algos, Seed: 7, Iters: 150}
		s, v, err := scenarios.Resolve(&r)
		if err != nil {
			t.Fatal(err)
		}
		inst, err := s.Build(context.Background(), v, r.Seed)
		if err != nil {
			t.Fatal(err)
		}
		jobs, err := scenarios.Jobs(inst, &r)
		if err != nil {
			t.Fatal(err)
		}
		fi := inst.(*scenarios.FWInstance)
		p := fi.Problem
		for _, job := range jobs {
			var want []fw.Record
			wres, err := job.Method.Run(context.Background(), fw.RecorderFunc(func(r fw.Record) { want = append(want, r) }))
			if err != nil {
				t.Fatal(err)
			}
			a := raw[job.Index]
			opt := Options{Algorithm: a.Algo, Step: a.Stepsize, L: a.LValue(), Schedule: a.Schedule, Rho: a.Rho, Alpha: a.Alpha,
				M0: a.M0, Growth: a.Growth, Caratheodory: a.Caratheodory, MaxIters: r.Iters, MaxPasses: r.Passes,
				GapTol: r.Gap, EvalEvery: r.EvalEvery, Seed: job.Seed}
			var got []fw.Record
			keep := fw.RecorderFunc(func(r fw.Record) { got = append(got, r) })
			var gres Result
			if a.Algo == "fista" || a.Algo == "pgd" {
				gres, err = RunProx(context.Background(), fi.Prox, p, opt, keep)
			} else {
				gres, err = Run(context.Background(), p, opt, keep)
			}
			if err != nil {
				t.Fatalf("%s %+v: %v", c.problem, opt, err)
			}
			name := c.problem + " " + job.Label
			if len(got) != len(want) {
				t.Fatalf("%s: %d records, the dashboard's path %d", name, len(got), len(want))
			}
			for i := range got {
				got[i].Time, want[i].Time = 0, 0
				if g, w := string(got[i].AppendJSON(nil)), string(want[i].AppendJSON(nil)); g != w {
					t.Fatalf("%s: record %d\n got %s\nwant %s", name, i, g, w)
				}
			}
			gres.Summary.Time, wres.Summary.Time = 0, 0
			if gres.Summary != wres.Summary {
				t.Errorf("%s: summary %+v, the dashboard's path %+v", name, gres.Summary, wres.Summary)
			}
		}
	}
}
