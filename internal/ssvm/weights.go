package ssvm

import (
	"math/bits"
	"unsafe"
)

// touch asks for block i's marginals, its letters' features, its Gram
// matrix and (bcfw-as) its active labellings to be brought into cache
// (prefetches, which do not wait for the data), so that they are there for
// its step.
func (m *Method) touch(i int) {
	p := m.p
	K := p.K
	wd := p.Train.Words[i]
	var as []atom
	if m.act != nil { // bcfw-as: the active set first, its labellings last
		as = m.act[i]
		prefetchRange(unsafe.Pointer(unsafe.SliceData(as)), uintptr(len(as))*unsafe.Sizeof(atom{}))
	}
	prefetchF64(m.mu[wd.Start*K : (wd.Start+wd.Len)*K])
	if m.lz != nil {
		prefetchF64(m.lz.smu[wd.Start*K : (wd.Start+wd.Len)*K])
	}
	prefetchF64(m.supportVals(i))
	if sup := m.support(i); len(sup) > 0 {
		prefetchRange(unsafe.Pointer(&sup[0]), uintptr(len(sup))*2)
	}
	sx := p.sx
	o := sx.off[sparseLanes*wd.Start : sparseLanes*(wd.Start+wd.Len)+1]
	prefetchRange(unsafe.Pointer(&o[0]), uintptr(len(o))*4)
	lo, hi := o[0], o[len(o)-1]
	if hi > lo {
		prefetchRange(unsafe.Pointer(&sx.idx[lo]), uintptr(hi-lo)*2)
	}
	y := p.Train.Y[wd.Start : wd.Start+wd.Len]
	prefetchRange(unsafe.Pointer(&y[0]), uintptr(len(y))*unsafe.Sizeof(0))
	prefetchF64(p.gram[p.gramOff[i]:p.gramOff[i+1]])
	for _, at := range as {
		prefetchRange(unsafe.Pointer(unsafe.SliceData(at.y)), uintptr(len(at.y))*unsafe.Sizeof(0))
	}
}

// touchIndex asks for block i's entries in the per-block index arrays (its
// word, Gram offset, room for transition marginals, ℓ_i, active set), which
// touch reads to find the block's data.
func (m *Method) touchIndex(i int) {
	p := m.p
	prefetchRange(unsafe.Pointer(&p.Train.Words[i]), unsafe.Sizeof(Word{}))
	prefetchRange(unsafe.Pointer(&p.gramOff[i]), 2*unsafe.Sizeof(0))
	prefetchRange(unsafe.Pointer(&m.tStart[i]), 4)
	prefetchRange(unsafe.Pointer(&m.supN[i]), 4)
	prefetchRange(unsafe.Pointer(&m.elli[i]), 8)
	if m.lz != nil {
		prefetchRange(unsafe.Pointer(&m.lz.tauB[i]), 8)
	}
	if m.act != nil {
		prefetchRange(unsafe.Pointer(&m.act[i]), unsafe.Sizeof([]atom{}))
	}
}

// prefetchF64 asks for x's cache lines.
func prefetchF64(x []float64) {
	prefetchRange(unsafe.Pointer(unsafe.SliceData(x)), uintptr(len(x))*8)
}

// refreshCopies rebuilds the feature-major emission weights, the
// predecessor-major transitions and their exact row maxima from w.
func (m *Method) refreshCopies() {
	p := m.p
	transposeEmissions(m.w, m.wt, p.K, p.F)
	_, _, trans := p.parts(m.w)
	m.transOK = transposeTrans(trans, m.tT, m.ub, m.lb, p.K)
}

// boundsEvery is the number of block steps between two recomputations of
// the bounds on the transition rows that Viterbi prunes with. A step only
// loosens them (a changed weight can raise ub or lower lb, never the
// reverse), so they drift away from the rows' extremes over a pass; tight
// bounds prune more predecessors. The decoding is the same either way.
const boundsEvery = 32

// tightenBounds sets ub and lb to the exact maximum and minimum of each
// predecessor's row of transition weights.
func (m *Method) tightenBounds() {
	K := m.p.K
	for j := range m.ub {
		row := m.tT[j*K : j*K+K]
		hi, lo := row[0], row[0]
		for _, v := range row[1:] {
			if v > hi {
				hi = v
			}
			if v < lo {
				lo = v
			}
		}
		m.ub[j], m.lb[j] = hi, lo
	}
}

// recomputeW recomputes w = Σ_i (φ(x_i, y_i) − φ(x_i, M_i))/(λn) and ℓ from
// the block marginals, from scratch. The emission blocks are accumulated
// letter by letter over the nonzero features, in the order (and so with the
// rounding) of the matrix product Rᵀ·X with R = onehot(y) − μ, without
// forming R; the first and last weights in the same sweep.
func (m *Method) recomputeW(dst []float64) float64 {
	p := m.p
	K, F := p.K, p.F
	ds := p.Train
	c := 1 / (p.Lambda * float64(p.N()))
	zero(dst[K*F:])
	first, last, trans := p.parts(dst)
	m.emissionFromMarginals(dst[:K*F], m.mu, m.wt, first, last)
	for i, wd := range ds.Words {
		truth := ds.Y[wd.Start : wd.Start+wd.Len]
		v := m.supportVals(i)
		for q, j := range m.support(i) { // the marginals are zero elsewhere
			trans[j] -= v[q]
		}
		for t := 0; t+1 < len(truth); t++ {
			trans[truth[t]+K*truth[t+1]]++
		}
	}
	for j := range dst[K*F:] {
		dst[K*F+j] *= c
	}
	ell := 0.0
	for _, v := range m.elli {
		ell += v
	}
	return ell
}

// emissionFromMarginals writes to dst (K·F, label-major) and to ft (the
// same in feature-major order) the emission weights
// Σ_t (e(y_t) − mu_t) ⊗ x_t/(λn) of the training letters for the marginals
// mu (letters × K). Each weight's terms are added letter by letter in the
// order of the product Rᵀ·X, R = onehot(y) − mu (the letter's zero terms
// add exact zeros to sums that start at +0, which leaves them unchanged),
// then scaled by 1/(λn). With first and last non-nil, it also adds each
// word's first and last row of R to them (unscaled).
func (m *Method) emissionFromMarginals(dst, mu, ft, first, last []float64) {
	p := m.p
	K, F := p.K, p.F
	ds := p.Train
	c := 1 / (p.Lambda * float64(p.N()))
	ft = ft[:K*F]
	zero(ft)
	r := m.rrow[:K]
	for _, wd := range ds.Words {
		for j := wd.Start; j < wd.Start+wd.Len; j++ {
			mask, vec := letterResidual(r, mu[j*K:(j+1)*K], ds.Y[j], K)
			if first != nil {
				if j == wd.Start {
					for k, v := range r {
						first[k] += v
					}
				}
				if j == wd.Start+wd.Len-1 {
					for k, v := range r {
						last[k] += v
					}
				}
			}
			m.addLetter(j, r, mask, vec, ft)
		}
	}
	for j := range ft {
		ft[j] *= c
	}
	untransposeEmissions(ft, dst, K, F)
}

// letterResidual writes r = e(y) − μ for one letter. With 26 labels it is
// done by vector code (vec), which also returns the mask of r's nonzero
// labels (the same values: 1 − v rounds as (−v) + 1; a zero may come out
// as +0 instead of −0, which adds nothing either way).
func letterResidual(r, mu []float64, y, K int) (mask uint32, vec bool) {
	mu = mu[:len(r)]
	if K == 26 {
		mask, vec = residual26((*[26]float64)(r), &eye26[y], (*[26]float64)(mu))
	}
	if !vec {
		for k, v := range mu {
			r[k] = -v
		}
		r[y]++
	}
	return mask, vec
}

// addLetter adds r ⊗ x_j to the feature-major emission weights ft: row by
// row for many nonzero labels, label by label for few (the same sums).
func (m *Method) addLetter(j int, r []float64, mask uint32, vec bool, ft []float64) {
	K := m.p.K
	sx := m.p.sx
	if vec {
		if bits.OnesCount32(mask) >= rowsFrom {
			sx.addRows(j, r, K, ft, &m.r26)
			return
		}
		for ; mask != 0; mask &= mask - 1 {
			k := bits.TrailingZeros32(mask)
			sx.addColumn(j, r[k], k, K, ft)
		}
		return
	}
	nzl := m.nzl[:K]
	n := 0
	for k, v := range r {
		nzl[n] = k
		n += b2i(v != 0)
	}
	if n >= rowsFrom {
		sx.addRows(j, r, K, ft, &m.r26)
		return
	}
	for _, k := range nzl[:n] {
		sx.addColumn(j, r[k], k, K, ft)
	}
}
