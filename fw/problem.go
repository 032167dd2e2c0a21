package fw

// Problem is the paper's (P1): minimise F(x) = (1/n) Σ_i f_i(a_iᵀx) + <b, x>
// (or the plain sum; that only rescales L) over P = P_1 × … × P_q.
// Implementations are immutable after construction and safe for concurrent
// use by several runs; all mutable state lives in a Model.
type Problem interface {
	// Dim is p, the length of x.
	Dim() int
	// Samples is n, the number of terms f_i that batches are drawn from.
	Samples() int
	// Blocks partitions [0, Dim()) in increasing order of Offset.
	Blocks() []Block
	// LMO returns the vertex of block b's polytope minimising <g, v>, with g
	// block-local. It is exact and deterministic: the same g gives the same
	// vertex bit for bit, ties broken by a fixed rule.
	LMO(b int, g []float64) Vertex
	// Start returns the vertex block b starts from.
	Start(b int) Vertex
	// Objective is the problem's reported objective at a feasible x, in its
	// own original, unscaled form (for epigraph reformulations: the original
	// penalised objective, not the P1 upper bound).
	Objective(x []float64) float64
	// NewModel returns a fresh incremental evaluator positioned at x.
	NewModel(x []float64) Model
}

// Model is the problem's incremental state for the current iterate x, which
// the solver owns and updates; after changing x the solver tells the model
// what it did (Scale, Add) so that it can update z = A x cheaply. A Model is
// used by one goroutine at a time, except that calls for different blocks may
// run concurrently (block methods).
type Model interface {
	// Reset recomputes the state from x from scratch (round-off control).
	Reset(x []float64)
	// Scale records that x_b ← s·x_b happened.
	Scale(b int, s float64)
	// Add records that x_b ← x_b + c·v happened.
	Add(b int, c float64, v Vertex)
	// Gradient writes into g (length Blocks()[b].Size) an estimate of ∇F
	// restricted to block b, the linear term included, computed from the
	// samples in batch (sample indices in [0, Samples())), scaled so that its
	// expectation over uniform batches is the exact gradient. batch == nil
	// means the exact gradient over all samples. x is the full current iterate.
	Gradient(b int, g []float64, x []float64, batch []int)
	// Line prepares the restriction φ(γ) = F(x + γ d) along the block-b
	// direction d, estimated on batch (nil: exact), for step-size rules. The
	// solver uses a Line only until its next call of Line for the same block,
	// so a model may reuse one Line's storage.
	Line(b int, x []float64, d Direction, batch []int) Line
}

// LineMagnitude is implemented by Lines whose Delta is a sum of differences
// of loss values (each computed to rounding of the loss values themselves):
// Magnitude returns the magnitude of φ(0) on the line's batch, scaled like
// Delta, the scale of Delta's rounding. Backtracking allows for that
// rounding; a Line whose Delta is a closed form in γ need not implement it.
type LineMagnitude interface {
	// Magnitude is |φ(0)| on the line's batch, scaled like Delta.
	Magnitude() float64
}

// Term is one weighted vertex in a Direction.
type Term struct {
	// Coef is the vertex's coefficient in the direction.
	Coef float64
	// V is the vertex.
	V Vertex
}

// Direction is d = XCoef·x_b + Σ Coef_i·V_i within one block: a FW direction
// is {-1, [{1, p}]}, an away direction {1, [{-1, u}]}, a pairwise direction
// {0, [{1, p}, {-1, u}]}.
type Direction struct {
	// XCoef is the coefficient of the block's current iterate x_b.
	XCoef float64
	// Terms are the weighted vertices.
	Terms []Term
}

// Line is F restricted to a segment x + γd, γ ∈ [0, γ_max].
type Line interface {
	// Curvature returns M ≥ 0 with φ(γ) ≤ φ(0) + γφ'(0) + ½Mγ² for all
	// γ ∈ [0, gmax] (for a batch estimate: of the batch estimate, scaled to the
	// full sum like Gradient). For squared losses it is exact and does not
	// depend on gmax.
	Curvature(gmax float64) float64
	// Delta returns φ(γ) − φ(0), on the same batch and scale.
	Delta(gamma float64) float64
}

// ProxProblem is the view of a problem that proximal-gradient methods use:
// minimise S(y) + R(y) with S smooth and R simple (an indicator of the
// feasible polytope, or λ‖·‖₁ for the penalised models). y lives in the
// problem's natural coordinates (for an epigraph reformulation, without the
// epigraph variables).
type ProxProblem interface {
	// ProxDim is the length of y.
	ProxDim() int
	// ProxStart returns the starting point (a fresh slice).
	ProxStart() []float64
	// Smooth returns S(y) and writes ∇S(y) into grad.
	Smooth(y, grad []float64) float64
	// Prox writes argmin_u R(u) + ‖u − v‖²/(2·step) into dst.
	Prox(dst, v []float64, step float64)
	// SmoothLipschitz is an upper bound on the Lipschitz constant of ∇S, or 0
	// when none is known (the method then backtracks).
	SmoothLipschitz() float64
	// Lift writes into x (length Dim() of the P1 problem) a feasible point of
	// the P1 form that represents y, so that Objective and the FW gap can be
	// reported for proximal iterates on the same footing.
	Lift(x, y []float64)
}

// Parallel runs f on disjoint ranges [lo, hi) that together cover [0, n),
// possibly several at once on other goroutines, in any order and any split,
// and returns when all of them are done. The engine hands one to a block's
// step (SplitOracle, SplitModel) so that workers without a block of their
// own take part of the work of the blocks still running: many blocks and
// few workers then split evenly (5 blocks on 2 workers, say). With one worker
// it is f(0, n). A panic in f is the block's failure, as in the step itself.
type Parallel func(n int, f func(lo, hi int))

// SplitOracle is an optional extension of Problem whose oracle can split its
// work into parts.
type SplitOracle interface {
	// LMOSplit is LMO(b, g), its work split into parts that it hands to par.
	// It must return LMO's vertex bit for bit however par splits and orders
	// the parts (for example: each part keeps its own best, and the parts'
	// bests are compared in a fixed order with a fixed tie-break), so that a
	// run does not depend on the number of workers. It may be called for
	// different blocks concurrently.
	LMOSplit(b int, g []float64, par Parallel) Vertex
}

// SplitModel is an optional extension of Model whose block updates can split
// their work into parts.
type SplitModel interface {
	Model
	// MoveSplit records that x_b ← s·x_b + c·v happened, with its work
	// handed to par in parts. The state it leaves must be the one Scale(b, s)
	// followed by Add(b, c, v) leaves (Add alone when s = 1, since s·x_b is
	// then x_b), bit for bit, however par splits and orders the parts.
	MoveSplit(b int, s, c float64, v Vertex, par Parallel)
}

// SeparableBlocks is implemented by problems whose blocks are separable in
// all that a block step touches: block b's Gradient, Line and oracle read
// only x_b and b's own model state, and its Scale and Add (and the slack
// collapse of fwlab's own epigraph problems) write only those. The block
// methods then run each block's whole step (plan, apply) as one task, one pass over the workers per iteration instead of
// two; the iterates are the same as when every block plans at x^k before any
// applies, since no block reads what another block's step writes. Blocks
// that share model state (CoupledBlocks) are never run this way.
type SeparableBlocks interface {
	// BlocksSeparable reports whether the blocks are separable.
	BlocksSeparable() bool
}
