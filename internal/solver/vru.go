package solver

// Phase 2 of an iteration, per block: line 13 of Algorithm 1, x^{k+1} =
// x^k + γ d (move, on x and the model), and line 14, the vertex
// representation update of Algorithm 2 (updateRepresentation, on the
// active set), then the clean-up of vanishing weights and, when asked, the
// optional Carathéodory reduction (Algorithm 2's last line).

// applyBlock applies block bs's planned step and lets the problem reshape
// the block (phase 2).
func (st *fwRun) applyBlock(bs *blockState) {
	bs.cleanups = st.apply(bs)
	bs.rebuilt = st.reshape(bs)
}

// apply performs block bs's planned step on x, the model and the active set
// (phase 2). It returns the number of weights cleaned up.
func (st *fwRun) apply(bs *blockState) int {
	pl := &bs.plan
	if pl.kind == StepNone {
		return 0
	}
	if !pl.moved {
		st.move(bs)
	}
	return st.updateRepresentation(bs)
}

// move performs block bs's planned step on x and the model (not on the
// active set).
func (st *fwRun) move(bs *blockState) {
	pl := &bs.plan
	b := bs.idx
	xb := st.x[bs.blk.Offset : bs.blk.Offset+bs.blk.Size]
	g := pl.gamma
	switch pl.kind {
	case StepCollapse:
		for i := range xb {
			xb[i] = 0
		}
		pl.p.AddTo(xb, 1)
		st.scaleAdd(b, 0, 1, pl.p)
	case StepFW:
		s := 1 - g
		for i := range xb {
			xb[i] *= s
		}
		pl.p.AddTo(xb, g)
		st.scaleAdd(b, s, g, pl.p)
	case StepAway, StepDrop:
		s := 1 + g
		for i := range xb {
			xb[i] *= s
		}
		pl.uVertex.AddTo(xb, -g)
		st.scaleAdd(b, s, -g, pl.uVertex)
	case StepPairwise:
		pl.p.AddTo(xb, g)
		st.add(b, g, pl.p)
		pl.uVertex.AddTo(xb, -g)
		st.add(b, -g, pl.uVertex)
	}
}

// unmove takes back a move of block bs: x_b is restored from saved (the
// whole x before the moves) and the model is told the inverse operations;
// after a collapse, whose scaling by 0 has no inverse, the model's block is
// rebuilt from the (not yet updated) active set.
func (st *fwRun) unmove(bs *blockState, saved []float64) {
	pl := &bs.plan
	b := bs.idx
	lo, hi := bs.blk.Offset, bs.blk.Offset+bs.blk.Size
	copy(st.x[lo:hi], saved[lo:hi])
	g := pl.gamma
	switch pl.kind {
	case StepCollapse:
		st.rebuild(bs)
	case StepFW:
		if g > 0.5 {
			// dividing by 1 − γ would magnify the rounding
			st.rebuild(bs)
			return
		}
		st.model.Add(b, -g, pl.p)
		st.model.Scale(b, 1/(1-g))
	case StepAway, StepDrop:
		st.model.Add(b, g, pl.uVertex)
		st.model.Scale(b, 1/(1+g))
	case StepPairwise:
		st.model.Add(b, g, pl.uVertex)
		st.model.Add(b, -g, pl.p)
	}
}

// rebuild tells the model that x_b is Σ μ_v v over block bs's active set.
func (st *fwRun) rebuild(bs *blockState) {
	st.model.Scale(bs.idx, 0)
	for i := 0; i < bs.set.Len(); i++ {
		v, w := bs.set.Vertex(i)
		st.model.Add(bs.idx, w, v)
	}
}

// updateRepresentation is Algorithm 2 (VRU) for block bs's planned step:
// a FW step scales the weights by 1 − γ and adds γ to p's (lines 11–17;
// γ = 1 collapses U to {p}), an away step scales them by 1 + γ and takes γ
// from u's (lines 2–10; a drop removes u), a pairwise step moves γ from u
// to p. It then cleans up; it returns the number of weights cleaned up.
func (st *fwRun) updateRepresentation(bs *blockState) int {
	pl := &bs.plan
	g := pl.gamma
	if h := st.m.beforeCommit; h != nil {
		h(bs)
	}
	switch pl.kind {
	case StepCollapse:
		bs.set.FWUpdate(pl.p, 1)
		return 0
	case StepFW:
		bs.set.FWUpdate(pl.p, g)
	case StepAway, StepDrop:
		bs.set.AwayUpdate(pl.u, g, pl.kind == StepDrop)
	case StepPairwise:
		bs.set.PairwiseUpdate(pl.p, pl.u, g, pl.drop)
	}
	if h := st.m.beforeCleanup; h != nil {
		h(bs)
	}
	c := bs.set.Cleanup(weightTol)
	if st.m.cfg.Caratheodory {
		c += bs.set.Caratheodory(bs.blk.Size)
	}
	return c
}
