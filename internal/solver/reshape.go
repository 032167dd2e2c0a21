package solver

// Reshaper is an optional extension of Problem for epigraph forms such as
// the GFLASSO's, where a block's polytope is {(B, t) : Ω(B) ≤ t ≤ T} and its
// iterate can hold slack t − Ω(B) > 0 that Frank-Wolfe steps only drain
// slowly. Lowering t to Ω(B) is a move inside the block's polytope that
// lowers the objective by exactly the slack and leaves the loss untouched;
// the problem returns the new point's vertex representation, read off B.
type Reshaper interface {
	// Reshape is called after block b took a step, with its block-local
	// point xb and active set (read-only). It returns ok = false to keep
	// both, or the new representation (vertices with weights ≥ 0 summing to
	// one, its point within rounding of xb + delta) and the change delta of
	// xb, which the solver applies to x and reports to the Model with
	// Add(b, 1, delta). The new point's objective must not exceed the old.
	Reshape(b int, xb []float64, set *ActiveSet) (verts []Vertex, w []float64, delta Vertex, ok bool)
}

// Find returns the active vertex with the given key and its weight.
func (a *ActiveSet) Find(key string) (Vertex, float64, bool) {
	if i, ok := a.index[key]; ok {
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
func (st *fwRun) reshape(bs *blockState) {
	rs, ok := st.m.p.(Reshaper)
	if !ok || bs.plan.kind == StepNone || st.m.mode == modeVanilla {
		return
	}
	xb := st.x[bs.blk.Offset : bs.blk.Offset+bs.blk.Size]
	verts, w, delta, ok := rs.Reshape(bs.idx, xb, bs.set)
	if !ok || len(verts) == 0 {
		return
	}
	set := &ActiveSet{verts: verts, w: w, index: make(map[string]int, len(verts))}
	for i, v := range verts {
		set.index[v.Key] = i
	}
	bs.set = set
	delta.AddTo(xb, 1)
	st.model.Add(bs.idx, 1, delta)
}
