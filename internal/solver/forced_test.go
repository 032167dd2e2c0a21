package solver

import (
	"context"
	"math"
	"testing"
)

// forcing is a Recorder that asks for the evaluation of chosen iterations,
// as a session stepping through a paused run does.
type forcing struct {
	collect
	at   map[int]bool
	next int // the iteration being computed (EvalNext is asked once per iteration)
}

func (f *forcing) EvalNext() bool {
	f.next++
	return f.at[f.next]
}

// A forced evaluation does not move the cadence: with the default cadence
// (decided by work) and a fixed one, a run whose iterations 2–5 and 40 are
// forced evaluates afterwards exactly the iterations an unforced run does,
// and every record is the same but for the forced evaluations' figures.
func TestForcedEvaluationsLeaveTheCadence(t *testing.T) {
	forced := map[int]bool{2: true, 3: true, 4: true, 5: true, 40: true}
	for _, c := range []struct {
		algo   string
		sch    Schedule
		blocks int
		every  int
	}{
		{"afw", Schedule{}, 1, 0}, {"pfw", Schedule{}, 1, 0}, {"ssfw-as", Schedule{Kind: "paper", Rho: 0.1, Alpha: 0.5}, 1, 0},
		{"bcfw", Schedule{}, 3, 0}, {"afw", Schedule{}, 1, 7},
	} {
		p := newLSQFace(11, 2000, 12, c.blocks)
		run := func(rec Recorder) {
			m := mustNew(t, p, Config{Algorithm: c.algo, Schedule: c.sch, Limits: Limits{MaxIters: 400, EvalEvery: c.every}, Seed: 3})
			if _, err := m.Run(context.Background(), rec); err != nil {
				t.Fatal(err)
			}
		}
		var plain collect
		run(&plain)
		stepped := &forcing{at: forced}
		run(stepped)
		a, b := plain.recs, stepped.recs
		if len(a) != len(b) || len(a) < 50 {
			t.Fatalf("%s (every %d): %d and %d records", c.algo, c.every, len(a), len(b))
		}
		evaluated := 0
		for i := range a {
			ra, rb := a[i], b[i]
			if ra.K != rb.K || ra.Step != rb.Step || math.Float64bits(ra.Gamma) != math.Float64bits(rb.Gamma) || ra.Passes != rb.Passes || ra.Active != rb.Active {
				t.Fatalf("%s (every %d) k = %d: the forced run's iterate differs: %+v vs %+v", c.algo, c.every, ra.K, rb, ra)
			}
			switch {
			case forced[ra.K]:
				if !rb.Evaluated() {
					t.Errorf("%s (every %d) k = %d: forced but not evaluated", c.algo, c.every, ra.K)
				}
			case ra.Evaluated() != rb.Evaluated():
				t.Fatalf("%s (every %d) k = %d: evaluated %v, %v without the forced evaluations (the cadence moved)", c.algo, c.every, ra.K, rb.Evaluated(), ra.Evaluated())
			case ra.Evaluated():
				evaluated++
				if *ra.Objective != *rb.Objective || *ra.Gap != *rb.Gap {
					t.Fatalf("%s (every %d) k = %d: the evaluation differs", c.algo, c.every, ra.K)
				}
			}
		}
		if evaluated < 3 || evaluated > len(a)/3 {
			t.Fatalf("%s (every %d): %d of %d records evaluated by the cadence: the test needs a sparse cadence", c.algo, c.every, evaluated, len(a))
		}
	}
}
