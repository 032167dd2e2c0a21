package ssvm

import ()

func zero(x []float64) {
	for i := range x {
		x[i] = 0
	}
}

// dotNZ returns Σ_{k ∈ nz} a[k]·b[k] in increasing k: the sequential dot
// product of a and b when b is zero off nz and a is finite (a sum started
// at +0 is left unchanged by the skipped exact zeros).
func dotNZ(a, b []float64, nz []int32) float64 {
	s := 0.0
	for _, k := range nz {
		s += a[k] * b[k]
	}
	return s
}

// lin returns Σ E⊙du + first·du_0 + last·du_{L−1} + trans·dt, i.e.
// <w, φ(ΔM)> for a marginal-space direction (du, dt) of a word of length L
// whose row t of du is zero off the labels nz[off[t]:off[t+1]] and
// whose transition part dt is zero outside dsup. The sums are those of the
// dense loops: only exact zero terms are skipped.
func (m *Method) lin(E, first, last, trans, du, dt []float64, dsup []int, nz []int32, off []int, L int) float64 {
	K := m.p.K
	s := 0.0
	for t := 0; t < L; t++ {
		e, d := E[t*K:(t+1)*K], du[t*K:(t+1)*K]
		for _, k := range nz[off[t]:off[t+1]] {
			s += e[k] * d[k]
		}
	}
	s += dotNZ(first, du[:K], nz[off[0]:off[1]]) + dotNZ(last, du[(L-1)*K:L*K], nz[off[L-1]:off[L]])
	return s + dotOn(trans, dt, dsup)
}

// dotOn returns Σ_{j ∈ idx} a[j]·b[j] in the order of idx, which equals the
// full sequential dot product when idx is increasing and holds every j
// where b[j] ≠ 0 (the other terms are exact zeros, and a sum started at +0
// never becomes −0).
func dotOn(a, b []float64, idx []int) float64 {
	s := 0.0
	for _, j := range idx {
		s += a[j] * b[j]
	}
	return s
}

// sqnorm returns ‖φ(ΔM)‖² using the word's Gram matrix, for a direction
// whose rows of du are zero off their lists (nz, off). Each inner product
// of two rows runs over the first row's list, in the order of dot, and the
// products are added to the norm in the order of the plain double loop.
func (m *Method) sqnorm(i int, du, dt []float64, dsup []int, nz []int32, off []int, L int) float64 {
	K := m.p.K
	G := m.p.gram[m.p.gramOff[i]:m.p.gramOff[i+1]]
	d := m.dots[:L]
	s := 0.0
	var d00, dLL float64
	for t := 0; t < L; t++ {
		ut := du[t*K : (t+1)*K]
		nzt := nz[off[t]:off[t+1]]
		for r := 0; r <= t; r++ {
			d[r] = dotNZ(du[r*K:(r+1)*K], ut, nzt)
		}
		s += G[t*L+t] * d[t]
		for r := 0; r < t; r++ {
			s += 2 * G[t*L+r] * d[r]
		}
		if t == 0 {
			d00 = d[0]
		}
		if t == L-1 {
			dLL = d[t]
		}
	}
	s += d00 + dLL
	return s + dotOn(dt, dt, dsup)
}

// applyDelta performs w −= φ(ΔM)/(λn) for block i's marginal change, whose
// row t of du is zero off the labels nz[off[t]:off[t+1]] and whose
// transition part dt is zero outside dsup. Labels of one row update
// disjoint coordinates of w, so only the order of the rows matters; the
// skipped entries would add exact zeros.
func (m *Method) applyDelta(i int, du []float64, nz []int32, off []int, dt []float64, dsup []int) {
	p := m.p
	wd := p.Train.Words[i]
	c := -1 / (p.Lambda * float64(p.N()))
	m.applyEmissions(wd, c, du, nz, off)
	m.wStale = true
	m.applyEnds(wd, c, du, nz, off, dt, dsup)
}

// applyEmissions adds c·ΔM's unary part to the emission weights, in their
// feature-major copy only (w's own emission blocks are brought up to date
// when read: weights).
func (m *Method) applyEmissions(wd Word, c float64, du []float64, nz []int32, off []int) {
	p := m.p
	K, F := p.K, p.F
	sx := p.sx
	wt, r := m.wt[:K*F], m.rrow[:K]
	for t := 0; t < wd.Len; t++ {
		nzt := nz[off[t]:off[t+1]]
		if len(nzt) == 0 {
			continue
		}
		row := du[t*K : (t+1)*K]
		j := wd.Start + t
		if len(nzt) < rowsFrom {
			// Few labels: w_k += a·x_j label by label (as
			// floats.AddScaled), on the feature-major copy.
			for _, k32 := range nzt {
				if a := c * row[k32]; a != 0 {
					sx.addColumn(j, a, int(k32), K, wt)
				}
			}
			continue
		}
		zero(r)
		for _, k := range nzt {
			r[k] = c * row[k]
		}
		// Many labels: w_k += r_k·x_j for every label at once, row by
		// row of the feature-major copy (the same sums).
		sx.addRows(j, r, K, wt, &m.r26)
	}
}

// applyEnds adds c·ΔM's first-letter, last-letter and transition parts to
// w, after the lazy average has taken the coordinates about to change, and
// keeps the transitions' copy by predecessor and its row bounds.
func (m *Method) applyEnds(wd Word, c float64, du []float64, nz []int32, off []int, dt []float64, dsup []int) {
	K := m.p.K
	first, last, trans := m.p.parts(m.w)
	if lz := m.lz; lz != nil {
		// The average takes the coordinates about to change as they were.
		k := int64(m.k)
		for _, q := range nz[off[0]:off[1]] {
			lz.flushCoord(int(q), first[q], k)
		}
		for _, q := range nz[off[wd.Len-1]:off[wd.Len]] {
			lz.flushCoord(K+int(q), last[q], k)
		}
		for _, j := range dsup {
			lz.flushCoord(2*K+j, trans[j], k)
		}
	}
	for _, k := range nz[off[0]:off[1]] {
		first[k] += c * du[k]
	}
	for _, k := range nz[off[wd.Len-1]:off[wd.Len]] {
		last[k] += c * du[(wd.Len-1)*K+int(k)]
	}
	for _, j := range dsup {
		v := trans[j] + c*dt[j]
		trans[j] = v
		r := j % K // predecessor
		m.tT[r*K+j/K] = v
		if v > m.ub[r] {
			m.ub[r] = v
		}
		if v < m.lb[r] {
			m.lb[r] = v
		}
		if v-v != 0 {
			m.transOK = false
		}
	}
}

// eye26 holds the unit vectors e(y) of OCR's 26 labels.
var eye26 = func() (e [26][26]float64) {
	for k := range e {
		e[k][k] = 1
	}
	return e
}()

// rowsFrom is the number of labels of a letter from which the emission
// weights are updated a feature's row of K at a time rather than label by
// label (the results are the same): fewer with 256-bit vectors.
var rowsFrom = map[bool]int{true: 5, false: 8}[useAVX2]
