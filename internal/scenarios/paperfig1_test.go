package scenarios

import (
	"context"
	"fmt"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
)

// The paper-fig1 preset runs the paper's method, bc-ssfw-as with the slack
// kept (Algorithm 3), and the slack collapse beside it under a name that
// says so; the figure's data name them the same way; and no replication
// ends stalled at a gap at the rounding floor (a certificate: converged).
func TestPaperFig1RunsThePapersMethod(t *testing.T) {
	pr, ok := LookupPreset("paper-fig1")
	if !ok {
		t.Fatal("paper-fig1 is not registered")
	}
	run := pr.Spec
	run.Replications = 3
	s, v, err := Resolve(&run)
	if err != nil {
		t.Fatal(err)
	}
	for i := range run.Algorithms {
		if err := run.Algorithms[i].Normalize(""); err != nil {
			t.Fatal(err)
		}
	}
	inst, err := s.Build(context.Background(), v, run.Seed)
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := Jobs(inst, &run)
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]int{}
	for _, j := range jobs {
		labels[j.Label]++
	}
	want := map[string]int{"bc-ssfw-as": 3, "bc-ssfw-as" + SlackCollapseSuffix: 3, "spg": 3}
	if fmt.Sprint(labels) != fmt.Sprint(want) {
		t.Fatalf("traces %v, want %v", labels, want)
	}
	if a := run.Algorithms[0]; a.Algo != "bc-ssfw-as" || a.Slack != "keep" {
		t.Fatalf("the preset's first algorithm is %+v, not the paper's bc-ssfw-as with slack=keep", a)
	}
	for _, j := range jobs {
		if j.Label == "spg" {
			continue
		}
		var last solver.Record
		res, err := j.Method.Run(context.Background(), solver.RecorderFunc(func(r solver.Record) {
			if r.Evaluated() {
				last = r
			}
		}))
		if err != nil {
			t.Fatal(err)
		}
		sum := res.Summary
		t.Logf("%s #%d: %s at k = %d, gap %.3g at F = %.10g (%s)", j.Label, j.Replication, sum.Status, sum.Iters, sum.Gap, sum.Objective, sum.Message)
		if sum.Status == solver.StatusStalled && solver.AtRoundingFloor(sum.Gap, sum.Objective) {
			t.Errorf("%s #%d: stalled at a gap at the rounding floor: %+v", j.Label, j.Replication, sum)
		}
		if last.Objective == nil || *last.Objective != sum.Objective {
			t.Errorf("%s #%d: the last evaluated record is not the summary's", j.Label, j.Replication)
		}
	}
	// the figure's data carry the same names
	d, err := Figure1(context.Background(), Figure1Options{Replications: 1, Iters: 30, EvalEvery: 10, GridPoints: 5, FStarIters: 3000, FStarTol: 1e-9})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range d.Algorithms {
		names = append(names, a.Algo)
	}
	if fmt.Sprint(names) != fmt.Sprint([]string{"bc-ssfw-as", "bc-ssfw-as" + SlackCollapseSuffix, "spg"}) {
		t.Fatalf("Figure 1's algorithms are %q", names)
	}
}
