package ssvm

import (
	"math"
	"math/bits"

	"github.com/fwlab/fwlab/internal/solver"
)

// The block step of bcfw and bcfw-as: one iteration of the paper's
// Algorithm 4 (bcfw is the same loop without sampling and away steps).
// Directions live in marginal space: a labelling y of word i stands for its
// marginals e(y) (unary L×K, transition K×K), and ψ_i is linear in them, so
// a direction ΔM gives d_i = −φ(ΔM)/(λn) in w.

// stepInfo describes one block step.
type stepInfo struct {
	kind            string
	gamma           float64
	batch           int
	drops, cleanups int
}

// blockIter is what one block step knows of its block, its two vertices
// and the direction it takes.
type blockIter struct {
	i     int   // the block (word)
	wd    Word  // its letters
	L     int   // its length
	truth []int // its observed labels y_i

	// The scores of the full w (line search) and of I_J w (the oracles;
	// the same slices when no coordinates are sampled out).
	E, first, last, trans []float64
	Eo, fo, lo, to        []float64
	tTo, ubo, lbo         []float64

	s     []int   // the FW vertex p_[i]
	lossS float64 // L_i(p_[i])
	mu    []float64
	sup   []uint16  // supp of block i's transition marginals
	mt    []float64 // those marginals, dense
	usup  []int     // sup ∪ transitions(s): where the step may change them

	// The chosen direction in marginal space: du (unary, nonzero labels
	// dnz by row offsets doff), dt on dsup, and e, its change of ℓ_i.
	du, dt []float64
	dsup   []int
	dnz    []int32
	doff   []int
	e      float64
	gmax   float64 // γ̄: 1 for a FW step, μ_u/(1−μ_u) for an away step
	away   bool
	u      int // the away vertex's place in block i's active set

	// <w, φ(ΔM)> of the chosen direction at the full w, when already known
	// (the directions were compared at I_J w = w).
	linW    float64
	haveLin bool
	sparse  bool // bcfw-as: the unary rows are handled on candidate labels only
}

// blockStep performs iteration k (1-based) of bcfw or bcfw-as: the body of
// Algorithm 4's loop. Pick a block, sample the coordinates (bcfw-as), find
// the FW vertex and direction, then (bcfw-as, with more than one active
// labelling) the away vertex and the better of the two directions, the
// step size, and the update of the block's vertex representation, of w and
// of ℓ.
func (m *Method) blockStep(k int) stepInfo {
	var it blockIter
	m.pickBlock(&it)
	info := stepInfo{batch: m.sampleWeights(&it, k)}
	m.fwVertex(&it)
	m.fwDirection(&it)
	if m.o.Algo == AlgoBCFWAS && len(m.act[it.i]) > 1 {
		m.awayOrFW(&it, info.batch == m.p.D)
	}
	gamma, drop := m.stepSize(&it)
	info.gamma, info.kind = gamma, stepKind(gamma, drop, it.away)
	if gamma == 0 {
		// no move: only the scratch of the directions is cleared
		m.clearTrans(it.usup)
		if it.sparse {
			m.clearDirs(it.L)
		}
		return info
	}
	if drop {
		info.drops = 1
	}
	info.cleanups = m.updateBlock(&it, k, gamma, drop)
	return info
}

// stepKind names a step of length gamma: none, a drop (an away step to
// γ̄), an away step, a FW step to the vertex (a collapse) or a FW step.
func stepKind(gamma float64, drop, away bool) string {
	switch {
	case gamma == 0:
		return solver.StepNone
	case drop:
		return solver.StepDrop
	case away:
		return solver.StepAway
	case gamma == 1:
		return solver.StepCollapse
	default:
		return solver.StepFW
	}
}

// pickBlock is "randomly pick i from {1, …, n}" (drawn ahead by iterate
// when it could be), with the block's word and the scores of the full w.
func (m *Method) pickBlock(it *blockIter) {
	p := m.p
	K := p.K
	ds := p.Train
	i := m.next
	if i < 0 {
		i = m.rng.IntN(p.N())
	}
	m.next = -1
	it.i = i
	it.wd = ds.Words[i]
	it.L = it.wd.Len
	it.truth = ds.Y[it.wd.Start : it.wd.Start+it.L]
	it.E = m.E[:it.L*K]
	p.sx.emissions(it.wd, K, m.wt, it.E, m.acc)
	it.first, it.last, it.trans = p.parts(m.w)
	it.Eo, it.fo, it.lo, it.to = it.E, it.first, it.last, it.trans
	it.tTo, it.ubo, it.lbo = m.tT, m.ub, m.lb
	it.sparse = m.o.Algo == AlgoBCFWAS
}

// sampleWeights is "uniformly sample J = {j_1, …, j_{m_k}} from {1, …, d}
// without replacement" (bcfw-as), with the scores of I_J w the oracles
// see; it returns m_k (d for bcfw).
func (m *Method) sampleWeights(it *blockIter, k int) int {
	p := m.p
	K, D := p.K, p.D
	if m.o.Algo != AlgoBCFWAS {
		return D
	}
	mk := m.o.Schedule.Size(k, D)
	if mk < D {
		m.sampleFeatures(mk)
		it.Eo = m.EJ[:it.L*K]
		p.sx.emissions(it.wd, K, m.wJt, it.Eo, m.acc)
		it.fo, it.lo, it.to = p.parts(m.wJ)
		it.tTo, it.ubo, it.lbo = m.tJT, m.ubJ, m.lbJ
	}
	return mk
}

// fwVertex is "compute p_[i] = argmax_y H_i(y; I_J w)": the loss-augmented
// Viterbi labelling s at the sampled weights, with its loss.
func (m *Method) fwVertex(it *blockIter) {
	it.s = m.ys[:it.L]
	m.dec.viterbi(it.Eo, it.fo, it.lo, it.to, it.tTo, it.ubo, it.lbo, m.transOK, it.truth, it.s)
	it.lossS = Loss(it.truth, it.s)
	it.mu = m.blockMarg(it.i)
}

// fwDirection is "d_i = ψ_i(p_[i])/(λn) − w_i, e_i = L_i(p_[i])/n − ℓ_i,
// γ̄ = 1": the FW direction in marginal space, ΔM = e(s) − M_i. Its
// transition part lives on usup = supp(M_i) ∪ transitions(s) (kept
// sorted): entries of dt elsewhere are zero and never read, and every sum
// over dt skips them (adding an exact zero is a no-op, so the sums are
// those of the full K² loops).
func (m *Method) fwDirection(it *blockIter) {
	K, L, s := m.p.K, it.L, it.s
	it.sup = m.support(it.i)
	it.mt = m.loadTrans(it.i)
	it.usup = union(it.sup, transitions(s, K, m.tS), m.uFW)
	du, dt := m.du[:L*K], m.dtr
	if it.sparse {
		m.fwUnarySparse(it, du)
	} else {
		m.fwUnaryDense(it, du)
	}
	for _, j := range it.usup {
		dt[j] = -it.mt[j]
	}
	for t := 0; t+1 < L; t++ {
		dt[s[t]+K*s[t+1]]++
	}
	it.du, it.dt, it.dsup = du, dt, it.usup
	it.dnz, it.doff = m.nzF, m.offF
	it.e = it.lossS/float64(m.p.N()) - m.elli[it.i]
	it.gmax = 1.0
}

// fwUnarySparse writes du = e(s) − μ with each row's nonzero labels
// (bcfw-as). μ_t is nonzero only at the active labellings' labels: row t's
// candidates are those and s_t (nzU, increasing), and du, duA are written
// there only (they are zero elsewhere between steps: clearDirs).
func (m *Method) fwUnarySparse(it *blockIter, du []float64) {
	K, L, s, mu := m.p.K, it.L, it.s, it.mu
	nzF, offF := m.nzF[:0], append(m.offF[:0], 0)
	m.activeLabels(it.i, s)
	nzU, offU := m.nzU, m.offU
	for t := 0; t < L; t++ {
		row, d := mu[t*K:(t+1)*K], du[t*K:(t+1)*K]
		d = d[:len(row)]
		st := s[t]
		for _, k32 := range nzU[offU[t]:offU[t+1]] {
			k := int(k32)
			x := -row[k]
			if k == st {
				x++
			}
			d[k] = x
			if x != 0 {
				nzF = append(nzF, k32)
			}
		}
		offF = append(offF, len(nzF))
	}
	m.nzF, m.offF = nzF, offF
}

// fwUnaryDense writes du = e(s) − μ with each row's nonzero labels (bcfw),
// a row of 26 labels by vector code.
func (m *Method) fwUnaryDense(it *blockIter, du []float64) {
	K, L, s, mu := m.p.K, it.L, it.s, it.mu
	nzF, offF := m.nzF[:0], append(m.offF[:0], 0)
	for t := 0; t < L; t++ {
		row, d := mu[t*K:(t+1)*K], du[t*K:(t+1)*K]
		d = d[:len(row)]
		st := s[t]
		if K == 26 {
			// e(s_t) − μ_t and its nonzero labels by vector code (the
			// same values; a zero may be +0 for −0, and zeros are
			// never read).
			if mask, ok := residual26((*[26]float64)(d), &eye26[st], (*[26]float64)(row)); ok {
				for ; mask != 0; mask &= mask - 1 {
					nzF = append(nzF, int32(bits.TrailingZeros32(mask)))
				}
				offF = append(offF, len(nzF))
				continue
			}
		}
		for k, v := range row {
			x := -v
			if k == st {
				x++
			}
			d[k] = x
			if x != 0 {
				nzF = append(nzF, int32(k))
			}
		}
		offF = append(offF, len(nzF))
	}
	m.nzF, m.offF = nzF, offF
}

// awayOrFW is "compute u_[i]", the away vertex, and "if ⟨I_J w, d_FW⟩ …
// ≤ ⟨I_J w, d_A⟩ … take the FW direction, else the away direction d_i =
// w_i − ψ_i(u)/(λn), e_i = ℓ_i − L_i(u)/n, γ̄ = μ_u/(1 − μ_u)" (bcfw-as
// with more than one active labelling). full says I_J w = w.
func (m *Method) awayOrFW(it *blockIter, full bool) {
	nf := float64(m.p.N())
	at := m.awayVertex(it)
	duA, dtA, asup := m.awayDirection(it, at)
	eA := m.elli[it.i] - at.loss/nf
	// Directional derivatives of the dual λ/2‖w‖² − ℓ along each
	// direction, with the sampled weights: λ<I_J w, d_w> − e where
	// d_w = −φ(ΔM)/(λn).
	lFW := m.lin(it.Eo, it.fo, it.lo, it.to, it.du, it.dt, it.usup, m.nzF, m.offF, it.L)
	lA := m.lin(it.Eo, it.fo, it.lo, it.to, duA, dtA, asup, m.nzA, m.offA, it.L)
	gFW := -lFW/nf - it.e
	gA := -lA/nf - eA
	it.linW, it.haveLin = lFW, full
	if gA < gFW {
		it.away = true
		it.du, it.dt, it.dsup, it.e = duA, dtA, asup, eA
		it.dnz, it.doff = m.nzA, m.offA
		it.gmax = at.weight / (1 - at.weight)
		it.linW = lA
	}
}

// awayVertex is "u_[i] ∈ argmax_{v ∈ U_[i]} ⟨I_J w, ψ_i(v)⟩ − L_i(v)": the
// active labelling minimising H_i(v; I_J w) (first in the list on ties).
func (m *Method) awayVertex(it *blockIter) atom {
	best := math.Inf(1)
	for a, at := range m.act[it.i] {
		if h := Score(it.Eo, it.fo, it.lo, it.to, m.p.K, at.y) + at.loss; h < best {
			best, it.u = h, a
		}
	}
	return m.act[it.i][it.u]
}

// awayDirection writes the away direction in marginal space, ΔM = M_i −
// e(y_u): duA with each row's nonzero labels (on the candidate labels nzU,
// which hold y_u's) and dtA on asup = supp(M_i) ∪ transitions(y_u).
func (m *Method) awayDirection(it *blockIter, at atom) (duA, dtA []float64, asup []int) {
	K, L, mu := m.p.K, it.L, it.mu
	duA, dtA = m.duA[:L*K], m.dtA
	asup = union(it.sup, transitions(at.y, K, m.tA), m.uA)
	nzA, offA := m.nzA[:0], append(m.offA[:0], 0)
	nzU, offU := m.nzU, m.offU
	for t := 0; t < L; t++ {
		row, d := mu[t*K:(t+1)*K], duA[t*K:(t+1)*K]
		d = d[:len(row)]
		yt := at.y[t]
		for _, k32 := range nzU[offU[t]:offU[t+1]] {
			k := int(k32)
			x := row[k]
			if k == yt {
				x--
			}
			d[k] = x
			if x != 0 {
				nzA = append(nzA, k32)
			}
		}
		offA = append(offA, len(nzA))
	}
	m.nzA, m.offA = nzA, offA
	for _, j := range asup {
		dtA[j] = it.mt[j]
	}
	for t := 0; t+1 < L; t++ {
		dtA[at.y[t]+K*at.y[t+1]]--
	}
	return duA, dtA, asup
}

// stepSize is "γ = max{0, min{(−λ⟨w, d_i⟩ + e_i)/(λ‖d_i‖²), γ̄}}": exact line
// search on the dual with the full w, clipped to [0, γ̄]; an away step with
// γ ≥ γ̄(1−δ) is snapped to an exact drop.
func (m *Method) stepSize(it *blockIter) (gamma float64, drop bool) {
	p := m.p
	ln := p.Lambda * float64(p.N())
	if !it.haveLin {
		it.linW = m.lin(it.E, it.first, it.last, it.trans, it.du, it.dt, it.dsup, it.dnz, it.doff, it.L)
	}
	wd := -it.linW / ln
	dd := m.sqnorm(it.i, it.du, it.dt, it.dsup, it.dnz, it.doff, it.L) / (ln * ln)
	if dd > 0 {
		gamma = (it.e - p.Lambda*wd) / (p.Lambda * dd)
	}
	if !(gamma > 0) { // also catches NaN
		gamma = 0
	}
	if it.away && gamma >= it.gmax*(1-m.o.DropTol) {
		gamma, drop = it.gmax, true
	} else if gamma > it.gmax {
		gamma = it.gmax
	}
	return gamma, drop
}

// updateBlock takes the step: block i's marginals move by γ along the
// direction (for bcfw-as through the vertex-representation update of its
// active set, Algorithm 2), then "w_i ← w_i + γ d_i", w ← w + γ d_i and ℓ
// likewise, following the actual change of the marginals. It returns the
// number of weights cleaned up.
func (m *Method) updateBlock(it *blockIter, k int, gamma float64, drop bool) int {
	// New marginals of block i. The transition marginals change only on
	// usup, which holds the old support and every new active labelling's
	// transitions (new labellings are old ones or s). mtOld is zero outside
	// the entries set here and is cleared again after use.
	mtOld := m.mtOld
	for _, j := range it.sup {
		mtOld[j] = it.mt[j]
	}
	m.changedLabels(it)
	if m.lz != nil {
		// The average takes the block's marginals as they were up to now
		// (nonzero only on the lists nzU).
		m.lz.flushBlock(it.i, it.mu, it.wd.Start*m.p.K, m.p.K, m.nzU, m.offU, int64(k))
	}
	ellOld := m.elli[it.i]
	cleanups := 0
	if m.o.Algo == AlgoBCFW {
		m.moveMarginals(it, gamma)
	} else {
		cleanups = m.updateActive(it.i, it.s, it.lossS, it.u, it.away, drop, gamma)
		m.statClean += cleanups
		m.rebuildMarginals(it)
	}
	if drop {
		m.statDrops++
	}
	// w and ℓ follow the actual change of the block's marginals.
	for _, j := range it.usup {
		mtOld[j] = it.mt[j] - mtOld[j]
	}
	m.applyDelta(it.i, m.muOld[:it.L*m.p.K], m.nzU, m.offU, mtOld, it.usup)
	for _, j := range it.usup {
		mtOld[j] = 0
	}
	m.storeTrans(it.i, it.usup)
	m.ell += m.elli[it.i] - ellOld
	return cleanups
}

// changedLabels writes to nzU, offU the labels where the unary marginals
// may change (zero entries stay +0): for bcfw-as the candidate labels
// already there, for bcfw row t's are the FW direction's nonzero labels,
// plus s_t when μ_t(s_t) = 1 (where the direction is zero). muOld will
// hold the change of μ on these lists only.
func (m *Method) changedLabels(it *blockIter) {
	if it.sparse {
		m.clearDirs(it.L)
		return
	}
	K, s := m.p.K, it.s
	fdu := m.du[:it.L*K]
	nzU, offU := m.nzU[:0], append(m.offU[:0], 0)
	for t := 0; t < it.L; t++ {
		nzU = append(nzU, m.nzF[m.offF[t]:m.offF[t+1]]...)
		if st := s[t]; fdu[t*K+st] == 0 {
			nzU = append(nzU, int32(st))
		}
		offU = append(offU, len(nzU))
	}
	m.nzU, m.offU = nzU, offU
}

// moveMarginals is bcfw's update μ ← (1−γ)μ + γ e(s) (with γ = 1: zero,
// then + 1 at s), with in muOld the change of μ, in one sweep; likewise the
// transition marginals and ℓ_i.
func (m *Method) moveMarginals(it *blockIter, gamma float64) {
	K, s, mu, mt := m.p.K, it.s, it.mu, it.mt
	nf := float64(m.p.N())
	muOld := m.muOld[:it.L*K]
	nzU, offU := m.nzU, m.offU
	keep := 1 - gamma
	for t := 0; t < it.L; t++ {
		row, chg := mu[t*K:(t+1)*K], muOld[t*K:(t+1)*K]
		chg = chg[:len(row)]
		st := s[t]
		for _, k32 := range nzU[offU[t]:offU[t+1]] {
			k := int(k32)
			v := row[k]
			nv := 0.0
			if gamma != 1 {
				nv = v * keep
			}
			if k == st {
				nv += gamma
			}
			row[k] = nv
			chg[k] = nv - v
		}
	}
	if gamma == 1 {
		for _, j := range it.sup {
			mt[j] = 0
		}
		m.addTrans(s, 1)
		m.elli[it.i] = it.lossS / nf
	} else {
		for _, j := range it.sup {
			mt[j] *= keep
		}
		m.addTrans(s, gamma)
		m.elli[it.i] = (1-gamma)*m.elli[it.i] + gamma*it.lossS/nf
	}
}

// rebuildMarginals rebuilds block i's μ from its new active set on the
// lists (the new labellings are old ones or s), each entry summed over the
// atoms in their order from +0 as before, with in muOld the change of μ;
// likewise the transition marginals and ℓ_i (bcfw-as).
func (m *Method) rebuildMarginals(it *blockIter) {
	K, mu := m.p.K, it.mu
	muOld := m.muOld[:it.L*K]
	nzU, offU := m.nzU, m.offU
	for t := 0; t < it.L; t++ {
		row, old := mu[t*K:(t+1)*K], muOld[t*K:(t+1)*K]
		old = old[:len(row)]
		for _, k := range nzU[offU[t]:offU[t+1]] {
			old[k] = row[k]
			row[k] = 0
		}
	}
	for _, j := range it.sup {
		it.mt[j] = 0
	}
	ell := 0.0
	for _, at := range m.act[it.i] {
		m.setMarginals(it.i, at.y, at.weight)
		ell += at.weight * at.loss
	}
	m.elli[it.i] = ell / float64(m.p.N())
	for t := 0; t < it.L; t++ {
		row, old := mu[t*K:(t+1)*K], muOld[t*K:(t+1)*K]
		old = old[:len(row)]
		for _, k := range nzU[offU[t]:offU[t+1]] {
			old[k] = row[k] - old[k]
		}
	}
}

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
