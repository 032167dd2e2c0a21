package gflasso

import (
	"sync"

	"github.com/fwlab/fwlab/internal/solver"
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
}

type compState struct {
	mu     sync.Mutex
	z      []float64 // X B_C, N×|C|
	cur    []float64 // row mode: current B_C (J×|C|), per-row owned by the row's block
	synced []float64 // row mode: the B_C that z reflects
	dirty  []bool    // row mode: rows changed since z was last brought up to date
}

// NewModel implements solver.Problem.
func (p *Problem) NewModel(x []float64) solver.Model {
	m := &model{p: p, comps: make([]*compState, len(p.comps))}
	for ci, c := range p.comps {
		kc := len(c.tasks)
		st := &compState{z: make([]float64, p.N*kc)}
		if p.opt.Blocks == "row" {
			st.cur = make([]float64, p.J*kc)
			st.synced = make([]float64, p.J*kc)
			st.dirty = make([]bool, p.J)
		}
		m.comps[ci] = st
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
		for i := range st.z {
			st.z[i] = 0
		}
		for i := 0; i < p.N; i++ {
			zi := st.z[i*kc : (i+1)*kc]
			for j := 0; j < p.J; j++ {
				v := p.x[i*p.J+j]
				if v == 0 {
					continue
				}
				row := bc[j*kc : (j+1)*kc]
				for a, b := range row {
					zi[a] += v * b
				}
			}
		}
		if st.cur != nil {
			copy(st.cur, bc)
			copy(st.synced, bc)
			for j := range st.dirty {
				st.dirty[j] = false
			}
		}
		st.mu.Unlock()
	}
}

// sync brings z_C up to date (row mode); the caller holds st.mu.
func (m *model) sync(ci int) {
	st := m.comps[ci]
	if st.cur == nil {
		return
	}
	p := m.p
	kc := len(p.comps[ci].tasks)
	delta := make([]float64, kc)
	for j, d := range st.dirty {
		if !d {
			continue
		}
		nz := false
		for a := 0; a < kc; a++ {
			delta[a] = st.cur[j*kc+a] - st.synced[j*kc+a]
			nz = nz || delta[a] != 0
		}
		copy(st.synced[j*kc:(j+1)*kc], st.cur[j*kc:(j+1)*kc])
		st.dirty[j] = false
		if !nz {
			continue
		}
		col := p.xt[j*p.N : (j+1)*p.N]
		for i, v := range col {
			zi := st.z[i*kc : (i+1)*kc]
			for a, d := range delta {
				zi[a] += v * d
			}
		}
	}
}

// Scale implements solver.Model.
func (m *model) Scale(b int, s float64) {
	bi := m.p.info[b]
	st := m.comps[bi.comp]
	if st.cur == nil {
		for i := range st.z {
			st.z[i] *= s
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
	st.mu.Unlock()
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
	st.mu.Lock()
	m.sync(bi.comp)
	scale := 1.0
	rows := batch
	if batch == nil {
		rows = nil
	} else {
		scale = float64(p.N) / float64(len(batch))
	}
	res := make([]float64, kc)
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
	st.mu.Unlock()
	if scale != 1 {
		for i := range g[:bi.size-1] {
			g[i] *= scale
		}
	}
	g[bi.size-1] = 1
}

// quadLine is φ(γ) − φ(0) = lin·γ + ½·quad·γ², exact for the squared loss.
type quadLine struct{ lin, quad float64 }

func (l quadLine) Curvature(float64) float64 { return l.quad }
func (l quadLine) Delta(g float64) float64   { return l.lin*g + 0.5*l.quad*g*g }

// Line implements solver.Model. With A the map B_b ↦ X B_b, φ(γ) − φ(0) =
// γ(<X B_b − Y, A d>·s + d_t) + ½γ²‖A d‖²·s, s = N/m on a batch (1 exact).
func (m *model) Line(b int, x []float64, d solver.Direction, batch []int) solver.Line {
	p := m.p
	bi := p.info[b]
	c := p.comps[bi.comp]
	kc := len(c.tasks)
	st := m.comps[bi.comp]
	xb := x[bi.off : bi.off+bi.size]
	dt := d.XCoef * xb[bi.size-1]
	for _, t := range d.Terms {
		for q, idx := range t.V.Idx {
			if idx == bi.size-1 {
				dt += t.Coef * t.V.Val[q]
			}
		}
	}
	st.mu.Lock()
	m.sync(bi.comp)
	whole := bi.r0 == 0 && bi.r1 == p.J // z_C is X B_b itself
	ad := make([]float64, kc)
	var lin, quad float64
	each := func(i int) {
		zi := st.z[i*kc : (i+1)*kc]
		xi := p.x[i*p.J : (i+1)*p.J]
		for a := range ad {
			ad[a] = 0
		}
		if d.XCoef != 0 {
			if whole {
				for a := range ad {
					ad[a] = d.XCoef * zi[a]
				}
			} else {
				for j := bi.r0; j < bi.r1; j++ {
					v := xi[j]
					for a := 0; a < kc; a++ {
						ad[a] += d.XCoef * v * xb[(j-bi.r0)*kc+a]
					}
				}
			}
		}
		for _, t := range d.Terms {
			for q, idx := range t.V.Idx {
				if idx == bi.size-1 {
					continue
				}
				j, a := bi.r0+idx/kc, idx%kc
				ad[a] += t.Coef * t.V.Val[q] * xi[j]
			}
		}
		for a, tk := range c.tasks {
			lin += (zi[a] - p.y[i*p.K+tk]) * ad[a]
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
	st.mu.Unlock()
	return quadLine{lin: lin*scale + dt, quad: quad * scale}
}
