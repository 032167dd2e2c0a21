package solver

// Config configures one of the package's algorithms.
type Config struct {
	// Algorithm is the algorithm's name, as errors and records name it.
	Algorithm string
	// Variant is how it runs: the row of the algorithm table
	// (internal/spec, spec.Runs) that the dashboard, the command line and
	// fw/methods pass. Zero: the variant of the built-in algorithm named
	// by Algorithm (Builtin), for a caller that names one.
	Variant Variant
	// Step: "paper" (γ = −<g,d>/(L‖d‖²)), "curvature" (the directional
	// constant of the problem's Line), "backtrack" (adaptive L),
	// "open-loop" (2/(k+2)) and "short" (the paper rule, for the methods
	// without away steps), each within the direction's γ_max. Which rules
	// an algorithm takes is the algorithm table's (internal/spec).
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
	// Path is coordinate descent's continuation along λ (NewCD only; see
	// cdpath.go): the number of stages solved, warm-started one from the
	// other, on the geometric path from λ_max down to the problem's λ
	// before the problem itself. 0: none, the cold start.
	Path   int
	Limits Limits
	Seed   int64
}

// Variant is how an algorithm runs, as the algorithm table says it
// (internal/spec's Runs, of which this type is a conversion).
type Variant struct {
	// Method: for the Frank-Wolfe family (New) its directions, "fw",
	// "away" or "pairwise"; for NewProx "fista" or "pgd"; for NewCD "cd".
	Method string
	// Stochastic: it samples batches by the Schedule (New only).
	Stochastic bool
	// Blockwise: it steps on R sampled blocks an iteration (New only).
	Blockwise bool
	// Reshape: on a Reshaper problem it collapses the slack after its
	// steps, unless KeepSlack (New only; away or pairwise directions).
	Reshape bool
}

// Builtin is the variant of each algorithm fwlab ships, by name: what a
// Config naming one of them without its Variant runs (the algorithm table
// gives the same; a test checks that they agree).
var Builtin = map[string]Variant{
	"ssfw-as":    {Method: "away", Stochastic: true, Reshape: true},
	"afw":        {Method: "away", Reshape: true},
	"pfw":        {Method: "pairwise", Reshape: true},
	"fw":         {Method: "fw"},
	"bc-ssfw-as": {Method: "away", Stochastic: true, Blockwise: true, Reshape: true},
	"bcfw":       {Method: "fw", Blockwise: true},
	"fista":      {Method: "fista"},
	"pgd":        {Method: "pgd"},
	"cd":         {Method: "cd"},
}

// variant is cfg's Variant, or the built-in one of its Algorithm.
func (cfg *Config) variant() Variant {
	if cfg.Variant != (Variant{}) {
		return cfg.Variant
	}
	return Builtin[cfg.Algorithm]
}
