package ssvm

import (
	"math"
)

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
