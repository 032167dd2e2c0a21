// Package methods runs fwlab's Frank-Wolfe methods on a user's problem, a
// [fw.Problem], and reports the same records as the dashboard stores and
// draws for the problems of its catalogue (which run through this same
// code).
//
// The methods are those of the paper "Semi-Stochastic Frank-Wolfe
// Algorithms with Away-Steps for Block-Coordinate Structure Problems"
// (Goldfarb, Iyengar and Zhou) and the classic variants it builds on:
//
//   - "ssfw-as": semi-stochastic Frank-Wolfe with away steps (Algorithm 1),
//     with the vertex representation update of Algorithm 2; gradients on a
//     batch of m_k samples drawn by the batch schedule;
//   - "afw": away-step Frank-Wolfe (full gradients);
//   - "pfw": pairwise Frank-Wolfe;
//   - "fw": vanilla Frank-Wolfe;
//   - "bc-ssfw-as": the block-coordinate version of ssfw-as (Algorithm 3),
//     R of the problem's blocks per iteration;
//   - "bcfw": block-coordinate vanilla Frank-Wolfe.
//
// On a problem with one block, bc-ssfw-as and bcfw are ssfw-as and fw.
//
// The package follows semantic versioning with fwlab (docs/library.md):
// Options' fields and their meaning, the algorithm, step-rule and schedule
// names, and Result stay within a major version.
package methods

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/fwlab/fwlab/fw"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

// Algorithms lists the names Options.Algorithm takes.
var Algorithms = []string{"ssfw-as", "afw", "pfw", "fw", "bc-ssfw-as", "bcfw"}

// Options configures one run of a method. The zero value of every field but
// Algorithm is a default, the same as the dashboard's.
type Options struct {
	// Algorithm is one of Algorithms.
	Algorithm string
	// Step is the step-size rule: "paper" (γ = −<g, d>/(L‖d‖²), the rule
	// of Algorithms 1 and 3), "curvature" (the directional constant of the
	// problem's Line; the default), "backtrack" (an adaptive L on the
	// Line's Delta), and for fw also "open-loop" (γ = 2/(k+1), fw's
	// default) and "short" (the paper rule without away steps).
	Step string
	// L is the Lipschitz constant of ∇F for the paper and short rules and
	// the starting L of backtracking; 0 takes the problem's bound
	// (fw.LipschitzBounder), which the paper and short rules then need.
	L float64
	// Schedule is the batch schedule m_k of ssfw-as and bc-ssfw-as: "paper"
	// (Theorem 1: m_k = ⌈n/(1 + n(1−ρ)^{2αk})⌉, their default), "constant"
	// (m_k = M0), "geometric" (m_k = ⌈M0·Growth^{k−1}⌉) or "full"
	// (m_k = n). The other methods take full gradients: "" or "full".
	Schedule string
	// Rho and Alpha are ρ and α of the paper schedule, in (0, 1)
	// (0: 0.1 and 0.5).
	Rho, Alpha float64
	// M0 is the first batch size of the constant and geometric schedules,
	// at most the number of samples (0: 1).
	M0 int
	// Growth is the geometric schedule's factor, above 1 (0: 1.1).
	Growth float64
	// R is the number of blocks a block method samples per iteration
	// (0: all of them).
	R int
	// Workers bounds the goroutines a block method runs its blocks on
	// (0: GOMAXPROCS). The records do not depend on it.
	Workers int
	// Caratheodory keeps at most dim+1 active vertices per block by
	// Carathéodory reduction (the optional last line of Algorithm 2).
	Caratheodory bool
	// MaxIters is the iteration limit (0: 1000).
	MaxIters int
	// MaxPasses is the limit on effective passes over the samples (0: none).
	MaxPasses float64
	// GapTol stops the run once the Frank-Wolfe gap is at most GapTol
	// (0: never).
	GapTol float64
	// EvalEvery evaluates the objective and the gap every E iterations;
	// 0 is the dashboard's default cadence, decided by counted work (about
	// an eighth of the work goes to evaluations). The first and the last
	// iteration are always evaluated.
	EvalEvery int
	// Seed fixes the batches and the blocks sampled: a run is a function of
	// the problem, the options and the seed.
	Seed int64
}

// Result is what a run returns: its summary and the last iterate x.
type Result struct {
	Summary fw.Summary
	X       []float64
}

// Run runs the method opt configures on p, reporting one record per
// iteration to rec (nil: none), and returns when a limit of opt is reached,
// the method stops (converged or stalled, Summary.Status says which) or ctx
// is cancelled (status "cancelled", not an error). The error is non-nil
// when opt or p is not valid (it names the field and the rule) or when p's
// code panics (the panic's value in the message).
func Run(ctx context.Context, p fw.Problem, opt Options, rec fw.Recorder) (res Result, err error) {
	cfg, err := configure(p, opt)
	if err != nil {
		return Result{}, err
	}
	if rec == nil {
		rec = fw.RecorderFunc(func(fw.Record) {})
	}
	defer func() {
		if v := recover(); v != nil {
			res, err = Result{}, fmt.Errorf("methods: the problem's code panicked: %v", v)
		}
	}()
	m, err := solver.New(p, cfg)
	if err != nil {
		return Result{}, err
	}
	r, err := m.Run(ctx, rec)
	return Result{Summary: r.Summary, X: r.X}, err
}

// ProxAlgorithms lists the proximal baselines RunProx takes: "fista"
// (accelerated, with adaptive restart) and "pgd" (proximal gradient).
var ProxAlgorithms = []string{"fista", "pgd"}

// RunProx runs a proximal baseline, ProxAlgorithms, on pp: minimise
// S(y) + R(y) with the step 1/L, L the Options' L, else pp's
// SmoothLipschitz, else found by backtracking (Step "backtrack" always
// backtracks). Each record reports the objective and the Frank-Wolfe gap of
// the iterate lifted to lift, the same problem as a fw.Problem, as the
// dashboard's proximal traces do, so that they compare with the
// Frank-Wolfe methods' records. Options' batch schedule, R, Workers and
// Caratheodory do not apply and must be left at their zero values.
func RunProx(ctx context.Context, pp fw.ProxProblem, lift fw.Problem, opt Options, rec fw.Recorder) (res Result, err error) {
	cfg, err := configureProx(pp, lift, opt)
	if err != nil {
		return Result{}, err
	}
	if rec == nil {
		rec = fw.RecorderFunc(func(fw.Record) {})
	}
	defer func() {
		if v := recover(); v != nil {
			res, err = Result{}, fmt.Errorf("methods: the problem's code panicked: %v", v)
		}
	}()
	m, err := solver.NewProx(pp, lift, cfg)
	if err != nil {
		return Result{}, err
	}
	r, err := m.Run(ctx, rec)
	return Result{Summary: r.Summary, X: r.X}, err
}

// configureProx checks opt, pp and lift for RunProx.
func configureProx(pp fw.ProxProblem, lift fw.Problem, opt Options) (solver.Config, error) {
	known := false
	for _, a := range ProxAlgorithms {
		known = known || opt.Algorithm == a
	}
	switch {
	case !known:
		return solver.Config{}, fmt.Errorf("Algorithm: must be one of %v, got %q", ProxAlgorithms, opt.Algorithm)
	case opt.Schedule != "" && opt.Schedule != "full":
		return solver.Config{}, fmt.Errorf("Schedule: %s uses full gradients, got %q", opt.Algorithm, opt.Schedule)
	case opt.R != 0 || opt.Workers != 0 || opt.Caratheodory:
		return solver.Config{}, fmt.Errorf("R, Workers, Caratheodory: %s takes none of them; leave them at zero", opt.Algorithm)
	case pp == nil:
		return solver.Config{}, fmt.Errorf("problem: the proximal view is nil")
	}
	if err := checkProblem(lift); err != nil {
		return solver.Config{}, err
	}
	if n := pp.ProxDim(); n < 1 {
		return solver.Config{}, fmt.Errorf("problem: ProxDim must be at least 1, got %d", n)
	}
	if opt.Step != "" && opt.Step != "paper" && opt.Step != "curvature" && opt.Step != "backtrack" {
		return solver.Config{}, fmt.Errorf("Step: %s takes paper (1/L), curvature (the same) or backtrack, got %q", opt.Algorithm, opt.Step)
	}
	if opt.L < 0 || math.IsNaN(opt.L) || math.IsInf(opt.L, 0) {
		return solver.Config{}, fmt.Errorf("L: must be a positive number, or 0 for the problem's bound, got %v", opt.L)
	}
	lim, err := limits(opt)
	if err != nil {
		return solver.Config{}, err
	}
	return solver.Config{Algorithm: opt.Algorithm, Step: opt.Step, L: opt.L, Schedule: solver.Schedule{Kind: "full"}, Limits: lim}, nil
}

// Collect runs like Run and returns the records too.
func Collect(ctx context.Context, p fw.Problem, opt Options) ([]fw.Record, Result, error) {
	var recs []fw.Record
	res, err := Run(ctx, p, opt, fw.RecorderFunc(func(r fw.Record) { recs = append(recs, r) }))
	return recs, res, err
}

// fieldNames maps the run spec's field names to Options'.
var fieldNames = map[string]string{
	"algo": "Algorithm", "stepsize": "Step", "L": "L", "schedule": "Schedule", "rho": "Rho",
	"alpha": "Alpha", "m0": "M0", "growth": "Growth", "r": "R", "workers": "Workers",
}

// configure checks opt and p and translates opt into the solver's
// configuration, with the defaults and rules of the dashboard's run spec.
func configure(p fw.Problem, opt Options) (solver.Config, error) {
	known := false
	for _, a := range Algorithms {
		known = known || opt.Algorithm == a
	}
	if !known {
		return solver.Config{}, fmt.Errorf("Algorithm: must be one of %v, got %q", Algorithms, opt.Algorithm)
	}
	if opt.L < 0 || math.IsNaN(opt.L) || math.IsInf(opt.L, 0) {
		return solver.Config{}, fmt.Errorf("L: must be a positive number, or 0 for the problem's bound, got %v", opt.L)
	}
	a := spec.Algo{Algo: opt.Algorithm, Stepsize: opt.Step, L: "auto", Schedule: opt.Schedule,
		Rho: opt.Rho, Alpha: opt.Alpha, M0: opt.M0, Growth: opt.Growth, R: opt.R, Workers: opt.Workers,
		Caratheodory: opt.Caratheodory}
	if opt.L > 0 {
		a.L = strconv.FormatFloat(opt.L, 'g', -1, 64)
	}
	if err := a.Normalize(""); err != nil {
		var fe *spec.FieldError
		if errors.As(err, &fe) && fieldNames[fe.Field] != "" {
			return solver.Config{}, fmt.Errorf("%s: %s", fieldNames[fe.Field], fe.Msg)
		}
		return solver.Config{}, err
	}
	if err := checkProblem(p); err != nil {
		return solver.Config{}, err
	}
	if n := p.Samples(); (a.Schedule == "constant" || a.Schedule == "geometric") && a.M0 > n {
		return solver.Config{}, fmt.Errorf("M0: must be at most the number of samples n = %d, got %d", n, a.M0)
	}
	if q := len(p.Blocks()); a.R > q {
		return solver.Config{}, fmt.Errorf("R: must be at most the number of blocks q = %d, got %d", q, a.R)
	}
	lim, err := limits(opt)
	if err != nil {
		return solver.Config{}, err
	}
	return solver.Config{
		Algorithm: a.Algo, Step: a.Stepsize, L: a.LValue(),
		Schedule: solver.Schedule{Kind: a.Schedule, Rho: a.Rho, Alpha: a.Alpha, M0: a.M0, Growth: a.Growth},
		R:        a.R, Workers: a.Workers, Caratheodory: a.Caratheodory, Limits: lim, Seed: opt.Seed,
	}, nil
}

// limits checks and translates the stopping rules.
func limits(opt Options) (solver.Limits, error) {
	lim := solver.Limits{MaxIters: opt.MaxIters, MaxPasses: opt.MaxPasses, GapTol: opt.GapTol, EvalEvery: opt.EvalEvery}
	switch {
	case opt.MaxIters < 0 || opt.MaxIters > spec.MaxIters:
		return lim, fmt.Errorf("MaxIters: must be between 1 and %d (or 0 for %d), got %d", spec.MaxIters, spec.DefaultIters, opt.MaxIters)
	case opt.MaxPasses < 0 || math.IsNaN(opt.MaxPasses) || math.IsInf(opt.MaxPasses, 0):
		return lim, fmt.Errorf("MaxPasses: must be a non-negative number, got %v", opt.MaxPasses)
	case opt.GapTol < 0 || math.IsNaN(opt.GapTol) || math.IsInf(opt.GapTol, 0):
		return lim, fmt.Errorf("GapTol: must be a non-negative number, got %v", opt.GapTol)
	case opt.EvalEvery < 0:
		return lim, fmt.Errorf("EvalEvery: must be at least 1 (or 0 for the default cadence), got %d", opt.EvalEvery)
	}
	if lim.MaxIters == 0 {
		lim.MaxIters = spec.DefaultIters
	}
	return lim, nil
}

// checkProblem checks what the methods assume of a problem's shape: blocks
// that partition [0, Dim()) in order, at least one sample, and starting
// vertices inside their blocks.
func checkProblem(p fw.Problem) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("problem: its code panicked while it was checked: %v", v)
		}
	}()
	if p == nil {
		return fmt.Errorf("problem: is nil")
	}
	if p.Dim() < 1 {
		return fmt.Errorf("problem: Dim must be at least 1, got %d", p.Dim())
	}
	if p.Samples() < 1 {
		return fmt.Errorf("problem: Samples must be at least 1, got %d", p.Samples())
	}
	blocks := p.Blocks()
	if len(blocks) == 0 {
		return fmt.Errorf("problem: Blocks must hold at least one block")
	}
	next := 0
	for i, b := range blocks {
		if b.Offset != next || b.Size < 1 {
			return fmt.Errorf("problem: Blocks must partition [0, %d) in order with sizes ≥ 1; block %d is {Offset: %d, Size: %d}, want Offset %d", p.Dim(), i, b.Offset, b.Size, next)
		}
		next += b.Size
		if err := checkVertex(p.Start(i), b.Size); err != nil {
			return fmt.Errorf("problem: Start(%d): %v", i, err)
		}
	}
	if next != p.Dim() {
		return fmt.Errorf("problem: Blocks cover [0, %d), but Dim is %d", next, p.Dim())
	}
	return nil
}

// checkVertex checks a vertex's sparse coordinates against its block's size.
func checkVertex(v fw.Vertex, size int) error {
	if len(v.Idx) != len(v.Val) {
		return fmt.Errorf("Idx and Val must have the same length, got %d and %d", len(v.Idx), len(v.Val))
	}
	for i, j := range v.Idx {
		if j < 0 || j >= size || (i > 0 && j <= v.Idx[i-1]) {
			return fmt.Errorf("Idx must be strictly increasing within [0, %d), got %v", size, v.Idx)
		}
		if math.IsNaN(v.Val[i]) || math.IsInf(v.Val[i], 0) {
			return fmt.Errorf("Val must be finite, got %v at index %d", v.Val[i], j)
		}
	}
	return nil
}
