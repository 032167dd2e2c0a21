package gflasso

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// gemmRows: blocks with at least this many rows of B take their sampled
// gradients by Gemm over chunks of gradChunk samples.
const (
	gemmRows  = 8
	gradChunk = 128
)

// gradBuf is a block's scratch for its sampled gradient: gathered rows of X
// and residuals of a chunk of samples.
type gradBuf struct {
	x, r []float64
	mark []bool // complementOf's scratch
	rest []int
}

// gradScratch returns block b's gradient scratch for nr rows of B (0: the
// residual of one sample only).
func (m *model) gradScratch(b, nr, kc int) *gradBuf {
	gb := &m.grads[b]
	if len(gb.x) < gradChunk*nr || len(gb.r) < gradChunk*kc {
		gb.x = make([]float64, gradChunk*nr)
		gb.r = make([]float64, gradChunk*kc)
	}
	return gb
}

// Gradient implements solver.Model: (N/m)·X_Jᵀ(X_J B_b − Y_{J,C}) on the B
// coordinates of block b (exact with batch == nil), and 1 on t_b.
func (m *model) Gradient(b int, g []float64, x []float64, batch []int) {
	p := m.p
	bi := p.info[b]
	c := p.comps[bi.comp]
	kc := len(c.tasks)
	st := m.comps[bi.comp]
	for i := range g {
		g[i] = 0
	}
	st.lockRead(m, bi.comp)
	if st.cur != nil && batch == nil {
		copy(g[:bi.size-1], m.rowGrad(bi.comp, bi.r0))
		st.mu.RUnlock()
		g[bi.size-1] = 1
		return
	}
	if st.h != nil && batch == nil {
		for j := 0; j < p.J; j++ {
			xy := p.xty[j*p.K : (j+1)*p.K]
			for a, t := range c.tasks {
				g[j*kc+a] = st.h[j*kc+a] - xy[t]
			}
		}
		st.mu.RUnlock()
		g[bi.size-1] = 1
		return
	}
	scale := 1.0
	rows := batch
	if batch == nil {
		rows = nil
	} else {
		scale = float64(p.N) / float64(len(batch))
	}
	// A batch of more than half the samples, with the exact gradient at hand
	// (XᵀX B_C): its sum is the full sum less the samples outside it.
	complement := st.h != nil && batch != nil && 2*len(batch) > p.N
	if complement {
		rows = m.complementOf(b, batch)
	}
	if bi.r1-bi.r0 >= gemmRows {
		m.gradSumGemm(b, g, rows, st)
	} else {
		m.gradSumRows(b, g, rows, st)
	}
	if complement {
		for j := 0; j < p.J; j++ {
			xy := p.xty[j*p.K : (j+1)*p.K]
			for a, t := range c.tasks {
				g[j*kc+a] = (st.h[j*kc+a] - xy[t]) - g[j*kc+a]
			}
		}
	}
	st.mu.RUnlock()
	if scale != 1 {
		for i := range g[:bi.size-1] {
			g[i] *= scale
		}
	}
	g[bi.size-1] = 1
}

// gradSumGemm adds to g the block's rows of Σ_i X_iᵀ (z_i − y_i) over
// rows (every sample when nil) for a block of many rows: G = X_Bᵀ R_B by
// Gemm over chunks of the samples (their rows of X gathered, and their
// residuals). The caller holds st's read lock.
func (m *model) gradSumGemm(b int, g []float64, rows []int, st *compState) {
	p := m.p
	bi := p.info[b]
	c := p.comps[bi.comp]
	kc := len(c.tasks)
	nr := bi.r1 - bi.r0
	gb := m.gradScratch(b, nr, kc)
	out := blas64.General{Rows: nr, Cols: kc, Stride: kc, Data: g[:nr*kc]}
	n := len(rows)
	if rows == nil {
		n = p.N
	}
	for lo := 0; lo < n; lo += gradChunk {
		hi := min(lo+gradChunk, n)
		for q := lo; q < hi; q++ {
			i := q
			if rows != nil {
				i = rows[q]
			}
			copy(gb.x[(q-lo)*nr:(q-lo+1)*nr], p.x[i*p.J+bi.r0:i*p.J+bi.r1])
			zi := st.z[i*kc : (i+1)*kc]
			ri := gb.r[(q-lo)*kc : (q-lo+1)*kc]
			for a, t := range c.tasks {
				ri[a] = zi[a] - p.y[i*p.K+t]
			}
		}
		cn := hi - lo
		blas64.Gemm(blas.Trans, blas.NoTrans, 1,
			blas64.General{Rows: cn, Cols: nr, Stride: nr, Data: gb.x[:cn*nr]},
			blas64.General{Rows: cn, Cols: kc, Stride: kc, Data: gb.r[:cn*kc]}, 1, out)
	}
}

// gradSumRows adds to g the block's rows of Σ_i X_iᵀ (z_i − y_i) over
// rows (every sample when nil) for a block of few rows: one sample at a
// time, skipping its zero entries of X. The caller holds st's read lock.
func (m *model) gradSumRows(b int, g []float64, rows []int, st *compState) {
	p := m.p
	bi := p.info[b]
	c := p.comps[bi.comp]
	kc := len(c.tasks)
	res := m.gradScratch(b, 0, kc).r[:kc]
	each := func(i int) {
		zi := st.z[i*kc : (i+1)*kc]
		for a, t := range c.tasks {
			res[a] = zi[a] - p.y[i*p.K+t]
		}
		xi := p.x[i*p.J : (i+1)*p.J]
		for j := bi.r0; j < bi.r1; j++ {
			v := xi[j]
			if v == 0 {
				continue
			}
			gj := g[(j-bi.r0)*kc : (j-bi.r0+1)*kc]
			for a, r := range res {
				gj[a] += v * r
			}
		}
	}
	if rows == nil {
		for i := 0; i < p.N; i++ {
			each(i)
		}
	} else {
		for _, i := range rows {
			each(i)
		}
	}
}

// complementOf returns the samples outside batch (distinct indices), in
// increasing order, in block b's scratch.
func (m *model) complementOf(b int, batch []int) []int {
	gb := &m.grads[b]
	if gb.mark == nil {
		gb.mark = make([]bool, m.p.N)
		gb.rest = make([]int, 0, m.p.N)
	}
	for _, i := range batch {
		gb.mark[i] = true
	}
	rest := gb.rest[:0]
	for i, in := range gb.mark {
		if in {
			gb.mark[i] = false
		} else {
			rest = append(rest, i)
		}
	}
	gb.rest = rest
	return rest
}
