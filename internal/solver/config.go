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
