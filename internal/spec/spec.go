// Package spec defines the run specification shared by the command line, the
// JSON API and the dashboard's form: one vocabulary, one validation.
package spec

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Run describes one run: a problem (or preset scenario) with its parameters,
// the algorithms to compare on the same instance, replications and limits.
type Run struct {
	Problem      string  `json:"problem"`
	Params       Params  `json:"params,omitempty"`
	Algorithms   []Algo  `json:"algorithms"`
	Replications int     `json:"replications"`
	Seed         int64   `json:"seed"`
	Iters        int     `json:"iters"`
	Passes       float64 `json:"passes"`
	Gap          float64 `json:"gap"`
	EvalEvery    int     `json:"eval_every"` // 0: the problem's default cadence
	// StartPaused starts the run paused at its first record (k = 0), so
	// that each step advances one iteration (the dashboard; solve ignores it).
	StartPaused bool `json:"start_paused,omitempty"`
	// Outside marks a run opened from outside (docs/live.md): its records
	// come from a program fwlab does not run, Problem is its free label
	// and each algorithm is one trace's name (see normalizeOutside).
	Outside bool `json:"outside,omitempty"`
}

// Algo is one algorithm with its parameters, named as the solve command's flags.
type Algo struct {
	Algo         string  `json:"algo"`
	Stepsize     string  `json:"stepsize,omitempty"` // paper | curvature | backtrack (fw also: open-loop | short)
	L            string  `json:"L,omitempty"`        // a positive number or "auto"
	Schedule     string  `json:"schedule,omitempty"` // paper | constant | geometric | full
	Rho          float64 `json:"rho,omitempty"`
	Alpha        float64 `json:"alpha,omitempty"`
	M0           int     `json:"m0,omitempty"`
	Growth       float64 `json:"growth,omitempty"`
	R            int     `json:"r,omitempty"`            // blocks per iteration (0: all)
	Workers      int     `json:"workers,omitempty"`      // block methods: worker pool size (0: one per CPU in solve, 1 on the dashboard's server, where each worker takes a worker slot)
	Caratheodory bool    `json:"caratheodory,omitempty"` // keep |U| ≤ p+1
	Mu           float64 `json:"mu,omitempty"`           // spg smoothing parameter (0: from eps)
	Eps          float64 `json:"eps,omitempty"`          // spg target accuracy
	NoAverage    bool    `json:"no_average,omitempty"`   // ssvm: report the plain iterate instead of the weighted average
	// Path is cd's continuation along λ: the number of stages solved,
	// warm-started, on the geometric path from λ_max down to the problem's
	// λ before it (docs/cd.md); 0: none.
	Path int `json:"path,omitempty"`
	// Slack overrides the problem's slack parameter for this algorithm:
	// "keep" (the paper's method) or "collapse" (the variant); "": the
	// problem's. It lets one run draw the paper's method and the variant
	// side by side.
	Slack string `json:"slack,omitempty"`
}

// Defaults for the algorithm parameters that have them.
const (
	DefaultStepsize = "curvature"
	DefaultSchedule = "paper"
	DefaultRho      = 0.1
	DefaultAlpha    = 0.5
	DefaultM0       = 1
	DefaultGrowth   = 1.1
	DefaultIters    = 1000
	DefaultEval     = 0 // the default cadence, decided by counted work (see solver.Cadence)
	// DefaultSeed is the seed of a spec that names none (JSON without
	// "seed", the form's initial value, the solve command without -seed).
	DefaultSeed = 0
)

// FieldError is a validation failure naming the field and the rule broken.
type FieldError struct {
	Field string `json:"field"`
	Msg   string `json:"error"`
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// Errorf builds a FieldError.
func Errorf(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Params holds problem parameters by their flag names, as text. In JSON a
// value may be a string, a number or a boolean.
type Params map[string]string

// UnmarshalJSON accepts strings, numbers and booleans as values.
func (p *Params) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	out := make(Params, len(raw))
	for k, v := range raw {
		var s string
		if err := json.Unmarshal(v, &s); err == nil {
			out[k] = s
			continue
		}
		var f json.Number
		if err := json.Unmarshal(v, &f); err == nil {
			out[k] = f.String()
			continue
		}
		var bo bool
		if err := json.Unmarshal(v, &bo); err == nil {
			out[k] = strconv.FormatBool(bo)
			continue
		}
		return Errorf("params."+k, "must be a string, a number or a boolean")
	}
	*p = out
	return nil
}

// Keys returns the parameter names in sorted order.
func (p Params) Keys() []string {
	ks := make([]string, 0, len(p))
	for k := range p {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// AlgoNames lists every algorithm fwlab knows (the table Algorithms).
var AlgoNames = AlgorithmsWith(func(*Algorithm) bool { return true })

// NotInPaper describes the algorithms offered as baselines that are not
// methods of the paper (nor the classic Frank-Wolfe variants it builds on):
// what a practitioner would pick instead. Every place that lists
// algorithms says so.
var NotInPaper = func() map[string]string {
	m := map[string]string{}
	for _, a := range Algorithms {
		if a.NotInPaper != "" {
			m[a.Name] = a.NotInPaper
		}
	}
	return m
}()

// Stochastic reports whether the algorithm samples batches (and so takes a
// batch schedule and reports the sampled-gradient error).
func Stochastic(algo string) bool {
	a := AlgorithmByName(algo)
	return a != nil && a.Stochastic
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// Normalize fills defaults and checks the algorithm parameters that do not
// depend on the problem. The field names in errors are prefixed by prefix
// (e.g. "algorithms[1].").
func (a *Algo) Normalize(prefix string) error {
	alg := AlgorithmByName(a.Algo)
	if alg == nil {
		return Errorf(prefix+"algo", "unknown algorithm %q (one of %s)", a.Algo, strings.Join(AlgoNames, ", "))
	}
	if a.Stepsize == "" {
		a.Stepsize = alg.Stepsize
	}
	if a.L == "" {
		a.L = "auto"
	}
	if !alg.TakesL && a.L != "auto" {
		return Errorf(prefix+"L", "%s needs no Lipschitz constant: leave it at \"auto\", got %q", a.Algo, a.L)
	}
	if err := checkStepsize(prefix, alg, a.Stepsize); err != nil {
		return err
	}
	if a.L != "auto" {
		l, err := strconv.ParseFloat(a.L, 64)
		if err != nil || !finite(l) || l <= 0 {
			return Errorf(prefix+"L", "must be a positive number or \"auto\", got %q", a.L)
		}
	}
	if a.Schedule == "" {
		a.Schedule = DefaultSchedule
		if !Stochastic(a.Algo) {
			a.Schedule = "full"
		}
	}
	switch a.Schedule {
	case "paper", "constant", "geometric", "full":
	default:
		return Errorf(prefix+"schedule", "must be paper, constant, geometric or full, got %q", a.Schedule)
	}
	if a.Schedule != "full" && !Stochastic(a.Algo) {
		return Errorf(prefix+"schedule", "%s uses full gradients; only %s take a batch schedule", a.Algo, orAnd(AlgorithmsWith(func(b *Algorithm) bool { return b.Stochastic })))
	}
	if a.Rho == 0 {
		a.Rho = DefaultRho
	}
	if !finite(a.Rho) || a.Rho <= 0 || a.Rho >= 1 {
		return Errorf(prefix+"rho", "must lie strictly between 0 and 1, got %v", a.Rho)
	}
	if a.Alpha == 0 {
		a.Alpha = DefaultAlpha
	}
	if !finite(a.Alpha) || a.Alpha <= 0 || a.Alpha >= 1 {
		return Errorf(prefix+"alpha", "must lie strictly between 0 and 1, got %v", a.Alpha)
	}
	if a.M0 == 0 {
		a.M0 = DefaultM0
	}
	if a.M0 < 1 {
		return Errorf(prefix+"m0", "must be at least 1, got %d", a.M0)
	}
	if a.Growth == 0 {
		a.Growth = DefaultGrowth
	}
	if !finite(a.Growth) || a.Growth <= 1 {
		return Errorf(prefix+"growth", "must be a number greater than 1, got %v", a.Growth)
	}
	if a.R < 0 {
		return Errorf(prefix+"r", "must be at least 1 (or 0 for all blocks), got %d", a.R)
	}
	if a.Workers < 0 {
		return Errorf(prefix+"workers", "must be at least 1 (or 0 for the number of CPUs), got %d", a.Workers)
	}
	if !finite(a.Mu) || a.Mu < 0 {
		return Errorf(prefix+"mu", "must be a positive number (or 0 to derive it from eps), got %v", a.Mu)
	}
	if !finite(a.Eps) || a.Eps < 0 {
		return Errorf(prefix+"eps", "must be a positive number, got %v", a.Eps)
	}
	if err := a.checkPath(prefix, alg); err != nil {
		return err
	}
	switch a.Slack {
	case "", "keep", "collapse":
	default:
		return Errorf(prefix+"slack", "must be keep or collapse (or empty for the problem's slack parameter), got %q", a.Slack)
	}
	return nil
}

// MaxPath bounds cd's continuation stages (glmnet's path has 100 λ).
const MaxPath = 1000

// checkPath checks path: a setting of the algorithms whose table row
// lists it (cd), a number of stages between 0 and MaxPath.
func (a *Algo) checkPath(prefix string, alg *Algorithm) error {
	if a.Path == 0 {
		return nil
	}
	if !slices.Contains(alg.Settings, "path") {
		return Errorf(prefix+"path", "continuation along λ is a setting of %s only: leave it at 0 for %s, got %d", orAnd(AlgorithmsWith(func(b *Algorithm) bool { return slices.Contains(b.Settings, "path") })), a.Algo, a.Path)
	}
	if a.Path < 0 || a.Path > MaxPath {
		return Errorf(prefix+"path", "must be a number of continuation stages between 0 (none) and %d, got %d", MaxPath, a.Path)
	}
	return nil
}

// LValue returns the user's L, or 0 for "auto".
func (a *Algo) LValue() float64 {
	if a.L == "" || a.L == "auto" {
		return 0
	}
	l, _ := strconv.ParseFloat(a.L, 64)
	return l
}

// Limits on the run-level numbers, so that a typo cannot start a run that
// exhausts the machine.
const (
	MaxIters        = 10_000_000
	MaxReplications = 100
	MaxAlgorithms   = 8
)

// Normalize fills defaults and validates everything that does not depend on
// the problem (the scenario registry checks Params).
func (r *Run) Normalize() error {
	if r.Outside {
		return r.normalizeOutside()
	}
	if r.Problem == "" {
		return Errorf("problem", "is required")
	}
	if len(r.Algorithms) == 0 {
		return Errorf("algorithms", "at least one algorithm is required")
	}
	if len(r.Algorithms) > MaxAlgorithms {
		return Errorf("algorithms", "at most %d algorithms per run, got %d", MaxAlgorithms, len(r.Algorithms))
	}
	for i := range r.Algorithms {
		if err := r.Algorithms[i].Normalize(fmt.Sprintf("algorithms[%d].", i)); err != nil {
			return err
		}
	}
	if r.Replications == 0 {
		r.Replications = 1
	}
	if r.Replications < 1 || r.Replications > MaxReplications {
		return Errorf("replications", "must be between 1 and %d, got %d", MaxReplications, r.Replications)
	}
	if r.Seed < 0 {
		return Errorf("seed", "must be non-negative, got %d", r.Seed)
	}
	if r.Iters == 0 {
		r.Iters = DefaultIters
	}
	if r.Iters < 1 || r.Iters > MaxIters {
		return Errorf("iters", "must be between 1 and %d, got %d", MaxIters, r.Iters)
	}
	if !finite(r.Passes) || r.Passes < 0 {
		return Errorf("passes", "must be a non-negative number (0: no limit), got %v", r.Passes)
	}
	if !finite(r.Gap) || r.Gap < 0 {
		return Errorf("gap", "must be a non-negative number (0: no gap test), got %v", r.Gap)
	}
	if r.EvalEvery < 0 {
		return Errorf("eval_every", "must be at least 1 (or 0 for the problem's default cadence), got %d", r.EvalEvery)
	}
	return nil
}
