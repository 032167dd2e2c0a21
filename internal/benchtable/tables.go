package benchtable

// Scalings are the project's tables of how cost grows with size, from
// BenchmarkScaling (internal/problems/gflasso) and BenchmarkL1BallScaling
// (internal/problems/toy); their doc comments define the metrics.
var Scalings = []*ScalingTable{&GFLASSOScaling, &L1BallScaling}

// GFLASSOScaling is the table of BenchmarkScaling.
var GFLASSOScaling = ScalingTable{
	Bench: "BenchmarkScaling",
	Title: "GFLASSO at 1×, 3×, 10× and 30× the paper's size (`BenchmarkScaling`, internal/problems/gflasso;\n" +
		"λ = γ = 10 at 1×, 30 above). F* is certified by `bc-ssfw-as`'s duality gap (run to a gap\n" +
		"≤ 1e-9·F(0), at most 50 000 iterations or 30 min): relative errors are measured against the\n" +
		"certified lower bound F(x̂) − gap ≤ F*, so a time to 1e-6 is an upper bound of the true one.\n" +
		"`spg` targets the same accuracy (μ from ε = 5e-7·F*) and stops at 20 000 iterations or 120 s\n" +
		"of CPU, its evaluations (every 10 iterations) included;\n" +
		"where it does not reach 1e-6 the cell gives its iterations and best relative error.\n" +
		"Exponents e: time ∝ (size factor)^e, fitted over the sizes that have the figure.",
	SizeHeader: "size",
	Size:       "x",
	FitLabel:   "exponent e (time ∝ size^e)",
	Expect:     []string{"1x", "3x", "10x", "30x"},
	Columns: []ScalingColumn{
		{Header: "N×J×K", Units: []string{"N", "J", "K"}},
		{Header: "F* certificate: gap/F*", Units: []string{"gap/F*/1e-9"}, Sci: true},
		{Header: "bc-ssfw-as ms/iter", Units: []string{"bc-ssfw-as-ms/iter"}, Fit: true},
		{Header: "bc-ssfw-as iterations to 1e-6", Units: []string{"bc-ssfw-as-iters/1e-6"}, Int: true, Fit: true},
		{Header: "bc-ssfw-as s to 1e-6", Units: []string{"bc-ssfw-as-s/1e-6"}, Fit: true,
			Iters: "bc-ssfw-as-iters", Best: "bc-ssfw-as-best/1e-6"},
		{Header: "spg ms/iter", Units: []string{"spg-ms/iter"}, Fit: true},
		{Header: "spg s to 1e-6", Units: []string{"spg-s/1e-6"}, Fit: true, Iters: "spg-iters", Best: "spg-best/1e-6"},
	},
	UnitScale: map[string]float64{"gap/F*/1e-9": 1e-9, "bc-ssfw-as-best/1e-6": 1e-6, "spg-best/1e-6": 1e-6},
}

// L1BallScaling is the table of BenchmarkL1BallScaling.
var L1BallScaling = ScalingTable{
	Bench: "BenchmarkL1BallScaling",
	Title: "`afw` (exact line searches) on l1-ball least squares, n = 10⁴ samples, p = 200 to 10⁴\n" +
		"(`BenchmarkL1BallScaling`, internal/problems/toy; the instances of `toy.NewL1BallFast`, built in\n" +
		"O(n·p) with F* known from a KKT certificate, checked in the run by the duality gap at x*),\n" +
		"to F − F* ≤ 1e-6·F* (at most 10⁵ iterations, 600 s of CPU in the iterations or 1 800 s in\n" +
		"all). An iteration makes one pass over the 8·n·p bytes of A. Exponents e: figure ∝ p^e.",
	SizeHeader: "instance",
	Size:       "p",
	FitLabel:   "exponent e (figure ∝ p^e)",
	Expect:     []string{"p=200", "p=500", "p=1000", "p=2000", "p=5000", "p=10000"},
	Columns: []ScalingColumn{
		{Header: "F* certificate: gap/F*", Units: []string{"gap*/F*/1e-12"}, Sci: true},
		{Header: "ms/iter", Units: []string{"ms/iter"}, Fit: true},
		{Header: "iterations to 1e-6", Units: []string{"iters/1e-6"}, Int: true, Fit: true},
		{Header: "s to 1e-6", Units: []string{"s/1e-6"}, Fit: true, Iters: "iters", Best: "best/1e-6"},
	},
	UnitScale: map[string]float64{"gap*/F*/1e-12": 1e-12, "best/1e-6": 1e-6},
}
