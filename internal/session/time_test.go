package session_test

import (
	"context"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/spec"
)

// The times a real run reports are the methods' own work: positive, never
// decreasing, and never more than the wall time of the run.
func TestRealRunReportsItsWorkTime(t *testing.T) {
	m := newManager(t, session.Options{})
	sp := spec.Run{Problem: "gflasso", Algorithms: []spec.Algo{{Algo: "bc-ssfw-as"}, {Algo: "spg"}}, Replications: 2, Iters: 200, EvalEvery: 20}
	start := time.Now()
	r, err := m.Create(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	waitDone(t, r)
	wall := time.Since(start).Seconds()
	for _, tr := range r.Traces() {
		recs := tr.Records(0, tr.Len())
		for i := 1; i < len(recs); i++ {
			if recs[i].Time < recs[i-1].Time {
				t.Fatalf("trace %d: time goes back at record %d", tr.Index, i)
			}
		}
		last := recs[len(recs)-1].Time
		if !(last > 0) || last > wall {
			t.Fatalf("trace %d: last record's time %v s, wall time of the run %v s", tr.Index, last, wall)
		}
	}
	for _, ts := range r.Status().Traces {
		if ts.Summary == nil || !(ts.Summary.Time > 0) || ts.Summary.Time > wall {
			t.Fatalf("trace %d: summary %+v (wall %v s)", ts.Trace, ts.Summary, wall)
		}
	}
}
