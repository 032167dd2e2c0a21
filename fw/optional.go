package fw

// LipschitzBounder is implemented by problems that know an upper bound on
// the Lipschitz constant of ∇F (Euclidean norm), or an estimate of it, used by
// the paper rule with L = auto and as the proximal methods' step. Each
// implementation says which it is: an exact eigenvalue computation with a
// rounding margin is a certified bound, power iteration an estimate.
type LipschitzBounder interface {
	// LipschitzBound is L with ‖∇F(x) − ∇F(y)‖ ≤ L‖x − y‖ on P.
	LipschitzBound() float64
}

// Evaluator is implemented by problems that report extra metrics on
// evaluation iterations (added to Record.Extra).
type Evaluator interface {
	// Extra returns the metrics of the iterate x, by name.
	Extra(x []float64) map[string]float64
}

// CoupledBlocks is implemented by problems whose blocks share state in the
// smooth part (their gradients depend on each other's coordinates). When
// such a problem runs a block method with several blocks per iteration, each
// block's step is computed at the same point and the steps could overshoot
// together. Under the rules with a global L (paper, short) the plain sum of
// the block moves is safe (disjoint coordinates); under the directional rules
// the engine searches along the summed direction with a secant step on the
// batch gradient at both ends, which is exact for squared losses. Drops and collapses are taken whenever the
// whole summed move is. Problems with separable blocks (one block per
// connected component in GFLASSO) are unaffected.
type CoupledBlocks interface {
	// BlocksCoupled reports whether the blocks are coupled.
	BlocksCoupled() bool
}

// SyncModel is implemented by models that defer the work of Scale and Add
// on state their blocks share (the residual of a GFLASSO component that row
// blocks share), so that the moves of many blocks are applied to it in one
// pass. The engine calls Sync at the points where the blocks are about to
// read the model concurrently, while nothing else uses the model; the
// deferred work is then done once, split over the engine's workers, instead
// of by whichever block reads first while the others wait. A model must stay
// correct without Sync (it then brings its state up to date on first use).
type SyncModel interface {
	Model
	// Sync applies the deferred updates. It may call parallel(n, f), which
	// runs f on disjoint ranges [lo, hi) that cover [0, n), concurrently;
	// its result must not depend on how [0, n) is split.
	Sync(parallel func(n int, f func(lo, hi int)))
}

// CheckedOracle is an optional extension of Problem whose oracle can fail
// (a linear program that does not solve). For a step, Problem.LMO may fall
// back to a feasible vertex that is not the minimiser; a duality-gap
// evaluation must not, since its gap would then be no certificate: it calls
// CheckedLMO, and a failure fails the evaluation, and the run, with the
// oracle's message.
type CheckedOracle interface {
	// CheckedLMO is LMO, or the reason it could not find the minimiser.
	CheckedLMO(b int, g []float64) (Vertex, error)
}
