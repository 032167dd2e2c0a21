package solver

import (
	"context"
	"testing"
	"time"
)

// slowObjective makes every exact evaluation cost 0.2 ms more, several
// iterations, so that the adaptive cadence spaces evaluations out.
type slowObjective struct{ *lsqProblem }

func (p slowObjective) Objective(x []float64) float64 {
	time.Sleep(200 * time.Microsecond)
	return p.lsqProblem.Objective(x)
}

// TestAdaptiveCadence: with EvalEvery = 0 the first and the last iterations
// are evaluated, the iterates are those of a run evaluated every iteration
// (same gaps where both evaluate), and the run stops on the gap tolerance at
// the first evaluation at or after the iteration where the every-iteration
// run stops, within one evaluation interval of it.
func TestAdaptiveCadence(t *testing.T) {
	p := slowObjective{newLSQFace(11, 2000, 12, 1)}
	for _, c := range []struct {
		algo string
		sch  Schedule
	}{{"afw", Schedule{}}, {"ssfw-as", Schedule{Kind: "paper", Rho: 0.1, Alpha: 0.5}}, {"pfw", Schedule{}}} {
		t.Run(c.algo, func(t *testing.T) {
			run := func(every int, tol float64) ([]Record, Summary) {
				m := mustNew(t, p, Config{Algorithm: c.algo, Schedule: c.sch, Limits: Limits{MaxIters: 5000, EvalEvery: every, GapTol: tol}, Seed: 3})
				var rec collect
				res, err := m.Run(context.Background(), &rec)
				if err != nil {
					t.Fatal(err)
				}
				return rec.recs, res.Summary
			}
			const tol = 1e-6
			_, es := run(1, tol)
			if es.Status != StatusConverged {
				t.Fatalf("every iteration: %+v", es)
			}
			k1 := es.Iters
			// the gap at every iteration, a little beyond k1
			full, _ := run(1, 0)
			gapAt := map[int]float64{}
			for _, r := range full {
				gapAt[r.K] = *r.Gap
			}
			recs, as := run(0, tol)
			if !recs[0].Evaluated() || len(recs) < 2 || !recs[1].Evaluated() || !recs[len(recs)-1].Evaluated() {
				t.Fatal("the adaptive cadence must evaluate k = 0, k = 1 and the last iteration")
			}
			if as.Status != StatusConverged {
				t.Fatalf("adaptive: %+v", as)
			}
			k2 := as.Iters
			evals, prev := 0, 0
			for _, r := range recs {
				if !r.Evaluated() {
					continue
				}
				evals++
				if g, ok := gapAt[r.K]; ok && g != *r.Gap {
					t.Fatalf("k=%d: gap %v under the adaptive cadence, %v when evaluated every iteration", r.K, *r.Gap, g)
				}
				if r.K < k2 {
					prev = r.K
					if r.K >= k1 && *r.Gap <= tol {
						t.Fatalf("k=%d: the gap %.3g met the tolerance but the run went on", r.K, *r.Gap)
					}
				}
			}
			t.Logf("%s: every iteration stops at %d; adaptive at %d (%d evaluations, the one before at %d)", c.algo, k1, k2, evals, prev)
			if k2 < k1 {
				t.Fatalf("adaptive stopped at %d before the tolerance held (%d)", k2, k1)
			}
			// within one interval: the evaluation before the stop came before
			// k1, unless the gap rose above the tolerance again after k1
			monotone := true
			for k := k1; k <= k2; k++ {
				if g, ok := gapAt[k]; !ok || g > tol {
					monotone = false
				}
			}
			if monotone && prev >= k1 {
				t.Fatalf("stopped at %d although an evaluation at %d ≥ %d came first", k2, prev, k1)
			}
			if evals >= k2+1 {
				t.Fatalf("the adaptive cadence evaluated every one of %d iterations although an evaluation costs several iterations", k2)
			}
		})
	}
}

// The adaptive cadence on a simulated clock: each iteration costs work, then
// bookkeeping outside the work, then (when due) an evaluation, then a record
// in the Recorder.
func simulateCadence(iters int, work, book, eval, rec time.Duration) (evals int, wall, worked time.Duration) {
	var now time.Duration
	c := newCadenceClock(0, func() time.Duration { return now })
	start := now
	for k := 1; k <= iters; k++ {
		now += work
		worked += work
		now += book
		if c.Due(k, k == iters, worked) {
			evals++
			now += eval
		}
		now += rec
		c.Exclude(rec)
	}
	return evals, now - start - time.Duration(iters)*rec, worked
}

// simulateCadenceAt is simulateCadence for methods that read the clock
// themselves: DueAt with the reading taken after the bookkeeping, and Span
// over the Recorder's time.
func simulateCadenceAt(iters int, work, book, eval, rec time.Duration) (evals, reads int) {
	var now time.Duration
	c := newCadenceClock(0, func() time.Duration { reads++; return now })
	for k := 1; k <= iters; k++ {
		now += work + book
		if c.DueAt(k, k == iters, time.Duration(k)*work, now) {
			evals++
			now += eval
		}
		tr := now
		now += rec
		c.Span(tr, now)
	}
	return evals, reads
}

// DueAt and Span decide as Due and Exclude do, without reading the clock.
func TestCadenceAtReadings(t *testing.T) {
	ns := time.Nanosecond
	for _, c := range [][4]time.Duration{
		{1000 * ns, 10 * ns, 50000 * ns, 0},
		{100 * ns, 50 * ns, 100 * ns, 20 * ns},
		{1000 * ns, 10 * ns, 50000 * ns, time.Millisecond},
	} {
		want, _, _ := simulateCadence(20000, c[0], c[1], c[2], c[3])
		got, reads := simulateCadenceAt(20000, c[0], c[1], c[2], c[3])
		if got != want {
			t.Errorf("%v: %d evaluations with DueAt and Span, %d with Due and Exclude", c, got, want)
		}
		if reads != 1 {
			t.Errorf("%v: the cadence read the clock %d times after its start", c, reads-1)
		}
	}
}

func TestAdaptiveCadenceOnAClock(t *testing.T) {
	ns := time.Nanosecond
	// Costly evaluations: the time outside the work stays near EvalShare.
	evals, wall, work := simulateCadence(100000, 1000*ns, 10*ns, 50000*ns, 0)
	if share := float64(wall-work) / float64(work); share > EvalShare+0.01 || share < EvalShare-0.03 {
		t.Errorf("costly evaluations: outside/work = %.3f, want about %.2f (%d evaluations)", share, EvalShare, evals)
	}
	// Bookkeeping alone already above EvalShare (sub-microsecond
	// iterations): without the floor only the first and last iterations
	// would be evaluated; with it, evaluations take about EvalFloor.
	evals, _, work = simulateCadence(100000, 100*ns, 50*ns, 100*ns, 20*ns)
	if got := float64(evals) * 100 / float64(work/ns); got < EvalFloor*0.9 || got > EvalFloor*1.1 {
		t.Errorf("bookkeeping-bound run: evaluations took %.3f of the work (%d evaluations), want about %.2f", got, evals, EvalFloor)
	}
	// The Recorder's time never counts against the cadence.
	a, _, _ := simulateCadence(10000, 1000*ns, 10*ns, 50000*ns, 0)
	b, _, _ := simulateCadence(10000, 1000*ns, 10*ns, 50000*ns, time.Millisecond)
	if a != b {
		t.Errorf("a slow Recorder changed the evaluations: %d against %d", b, a)
	}
}
