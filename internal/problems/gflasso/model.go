package gflasso

import (
	"sync"
	"sync/atomic"

	"github.com/fwlab/fwlab/internal/solver"
	"gonum.org/v1/gonum/mat"
)

// model keeps z_C = X B_C (N×|C|, row-major) for every component. With
// blocks=component each block owns its component's state, so calls for
// different blocks touch disjoint memory. With blocks=row several blocks
// share z_C: their Scale and Add only update the block's own copy of its row
// of B (and mark it), and z_C is brought up to date lazily, under the
// component's lock, by the next Gradient, Line or Reset, applying the marked
// rows in increasing row order. The result is then independent of the order
// in which concurrent block updates arrived, provided (as in Algorithm 3)
// every sampled block's gradient and line are taken before any of the
// iteration's updates is applied.
type model struct {
	p     *Problem
	comps []*compState
	colSq []float64 // row mode: ‖X_{:,j}‖² per row j of B
	// lines: per block, the scratch of Line (a block's calls never overlap)
	lines []lineBuf
	grads []gradBuf
	// syncFn is syncAll as a value made once (Sync allocates nothing)
	syncFn func(lo, hi int)
	// splits: per block, the state of a split move (split.go)
	splits []splitBuf
}

type lineBuf struct {
	ql      quadLine // the line Line returns (a pointer to it: no allocation)
	dB      []float64
	touched []bool
	rows    []int
	ad      []float64
}

// line returns block b's line φ(γ) − φ(0) = lin·γ + ½·quad·γ², valid until
// the block's next Line call.
func (m *model) line(b int, lin, quad float64) solver.Line {
	ql := &m.lines[b].ql
	*ql = quadLine{lin: lin, quad: quad}
	return ql
}

// lineScratch returns block b's Line buffers, for n coordinates of B.
func (m *model) lineScratch(b, n int) *lineBuf {
	ls := &m.lines[b]
	if ls.dB == nil {
		bi := m.p.info[b]
		nr := bi.r1 - bi.r0
		ls.dB = make([]float64, n)
		ls.touched = make([]bool, nr)
		ls.rows = make([]int, 0, nr)
		ls.ad = make([]float64, len(m.p.comps[bi.comp].tasks))
	}
	return ls
}

type compState struct {
	mu sync.RWMutex
	z  []float64 // X B_C, N×|C|
	// h is XᵀX B_C (J×|C|), component blocks of an instance that keeps the
	// Gram matrix: the exact gradient is h − XᵀY_C, and a step updates h at
	// O(J) per coordinate it moves.
	h      []float64
	cur    []float64 // row mode: current B_C (J×|C|), per-row owned by the row's block
	synced []float64 // row mode: the B_C that z reflects
	dirty  []bool    // row mode: rows changed since z was last brought up to date
	// Row mode: the residual R_C = z_C − Y_C (N×|C|), computed once after z_C
	// changes and shared by the component's row blocks, and each row's exact
	// gradient G_j = X_{:,j}ᵀ R_C, kept (with the generation of z_C it was
	// taken at) so that the row's line search reuses it. Row j's entries are
	// only written by row j's block.
	gen   uint64
	res   []float64
	resAt uint64
	g     []float64
	gAt   []uint64
	// Row mode: stale says z_C or R_C is behind cur (rows marked dirty, or
	// R_C not yet taken after a Reset). A sync first gathers the changed
	// rows and their changes (moved, delta: the rows in increasing order),
	// then applies them to z_C and R_C sample by sample (syncSamples), which
	// can be split over the samples without changing a bit of the result.
	stale atomic.Bool
	moved []int
	delta []float64
}

// NewModel implements solver.Problem.
func (p *Problem) NewModel(x []float64) solver.Model {
	m := &model{p: p, comps: make([]*compState, len(p.comps)), lines: make([]lineBuf, len(p.info)), grads: make([]gradBuf, len(p.info))}
	for ci, c := range p.comps {
		kc := len(c.tasks)
		st := &compState{z: make([]float64, p.N*kc)}
		if p.gram != nil && p.opt.Blocks != "row" {
			st.h = make([]float64, p.J*kc)
		}
		if p.opt.Blocks == "row" {
			st.cur = make([]float64, p.J*kc)
			st.synced = make([]float64, p.J*kc)
			st.dirty = make([]bool, p.J)
			st.res = make([]float64, p.N*kc)
			st.g = make([]float64, p.J*kc)
			st.gAt = make([]uint64, p.J)
			st.moved = make([]int, 0, p.J)
			st.delta = make([]float64, p.J*kc)
			st.gen = 1
		}
		m.comps[ci] = st
	}
	if p.opt.Blocks != "row" {
		m.splits = make([]splitBuf, len(p.info))
	}
	for b := range m.splits {
		sb := &m.splits[b]
		sb.m, sb.b = m, b
		sb.moveFn = sb.move
	}
	if p.opt.Blocks == "row" {
		m.syncFn = m.syncAll
		m.colSq = make([]float64, p.J)
		for j := range m.colSq {
			for _, v := range p.xt[j*p.N : (j+1)*p.N] {
				m.colSq[j] += v * v
			}
		}
	}
	m.Reset(x)
	return m
}

// Reset implements solver.Model.
func (m *model) Reset(x []float64) {
	p := m.p
	for ci, c := range p.comps {
		st := m.comps[ci]
		st.mu.Lock()
		kc := len(c.tasks)
		bc := make([]float64, p.J*kc)
		for _, bi := range p.info {
			if bi.comp != ci {
				continue
			}
			copy(bc[bi.r0*kc:bi.r1*kc], x[bi.off:bi.off+bi.size-1])
		}
		mat.NewDense(p.N, kc, st.z).Mul(mat.NewDense(p.N, p.J, p.x), mat.NewDense(p.J, kc, bc))
		if st.h != nil {
			mat.NewDense(p.J, kc, st.h).Mul(mat.NewDense(p.J, p.J, p.gram), mat.NewDense(p.J, kc, bc))
		}
		if st.cur != nil {
			copy(st.cur, bc)
			copy(st.synced, bc)
			for j := range st.dirty {
				st.dirty[j] = false
			}
			st.gen++
			st.stale.Store(true)
		}
		st.mu.Unlock()
	}
}

// lockRead brings z_C (and, in row mode, the residual R_C) up to date and
// takes the component's read lock, so that the sampled blocks of one
// iteration compute their gradients and lines concurrently. After Sync
// nothing is stale and the blocks only share the read lock; otherwise the
// first of them brings the state up to date under the write lock. Either
// way the marked rows are applied in a fixed order, so z_C ends up the same
// whichever call does it.
func (st *compState) lockRead(m *model, ci int) {
	if st.cur != nil && st.stale.Load() {
		st.mu.Lock()
		if st.stale.Load() {
			m.gather(ci)
			m.syncSamples(ci, 0, m.p.N)
			m.synced(ci)
		}
		st.mu.Unlock()
	}
	st.mu.RLock()
}

// Sync implements solver.SyncModel: in row mode, the rows that the blocks
// moved since the last sync are applied to z_C = X B_C and the residual
// R_C = z_C − Y_C of every component in one pass over the samples, split
// over the solver's workers.
func (m *model) Sync(parallel func(n int, f func(lo, hi int))) {
	if m.colSq == nil {
		return
	}
	any := false
	for ci, st := range m.comps {
		if st.stale.Load() {
			m.gather(ci)
			any = true
		}
	}
	if !any {
		return
	}
	parallel(m.p.N, m.syncFn)
	for ci, st := range m.comps {
		if st.stale.Load() {
			m.synced(ci)
		}
	}
}

// syncAll brings samples [lo, hi) of every stale component up to date.
func (m *model) syncAll(lo, hi int) {
	for ci, st := range m.comps {
		if st.stale.Load() {
			m.syncSamples(ci, lo, hi)
		}
	}
}

// gather collects the rows of component ci whose B_C changed since z_C
// was last brought up to date, in increasing order, with their changes, and
// marks them synced (row mode; the caller holds st.mu or is the only user).
func (m *model) gather(ci int) {
	st := m.comps[ci]
	kc := len(m.p.comps[ci].tasks)
	st.moved = st.moved[:0]
	for j, d := range st.dirty {
		if !d {
			continue
		}
		delta := st.delta[len(st.moved)*kc : (len(st.moved)+1)*kc]
		nz := false
		for a := 0; a < kc; a++ {
			delta[a] = st.cur[j*kc+a] - st.synced[j*kc+a]
			nz = nz || delta[a] != 0
		}
		copy(st.synced[j*kc:(j+1)*kc], st.cur[j*kc:(j+1)*kc])
		st.dirty[j] = false
		if nz {
			st.moved = append(st.moved, j)
		}
	}
	if len(st.moved) > 0 {
		st.gen++
	}
}

// syncSamples applies the gathered row changes of component ci to samples
// [lo, hi) of z_C, in increasing row order, and takes their residuals if
// z_C changed since R_C was last taken. Every sample's entries only depend
// on its own row of z_C, so any split of the samples gives the same bits.
func (m *model) syncSamples(ci, lo, hi int) {
	p := m.p
	st := m.comps[ci]
	kc := len(p.comps[ci].tasks)
	for r, j := range st.moved {
		delta := st.delta[r*kc : (r+1)*kc]
		col := p.xt[j*p.N+lo : j*p.N+hi]
		for q, v := range col {
			zi := st.z[(lo+q)*kc : (lo+q+1)*kc]
			for a, d := range delta {
				zi[a] += v * d
			}
		}
	}
	if st.resAt == st.gen {
		return
	}
	y := p.y
	K := p.K
	tasks := p.comps[ci].tasks
	for i := lo; i < hi; i++ {
		for a, t := range tasks {
			st.res[i*kc+a] = st.z[i*kc+a] - y[i*K+t]
		}
	}
}

// synced records that component ci's z_C and R_C are up to date.
func (m *model) synced(ci int) {
	st := m.comps[ci]
	st.moved = st.moved[:0]
	st.resAt = st.gen
	st.stale.Store(false)
}

// rowGrad returns G_j = X_{:,j}ᵀ R_C for row j of component ci (row mode,
// exact), computing it if z_C changed since; the caller holds st.mu for
// reading and is row j's block.
func (m *model) rowGrad(ci, j int) []float64 {
	p := m.p
	st := m.comps[ci]
	kc := len(p.comps[ci].tasks)
	gj := st.g[j*kc : (j+1)*kc]
	if st.gAt[j] == st.gen {
		return gj
	}
	for a := range gj {
		gj[a] = 0
	}
	for i, v := range p.xt[j*p.N : (j+1)*p.N] {
		if v == 0 {
			continue
		}
		for a, r := range st.res[i*kc : (i+1)*kc] {
			gj[a] += v * r
		}
	}
	st.gAt[j] = st.gen
	return gj
}

// Scale implements solver.Model.
func (m *model) Scale(b int, s float64) {
	bi := m.p.info[b]
	st := m.comps[bi.comp]
	if st.cur == nil {
		for i := range st.z {
			st.z[i] *= s
		}
		for i := range st.h {
			st.h[i] *= s
		}
		return
	}
	kc := len(m.p.comps[bi.comp].tasks)
	st.mu.Lock()
	for a := bi.r0 * kc; a < bi.r1*kc; a++ {
		st.cur[a] *= s
	}
	for j := bi.r0; j < bi.r1; j++ {
		st.dirty[j] = true
	}
	st.stale.Store(true)
	st.mu.Unlock()
}

// Add implements solver.Model.
func (m *model) Add(b int, c float64, v solver.Vertex) {
	p := m.p
	bi := p.info[b]
	st := m.comps[bi.comp]
	kc := len(p.comps[bi.comp].tasks)
	if st.cur == nil {
		for q, idx := range v.Idx {
			if idx == bi.size-1 {
				continue
			}
			j, a := bi.r0+idx/kc, idx%kc
			cv := c * v.Val[q]
			col := p.xt[j*p.N : (j+1)*p.N]
			for i, xv := range col {
				st.z[i*kc+a] += cv * xv
			}
			if st.h != nil {
				for i, gv := range p.gram[j*p.J : (j+1)*p.J] {
					st.h[i*kc+a] += cv * gv
				}
			}
		}
		return
	}
	st.mu.Lock()
	for q, idx := range v.Idx {
		if idx == bi.size-1 {
			continue
		}
		j, a := bi.r0+idx/kc, idx%kc
		st.cur[j*kc+a] += c * v.Val[q]
		st.dirty[j] = true
	}
	st.stale.Store(true)
	st.mu.Unlock()
}

// quadLine is φ(γ) − φ(0) = lin·γ + ½·quad·γ², exact for the squared loss.
type quadLine struct{ lin, quad float64 }

func (l quadLine) Curvature(float64) float64 { return l.quad }
func (l quadLine) Delta(g float64) float64   { return l.lin*g + 0.5*l.quad*g*g }

// Line implements solver.Model. With A the map B_b ↦ X B_b, φ(γ) − φ(0) =
// γ(<X B_b − Y, A d>·s + d_t) + ½γ²‖A d‖²·s, s = N/m on a batch (1 exact).
// The B part of d is first gathered into dense rows, so that the pass over
// the samples only touches the rows d moves.
func (m *model) Line(b int, x []float64, d solver.Direction, batch []int) solver.Line {
	p := m.p
	bi := p.info[b]
	c := p.comps[bi.comp]
	kc := len(c.tasks)
	st := m.comps[bi.comp]
	xb := x[bi.off : bi.off+bi.size]
	whole := bi.r0 == 0 && bi.r1 == p.J // z_C is X B_b itself
	nr := bi.r1 - bi.r0
	dt := d.XCoef * xb[bi.size-1]
	if st.h != nil && batch == nil {
		// Component block with the Gram matrix: the exact line costs
		// O(J·|C|).
		for _, t := range d.Terms {
			for q, idx := range t.V.Idx {
				if idx == bi.size-1 {
					dt += t.Coef * t.V.Val[q]
				}
			}
		}
		st.mu.RLock()
		lin, quad := m.gramLine(bi.comp, xb, d, dt)
		st.mu.RUnlock()
		return m.line(b, lin, quad)
	}
	ls := m.lineScratch(b, nr*kc)
	dB, touched := ls.dB, ls.touched
	for i := range dB {
		dB[i] = 0
	}
	for i := range touched {
		touched[i] = false
	}
	if d.XCoef != 0 && !whole {
		for i, v := range xb[:bi.size-1] {
			dB[i] = d.XCoef * v
		}
		for r := range touched {
			touched[r] = true
		}
	}
	for _, t := range d.Terms {
		for q, idx := range t.V.Idx {
			if idx == bi.size-1 {
				dt += t.Coef * t.V.Val[q]
				continue
			}
			dB[idx] += t.Coef * t.V.Val[q]
			touched[idx/kc] = true
		}
	}
	rows := ls.rows[:0]
	for r, ok := range touched {
		if ok {
			rows = append(rows, r)
		}
	}
	st.lockRead(m, bi.comp)
	if st.cur != nil && batch == nil && nr == 1 {
		// Exact, row mode: A d = Σ_r X_{:,r} dB_r, so <z − Y, A d> =
		// Σ_r <G_r, dB_r>, and with the single row of a row block
		// ‖A d‖² = ‖X_{:,r}‖²‖dB_r‖².
		var lin, quad float64
		for _, r := range rows {
			dr := dB[r*kc : (r+1)*kc]
			gr := m.rowGrad(bi.comp, bi.r0+r)
			sq := 0.0
			for a, w := range dr {
				lin += gr[a] * w
				sq += w * w
			}
			quad += m.colSq[bi.r0+r] * sq
		}
		st.mu.RUnlock()
		return m.line(b, lin+dt, quad)
	}
	lin, quad := m.batchLineQuad(bi.comp, whole, bi.r0, bi.r1, d.XCoef, dB, rows, batch, ls.ad)
	st.mu.RUnlock()
	return m.line(b, lin+dt, quad)
}

// gramLine returns the exact slope <∇, d> (dt included) and curvature
// ‖X d_B‖² along a component block's direction d from the kept XᵀX B_C and
// the Gram matrix; the caller holds the component's read lock.
func (m *model) gramLine(ci int, xb []float64, d solver.Direction, dt float64) (lin, quad float64) {
	p := m.p
	c := p.comps[ci]
	kc := len(c.tasks)
	st := m.comps[ci]
	nb := len(xb) - 1
	// <v, H> and <v, XᵀY_C> for a vertex, over its B coordinates.
	vh := func(v solver.Vertex) (vh, vy float64) {
		for q, idx := range v.Idx {
			if idx >= nb {
				continue
			}
			vh += v.Val[q] * st.h[idx]
			vy += v.Val[q] * p.xty[(idx/kc)*p.K+c.tasks[idx%kc]]
		}
		return vh, vy
	}
	lin = dt
	if d.XCoef != 0 {
		bh, by := 0.0, 0.0
		for j := 0; j < p.J; j++ {
			xy := p.xty[j*p.K : (j+1)*p.K]
			for a, t := range c.tasks {
				bv := xb[j*kc+a]
				bh += bv * st.h[j*kc+a]
				by += bv * xy[t]
			}
		}
		quad += d.XCoef * d.XCoef * bh
		lin += d.XCoef * (bh - by)
	}
	for _, t := range d.Terms {
		th, ty := vh(t.V)
		lin += t.Coef * (th - ty)
		quad += 2 * d.XCoef * t.Coef * th
		for si := range d.Terms {
			s := d.Terms[si]
			w := 0.0
			for q, iq := range t.V.Idx {
				if iq >= nb {
					continue
				}
				gq := p.gram[(iq/kc)*p.J:]
				for r, ir := range s.V.Idx {
					if ir < nb && ir%kc == iq%kc {
						w += t.V.Val[q] * s.V.Val[r] * gq[ir/kc]
					}
				}
			}
			quad += t.Coef * s.Coef * w
		}
	}
	if quad < 0 {
		quad = 0 // rounding of a direction with (nearly) no curvature
	}
	return lin, quad
}

// batchLineQuad returns the slope and curvature of the summed loss along
// d on the batch (nil: all samples), scaled by N/m; the caller holds the
// component's read lock. ad is scratch of length |C|.
func (m *model) batchLineQuad(ci int, whole bool, r0, r1 int, xcoef float64, dB []float64, rows, batch []int, ad []float64) (float64, float64) {
	p := m.p
	c := p.comps[ci]
	kc := len(c.tasks)
	st := m.comps[ci]
	ad = ad[:kc]
	var lin, quad float64
	each := func(i int) {
		zi := st.z[i*kc : (i+1)*kc]
		xi := p.x[i*p.J+r0 : i*p.J+r1]
		if whole && xcoef != 0 {
			for a, z := range zi {
				ad[a] = xcoef * z
			}
		} else {
			for a := range ad {
				ad[a] = 0
			}
		}
		for _, r := range rows {
			v := xi[r]
			if v == 0 {
				continue
			}
			for a, w := range dB[r*kc : (r+1)*kc] {
				ad[a] += v * w
			}
		}
		yi := p.y[i*p.K : (i+1)*p.K]
		for a, tk := range c.tasks {
			lin += (zi[a] - yi[tk]) * ad[a]
			quad += ad[a] * ad[a]
		}
	}
	scale := 1.0
	if batch == nil {
		for i := 0; i < p.N; i++ {
			each(i)
		}
	} else {
		scale = float64(p.N) / float64(len(batch))
		for _, i := range batch {
			each(i)
		}
	}
	return lin * scale, quad * scale
}
