package solver

import "sync"

// Reshaper is an optional extension of Problem for epigraph forms such as
// the GFLASSO's, where a block's polytope is {(B, t) : Ω(B) ≤ t ≤ T} and its
// iterate can hold slack t − Ω(B) > 0 that Frank-Wolfe steps only drain
// slowly. Lowering t to Ω(B) is a move inside the block's polytope that
// lowers the objective by exactly the slack and leaves the loss untouched;
// the problem returns the new point's vertex representation, read off B.
type Reshaper interface {
	// Reshape is called after block b took a step, with its block-local
	// point xb, the run's model and the block's active set (read-only). To
	// move, it writes the new point into xb, reports the change to m (Scale,
	// Add), fills dst (empty on entry) with the new representation by Put
	// (weights ≥ 0 summing to one, its point within rounding of the new xb)
	// and returns true; else it returns false and changes nothing. The new
	// point's objective must not exceed the old.
	Reshape(b int, xb []float64, m Model, set, dst *ActiveSet) bool
}

// Put adds v with weight w to the set (to w's weight if v is in it); for
// Reshaper implementations filling a new representation.
func (a *ActiveSet) Put(v Vertex, w float64) {
	if a.index == nil {
		a.index = map[string]int{}
	}
	if i, ok := a.index[v.Key]; ok {
		a.w[i] += w
		return
	}
	a.add(v, w)
}

// spareSets recycles the active sets that a reshape replaces.
var spareSets = sync.Pool{New: func() any { return &ActiveSet{index: map[string]int{}} }}

// Find returns the active vertex with the given key (as bytes, so that a
// caller can look it up without building a string) and its weight.
func (a *ActiveSet) Find(key []byte) (Vertex, float64, bool) {
	if i, ok := a.index[string(key)]; ok {
		return a.verts[i], a.w[i], true
	}
	return Vertex{}, 0, false
}

// reshape gives the problem, when it is a Reshaper, the chance to move block
// bs to a better point with a new representation after the block's step
// (phase 2, in block order). Only methods with away (or pairwise) steps
// reshape: they can take the fresh representation's atoms apart again. For
// vanilla Frank-Wolfe (fw, bcfw) it does not pay: on the GFLASSO's
// component blocks bcfw ends 2.4e-4 above F* after 5000 iterations with the
// slack collapsed against 7e-5 without (its gap is smaller, 4.6e-3·F
// against 0.1·F, but F is what a user reads).
//
// It returns the number of atoms the rebuild removed (those of the old
// representation that the new one does not hold), which the records count
// among the clean-ups.
func (st *fwRun) reshape(bs *blockState) int {
	rs, ok := st.m.p.(Reshaper)
	if !ok || bs.plan.kind == StepNone || !st.m.reshape || st.m.cfg.KeepSlack {
		return 0
	}
	xb := st.x[bs.blk.Offset : bs.blk.Offset+bs.blk.Size]
	dst := spareSets.Get().(*ActiveSet)
	dst.verts, dst.w = dst.verts[:0], dst.w[:0]
	clear(dst.index)
	if !rs.Reshape(bs.idx, xb, st.model, bs.set, dst) || dst.Len() == 0 {
		spareSets.Put(dst)
		return 0
	}
	old := bs.set
	removed := 0
	for _, v := range old.verts {
		if _, ok := dst.index[v.Key]; !ok {
			removed++
		}
	}
	bs.set = dst
	clear(old.verts) // drop the references to vertices
	spareSets.Put(old)
	return removed
}

// UsesReshape reports whether the built-in FW algorithm algo reshapes
// (collapses the slack of) a Reshaper problem's blocks unless
// Config.KeepSlack.
func UsesReshape(algo string) bool { return Builtin[algo].Reshape }

// Normalize rescales the weights to sum to one.
func (a *ActiveSet) Normalize() {
	s := a.Sum()
	for i := range a.w {
		a.w[i] /= s
	}
}
