package session_test

import (
	"context"
	"testing"

	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/spec"
)

// TestSteppedRunEvaluatesEachStep: a run stepped one iteration at a time
// evaluates every step (objective and gap), for a Frank-Wolfe method and a
// proximal one, although its cadence would evaluate only every 50th
// iteration; once resumed, the cadence is the run's own again.
func TestSteppedRunEvaluatesEachStep(t *testing.T) {
	m := newManager(t, session.Options{})
	sp := spec.Run{Problem: "toy-polygon", Algorithms: []spec.Algo{{Algo: "afw"}, {Algo: "fista"}}, Iters: 400, EvalEvery: 50, Seed: 1, StartPaused: true}
	r, err := m.Create(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "parked at k = 0", r.Parked)
	const steps = 4 // afw reaches the minimiser on its edge a few steps later
	for k := 1; k <= steps; k++ {
		r.Step()
		waitFor(t, "a step", func() bool { return r.Parked() && r.Status().Records == 2*(k+1) })
	}
	for _, tr := range r.Traces() {
		recs := tr.Records(0, steps+1)
		for k, rec := range recs {
			if rec.K != k || rec.Objective == nil || rec.Gap == nil {
				t.Errorf("%s: stepped record %d (k = %d) has objective %v, gap %v", tr.Algo, k, rec.K, rec.Objective, rec.Gap)
			}
		}
	}
	r.Resume()
	waitDone(t, r)
	for _, tr := range r.Traces() {
		recs := tr.Records(0, 1<<30)
		evaluated := 0
		for _, rec := range recs[steps+1:] {
			if rec.Evaluated() {
				evaluated++
			}
		}
		// After the steps: every 50th iteration and the last.
		if n := len(recs) - steps - 1; evaluated > n/50+2 {
			t.Errorf("%s: %d of the %d records after the steps evaluated, want the cadence's every 50th", tr.Algo, evaluated, n)
		}
	}
}
