package ssvm

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Problem is a structural SVM on chain data: minimise over w
//
//	λ/2 ‖w‖² + (1/n) Σ_i max_y H_i(y; w),  H_i(y; w) = L_i(y) − <w, ψ_i(y)>,
//
// with ψ_i(y) = φ(x_i, y_i) − φ(x_i, y) and L_i the Hamming loss divided by
// the word length; its dual is a product of n simplices (one per word). The
// joint feature map φ has K·F emission coordinates (letter t adds x_t to
// block y_t), K first-label and K last-label indicators and K² transition
// counts (pair (a, b) at index a + K·b of that part), as in the OCR README.
// A Problem is immutable and safe for concurrent use.
type Problem struct {
	Train, Test *Dataset // Test may be nil
	Lambda      float64

	K, F, D                     int
	offFirst, offLast, offTrans int
	gram                        []float64 // per word, L×L Gram matrix of its letters' features
	gramOff                     []int
	sx                          *sparseRows // the training letters' nonzero features
}

// NewProblem checks the data and λ and precomputes per-word Gram matrices.
func NewProblem(train, test *Dataset, lambda float64) (*Problem, error) {
	if !(lambda > 0) || math.IsInf(lambda, 0) {
		return nil, fmt.Errorf("lambda: must be a positive number, got %v", lambda)
	}
	if train == nil {
		return nil, fmt.Errorf("training set: missing")
	}
	if err := train.Validate(); err != nil {
		return nil, fmt.Errorf("training set: %w", err)
	}
	if test != nil && len(test.Words) == 0 {
		test = nil
	}
	if test != nil {
		if err := test.Validate(); err != nil {
			return nil, fmt.Errorf("test set: %w", err)
		}
		if test.Labels != train.Labels || test.Feat != train.Feat {
			return nil, fmt.Errorf("test set: %d labels and %d features, the training set has %d and %d", test.Labels, test.Feat, train.Labels, train.Feat)
		}
	}
	K, F := train.Labels, train.Feat
	if K > 256 {
		return nil, fmt.Errorf("training set: at most 256 labels, got %d", K)
	}
	p := &Problem{Train: train, Test: test, Lambda: lambda, K: K, F: F, D: train.Dim(),
		offFirst: K * F, offLast: K*F + K, offTrans: K*F + 2*K}
	p.gramOff = make([]int, len(train.Words)+1)
	for i, w := range train.Words {
		p.gramOff[i+1] = p.gramOff[i] + w.Len*w.Len
	}
	sx, err := newSparseRows(train)
	if err != nil {
		return nil, fmt.Errorf("training set: %w", err)
	}
	p.sx = sx
	p.gram = make([]float64, p.gramOff[len(train.Words)])
	for i, w := range train.Words {
		g := p.gram[p.gramOff[i]:p.gramOff[i+1]]
		for t := 0; t < w.Len; t++ {
			xt := train.X[(w.Start+t)*F : (w.Start+t+1)*F]
			for s := 0; s <= t; s++ {
				xs := train.X[(w.Start+s)*F : (w.Start+s+1)*F]
				v := dot(xt, xs)
				g[t*w.Len+s], g[s*w.Len+t] = v, v
			}
		}
	}
	return p, nil
}

// N returns the number of training words (the dual's blocks).
func (p *Problem) N() int { return len(p.Train.Words) }

func dot(a, b []float64) float64 {
	s := 0.0
	for i, x := range a {
		s += x * b[i]
	}
	return s
}

// wordEmissions writes E[t·K+k] = <w_k, x_t> for the letters of word wd.
func (p *Problem) wordEmissions(ds *Dataset, wd Word, w, E []float64) {
	K, F := p.K, p.F
	for t := 0; t < wd.Len; t++ {
		x := ds.X[(wd.Start+t)*F : (wd.Start+t+1)*F]
		for k := 0; k < K; k++ {
			E[t*K+k] = floats.Dot(w[k*F:(k+1)*F], x)
		}
	}
}

// AllEmissions returns the emission scores of every letter of ds for every
// label as one matrix product X·W_eᵀ (letters × K, row-major).
func (p *Problem) AllEmissions(ds *Dataset, w []float64, out []float64) []float64 {
	n := ds.Letters()
	if cap(out) < n*p.K {
		out = make([]float64, n*p.K)
	}
	out = out[:n*p.K]
	X := mat.NewDense(n, p.F, ds.X)
	W := mat.NewDense(p.K, p.F, w[:p.K*p.F])
	E := mat.NewDense(n, p.K, out)
	E.Mul(X, W.T())
	return out
}

// Loss is the Hamming distance between y and truth divided by the length,
// computed as a count over the length so that an all-wrong labelling has
// loss exactly 1.
func Loss(truth, y []int) float64 {
	c := 0
	for t := range truth {
		if truth[t] != y[t] {
			c++
		}
	}
	return float64(c) / float64(len(truth))
}

// decoder holds Viterbi scratch space; one per goroutine.
type decoder struct {
	K    int
	v, u []float64
	back []int
	cand []int
	ub   []float64 // row bounds (per call of Viterbi)
	lb   []float64
	tT   []float64 // transposed transitions (per call of Viterbi)
}

func newDecoder(K, maxLen int) *decoder {
	return &decoder{K: K, v: make([]float64, 2*K), u: make([]float64, K), back: make([]int, maxLen*K),
		cand: make([]int, K), ub: make([]float64, K), lb: make([]float64, K), tT: make([]float64, K*K)}
}

// Viterbi returns in out the labelling maximising
//
//	Σ_t E[t,y_t] + first[y_0] + last[y_{L−1}] + Σ_t trans[y_t + K·y_{t+1}] (+ L(y) if truth ≠ nil),
//
// the loss term adding 1/L to the score of every label that differs from
// truth at its position. Ties go to the lowest label (both in the best
// predecessor and in the final choice). It returns the maximal score.
func (dc *decoder) Viterbi(E, first, last, trans []float64, truth []int, out []int) float64 {
	K := dc.K
	tT, ub, lb := dc.tT[:K*K], dc.ub[:K], dc.lb[:K]
	finite := transposeTrans(trans[:K*K], tT, ub, lb, K)
	return dc.viterbi(E, first, last, trans, tT, ub, lb, finite, truth, out)
}

// transposeTrans writes tT[j·K+k] = trans[j + K·k] (predecessor j's row of
// transition weights), ub[j] = max_k tT[j·K+k] and lb[j] = min_k tT[j·K+k],
// and reports whether every weight is finite.
func transposeTrans(trans, tT, ub, lb []float64, K int) bool {
	finite := true
	for k := 0; k < K; k++ {
		for j, v := range trans[K*k : K*k+K] {
			tT[j*K+k] = v
			if v-v != 0 { // ±Inf or NaN
				finite = false
			}
		}
	}
	for j := range ub {
		row := tT[j*K : j*K+K]
		hi, lo := row[0], row[0]
		for _, v := range row[1:] {
			if v > hi {
				hi = v
			}
			if v < lo {
				lo = v
			}
		}
		ub[j], lb[j] = hi, lo
	}
	return finite
}

// viterbi is Viterbi given the transitions also in predecessor-major order
// (tT[j·K+k] = trans[j + K·k]), bounds lb[j] ≤ tT[j·K+k] ≤ ub[j] on each
// row, and whether every transition weight is finite.
//
// The best predecessor of label k at position t is the lowest j maximising
// prev[j] + trans[j + K·k]. Every label reaches at least
// floor = prev[j*] + lb[j*], j* = argmax prev, and only the predecessors
// with prev[j] + ub[j] ≥ floor can reach that for any k (rounding is
// monotone), so the others are skipped (on OCR about 5 of 26 remain). The
// survivors' sums are the full scan's, and the maximum with the lowest j
// attaining it is the full scan's choice, so the labelling and the score
// are the same bit for bit. With a non-finite score or weight every
// predecessor is scanned in order.
func (dc *decoder) viterbi(E, first, last, trans, tT, ub, lb []float64, finite bool, truth []int, out []int) float64 {
	K := dc.K
	L := len(out)
	if cap(dc.back) < L*K {
		dc.back = make([]int, L*K)
	}
	aug := 0.0
	if truth != nil {
		aug = 1 / float64(L)
	}
	prev, cur := dc.v[:K], dc.v[K:2*K]
	trans, tT, ub, lb = trans[:K*K], tT[:K*K], ub[:K], lb[:K]
	unaryScores(prev, 0, L, K, E, first, last, truth, aug)
	u := dc.u[:K]
	for t := 1; t < L; t++ {
		bk := dc.back[t*K : (t+1)*K]
		if finite && K == 26 && t < L-1 {
			// A middle position in one vector call (the same sums and
			// choices as the steps below).
			skip, a := -1, 0.0
			if truth != nil {
				skip, a = truth[t], aug
			}
			if viterbiPos26((*[26]float64)(prev), (*[26]float64)(cur), (*[26]int)(bk), (*[676]float64)(tT),
				(*[26]float64)(ub), (*[26]float64)(lb), (*[26]float64)(E[t*K:(t+1)*K]), a, skip) {
				prev, cur = cur, prev
				continue
			}
		}
		if !(finite && K == 26 && useAVX2 && dc.relax26(prev, cur, bk, tT, ub, lb)) {
			dc.relaxAll(prev, cur, bk, trans, tT, ub, lb, finite)
		}
		if t < L-1 {
			// A middle position's unary score is E[t,k] (+ 1/L off the
			// truth), added here without the copy unary makes.
			if truth == nil {
				addRow(cur, E[t*K:(t+1)*K], 0, -1)
			} else {
				addRow(cur, E[t*K:(t+1)*K], aug, truth[t])
			}
		} else {
			unaryScores(u, t, L, K, E, first, last, truth, aug)
			for k := range cur {
				cur[k] += u[k]
			}
		}
		prev, cur = cur, prev
	}
	return dc.backtrack(prev, out)
}

// unaryScores writes to u the unary scores of position t of a word of L
// letters: its emission scores, plus the first and last letters' weights
// at the ends, plus aug = 1/L off the truth when decoding with the loss.
func unaryScores(u []float64, t, L, K int, E, first, last []float64, truth []int, aug float64) {
	copy(u, E[t*K:(t+1)*K])
	if t == 0 {
		for k := range u {
			u[k] += first[k]
		}
	}
	if t == L-1 {
		for k := range u {
			u[k] += last[k]
		}
	}
	if truth != nil {
		// + 1/L off the truth, branch-free.
		tr := truth[t]
		keep := u[tr]
		for k := range u {
			u[k] += aug
		}
		u[tr] = keep
	}
}

// backtrack writes to out the labelling ending at the lowest label of best
// final score (prev), following the best predecessors, and returns that
// score.
func (dc *decoder) backtrack(prev []float64, out []int) float64 {
	K, L := dc.K, len(out)
	best, arg := prev[0], 0
	for k := 1; k < K; k++ {
		if prev[k] > best {
			best, arg = prev[k], k
		}
	}
	out[L-1] = arg
	for t := L - 1; t > 0; t-- {
		out[t-1] = dc.back[t*K+out[t]]
	}
	return best
}

// relax26 sets cur[k] = max_j prev[j] + trans[j + 26·k] and bk[k] to the
// lowest j attaining it, for 26 labels with finite prev, transitions and
// bounds, from the candidates of prune26 as a bit mask (in the order of
// relaxAll's list). It reports false, having done nothing, when prev is
// not finite.
func (dc *decoder) relax26(prev, cur []float64, bk []int, tT, ub, lb []float64) bool {
	const K = 26
	js, mask, ok := prune26((*[26]float64)(prev), (*[26]float64)(ub), (*[26]float64)(lb))
	if !ok {
		return false
	}
	relaxAll26((*[26]float64)(prev), (*[26]float64)(cur), (*[26]int)(bk), (*[676]float64)(tT),
		js, mask&^(uint32(2)<<js-1), mask&(uint32(1)<<js-1))
	return true
}

// relaxAll sets cur[k] = max_j prev[j] + trans[j + K·k] and bk[k] to the
// lowest j attaining it, over the candidates of pruneCandidates (every j
// when a value is not finite).
func (dc *decoder) relaxAll(prev, cur []float64, bk []int, trans, tT, ub, lb []float64, finite bool) {
	K := dc.K
	cand := dc.cand[:K]
	js, nc := 0, 0
	if finite {
		js, nc = pruneCandidates(prev, ub, lb, cand)
	}
	if nc > 0 {
		// Start every label k from j* (usually its best predecessor).
		// The candidates above j* replace the best when strictly larger
		// (in increasing order: ties keep the lower), then those below
		// j* when at least as large (in decreasing order: each is lower
		// than any holder so far), which leaves the maximum and the
		// lowest j attaining it, as the full scan finds them.
		fillRow(cur, bk, tT[js*K:js*K+K], prev[js], js)
		c := cand[:nc]
		q := 0
		for q < len(c) && c[q] < js {
			q++
		}
		for _, j := range c[q:] {
			if j != js {
				relaxAbove(cur, bk, tT[j*K:j*K+K], prev[j], j)
			}
		}
		for q--; q >= 0; q-- {
			j := c[q]
			relaxBelow(cur, bk, tT[j*K:j*K+K], prev[j], j)
		}
	} else {
		// Non-finite values: the full scan, in increasing j.
		for k := 0; k < K; k++ {
			col := trans[K*k : K*k+K] // trans[j + K·k] for j = 0..K−1
			best, arg := prev[0]+col[0], 0
			for j := 1; j < K; j++ {
				if s := prev[j] + col[j]; s > best {
					best, arg = s, j
				}
			}
			cur[k] = best
			bk[k] = arg
		}
	}
}

// pruneCandidatesGo writes to cand, in increasing order, the predecessors j
// that can attain max_j' prev[j'] + trans[j' + K·k] for some label k, and
// returns j* = argmax prev (lowest on ties) and their number (0 when prev
// is not finite: no pruning is safe). The loops carry no floating-point
// dependency and no unpredictable branch: finiteness is read from the
// exponent bits, the candidates are written branch-free.
func pruneCandidatesGo(prev, ub, lb []float64, cand []int) (js, n int) {
	// The maximum (two independent chains of max), finiteness from the
	// exponent bits.
	m0, m1 := prev[0], prev[0]
	var bad uint64
	q := 0
	for ; q+1 < len(prev); q += 2 {
		a, b := prev[q], prev[q+1]
		bad |= (math.Float64bits(a)>>52&0x7ff + 1) >> 11 // 1 for ±Inf and NaN
		bad |= (math.Float64bits(b)>>52&0x7ff + 1) >> 11
		m0, m1 = max(m0, a), max(m1, b)
	}
	if q < len(prev) {
		a := prev[q]
		bad |= (math.Float64bits(a)>>52&0x7ff + 1) >> 11
		m0 = max(m0, a)
	}
	if bad != 0 {
		return 0, 0
	}
	pmax := max(m0, m1)
	for prev[js] != pmax { // the lowest j attaining it
		js++
	}
	pmax = prev[js]
	// Every label reaches at least pmax + lb[j*] from j*.
	floor := pmax + lb[js]
	ub = ub[:len(prev)]
	cand = cand[:len(prev)]
	for j, v := range prev {
		cand[n] = j
		n += b2i(v+ub[j] >= floor)
	}
	return js, n
}

// b2i is 1 for true and 0 for false.
func b2i(b bool) int {
	var i int
	if b {
		i = 1
	}
	return i
}

// Score returns <w, φ(x, y)> for a word with emission scores E.
func Score(E, first, last, trans []float64, K int, y []int) float64 {
	L := len(y)
	s := first[y[0]] + last[y[L-1]]
	for t, k := range y {
		s += E[t*K+k]
	}
	for t := 0; t+1 < L; t++ {
		s += trans[y[t]+K*y[t+1]]
	}
	return s
}

// parts splits w into its first, last and transition parts.
func (p *Problem) parts(w []float64) (first, last, trans []float64) {
	return w[p.offFirst:p.offLast], w[p.offLast:p.offTrans], w[p.offTrans:p.D]
}

// AddFeatures performs dst += c·φ(x_i, y) for word wd of ds.
func (p *Problem) AddFeatures(dst []float64, ds *Dataset, wd Word, y []int, c float64) {
	K, F := p.K, p.F
	for t, k := range y {
		x := ds.X[(wd.Start+t)*F : (wd.Start+t+1)*F]
		blk := dst[k*F : (k+1)*F]
		for f, v := range x {
			blk[f] += c * v
		}
	}
	L := len(y)
	dst[p.offFirst+y[0]] += c
	dst[p.offLast+y[L-1]] += c
	for t := 0; t+1 < L; t++ {
		dst[p.offTrans+y[t]+K*y[t+1]] += c
	}
}

func maxLen(ds *Dataset) int {
	m := 0
	for _, w := range ds.Words {
		if w.Len > m {
			m = w.Len
		}
	}
	return m
}

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
