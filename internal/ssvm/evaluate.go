package ssvm

import (
	"math"
	"runtime"
	"sync"
)

// Eval holds the figures of one evaluation of an iterate (w, ℓ).
type Eval struct {
	Primal, Dual, Gap float64
	TrainErr, TestErr float64 // average normalised Hamming loss of plain decoding
	HasDual           bool
}

// evaluator computes primal, dual, duality gap and errors with a full
// decoding pass; it owns its scratch space. The words are decoded on up to
// GOMAXPROCS goroutines, each on a contiguous range with a decoder of its
// own, into per-word results; the sums over words (and the features of the
// decoded labellings) are then taken in word order on the calling
// goroutine, so the figures do not depend on the number of goroutines and
// are those of decoding word after word, bit for bit.
type evaluator struct {
	p    *Problem
	decs []*decoder // decs[g]: goroutine g's
	E    []float64
	ws   []float64
	// per letter: the loss-augmented and the plain decoding
	yAug, yPlain []int
	// per word: hinge term, loss of the loss-augmented labelling, loss of
	// the plain one
	hinge, loss, errs []float64
}

func newEvaluator(p *Problem) *evaluator {
	return &evaluator{p: p, ws: make([]float64, p.D)}
}

// evalWorkers bounds the goroutines an evaluation decodes on.
const evalWorkers = 8

// minWordsPerWorker keeps small data sets (a chain of a few words) on the
// calling goroutine, where starting goroutines would cost more than it saves.
const minWordsPerWorker = 64

// decode decodes every word of ds with emissions ev.E on up to GOMAXPROCS
// goroutines: plain decoding into yPlain and errs, and with aug also the
// loss-augmented decoding into yAug, loss and hinge.
func (ev *evaluator) decode(ds *Dataset, first, last, trans []float64, aug bool) {
	p := ev.p
	K := p.K
	nw, nl := len(ds.Words), ds.Letters()
	ev.yAug, ev.yPlain = grown(ev.yAug, nl), grown(ev.yPlain, nl)
	ev.hinge, ev.loss, ev.errs = grown(ev.hinge, nw), grown(ev.loss, nw), grown(ev.errs, nw)
	workers := min(runtime.GOMAXPROCS(0), evalWorkers, max(1, nw/minWordsPerWorker))
	ml := maxLen(ds)
	for len(ev.decs) < workers {
		ev.decs = append(ev.decs, nil)
	}
	for g := range workers {
		if d := ev.decs[g]; d == nil || len(d.back) < ml*K {
			ev.decs[g] = newDecoder(K, ml)
		}
	}
	run := func(dc *decoder, lo, hi int) { ev.decodeWords(dc, ds, first, last, trans, aug, lo, hi) }
	if workers == 1 {
		run(ev.decs[0], 0, nw)
		return
	}
	var wg sync.WaitGroup
	for g := 1; g < workers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			run(ev.decs[g], g*nw/workers, (g+1)*nw/workers)
		}(g)
	}
	run(ev.decs[0], 0, nw/workers)
	wg.Wait()
}

// grown is s with length n, reallocated when its capacity is short.
func grown[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// decodeWords decodes the words lo … hi−1 of ds on dc (see decode).
func (ev *evaluator) decodeWords(dc *decoder, ds *Dataset, first, last, trans []float64, aug bool, lo, hi int) {
	K := ev.p.K
	for i := lo; i < hi; i++ {
		wd := ds.Words[i]
		E := ev.E[wd.Start*K : (wd.Start+wd.Len)*K]
		truth := ds.Y[wd.Start : wd.Start+wd.Len]
		if aug {
			y := ev.yAug[wd.Start : wd.Start+wd.Len]
			dc.Viterbi(E, first, last, trans, truth, y)
			loss := Loss(truth, y)
			h := loss + Score(E, first, last, trans, K, y) - Score(E, first, last, trans, K, truth)
			if h < 0 { // y_i itself has H = 0, so the maximum is never below it
				h = 0
			}
			ev.hinge[i], ev.loss[i] = h, loss
		}
		y := ev.yPlain[wd.Start : wd.Start+wd.Len]
		dc.Viterbi(E, first, last, trans, nil, y)
		ev.errs[i] = Loss(truth, y)
	}
}

// Evaluate decodes every training word at w (loss-augmented, giving the
// primal hinge terms and the FW corner (w_s, ℓ_s)) and, for errors, every
// training and test word without the loss term. With hasDual, (w, ell) is a
// dual-feasible point and the dual objective −λ/2‖w‖² + ℓ and the duality
// gap λ<w, w − w_s> − ℓ + ℓ_s are reported as well.
func (ev *evaluator) Evaluate(w []float64, ell float64, hasDual bool) Eval {
	p := ev.p
	first, last, trans := p.parts(w)
	ds := p.Train
	n := float64(len(ds.Words))
	ev.E = p.AllEmissions(ds, w, ev.E)
	ev.decode(ds, first, last, trans, true)
	for j := range ev.ws {
		ev.ws[j] = 0
	}
	hinge, ellS, errSum := 0.0, 0.0, 0.0
	for i, wd := range ds.Words {
		hinge += ev.hinge[i]
		ellS += ev.loss[i]
		truth := ds.Y[wd.Start : wd.Start+wd.Len]
		p.AddFeatures(ev.ws, ds, wd, truth, 1)
		p.AddFeatures(ev.ws, ds, wd, ev.yAug[wd.Start:wd.Start+wd.Len], -1)
		errSum += ev.errs[i]
	}
	ww := dot(w, w)
	out := Eval{Primal: p.Lambda/2*ww + hinge/n, TrainErr: errSum / n, HasDual: hasDual}
	if hasDual {
		// w_s = Σ_i ψ_i(y_i*)/(λn), ℓ_s = Σ_i L_i(y_i*)/n.
		wws := dot(w, ev.ws) / (p.Lambda * n)
		out.Dual = -p.Lambda/2*ww + ell
		out.Gap = p.Lambda*(ww-wws) - ell + ellS/n
	}
	out.TestErr = ev.TestError(w)
	return out
}

// AtZero is Evaluate(0, 0, hasDual) without decoding: at w = 0 every score
// is zero, so the loss-augmented decoding labels every letter wrongly
// (hinge 1 per word: primal 1, gap 1, dual 0, exactly) and plain decoding,
// ties going to the lowest label, labels every letter 0. The figures are
// those of Evaluate bit for bit (the same sums in the same order).
func (ev *evaluator) AtZero(hasDual bool) Eval {
	p := ev.p
	n := float64(len(p.Train.Words))
	hinge, ellS := 0.0, 0.0
	for range p.Train.Words {
		hinge += 1
		ellS += 1
	}
	out := Eval{Primal: p.Lambda/2*0 + hinge/n, TrainErr: zeroLabelError(p.Train), HasDual: hasDual}
	if hasDual {
		out.Dual = -p.Lambda/2*0 + 0
		out.Gap = p.Lambda*(0-0) - 0 + ellS/n
	}
	out.TestErr = math.NaN()
	if p.Test != nil {
		out.TestErr = zeroLabelError(p.Test)
	}
	return out
}

// zeroLabelError is the average normalised Hamming loss of labelling every
// letter of ds with label 0.
func zeroLabelError(ds *Dataset) float64 {
	errSum := 0.0
	for _, wd := range ds.Words {
		c := 0
		for _, y := range ds.Y[wd.Start : wd.Start+wd.Len] {
			if y != 0 {
				c++
			}
		}
		errSum += float64(c) / float64(wd.Len)
	}
	return errSum / float64(len(ds.Words))
}

// TestError returns the average normalised Hamming loss of plain decoding
// on the test set (NaN without a test set).
func (ev *evaluator) TestError(w []float64) float64 {
	if ev.p.Test == nil {
		return math.NaN()
	}
	return ev.errorOn(ev.p.Test, w)
}
func (ev *evaluator) errorOn(ds *Dataset, w []float64) float64 {
	first, last, trans := ev.p.parts(w)
	ev.E = ev.p.AllEmissions(ds, w, ev.E)
	ev.decode(ds, first, last, trans, false)
	errSum := 0.0
	for i := range ds.Words {
		errSum += ev.errs[i]
	}
	return errSum / float64(len(ds.Words))
}
