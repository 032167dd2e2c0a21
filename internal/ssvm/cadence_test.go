package ssvm

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
)

// TestAdaptiveCadence: with EvalEvery = 0 (the default) bcfw-as, bcfw and
// ssg evaluate the start, the first and the last iteration; the iterates
// are those of a run evaluated every iteration (same primal and gap, plain
// and averaged, wherever both evaluate); the run stops on the gap tolerance
// at the first evaluation at or after the iteration where the
// every-iteration run stops, within one evaluation interval of it; and an
// evaluation (a decoding pass over the training and test sets, dozens of
// block steps' worth here) is not made at every iteration.
func TestAdaptiveCadence(t *testing.T) {
	p := smallChain(t, 20, 10, 1)
	n := p.N()
	for _, c := range []struct {
		algo    string
		average bool
		tol     float64
	}{
		{AlgoBCFWAS, false, 1e-6},
		{AlgoBCFWAS, true, 1e-3},
		{AlgoBCFW, true, 1e-3},
		{AlgoSSG, true, 0}, // no dual iterate: no gap tolerance
	} {
		name := c.algo
		if c.average {
			name += "-avg"
		}
		t.Run(name, func(t *testing.T) {
			run := func(lim solver.Limits) ([]solver.Record, solver.Result) {
				m, err := p.NewMethod(Options{Algo: c.algo, Average: c.average, Schedule: paperSchedule(), Limits: lim, Seed: 11})
				if err != nil {
					t.Fatal(err)
				}
				return recordAll(t, m)
			}
			firstLast := func(what string, recs []solver.Record) {
				t.Helper()
				if len(recs) < 2 || !recs[0].Evaluated() || recs[1].K != 1 || !recs[1].Evaluated() || !recs[len(recs)-1].Evaluated() {
					t.Fatalf("%s: the default cadence must evaluate k = 0, k = 1 and the last iteration", what)
				}
			}
			// The limits a stopping rule needs: the last iteration of
			// MaxIters and of MaxPasses (not a multiple of anything).
			recs, _ := run(solver.Limits{MaxIters: 7*n + 3})
			firstLast("max iters", recs)
			recs, res := run(solver.Limits{MaxIters: 1 << 30, MaxPasses: 5.5})
			firstLast("max passes", recs)
			if res.Summary.Status != solver.StatusMaxPasses || recs[len(recs)-1].Passes != 5.5 {
				t.Fatalf("max passes: status %s at %v passes", res.Summary.Status, recs[len(recs)-1].Passes)
			}
			if c.tol == 0 {
				return
			}

			const maxIters = 2000 * 20
			_, es := run(solver.Limits{MaxIters: maxIters, EvalEvery: 1, GapTol: c.tol})
			if es.Summary.Status != solver.StatusConverged {
				t.Fatalf("every iteration: %+v", es.Summary)
			}
			k1 := es.Summary.Iters
			recs, as := run(solver.Limits{MaxIters: maxIters, GapTol: c.tol})
			firstLast("gap tolerance", recs)
			if as.Summary.Status != solver.StatusConverged {
				t.Fatalf("adaptive: %+v", as.Summary)
			}
			k2 := as.Summary.Iters
			// every iteration evaluated, without a tolerance, up to k2
			full, _ := run(solver.Limits{MaxIters: max(k1, k2), EvalEvery: 1})
			at := map[int]solver.Record{}
			for _, r := range full {
				at[r.K] = r
			}
			evals, prev := 0, 0
			for _, r := range recs {
				if !r.Evaluated() {
					continue
				}
				evals++
				f := at[r.K]
				if *f.Gap != *r.Gap || *f.Objective != *r.Objective || f.Extra["gap_plain"] != r.Extra["gap_plain"] || f.Extra["test_err"] != r.Extra["test_err"] {
					t.Fatalf("k=%d: gap %v, primal %v under the default cadence; %v, %v when evaluated every iteration", r.K, *r.Gap, *r.Objective, *f.Gap, *f.Objective)
				}
				if r.K < k2 {
					prev = r.K
					if r.K >= k1 && *r.Gap <= c.tol {
						t.Fatalf("k=%d: the gap %.3g met the tolerance but the run went on", r.K, *r.Gap)
					}
				}
			}
			t.Logf("every iteration stops at %d; adaptive at %d (%d evaluations, the one before at %d)", k1, k2, evals, prev)
			if k2 < k1 {
				t.Fatalf("adaptive stopped at %d before the tolerance held (%d)", k2, k1)
			}
			if *recs[len(recs)-1].Gap > c.tol {
				t.Fatalf("stopped with gap %v > %v", *recs[len(recs)-1].Gap, c.tol)
			}
			// within one interval: the evaluation before the stop came
			// before k1, unless the gap rose above the tolerance after k1
			monotone := true
			for k := k1; k <= k2; k++ {
				if r, ok := at[k]; !ok || *r.Gap > c.tol {
					monotone = false
				}
			}
			if monotone && prev >= k1 {
				t.Fatalf("stopped at %d although an evaluation at %d ≥ %d came first", k2, prev, k1)
			}
			if evals >= k2+1 {
				t.Fatalf("the default cadence evaluated every one of %d iterations although an evaluation costs dozens", k2)
			}
		})
	}
}

// TestEvalEveryNegative: a negative cadence is refused, naming the field.
func TestEvalEveryNegative(t *testing.T) {
	p := smallChain(t, 5, 2, 1)
	_, err := p.NewMethod(Options{Algo: AlgoBCFW, Limits: solver.Limits{MaxIters: 10, EvalEvery: -1}})
	if err == nil || err.Error() != "eval every: must be at least 1 (or 0 for the default cadence), got -1" {
		t.Fatalf("err = %v", err)
	}
}

// TestActiveSizeCount: the running count of active labellings that every
// record reports equals the sum over the blocks' active sets.
func TestActiveSizeCount(t *testing.T) {
	p := smallChain(t, 30, 5, 0.01)
	m, err := p.NewMethod(Options{Algo: AlgoBCFWAS, Schedule: paperSchedule(), Limits: solver.Limits{MaxIters: 1}, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	drops := 0
	for k := 0; k < 40*p.N(); k++ {
		drops += m.iterate().drops
		s := 0
		for _, a := range m.act {
			s += len(a)
		}
		if s != m.activeSize() {
			t.Fatalf("k=%d: active sets hold %d labellings, the count says %d", m.k, s, m.activeSize())
		}
	}
	if drops == 0 || m.activeSize() <= p.N() {
		t.Fatalf("the run should both grow active sets and drop from them: %d drops, %d active", drops, m.activeSize())
	}
}

// TestAtZeroMatchesEvaluate: the starting point's figures, computed without
// decoding, are those of a full evaluation at w = 0, bit for bit (synthetic
// chains of several shapes, with and without a test set, and OCR).
func TestAtZeroMatchesEvaluate(t *testing.T) {
	check := func(t *testing.T, p *Problem) {
		t.Helper()
		ev := newEvaluator(p)
		for _, hasDual := range []bool{true, false} {
			want := ev.Evaluate(make([]float64, p.D), 0, hasDual)
			got := ev.AtZero(hasDual)
			same := func(a, b float64) bool {
				return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
			}
			if !same(got.Primal, want.Primal) || !same(got.Dual, want.Dual) || !same(got.Gap, want.Gap) ||
				!same(got.TrainErr, want.TrainErr) || !same(got.TestErr, want.TestErr) || got.HasDual != want.HasDual {
				t.Fatalf("hasDual=%v: AtZero %+v, Evaluate %+v", hasDual, got, want)
			}
		}
	}
	for _, c := range []struct {
		train, test, labels, minLen, maxLen int
		lambda                              float64
	}{{20, 10, 4, 3, 6, 1}, {7, 0, 2, 1, 1, 0.01}, {30, 5, 8, 1, 12, 0.3}} {
		cfg := DefaultChain
		cfg.Train, cfg.Test, cfg.Labels, cfg.MinLen, cfg.MaxLen = c.train, c.test, c.labels, c.minLen, c.maxLen
		tr, te, err := Chain(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if c.test == 0 {
			te = nil
		}
		p, err := NewProblem(tr, te, c.lambda)
		if err != nil {
			t.Fatal(err)
		}
		check(t, p)
	}
	t.Run("ocr", func(t *testing.T) { check(t, ocrProblem(t, 0.01)) })
}

// evaluateSerial is the evaluation decoded word after word on one decoder,
// the sums taken as it goes: the reference for the evaluator's decoding on
// several goroutines.
func evaluateSerial(p *Problem, w []float64, ell float64) Eval {
	K := p.K
	first, last, trans := p.parts(w)
	dc := newDecoder(K, max(maxLen(p.Train), maxLen(p.Test)))
	ws := make([]float64, p.D)
	errOn := func(ds *Dataset, aug bool) (hinge, ellS, errSum float64) {
		E := p.AllEmissions(ds, w, nil)
		for _, wd := range ds.Words {
			Ew := E[wd.Start*K : (wd.Start+wd.Len)*K]
			truth := ds.Y[wd.Start : wd.Start+wd.Len]
			y := make([]int, wd.Len)
			if aug {
				dc.Viterbi(Ew, first, last, trans, truth, y)
				loss := Loss(truth, y)
				h := max(0, loss+Score(Ew, first, last, trans, K, y)-Score(Ew, first, last, trans, K, truth))
				hinge += h
				ellS += loss
				p.AddFeatures(ws, ds, wd, truth, 1)
				p.AddFeatures(ws, ds, wd, y, -1)
			}
			dc.Viterbi(Ew, first, last, trans, nil, y)
			errSum += Loss(truth, y)
		}
		return hinge, ellS, errSum
	}
	n := float64(len(p.Train.Words))
	hinge, ellS, errSum := errOn(p.Train, true)
	ww := dot(w, w)
	out := Eval{Primal: p.Lambda/2*ww + hinge/n, TrainErr: errSum / n, HasDual: true,
		Dual: -p.Lambda/2*ww + ell, Gap: p.Lambda*(ww-dot(w, ws)/(p.Lambda*n)) - ell + ellS/n}
	_, _, te := errOn(p.Test, false)
	out.TestErr = te / float64(len(p.Test.Words))
	return out
}

// TestEvaluateAnyWorkers: the evaluation decodes on up to GOMAXPROCS
// goroutines and gives, bit for bit, the figures of decoding word after
// word, whatever the number of goroutines.
func TestEvaluateAnyWorkers(t *testing.T) {
	cfg := DefaultChain
	cfg.Train, cfg.Test, cfg.Labels, cfg.MinLen, cfg.MaxLen = 700, 300, 6, 1, 9
	tr, te, err := Chain(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewProblem(tr, te, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	w := make([]float64, p.D)
	for j := range w {
		w[j] = rng.NormFloat64()
	}
	want := evaluateSerial(p, w, 0.3)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	ev := newEvaluator(p)
	for _, procs := range []int{1, 2, 3, 8, 1} {
		runtime.GOMAXPROCS(procs)
		got := ev.Evaluate(w, 0.3, true)
		if got != want {
			t.Fatalf("GOMAXPROCS %d: %+v, word after word %+v", procs, got, want)
		}
	}
}
