package ssvm

import (
	"math/bits"
	"slices"
)

// newLabels returns a copy of y, in a slice left by an atom that has
// left an active set when there is one.
func (m *Method) newLabels(y []int) []int {
	if n := len(y); n < len(m.pool) {
		if q := len(m.pool[n]); q > 0 {
			out := m.pool[n][q-1]
			m.pool[n] = m.pool[n][:q-1]
			copy(out, y)
			return out
		}
	}
	if cap(m.arena)-len(m.arena) < len(y) {
		m.arena = make([]int, 0, max(1<<16, len(y)))
	}
	a := len(m.arena)
	m.arena = append(m.arena, y...)
	return m.arena[a : a+len(y) : a+len(y)]
}

// moreAtoms moves an active set that is full to a room of twice its
// capacity, taken from a shared arena of atoms (a new chunk when the
// current one is full), so that active sets grow without an allocation
// each time.
func (m *Method) moreAtoms(as []atom) []atom {
	c := 2 * max(cap(as), 2)
	if cap(m.atoms)-len(m.atoms) < c {
		m.atoms = make([]atom, 0, max(1<<14, c))
	}
	a := len(m.atoms)
	m.atoms = m.atoms[:a+c]
	out := m.atoms[a : a+len(as) : a+c]
	copy(out, as)
	clear(as)
	return out
}

// freeLabels keeps the labelling of an atom that left its active set for
// reuse.
func (m *Method) freeLabels(y []int) {
	if n := len(y); n < len(m.pool) {
		m.pool[n] = append(m.pool[n], y)
	}
}

// activeLabels writes to nzU, offU the labels of block i's active
// labellings and of s at each position (row t: nzU[offU[t]:offU[t+1]],
// increasing, without repeats): every label where μ_t can be nonzero,
// before or after the step.
func (m *Method) activeLabels(i int, s []int) {
	m.nzU, m.offU = labelSets(m.p.K, s, m.act[i], m.nzU[:0], m.offU[:0])
}

// labelSets appends to nz, for each position t, the labels of s and of the
// atoms' labellings at t (increasing, without repeats), and to off the
// start of each position's list and the end of the last.
func labelSets(K int, s []int, as []atom, nz []int32, off []int) ([]int32, []int) {
	off = append(off, len(nz))
	if K <= 64 {
		// The set as a bit mask, read in increasing order.
		for t, st := range s {
			b := uint64(1) << uint(st)
			for _, at := range as {
				b |= 1 << uint(at.y[t])
			}
			for ; b != 0; b &= b - 1 {
				nz = append(nz, int32(bits.TrailingZeros64(b)))
			}
			off = append(off, len(nz))
		}
		return nz, off
	}
	for t, st := range s {
		q0 := len(nz)
		nz = insertLabel(nz, q0, int32(st))
		for _, at := range as {
			nz = insertLabel(nz, q0, int32(at.y[t]))
		}
		off = append(off, len(nz))
	}
	return nz, off
}

// insertLabel inserts v into the increasing list nz[q0:] unless present.
func insertLabel(nz []int32, q0 int, v int32) []int32 {
	q := len(nz)
	for q > q0 && nz[q-1] > v {
		q--
	}
	if q > q0 && nz[q-1] == v {
		return nz
	}
	nz = append(nz, 0)
	copy(nz[q+1:], nz[q:])
	nz[q] = v
	return nz
}

// clearDirs zeroes the unary directions du and duA of a word of length L
// on the candidate labels nzU, where bcfw-as wrote them.
func (m *Method) clearDirs(L int) {
	K := m.p.K
	du, duA := m.du[:L*K], m.duA[:L*K]
	for t := 0; t < L; t++ {
		for _, k := range m.nzU[m.offU[t]:m.offU[t+1]] {
			du[t*K+int(k)] = 0
			duA[t*K+int(k)] = 0
		}
	}
}

// updateActive applies the vertex-representation update (Algorithm 2) to
// block i's active set and returns the number of weights cleaned up.
func (m *Method) updateActive(i int, s []int, lossS float64, u int, away, drop bool, gamma float64) int {
	as := m.act[i]
	if away {
		for a := range as {
			as[a].weight *= 1 + gamma
		}
		as[u].weight -= gamma
		if drop {
			m.freeLabels(as[u].y)
			as = append(as[:u], as[u+1:]...)
		}
	} else if gamma == 1 {
		for _, at := range as {
			m.freeLabels(at.y)
		}
		as = append(as[:0], atom{y: m.newLabels(s), loss: lossS, weight: 1})
	} else {
		found := false
		for a := range as {
			as[a].weight *= 1 - gamma
			if slices.Equal(as[a].y, s) {
				as[a].weight += gamma
				found = true
			}
		}
		if !found {
			if len(as) == cap(as) {
				as = m.moreAtoms(as)
			}
			as = append(as, atom{y: m.newLabels(s), loss: lossS, weight: gamma})
		}
	}
	// Clean-up: weights below δ are zeroed (the atom leaves), then the
	// weights are renormalised to sum to 1.
	cleaned := 0
	kept := as[:0]
	for _, at := range as {
		if at.weight < m.o.DropTol {
			cleaned++
			m.freeLabels(at.y)
			continue
		}
		kept = append(kept, at)
	}
	as = kept
	sum := 0.0
	for _, at := range as {
		sum += at.weight
	}
	for a := range as {
		as[a].weight /= sum
	}
	m.nAct += len(as) - len(m.act[i])
	m.act[i] = as
	return cleaned
}
