package ssvm

// Lazy averaging of bcfw and bcfw-as. The weighted average
//
//	w̄_k = (1 − ρ_k) w̄_{k−1} + ρ_k w_k,  ρ_k = 2/(k+1),
//
// unrolls to w̄_k = Σ_{j=1}^{k} j·w_j / T(k) with T(k) = k(k+1)/2. A block
// step changes few coordinates of w, so instead of a sweep over all of w
// per step, each quantity keeps S = Σ j·(its value at step j) up to the
// last step τ before its value changed, and adds value·(T(k) − T(τ)) when
// it changes again or when the average is read:
//
//   - the emission part of w is linear in the block marginals μ (w_e =
//     Σ_t x_t ⊗ (e(y_t) − μ_t)/(λn)), so the marginals are averaged, block by
//     block (a block changes only when it is stepped), and w̄_e is formed
//     from the averaged marginals μ̄ when it is read, with the same
//     accumulation as w's recomputation;
//   - the first, last and transition weights (728 coordinates on OCR) are
//     averaged coordinate by coordinate where a step changes them.
//
// The weights T(k) − T(τ) are integers, exact in float64 (below 2^53, that
// is up to about 10^8 steps), so the only roundings are those of the
// products and sums; the figures differ from the elementwise recursion by
// rounding only (TestLazyAverageMatchesRecursion bounds the difference),
// and they are a deterministic function of the run, the same bit for bit
// on every machine.
type lazyAvg struct {
	smu  []float64 // letters × K: Σ_j j·μ_j for each block up to step tauB[block]
	tauB []int64
	sne  []float64 // D − offFirst: Σ_j j·w_j[offFirst+q] up to step tauC[q]
	tauC []int64
	mbar []float64 // scratch: μ̄ (letters × K)
	ft   []float64 // scratch: w̄'s emission weights in feature-major order
}

func newLazyAvg(p *Problem) *lazyAvg {
	n := p.N()
	ne := p.D - p.offFirst
	return &lazyAvg{
		smu:  largeFloats(p.Train.Letters() * p.K),
		tauB: make([]int64, n),
		sne:  make([]float64, ne),
		tauC: make([]int64, ne),
	}
}

// tri returns T(k) = k(k+1)/2 = Σ_{j=1}^{k} j.
func tri(k int64) int64 { return k * (k + 1) / 2 }

// span returns Σ_{j=a+1}^{b} j = T(b) − T(a) as a float64 (exact below 2^53).
func span(a, b int64) float64 { return float64(tri(b) - tri(a)) }

// flushBlock adds block i's marginals mu (L × K, held since step
// tauB[i]+1) for the steps up to k−1: called before step k changes them.
// Row t of mu is zero off the labels nz[off[t]:off[t+1]], which are the
// only ones added (the others would add exact zeros).
func (a *lazyAvg) flushBlock(i int, mu []float64, start, K int, nz []int32, off []int, k int64) {
	t := a.tauB[i]
	if t >= k-1 {
		return
	}
	c := span(t, k-1)
	s := a.smu[start : start+len(mu)]
	for r := 0; r+1 < len(off); r++ {
		sr, mr := s[r*K:(r+1)*K], mu[r*K:(r+1)*K]
		for _, q := range nz[off[r]:off[r+1]] {
			sr[q] += c * mr[q]
		}
	}
	a.tauB[i] = k - 1
}

// flushCoord adds non-emission coordinate q's value v (held since step
// tauC[q]+1) for the steps up to k−1: called before step k changes it.
func (a *lazyAvg) flushCoord(q int, v float64, k int64) {
	t := a.tauC[q]
	if t >= k-1 {
		return
	}
	a.sne[q] += span(t, k-1) * v
	a.tauC[q] = k - 1
}

// flushAllCoords flushes every non-emission coordinate of w (ne = w[offFirst:])
// before step k changes them all (the once-per-pass recomputation).
func (a *lazyAvg) flushAllCoords(ne []float64, k int64) {
	for q, v := range ne {
		a.flushCoord(q, v, k)
	}
}

// averaged writes w̄ after step k to dst (length D): the emission part from
// the averaged marginals, the rest from the averaged coordinates.
func (m *Method) averaged(dst []float64) {
	p := m.p
	a := m.lz
	k := int64(m.k)
	if k == 0 {
		zero(dst)
		return
	}
	T := float64(tri(k))
	if a.mbar == nil {
		a.mbar = make([]float64, len(a.smu))
	}
	K := p.K
	for i, wd := range p.Train.Words {
		c := span(a.tauB[i], k)
		lo, hi := wd.Start*K, (wd.Start+wd.Len)*K
		s, mu, mb := a.smu[lo:hi], m.mu[lo:hi], a.mbar[lo:hi]
		for q, v := range mu {
			mb[q] = (s[q] + c*v) / T
		}
	}
	if a.ft == nil {
		a.ft = make([]float64, K*p.F)
	}
	m.emissionFromMarginals(dst[:K*p.F], a.mbar, a.ft, nil, nil)
	ne := m.w[p.offFirst:p.D]
	for q, v := range ne {
		dst[p.offFirst+q] = (a.sne[q] + span(a.tauC[q], k)*v) / T
	}
}

// avgWeights returns the reported average w̄ (bcfw and bcfw-as: formed from
// the lazy sums into wavg; ssg: wavg as kept).
func (m *Method) avgWeights() []float64 {
	if m.lz != nil {
		m.averaged(m.wavg)
	}
	return m.wavg
}

// weights returns the current iterate w, first copying the emission
// weights from their feature-major copy when block steps have changed them.
func (m *Method) weights() []float64 {
	if m.wStale {
		untransposeEmissions(m.wt, m.w, m.p.K, m.p.F)
		m.wStale = false
	}
	return m.w
}
