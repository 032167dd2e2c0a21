package ssvm

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"time"
	"unsafe"

	"github.com/fwlab/fwlab/internal/solver"
)

// Algorithm names.
const (
	AlgoBCFW   = "bcfw"
	AlgoBCFWAS = "bcfw-as"
	AlgoSSG    = "ssg"
)

// StepSG is the step kind of the stochastic subgradient method.
const StepSG = "sg"

// DefaultDropTol is δ: an away step with γ ≥ γ̄(1−δ) is snapped to an exact
// drop, and active weights below δ are zeroed (counted as clean-ups).
const DefaultDropTol = 1e-10

// Options configures one solver run.
type Options struct {
	Algo string
	// Average reports the weighted average w̄ ← k/(k+2)·w̄ + 2/(k+2)·w (with
	// the matching ℓ̄) as the run's objective and gap.
	Average bool
	// Schedule is bcfw-as's feature-sampling batch schedule m_k over the d
	// coordinates of w (ignored by the other algorithms).
	Schedule solver.Schedule
	Limits   solver.Limits
	Seed     int64
	DropTol  float64 // 0: DefaultDropTol
}

// atom is one active labelling of a block with its weight α_i(y).
type atom struct {
	y      []int
	loss   float64 // L_i(y)
	weight float64
}

// Method is one configured run of bcfw, bcfw-as or ssg on a Problem. It
// implements solver.Method.
type Method struct {
	p   *Problem
	o   Options
	rng *rand.Rand

	w, wavg       []float64
	lz            *lazyAvg  // bcfw and bcfw-as with averaging: w̄ kept lazily (wavg is formed on demand)
	wt            []float64 // w's emission blocks in feature-major order (F×K), kept equal to w's (see wStale)
	wStale        bool      // w's own emission blocks lag behind wt (block steps update wt only)
	rrow          []float64 // K: one letter's change of the emission weights (scratch)
	nzl           []int     // K: its nonzero labels (scratch)
	r26           [26]float64
	tT, ub, lb    []float64 // w's transitions by predecessor, bounds on their rows (ub ≥ max, lb ≤ min)
	transOK       bool      // every transition weight is finite
	tJT, ubJ, lbJ []float64 // the same for I_J w (bcfw-as)
	ell, lavg     float64
	mu            []float64 // letters × K: unary marginals Σ_y α_i(y)[y_t = k]
	mtd           []float64 // K²: the transition marginals of the block being stepped, dense (zero between steps)
	elli          []float64 // ℓ_i = Σ_y α_i(y) L_i(y)/n
	act           [][]atom  // bcfw-as active sets

	// scratch
	dec               *decoder
	E, EJ             []float64
	acc               []float64 // 4K partial sums of the emission scores
	wJ, wJt           []float64
	perm              []int
	ys, yb            []int
	du, dtr, duA, dtA []float64
	dots              []float64 // maxLen inner products (scratch)
	nzF, nzA, nzU     []int32   // the nonzero labels of each row of du, duA and the change of μ (row t: nz[off[t]:off[t+1]])
	offF, offA, offU  []int
	muOld, mtOld      []float64
	// Block i's nonzero transition marginals: supN[i] increasing indices
	// and their values at tStart[i] in the arenas tsup and tval, with room
	// for tCap[i] (a block that outgrows its room moves to the arenas' end).
	tsup                 []uint16
	tval                 []float64
	tStart, tCap, supN   []int32
	tS, tA, uFW, uA      []int     // transition index lists (scratch)
	pool                 [][][]int // labellings of atoms that left, by length, for reuse
	arena                []int     // storage for new labellings
	atoms                []atom    // storage for active sets that outgrow their room
	next                 int       // the next block, drawn ahead (−1: none)
	next2                int       // the block after it, when drawn ahead too (−1: none)
	ev                   *evaluator
	k                    int
	last                 *Eval
	lastPlain            *Eval
	statDrops, statClean int
	nAct                 int // active labellings summed over the blocks (bcfw-as)
}

var _ solver.Method = (*Method)(nil)

// NewMethod configures a run.
func (p *Problem) NewMethod(o Options) (*Method, error) {
	switch o.Algo {
	case AlgoBCFW, AlgoSSG:
	case AlgoBCFWAS:
		if err := o.Schedule.Validate(); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("algo: the structural SVM runs bcfw-as, bcfw or ssg, got %q", o.Algo)
	}
	if o.Limits.MaxIters < 1 {
		return nil, fmt.Errorf("iters: must be at least 1, got %d", o.Limits.MaxIters)
	}
	if o.Limits.EvalEvery < 0 {
		return nil, fmt.Errorf("eval every: must be at least 1 (or 0 for the default cadence), got %d", o.Limits.EvalEvery)
	}
	if o.DropTol == 0 {
		o.DropTol = DefaultDropTol
	}
	if !(o.DropTol > 0 && o.DropTol < 1e-3) {
		return nil, fmt.Errorf("drop tolerance: must lie in (0, 1e-3), got %v", o.DropTol)
	}
	m := &Method{p: p, o: o}
	m.reset()
	return m, nil
}

// reset puts every block at its true labelling (α_i = e_{y_i}, w = 0, ℓ = 0).
func (m *Method) reset() {
	p := m.p
	K, D, n := p.K, p.D, p.N()
	ds := p.Train
	m.rng = rand.New(rand.NewPCG(uint64(m.o.Seed), 0x55f3a11))
	m.w = make([]float64, D)
	m.wavg = make([]float64, D)
	m.wt = make([]float64, K*p.F)
	m.wStale = false
	m.rrow = make([]float64, K)
	m.nzl = make([]int, K)
	m.tT, m.ub, m.lb, m.transOK = make([]float64, K*K), make([]float64, K), make([]float64, K), true
	m.ell, m.lavg = 0, 0
	m.k = 0
	m.next, m.next2 = -1, -1
	ml := maxLen(ds)
	m.dec = newDecoder(K, ml)
	m.E, m.EJ = make([]float64, ml*K), make([]float64, ml*K)
	m.dots = make([]float64, ml)
	m.nzF, m.nzA, m.nzU = make([]int32, 0, ml*K), make([]int32, 0, ml*K), make([]int32, 0, ml*K)
	m.offF, m.offA, m.offU = make([]int, 0, ml+1), make([]int, 0, ml+1), make([]int, 0, ml+1)
	m.acc = make([]float64, 4*K)
	m.ys, m.yb = make([]int, ml), make([]int, ml)
	m.du, m.duA, m.muOld = make([]float64, ml*K), make([]float64, ml*K), make([]float64, ml*K)
	m.dtr, m.dtA, m.mtOld = make([]float64, K*K), make([]float64, K*K), make([]float64, K*K)
	m.ev = newEvaluator(p)
	if m.o.Algo == AlgoSSG {
		return
	}
	m.mu = largeFloats(ds.Letters() * K)
	m.mtd = make([]float64, K*K)
	m.tStart, m.tCap, m.supN = make([]int32, n), make([]int32, n), make([]int32, n)
	room := 0
	for i, wd := range ds.Words {
		c := min(K*K, 4*(wd.Len-1)+16)
		m.tStart[i], m.tCap[i] = int32(room), int32(c)
		room += c
	}
	m.tsup, m.tval = make([]uint16, room, 2*room), make([]float64, room, 2*room)
	m.tS, m.tA = make([]int, 0, K*K), make([]int, 0, K*K)
	m.uFW, m.uA = make([]int, 0, K*K), make([]int, 0, K*K)
	m.elli = make([]float64, n)
	m.lz = nil
	if m.o.Average {
		m.lz = newLazyAvg(p)
	}
	for i, wd := range ds.Words {
		truth := ds.Y[wd.Start : wd.Start+wd.Len]
		m.setMarginals(i, truth, 1)
		m.storeTrans(i, transitions(truth, K, m.tS))
	}
	if m.o.Algo == AlgoBCFWAS {
		// Room for four atoms per block from the start; the labellings
		// come from a shared arena.
		const room = 4
		m.act = make([][]atom, n)
		m.nAct = n
		atoms := make([]atom, n*room)
		m.pool = make([][][]int, ml+1)
		for i, wd := range ds.Words {
			m.act[i] = append(atoms[i*room:i*room:(i+1)*room], atom{y: m.newLabels(ds.Y[wd.Start : wd.Start+wd.Len]), loss: 0, weight: 1})
		}
		m.wJ = make([]float64, D)
		m.wJt = make([]float64, K*p.F)
		m.tJT, m.ubJ, m.lbJ = make([]float64, K*K), make([]float64, K), make([]float64, K)
		m.perm = make([]int, D)
		for j := range m.perm {
			m.perm[j] = j
		}
	}
}

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
	K, F := p.K, p.F
	wd := p.Train.Words[i]
	c := -1 / (p.Lambda * float64(p.N()))
	sx := p.sx
	// The emission weights change in their feature-major copy only (w's
	// own emission blocks are brought up to date when read: weights).
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
	m.wStale = true
	first, last, trans := p.parts(m.w)
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

// sampleFeatures draws m of the d coordinates without replacement (a partial
// Fisher-Yates shuffle of a persistent permutation) and writes I_J w to wJ.
func (m *Method) sampleFeatures(mk int) {
	D := m.p.D
	for j := 0; j < mk; j++ {
		r := j + m.rng.IntN(D-j)
		m.perm[j], m.perm[r] = m.perm[r], m.perm[j]
	}
	zero(m.wJ)
	zero(m.wJt)
	zero(m.tJT)
	K, F := m.p.K, m.p.F
	offTrans := m.p.offTrans
	for _, j := range m.perm[:mk] {
		if j < K*F {
			v := m.wt[j%F*K+j/F] // w_j, from the copy the steps keep current
			m.wJ[j] = v
			m.wJt[j%F*K+j/F] = v
			continue
		}
		m.wJ[j] = m.w[j]
		if j >= offTrans {
			q := j - offTrans
			m.tJT[q%K*K+q/K] = m.w[j]
		}
	}
	// A row of I_J w's transitions holds w's values or zeros.
	for r, v := range m.ub {
		m.ubJ[r] = max(v, 0)
		m.lbJ[r] = min(m.lb[r], 0)
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

// ssgStep performs iteration k (1-based) of the stochastic subgradient
// method: w ← (1−γ)w + γ·ψ_i(y*)/λ with γ = 1/k.
func (m *Method) ssgStep(k int) stepInfo {
	p := m.p
	K := p.K
	ds := p.Train
	i := m.rng.IntN(p.N())
	wd := ds.Words[i]
	L := wd.Len
	truth := ds.Y[wd.Start : wd.Start+L]
	E := m.E[:L*K]
	p.sx.emissionsGather(wd, K, m.w, E)
	first, last, trans := p.parts(m.w)
	s := m.ys[:L]
	m.dec.Viterbi(E, first, last, trans, truth, s)
	gamma := 1 / float64(k)
	for j := range m.w {
		m.w[j] *= 1 - gamma
	}
	p.AddFeatures(m.w, ds, wd, truth, gamma/p.Lambda)
	p.AddFeatures(m.w, ds, wd, s, -gamma/p.Lambda)
	return stepInfo{kind: StepSG, gamma: gamma, batch: p.D}
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
	sx := p.sx
	r := m.rrow[:K]
	nzl := m.nzl[:K]
	for _, wd := range ds.Words {
		for j := wd.Start; j < wd.Start+wd.Len; j++ {
			mu := mu[j*K : (j+1)*K]
			mu = mu[:len(r)]
			var mask uint32
			vec := false
			if K == 26 {
				// r = e(y) − μ by vector code, with the mask of its
				// nonzero labels (the same values: 1 − v rounds as
				// (−v) + 1; a zero may come out as +0 instead of −0, which
				// adds nothing either way).
				mask, vec = residual26((*[26]float64)(r), &eye26[ds.Y[j]], (*[26]float64)(mu))
			}
			if !vec {
				for k, v := range mu {
					r[k] = -v
				}
				r[ds.Y[j]]++
			}
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
			if vec {
				if bits.OnesCount32(mask) >= rowsFrom {
					sx.addRows(j, r, K, ft, &m.r26)
					continue
				}
				for ; mask != 0; mask &= mask - 1 {
					k := bits.TrailingZeros32(mask)
					sx.addColumn(j, r[k], k, K, ft)
				}
				continue
			}
			n := 0
			for k, v := range r {
				nzl[n] = k
				n += b2i(v != 0)
			}
			if n >= rowsFrom {
				sx.addRows(j, r, K, ft, &m.r26)
				continue
			}
			for _, k := range nzl[:n] {
				sx.addColumn(j, r[k], k, K, ft)
			}
		}
	}
	for j := range ft {
		ft[j] *= c
	}
	untransposeEmissions(ft, dst, K, F)
}

// iterate performs the next iteration: one block step (or subgradient
// step), the once-per-pass refresh of w and ℓ, and the weighted average.
func (m *Method) iterate() stepInfo {
	m.k++
	k := m.k
	var info stepInfo
	if m.o.Algo == AlgoSSG {
		info = m.ssgStep(k)
	} else {
		info = m.blockStep(k)
		if k%m.p.N() == 0 { // refresh w and ℓ from the blocks once per pass
			if m.lz != nil {
				m.lz.flushAllCoords(m.w[m.p.offFirst:], int64(k))
			}
			m.ell = m.recomputeW(m.w)
			m.wStale = false
			m.refreshCopies()
		}
		if k%boundsEvery == 0 {
			m.tightenBounds()
		}
		// Draw the next block now (the random numbers come in the same
		// order) and start loading its data, which arrives while the
		// average is updated. When step k+1 draws nothing else (no
		// feature sampling), the block after it is drawn too, which is
		// the same sequence of draws, and its index entries are loaded
		// a step ahead.
		n := m.p.N()
		if m.next2 >= 0 {
			m.next, m.next2 = m.next2, -1
		} else {
			m.next = m.rng.IntN(n)
		}
		if m.o.Algo == AlgoBCFW || m.o.Schedule.Size(k+1, m.p.D) >= m.p.D {
			m.next2 = m.rng.IntN(n)
			m.touchIndex(m.next2)
		}
		m.touch(m.next)
	}
	if m.o.Average {
		// ℓ̄ ← (1−ρ)ℓ̄ + ρℓ; w̄ likewise, lazily for the block methods (see
		// lazyAvg), for ssg (whose every step changes all of w) in one
		// sweep, each product rounded before the sum exactly as in the
		// elementwise expression.
		rho := 2 / float64(k+1)
		if m.lz == nil {
			averageInto(m.wavg, m.w, 1-rho, rho)
		}
		m.lavg = (1-rho)*m.lavg + rho*m.ell
	}
	return info
}

// Run runs the method until a limit is reached or ctx is cancelled.
func (m *Method) Run(ctx context.Context, rec solver.Recorder) (solver.Result, error) {
	lim := m.o.Limits
	n := m.p.N()
	// work is the time spent iterating; evaluations (full decoding passes)
	// are not counted, as in every other method.
	var work time.Duration
	status, msg := "", ""
	var lastEval *Eval
	evalInto := func(r *solver.Record) {
		ev := m.evaluate()
		lastEval = &ev
		r.Objective = solver.F(ev.Primal)
		if ev.HasDual {
			r.Gap = solver.F(ev.Gap)
		}
		r.Extra = m.extra(ev)
		if math.IsNaN(ev.Primal) || math.IsInf(ev.Primal, 0) {
			status, msg = solver.StatusFailed, fmt.Sprintf("iteration %d: the primal objective is not finite (λ = %g may be too small)", r.K, m.p.Lambda)
		} else if ev.HasDual && lim.GapTol > 0 && ev.Gap <= lim.GapTol {
			status, msg = solver.StatusConverged, fmt.Sprintf("duality gap %.3g ≤ %g", ev.Gap, lim.GapTol)
		}
	}
	// With EvalEvery = 0 the evaluations (each a few passes' worth of
	// decoding) follow the default cadence of the solver package, decided by
	// counted work: an evaluation is due once the passes since the last one
	// reach solver.EvalRatio times an evaluation's cost in passes
	// (evalCost). The iterates do not depend on which iterations are
	// evaluated.
	cad := solver.NewCadence(lim.EvalEvery, m.evalCost())
	evalAt := func(r *solver.Record) { evalInto(r) }
	// k = 0: the starting point (every block at its true labelling, w = 0).
	// Three clock readings per iteration: when its work starts (which also
	// ends the previous record's span in the Recorder), when it ends, and
	// when the record is handed to the Recorder.
	r0 := solver.Record{K: 0, Step: solver.StepNone, Active: m.activeSize()}
	evalAt(&r0)
	rec.Record(r0)
	for status == "" {
		if err := ctx.Err(); err != nil {
			status, msg = solver.StatusCancelled, err.Error()
			break
		}
		t0 := solver.Now()
		info := m.iterate()
		k := m.k
		passes := float64(k) / float64(n)
		last := k >= lim.MaxIters || (lim.MaxPasses > 0 && passes >= lim.MaxPasses)
		r := solver.Record{K: k, Passes: passes, Step: info.kind, Gamma: info.gamma,
			Batch: info.batch, Active: m.activeSize(), Drops: info.drops, Cleanups: info.cleanups}
		switch info.kind {
		case solver.StepFW, solver.StepCollapse:
			r.FWSteps = 1
		case solver.StepAway, solver.StepDrop:
			r.AwaySteps = 1
		}
		// the record's own figures are part of the iteration's work
		work += solver.Now() - t0
		if cad.Due(k, last || solver.EvalRequested(rec), passes) {
			evalAt(&r)
		}
		r.Time = work.Seconds()
		rec.Record(r)
		if status != "" {
			break
		}
		if k >= lim.MaxIters {
			status = solver.StatusMaxIters
			break
		}
		if lim.MaxPasses > 0 && passes >= lim.MaxPasses {
			status = solver.StatusMaxPasses
			break
		}
	}
	sum := solver.Summary{Iters: m.k, Passes: float64(m.k) / float64(n), Time: work.Seconds(), Status: status, Message: msg}
	// Without an evaluation (or, for ssg, without a dual iterate) the figures
	// are unknown: NaN, written as null in JSON.
	sum.Objective, sum.Gap = math.NaN(), math.NaN()
	if lastEval != nil {
		sum.Objective = lastEval.Primal
		if lastEval.HasDual {
			sum.Gap = lastEval.Gap
		} else if sum.Message == "" {
			sum.Message = "ssg keeps no dual iterate: no duality gap is reported"
		}
	}
	x := m.weights()
	if m.o.Average {
		x = m.avgWeights()
	}
	return solver.Result{Summary: sum, X: append([]float64(nil), x...)}, nil
}

// evalCost is one evaluation's cost in passes, for the default cadence:
// every training word's emission scores and its two decodings (with the
// loss term, for the primal and the gap, and without, for the error), where
// an iteration decodes one word once, and the test set's likewise, for the
// iterate, and again for the average when the iterates are averaged.
func (m *Method) evalCost() float64 {
	c := 2.0
	if m.p.Test != nil {
		c += 2 * float64(m.p.Test.Letters()) / float64(m.p.Train.Letters())
	}
	if m.o.Average {
		c *= 2
	}
	return c
}

// activeSize is the number of active labellings summed over the blocks
// (bcfw-as; 0 for bcfw and ssg), kept up to date by updateActive.
func (m *Method) activeSize() int { return m.nAct }

// evaluate evaluates the reported iterate (and the plain iterate as well
// when averaging), keeping both for the record's Extra.
func (m *Method) evaluate() Eval {
	hasDual := m.o.Algo != AlgoSSG
	var plain Eval
	if m.k == 0 && m.p.K >= 2 { // the start: w = 0, ℓ = 0
		plain = m.ev.AtZero(hasDual)
	} else {
		plain = m.ev.Evaluate(m.weights(), m.ell, hasDual)
	}
	m.lastPlain = &plain
	// Up to k = 1 the average is the iterate itself (w̄ = w = 0 at the
	// start, and the weight of w is 2/(k+1) = 1 at k = 1): one evaluation
	// serves both.
	if !m.o.Average || m.k <= 1 {
		m.last = &plain
		return plain
	}
	avg := m.ev.Evaluate(m.avgWeights(), m.lavg, hasDual)
	m.last = &avg
	return avg
}

func (m *Method) extra(rep Eval) map[string]float64 {
	pl := m.lastPlain
	x := map[string]float64{"primal": rep.Primal, "primal_plain": pl.Primal, "train_err": pl.TrainErr}
	if rep.HasDual {
		x["dual"] = rep.Dual
		x["gap_plain"] = pl.Gap
		x["dual_plain"] = pl.Dual
		if rep.Primal > 0 {
			x["rel_gap"] = rep.Gap / rep.Primal
		}
	}
	if m.p.Test != nil {
		x["test_err"] = pl.TestErr
	}
	if m.o.Average {
		x["train_err_avg"] = rep.TrainErr
		if m.p.Test != nil {
			x["test_err_avg"] = rep.TestErr
		}
	}
	return x
}

// defaultLimits are the limits of the package's tests and benchmarks that
// compare traces: evaluations every quarter pass, pinned.
func defaultLimits(n int) solver.Limits {
	return solver.Limits{MaxIters: 1 << 30, EvalEvery: max(1, n/4)}
}
