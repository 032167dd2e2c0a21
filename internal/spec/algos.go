package spec

import "strings"

// Algorithm is one algorithm fwlab knows: the one declaration that the
// spec's validation, the scenarios' dispatch, the solver's constructor
// (checked by a test) and the API's catalogue (/api/scenarios, from which
// the page takes its rules) read.
type Algorithm struct {
	Name string
	// Family is the code that runs it: "fw" (internal/solver's Frank-Wolfe
	// family), "prox" (the proximal baselines), "cd" (coordinate descent),
	// "spg" (the GFLASSO's smoothing proximal gradient) or "ssvm" (the
	// structural SVM's own methods).
	Family string
	// Groups are the problem groups it applies to: "toy", "model" (the
	// GLMs and LASSO-type models), "gflasso", "ssvm".
	Groups []string
	// Stepsizes are the step-size rules it takes; Stepsize is its default.
	Stepsizes []string
	Stepsize  string
	// OwnStep says how an algorithm whose step no step-size rule chooses
	// moves (the rules it accepts then change nothing; the page hides them).
	OwnStep string
	// Runs says how it runs: the method of its family's code and the
	// settings that make the algorithm (so that a row added here runs with
	// no other edit).
	Runs
	// Settings are the spec's fields (Algo's JSON names) it takes beyond
	// those every algorithm of its kind takes (spg: mu, eps; cd: path).
	Settings []string
	// TakesL: it uses a Lipschitz constant (L).
	TakesL bool
	// NotInPaper, when set, says the algorithm is a baseline that is not a
	// method of the paper (nor a classic Frank-Wolfe variant it builds
	// on), and what it is.
	NotInPaper string
}

// Runs is how an algorithm runs. internal/solver takes it as it is
// (solver.Variant, a conversion of this type): keep the two alike.
type Runs struct {
	// Method is the method of its family's code it runs as. For the family
	// "fw", its directions: "fw" (Frank-Wolfe steps only), "away"
	// (Frank-Wolfe or away steps) or "pairwise" (pairwise steps), which
	// with the settings below make the whole method; "prox": "fista" or
	// "pgd"; "cd": "cd"; "spg": "spg"; "ssvm": "bcfw-as" or "ssg" (and the
	// structural SVM runs a family "fw" row with Frank-Wolfe directions
	// and blocks as its own bcfw).
	Method string
	// Stochastic: it samples batches (takes a batch schedule, reports the
	// sampled gradient's error).
	Stochastic bool
	// Blockwise: block-coordinate, so r (blocks per iteration) applies.
	Blockwise bool
	// Reshape: with slack=collapse on an epigraph problem, it lowers the
	// epigraph variable after its steps (the slack collapse); for the
	// family "fw", directions "away" or "pairwise" only.
	Reshape bool
}

// Methods are the methods each family's code runs (Runs.Method).
var Methods = map[string][]string{
	"fw":   {"fw", "away", "pairwise"},
	"prox": {"fista", "pgd"},
	"cd":   {"cd"},
	"spg":  {"spg"},
	"ssvm": {"bcfw-as", "ssg"},
}

var (
	paperRules = []string{"paper", "curvature", "backtrack"}
	fwRules    = []string{"paper", "curvature", "backtrack", "open-loop", "short"}
)

// Algorithms is the table of every algorithm, in the order lists show them.
var Algorithms = []Algorithm{
	{Name: "ssfw-as", Family: "fw", Runs: Runs{Method: "away", Stochastic: true, Reshape: true}, Groups: []string{"toy", "model"}, Stepsizes: paperRules, Stepsize: DefaultStepsize, TakesL: true},
	{Name: "afw", Family: "fw", Runs: Runs{Method: "away", Reshape: true}, Groups: []string{"toy", "model"}, Stepsizes: paperRules, Stepsize: DefaultStepsize, TakesL: true},
	{Name: "pfw", Family: "fw", Runs: Runs{Method: "pairwise", Reshape: true}, Groups: []string{"toy", "model"}, Stepsizes: paperRules, Stepsize: DefaultStepsize, TakesL: true},
	{Name: "fw", Family: "fw", Runs: Runs{Method: "fw"}, Groups: []string{"toy", "model"}, Stepsizes: fwRules, Stepsize: "open-loop", TakesL: true},
	{Name: "fista", Family: "prox", Runs: Runs{Method: "fista"}, Groups: []string{"toy", "model"}, Stepsizes: paperRules, Stepsize: DefaultStepsize, TakesL: true},
	{Name: "pgd", Family: "prox", Runs: Runs{Method: "pgd"}, Groups: []string{"toy", "model"}, Stepsizes: paperRules, Stepsize: DefaultStepsize, TakesL: true},
	{Name: "bc-ssfw-as", Family: "fw", Runs: Runs{Method: "away", Stochastic: true, Blockwise: true, Reshape: true}, Groups: []string{"gflasso"}, Stepsizes: paperRules, Stepsize: DefaultStepsize, TakesL: true},
	{Name: "bcfw", Family: "fw", Runs: Runs{Method: "fw", Blockwise: true}, Groups: []string{"gflasso", "ssvm"}, Stepsizes: paperRules, Stepsize: DefaultStepsize, TakesL: true},
	{Name: "spg", Family: "spg", Runs: Runs{Method: "spg"}, Groups: []string{"gflasso"}, Stepsizes: paperRules, Stepsize: DefaultStepsize, TakesL: true, Settings: []string{"mu", "eps"},
		OwnStep: "steps 1/L of its smoothed problem, from the data and μ"},
	{Name: "bcfw-as", Family: "ssvm", Runs: Runs{Method: "bcfw-as", Stochastic: true, Blockwise: true}, Groups: []string{"ssvm"}, Stepsizes: paperRules, Stepsize: DefaultStepsize, TakesL: true,
		OwnStep: "takes the exact line search"},
	{Name: "ssg", Family: "ssvm", Runs: Runs{Method: "ssg"}, Groups: []string{"ssvm"}, Stepsizes: paperRules, Stepsize: DefaultStepsize, TakesL: true,
		OwnStep: "steps 1/k"},
	{Name: "cd", Family: "cd", Runs: Runs{Method: "cd"}, Groups: []string{"model"}, Stepsizes: []string{DefaultStepsize}, Stepsize: DefaultStepsize, OwnStep: "minimises each coordinate exactly", Settings: []string{"path"},
		NotInPaper: "coordinate descent: a baseline, not a method of the paper (what glmnet and scikit-learn use for a LASSO)"},
}

// AlgorithmByName returns the algorithm of that name, or nil.
func AlgorithmByName(name string) *Algorithm {
	for i := range Algorithms {
		if Algorithms[i].Name == name {
			return &Algorithms[i]
		}
	}
	return nil
}

// AlgorithmsFor returns the names of the algorithms that apply to a
// problem group, in the table's order.
func AlgorithmsFor(group string) []string {
	var out []string
	for _, a := range Algorithms {
		for _, g := range a.Groups {
			if g == group {
				out = append(out, a.Name)
			}
		}
	}
	return out
}

// AlgorithmsWith returns the names of the algorithms for which has is true.
func AlgorithmsWith(has func(a *Algorithm) bool) []string {
	var out []string
	for i := range Algorithms {
		if has(&Algorithms[i]) {
			out = append(out, Algorithms[i].Name)
		}
	}
	return out
}

// TakesStepsize reports whether the algorithm takes the step-size rule.
func (a *Algorithm) TakesStepsize(rule string) bool {
	for _, r := range a.Stepsizes {
		if r == rule {
			return true
		}
	}
	return false
}

// stepsizeRules are every rule some algorithm takes: the common ones (that
// most algorithms take) and the special ones, in the table's order.
func stepsizeRules() (common, special []string) {
	seen := map[string]bool{}
	for _, a := range Algorithms {
		for _, r := range a.Stepsizes {
			if seen[r] {
				continue
			}
			seen[r] = true
			if len(AlgorithmsWith(func(b *Algorithm) bool { return b.TakesStepsize(r) })) > len(Algorithms)/2 {
				common = append(common, r)
			} else {
				special = append(special, r)
			}
		}
	}
	return common, special
}

// checkStepsize checks a's rule against the table, with the messages that
// name who takes which rule.
func checkStepsize(prefix string, alg *Algorithm, rule string) error {
	if alg.TakesStepsize(rule) {
		return nil
	}
	common, special := stepsizeRules()
	takers := AlgorithmsWith(func(b *Algorithm) bool { return b.TakesStepsize(rule) })
	switch {
	case alg.OwnStep != "" && len(alg.Stepsizes) == 1:
		return Errorf(prefix+"stepsize", "%s %s and takes no step-size rule: leave it at %s, got %q", alg.Name, alg.OwnStep, alg.Stepsize, rule)
	case len(takers) > 0:
		return Errorf(prefix+"stepsize", "%q is a rule of %s only (use %s)", rule, strings.Join(takers, ", "), orList(alg.Stepsizes))
	}
	also := AlgorithmsWith(func(b *Algorithm) bool { return len(special) > 0 && b.TakesStepsize(special[0]) })
	return Errorf(prefix+"stepsize", "must be %s (%s also: %s), got %q", orList(common), strings.Join(also, ", "), strings.Join(special, ", "), rule)
}

func orList(xs []string) string {
	if len(xs) <= 1 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}

func orAnd(xs []string) string {
	if len(xs) <= 1 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}
