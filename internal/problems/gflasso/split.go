package gflasso

import (
	"math"
	"sync/atomic"

	"github.com/fwlab/fwlab/internal/solver"
)

// The enumerated oracle of a block with many rows (component blocks) scans
// its rows in parts of lmoPartRows rows. Each part visits its rows in
// decreasing order of their bounds (bound.go) and stops at the first whose
// bound is below the best score any part has found so far, which all parts
// share; the parts' winners are then compared in row order. A row is left
// out only when its bound proves it below a score some row reaches, so the
// answer is the exact maximum of the rows' scores, the lowest row among
// equal scores, and the scores themselves are computed row by row: the
// vertex is the same bit for bit whichever parts run first, together or one
// after another, which is what lets the solver hand the parts of one block's
// oracle to idle workers (solver.SplitOracle).
const lmoPartRows = 64

// lmoPart is the winner of one part of the row scan: the row (−1: none
// scores above 0), its score, its best atom and the atom's sign.
type lmoPart struct {
	score float64
	row   int
	atom  int
	sign  float64
}

// lmoSplit is the state of one split oracle call, pooled (no allocation per
// call); run is runParts as a value made once.
type lmoSplit struct {
	p     *Problem
	b     int
	g     []float64
	best  atomic.Uint64 // the best score found so far, as bits (scores ≥ 0 order as their bits)
	parts []lmoPart
	run   func(lo, hi int)
}

func (p *Problem) getSplit() *lmoSplit {
	if s, ok := p.splits.Get().(*lmoSplit); ok {
		return s
	}
	s := &lmoSplit{p: p, parts: make([]lmoPart, (p.J+lmoPartRows-1)/lmoPartRows)}
	s.run = s.runParts
	return s
}

// enumLMO returns the best (row, atom) of block b's enumerated component for
// the gradient g, its row in instance numbering (−1 when no atom scores
// above 0).
func (p *Problem) enumLMO(b int, g []float64, par solver.Parallel) lmoPart {
	bi := p.info[b]
	np := (bi.r1 - bi.r0 + lmoPartRows - 1) / lmoPartRows
	ls := p.getSplit()
	ls.b, ls.g = b, g
	ls.best.Store(0) // +0.0
	ls.parts = ls.parts[:np]
	if np == 1 {
		ls.runParts(0, 1)
	} else {
		par(np, ls.run)
	}
	best := lmoPart{row: -1}
	for _, pt := range ls.parts {
		// parts in row order: the first of equal scores has the lowest row
		if pt.row >= 0 && pt.score > best.score {
			best = pt
		}
	}
	if best.row >= 0 {
		best.row += bi.r0
	}
	ls.g = nil
	p.splits.Put(ls)
	return best
}

// runParts scans parts [lo, hi) of the current call.
func (ls *lmoSplit) runParts(lo, hi int) {
	p := ls.p
	bi := p.info[ls.b]
	c := p.comps[bi.comp]
	kc := len(c.tasks)
	nr := bi.r1 - bi.r0
	sc := p.getScratch()
	defer p.putScratch(sc)
	sums := sc.sums[:1<<kc]
	for pi := lo; pi < hi; pi++ {
		r0, r1 := pi*lmoPartRows, min((pi+1)*lmoPartRows, nr)
		bound := sc.bound[:r1-r0]
		for r := range bound {
			v := math.Inf(1) // one row: nothing to prune
			if nr > 1 {
				v = c.dualBound(ls.g[(r0+r)*kc : (r0+r+1)*kc])
				if math.IsNaN(v) {
					v = math.Inf(1)
				}
			}
			bound[r] = v
		}
		part := lmoPart{row: -1}
		for {
			// the row not yet visited with the largest bound (the lowest
			// row among equal bounds); visited rows get bound −1
			o, bo := -1, -1.0
			for r, v := range bound {
				if v > bo {
					o, bo = r, v
				}
			}
			if o < 0 || bo < math.Float64frombits(ls.best.Load()) {
				break
			}
			bound[o] = -1
			r := r0 + o
			s, a, sg := c.bestAtom(ls.g[r*kc:(r+1)*kc], sums)
			if a >= 0 && (s > part.score || (s == part.score && part.row >= 0 && r < part.row)) {
				part = lmoPart{score: s, row: r, atom: a, sign: sg}
				ls.raise(s)
			}
		}
		ls.parts[pi] = part
	}
}

// raise lifts the shared best score to s if s is higher.
func (ls *lmoSplit) raise(s float64) {
	bits := math.Float64bits(s)
	for {
		old := ls.best.Load()
		if bits <= old || ls.best.CompareAndSwap(old, bits) {
			return
		}
	}
}

// Component blocks split their model updates too: z_C = X B_C (N×|C|) and
// XᵀX B_C (J×|C|) in parts of modelPartRows rows, each part scaled and then
// added to in one pass, every entry by the same operations in the same
// order as Scale and Add do, so the state is the same bit for bit
// (solver.SplitModel).
const modelPartRows = 128

// splitBuf is block b's split update in progress (a block's calls never
// overlap); moveFn is its move method as a value made once.
type splitBuf struct {
	m      *model
	b      int
	s, c   float64
	v      solver.Vertex
	moveFn func(lo, hi int)
}

// parts returns the number of parts of component ci's state: those of z_C,
// then those of XᵀX B_C.
func (m *model) parts(ci int) (nz, n int) {
	nz = (m.p.N + modelPartRows - 1) / modelPartRows
	n = nz
	if m.comps[ci].h != nil {
		n += (m.p.J + modelPartRows - 1) / modelPartRows
	}
	return nz, n
}

// partRows returns the rows [lo, hi) of part q and whether they are rows of
// z_C (else of XᵀX B_C).
func (m *model) partRows(q, nz int) (lo, hi int, z bool) {
	if q < nz {
		return q * modelPartRows, min((q+1)*modelPartRows, m.p.N), true
	}
	q -= nz
	return q * modelPartRows, min((q+1)*modelPartRows, m.p.J), false
}

// MoveSplit implements solver.SplitModel.
func (m *model) MoveSplit(b int, s, c float64, v solver.Vertex, par solver.Parallel) {
	bi := m.p.info[b]
	if m.comps[bi.comp].cur != nil {
		// row mode: only the block's own row of B changes here
		if s != 1 {
			m.Scale(b, s)
		}
		m.Add(b, c, v)
		return
	}
	moves := s != 1
	for _, idx := range v.Idx {
		moves = moves || idx != bi.size-1
	}
	if !moves {
		return // the epigraph coordinate only: nothing in z_C or XᵀX B_C
	}
	sb := &m.splits[b]
	sb.s, sb.c, sb.v = s, c, v
	_, n := m.parts(bi.comp)
	par(n, sb.moveFn)
	sb.v = solver.Vertex{}
}

func (sb *splitBuf) move(lo, hi int) {
	m := sb.m
	p := m.p
	bi := p.info[sb.b]
	st := m.comps[bi.comp]
	kc := len(p.comps[bi.comp].tasks)
	nz, _ := m.parts(bi.comp)
	v := sb.v
	for q := lo; q < hi; q++ {
		r0, r1, z := m.partRows(q, nz)
		if s := sb.s; s != 1 {
			a := st.h
			if z {
				a = st.z
			}
			for i := r0 * kc; i < r1*kc; i++ {
				a[i] *= s
			}
		}
		for k, idx := range v.Idx {
			if idx == bi.size-1 {
				continue
			}
			j, a := bi.r0+idx/kc, idx%kc
			cv := sb.c * v.Val[k]
			if z {
				col := p.xt[j*p.N+r0 : j*p.N+r1]
				for i, xv := range col {
					st.z[(r0+i)*kc+a] += cv * xv
				}
			} else {
				for i, gv := range p.gram[j*p.J+r0 : j*p.J+r1] {
					st.h[(r0+i)*kc+a] += cv * gv
				}
			}
		}
	}
}

var _ solver.SplitModel = (*model)(nil)
