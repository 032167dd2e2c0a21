package solver

// Config configures one of the package's algorithms.
type Config struct {
	// Algorithm: "ssfw-as" (Algorithm 1), "afw", "pfw", "fw",
	// "bc-ssfw-as" (Algorithm 3), "bcfw", "fista", "pgd".
	Algorithm string
	// Step: "paper" (γ = −<g,d>/(L‖d‖²)), "curvature" (the directional
	// constant of the problem's Line), "backtrack" (adaptive L), and for fw
	// also "open-loop" (2/(k+2)) and "short" (the paper rule without away steps).
	Step string
	// L is the user's Lipschitz constant for the paper rule (0: auto, the
	// problem's LipschitzBound, which is a certified bound for some problems
	// and an estimate for others, see there) and the starting L of
	// backtracking.
	L        float64
	Schedule Schedule
	// R is the number of blocks sampled per iteration (0: all).
	R int
	// Workers bounds the block methods' worker pool (0: GOMAXPROCS). Results
	// do not depend on it.
	Workers int
	// Caratheodory keeps |U| ≤ dim+1 per block by Carathéodory reduction.
	Caratheodory bool
	// KeepSlack turns off the problem's slack collapse (Reshaper): the
	// paper's Algorithms 1 and 3 as written. Without it, methods with away
	// or pairwise steps on a Reshaper problem run the collapse variant.
	KeepSlack bool
	// DropTol is δ: an away (or pairwise) step with γ ≥ γ_max(1−δ) is snapped
	// to an exact drop, a FW step with γ ≥ 1−δ to an exact collapse.
	// 0: 1e-9. (Independently, active weights at or below 1e-13 are removed
	// and counted as clean-ups.)
	DropTol float64
	// RefreshEvery recomputes z = A x from scratch every so many iterations
	// (0: 256).
	RefreshEvery int
	Limits       Limits
	Seed         int64
}

// LipschitzBounder is implemented by problems that know an upper bound on
// the Lipschitz constant of ∇F (Euclidean norm), or an estimate of it, used by
// the paper rule with L = auto and as the proximal methods' step. Each
// implementation says which it is: an exact eigenvalue computation with a
// rounding margin is a certified bound, power iteration an estimate.
type LipschitzBounder interface {
	LipschitzBound() float64
}

// Evaluator is implemented by problems that report extra metrics on
// evaluation iterations (added to Record.Extra).
type Evaluator interface {
	Extra(x []float64) map[string]float64
}

// CoupledBlocks is implemented by problems whose blocks share state in the
// smooth part (their gradients depend on each other's coordinates). When
// such a problem runs a block method with several blocks per iteration, each
// block's step is computed at the same point and the steps could overshoot
// together. Under the rules with a global L (paper, short) the plain sum of
// the block moves is safe (disjoint coordinates); under the directional rules
// the engine searches along the summed direction (see combineCoupled), which
// is exact for squared losses. Drops and collapses are taken whenever the
// whole summed move is. Problems with separable blocks (one block per
// connected component in GFLASSO) are unaffected.
type CoupledBlocks interface {
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
