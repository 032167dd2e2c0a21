package ssvm

import ()

// blockMarg returns block i's unary (L×K) marginals.
func (m *Method) blockMarg(i int) []float64 {
	K := m.p.K
	wd := m.p.Train.Words[i]
	return m.mu[wd.Start*K : (wd.Start+wd.Len)*K]
}

// transMarg returns a dense copy of block i's transition marginals (K×K).
func (m *Method) transMarg(i int) []float64 {
	KK := m.p.K * m.p.K
	out := make([]float64, KK)
	v := m.supportVals(i)
	for q, j := range m.support(i) {
		out[j] = v[q]
	}
	return out
}

// loadTrans expands block i's stored transition marginals into the dense
// scratch mtd (zero elsewhere) and returns it.
func (m *Method) loadTrans(i int) []float64 {
	v := m.supportVals(i)
	for q, j := range m.support(i) {
		m.mtd[j] = v[q]
	}
	return m.mtd
}

// clearTrans zeroes the dense scratch mtd on idx, which covers its nonzeros.
func (m *Method) clearTrans(idx []int) {
	for _, j := range idx {
		m.mtd[j] = 0
	}
}

// addTrans adds c·(transition indicators of y) to the dense transition
// marginals mtd of the block being stepped.
func (m *Method) addTrans(y []int, c float64) {
	K := m.p.K
	for t := 0; t+1 < len(y); t++ {
		m.mtd[y[t]+K*y[t+1]] += c
	}
}

// setMarginals adds c·(indicators of y) to block i's unary marginals and
// to the dense transition marginals mtd of the block being stepped.
func (m *Method) setMarginals(i int, y []int, c float64) {
	mu, mt := m.blockMarg(i), m.mtd
	K := m.p.K
	for t, k := range y {
		mu[t*K+k] += c
	}
	for t := 0; t+1 < len(y); t++ {
		mt[y[t]+K*y[t+1]] += c
	}
}

// support returns block i's list of transition indices where its
// marginals may be nonzero (they are zero elsewhere), increasing.
func (m *Method) support(i int) []uint16 {
	s := int(m.tStart[i])
	return m.tsup[s : s+int(m.supN[i])]
}

// supportVals returns the values of block i's transition marginals at its
// support.
func (m *Method) supportVals(i int) []float64 {
	s := int(m.tStart[i])
	return m.tval[s : s+int(m.supN[i])]
}

// makeRoom gives block i room for need entries at the end of the arenas
// (its old room is left unused), growing them when full.
func (m *Method) makeRoom(i, need int) {
	c := min(m.p.K*m.p.K, max(2*need, 16))
	n := len(m.tsup)
	if n+c > cap(m.tsup) {
		sup := make([]uint16, n, 2*cap(m.tsup)+c)
		val := make([]float64, n, 2*cap(m.tsup)+c)
		copy(sup, m.tsup)
		copy(val, m.tval)
		m.tsup, m.tval = sup, val
	}
	m.tsup, m.tval = m.tsup[:n+c], m.tval[:n+c]
	m.tStart[i], m.tCap[i] = int32(n), int32(c)
}

// storeTrans stores the dense transition marginals mtd as block i's: the
// entries of idx (increasing, covering every nonzero) where they are
// nonzero, with their values. It then clears mtd on idx.
func (m *Method) storeTrans(i int, idx []int) {
	if len(idx) > int(m.tCap[i]) {
		m.makeRoom(i, len(idx))
	}
	mt := m.mtd
	s, c := int(m.tStart[i]), int(m.tCap[i])
	dst, val := m.tsup[s:s+c], m.tval[s:s+c]
	n := 0
	for _, j := range idx {
		if v := mt[j]; v != 0 {
			dst[n], val[n] = uint16(j), v
			n++
		}
	}
	m.supN[i] = int32(n)
	m.clearTrans(idx)
}

// transitions writes the distinct transition indices y_t + K·y_{t+1} of y
// to dst, increasing.
func transitions(y []int, K int, dst []int) []int {
	dst = dst[:0]
	for t := 0; t+1 < len(y); t++ {
		v := y[t] + K*y[t+1]
		q := len(dst)
		dst = append(dst, v)
		for q > 0 && dst[q-1] > v {
			dst[q] = dst[q-1]
			q--
		}
		dst[q] = v
	}
	n := 0
	for q, v := range dst {
		if q == 0 || v != dst[n-1] {
			dst[n] = v
			n++
		}
	}
	return dst[:n]
}

// union writes the increasing union of the increasing lists a and b to dst.
func union(a []uint16, b []int, dst []int) []int {
	dst = dst[:0]
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		x, y := int(a[i]), b[j]
		switch {
		case x < y:
			dst = append(dst, x)
			i++
		case x > y:
			dst = append(dst, y)
			j++
		default:
			dst = append(dst, x)
			i++
			j++
		}
	}
	for ; i < len(a); i++ {
		dst = append(dst, int(a[i]))
	}
	return append(dst, b[j:]...)
}
