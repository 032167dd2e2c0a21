package solver

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// slowObjective makes every exact evaluation cost 0.2 ms more, several
// iterations: a clock-driven cadence would space evaluations out.
type slowObjective struct{ *lsqProblem }

func (p slowObjective) Objective(x []float64) float64 {
	time.Sleep(200 * time.Microsecond)
	return p.lsqProblem.Objective(x)
}

// TestDefaultCadence: with EvalEvery = 0 the first and the last iterations
// are evaluated, the iterates are those of a run evaluated every iteration
// (same gaps where both evaluate), and the run stops on the gap tolerance at
// the first evaluation at or after the iteration where the every-iteration
// run stops, within one evaluation interval of it.
func TestDefaultCadence(t *testing.T) {
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
				t.Fatal("the default cadence must evaluate k = 0, k = 1 and the last iteration")
			}
			if as.Status != StatusConverged {
				t.Fatalf("default: %+v", as)
			}
			k2 := as.Iters
			evals, prev := 0, 0
			for _, r := range recs {
				if !r.Evaluated() {
					continue
				}
				evals++
				if g, ok := gapAt[r.K]; ok && g != *r.Gap {
					t.Fatalf("k=%d: gap %v under the default cadence, %v when evaluated every iteration", r.K, *r.Gap, g)
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
				t.Fatalf("default cadence stopped at %d before the tolerance held (%d)", k2, k1)
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
				t.Fatalf("the default cadence evaluated every one of %d iterations although an evaluation costs several iterations", k2)
			}
		})
	}
}

// The default cadence counts work only: an iteration is evaluated when the
// work since the last evaluation reaches EvalRatio evaluation costs; the
// first iteration and forced ones always are; a fixed cadence evaluates
// every E-th iteration.
func TestCadenceCountsWork(t *testing.T) {
	for _, c := range []struct {
		every int
		cost  float64
		step  float64 // work per iteration
		want  []int   // evaluated iterations among 1..20 (20 forced)
	}{
		{0, 1, 1, []int{1, 9, 17, 20}},
		{0, 0.5, 1, []int{1, 5, 9, 13, 17, 20}},
		{0, 2, 0.25, []int{1, 20}},
		{0, 0, 1, []int{1, 9, 17, 20}}, // cost ≤ 0 is taken as 1
		{5, 1, 1, []int{1, 5, 10, 15, 20}},
	} {
		cad := NewCadence(c.every, c.cost)
		var got []int
		for k := 1; k <= 20; k++ {
			if cad.Due(k, k == 20, float64(k)*c.step) {
				got = append(got, k)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("every %d, cost %v, %v per iteration: evaluated %v, want %v", c.every, c.cost, c.step, got, c.want)
		}
	}
}

// The clock never decides: evaluations that take 0.2 ms longer leave the
// evaluated iterations, the stop point, the status and every record but its
// time as they were.
func TestCadenceIgnoresTime(t *testing.T) {
	fast := newLSQFace(11, 2000, 12, 1)
	slow := slowObjective{fast}
	for _, algo := range []string{"afw", "ssfw-as"} {
		sch := Schedule{}
		if algo == "ssfw-as" {
			sch = Schedule{Kind: "paper", Rho: 0.1, Alpha: 0.5}
		}
		run := func(p Problem) ([]Record, Summary) {
			m := mustNew(t, p, Config{Algorithm: algo, Schedule: sch, Limits: Limits{MaxIters: 400, GapTol: 1e-9}, Seed: 3})
			var rec collect
			res, err := m.Run(context.Background(), &rec)
			if err != nil {
				t.Fatal(err)
			}
			return rec.recs, res.Summary
		}
		a, sa := run(fast)
		b, sb := run(slow)
		sa.Time, sb.Time = 0, 0
		if sa != sb {
			t.Fatalf("%s: summaries differ: %+v against %+v", algo, sa, sb)
		}
		if len(a) != len(b) {
			t.Fatalf("%s: %d records against %d", algo, len(a), len(b))
		}
		for i := range a {
			a[i].Time, b[i].Time = 0, 0
			ja, _ := json.Marshal(a[i])
			jb, _ := json.Marshal(b[i])
			if string(ja) != string(jb) {
				t.Fatalf("%s: record %d differs:\n%s\n%s", algo, i, ja, jb)
			}
		}
	}
}
