package scenarios

import (
	"fmt"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

// FWInstance is the Instance of every problem that implements the solver's
// P1 contract: it runs the Frank-Wolfe family on Problem and the proximal
// baselines on Prox (nil when the problem has no proximal view).
type FWInstance struct {
	Problem solver.Problem
	Prox    solver.ProxProblem
	Meta    Info
	// Solution, when set, turns a solution x into the rows a user exports
	// (for the penalised models: β, without the epigraph variable).
	Solution func(x []float64) [][]float64
	// Coefficients marks a problem whose solution is a coefficient vector
	// (the models' β, the least squares' x, the SVM dual's α): its finished
	// traces carry it as the panel "coefficients" (ResultPanels).
	Coefficients bool
	// Slack is the problem's slack parameter ("collapse" or "keep"; "" for
	// problems without one), the default of spec.Algo.Slack.
	Slack string
}

// slackOf returns the slack rule algorithm a runs with: its own, else the
// problem's ("" when the problem has none).
func (f *FWInstance) slackOf(a spec.Algo) string {
	if f.Slack == "" {
		return ""
	}
	if a.Slack != "" {
		return a.Slack
	}
	return f.Slack
}

// Label names a trace of algorithm a on this instance, the name every place
// that shows a run uses (legend, traces table, figures, bundle, history,
// CSV): the algorithm's name, with " + slack collapse" when it runs the
// slack collapse variant, which is not the paper's method (ARCHITECTURE.md, "Slack collapse").
func (f *FWInstance) Label(a spec.Algo) string {
	if alg := spec.AlgorithmByName(a.Algo); f.slackOf(a) == "collapse" && alg != nil && alg.Reshape {
		return a.Algo + SlackCollapseSuffix
	}
	return a.Algo
}

// SlackCollapseSuffix is what a trace's name carries when its method runs
// the slack collapse.
const SlackCollapseSuffix = " + slack collapse"

// SolutionRows returns the solution x as rows for export: Solution's rows
// when set, else one value per row.
func (f *FWInstance) SolutionRows(x []float64) [][]float64 {
	if f.Solution != nil {
		return f.Solution(x)
	}
	return column(x)
}

// ResultPanels returns {"coefficients": the solution's values, as
// SolutionRows gives them, in one vector} for a problem with a coefficient
// vector (Coefficients), what `solve -save-x` writes; nil for the others.
func (f *FWInstance) ResultPanels(x []float64) (map[string]any, error) {
	if !f.Coefficients {
		return nil, nil
	}
	var coef []float64
	for _, row := range f.SolutionRows(x) {
		coef = append(coef, row...)
	}
	if len(coef) > MaxCoefficients {
		return map[string]any{"coefficients_omitted": fmt.Sprintf("%d coefficients, over the %d a run keeps with its traces (a trace's panels are at most 4 MiB); dashboard solve -save-x FILE writes them all", len(coef), MaxCoefficients)}, nil
	}
	return map[string]any{"coefficients": coef}, nil
}

// MaxCoefficients bounds the coefficient vector a finished trace keeps as
// its panel: at most 24 bytes of JSON each, within the 4 MiB a trace's
// panels may take (bundle.MaxPanelBytes).
const MaxCoefficients = 150_000

func column(x []float64) [][]float64 {
	rows := make([][]float64, len(x))
	for i, v := range x {
		rows[i] = []float64{v}
	}
	return rows
}

// Info returns the instance's description.
func (f *FWInstance) Info() Info { return f.Meta }

// Config translates an algorithm spec into a solver configuration, with
// the variant the algorithm table says the algorithm runs as.
func Config(a spec.Algo, lim solver.Limits, seed int64) solver.Config {
	var v solver.Variant
	if alg := spec.AlgorithmByName(a.Algo); alg != nil {
		v = solver.Variant(alg.Runs)
	}
	return solver.Config{
		Algorithm: a.Algo,
		Variant:   v,
		Step:      a.Stepsize,
		L:         a.LValue(),
		Schedule: solver.Schedule{
			Kind: a.Schedule, Rho: a.Rho, Alpha: a.Alpha, M0: a.M0, Growth: a.Growth,
		},
		R:            a.R,
		Workers:      a.Workers,
		Caratheodory: a.Caratheodory,
		Path:         a.Path,
		Limits:       lim,
		Seed:         seed,
	}
}

// Method builds the configured algorithm.
func (f *FWInstance) Method(a spec.Algo, lim solver.Limits, seed int64) (solver.Method, error) {
	n := f.Problem.Samples()
	if (a.Schedule == "constant" || a.Schedule == "geometric") && a.M0 > n {
		return nil, spec.Errorf("m0", "must be at most the sample count n = %d, got %d", n, a.M0)
	}
	if q := len(f.Problem.Blocks()); a.R > q {
		return nil, spec.Errorf("r", "must be at most the number of blocks q = %d, got %d", q, a.R)
	}
	if a.Slack != "" && f.Slack == "" {
		return nil, spec.Errorf("slack", "this problem has no epigraph slack to keep or collapse")
	}
	cfg := Config(a, lim, seed)
	cfg.KeepSlack = f.slackOf(a) == "keep"
	alg := spec.AlgorithmByName(a.Algo)
	if alg == nil {
		return nil, spec.Errorf("algo", "unknown algorithm %q", a.Algo)
	}
	switch alg.Family {
	case "prox":
		if f.Prox == nil {
			return nil, spec.Errorf("algo", "%s needs a proximal view of the problem, which this problem does not offer", a.Algo)
		}
		return solver.NewProx(f.Prox, f.Problem, cfg)
	case "cd":
		cp, ok := f.Prox.(solver.CoordProblem)
		if !ok {
			return nil, spec.Errorf("algo", "cd needs a problem whose non-smooth part separates over the coordinates (an l1 penalty or a box), which this problem is not")
		}
		if err := solver.CheckCDPath(a.Path, cp.Coords()); err != nil {
			return nil, spec.Errorf("path", "%v", err)
		}
		return solver.NewCD(cp, f.Problem, cfg)
	case "fw":
		return solver.New(f.Problem, cfg)
	}
	return nil, spec.Errorf("algo", "%s does not apply to this problem", a.Algo)
}

var _ Instance = (*FWInstance)(nil)

// errf wraps a build error with the scenario's name.
func errf(name string, err error) error { return fmt.Errorf("%s: %w", name, err) }
