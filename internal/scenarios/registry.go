// Package scenarios holds fwlab's catalogue: every problem a user can pick
// (with its parameters, their defaults and rules), the algorithms that apply
// to it, and the presets that reproduce the paper's figures and the teaching
// demonstrations. It builds instances deterministically from their seed.
// It knows nothing of HTTP.
package scenarios

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

// Kind is the type of a parameter.
type Kind int

// Parameter kinds.
const (
	Int    Kind = iota // a whole number
	Float              // a finite number
	String             // free text
	Choice             // one of Choices
	Path               // a file path (data import); empty means "not given"
	Bool               // true or false
)

// Param describes one problem parameter: the same name is the solve
// command's flag, the JSON API's params key and the form field's name.
type Param struct {
	Name    string
	Kind    Kind
	Default string
	Help    string // one line, shown beside the control
	// Bounds for Int and Float. Min/Max are inclusive unless the Excl flags
	// are set; HasMin/HasMax say whether a bound applies.
	Min, Max         float64
	HasMin, HasMax   bool
	MinExcl, MaxExcl bool
	Choices          []string
	// Format is the file format of a Path parameter: "csv", "svmlight" or
	// "ocr" (the OCR letters), so that an upload can be checked by parsing.
	Format string
}

// Rule describes the parameter's rule in words, for errors and help text.
func (p Param) Rule() string {
	switch p.Kind {
	case Int, Float:
		what := "a number"
		if p.Kind == Int {
			what = "a whole number"
		}
		var parts []string
		if p.HasMin {
			op := "≥"
			if p.MinExcl {
				op = ">"
			}
			parts = append(parts, op+" "+fmtNum(p.Min))
		}
		if p.HasMax {
			op := "≤"
			if p.MaxExcl {
				op = "<"
			}
			parts = append(parts, op+" "+fmtNum(p.Max))
		}
		if len(parts) == 0 {
			return "must be " + what
		}
		return "must be " + what + " " + strings.Join(parts, " and ")
	case Choice:
		return "must be one of " + strings.Join(p.Choices, ", ")
	case Bool:
		return "must be true or false"
	case Path:
		return "must be a readable file path"
	}
	return ""
}

func fmtNum(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// Check validates one value against the parameter's rule.
func (p Param) Check(v string) error {
	v = strings.TrimSpace(v)
	fail := func() error { return spec.Errorf("params."+p.Name, "%s, got %q", p.Rule(), v) }
	switch p.Kind {
	case Int, Float:
		var x float64
		if p.Kind == Int {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return fail()
			}
			x = float64(n)
		} else {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				return fail()
			}
			x = f
		}
		if p.HasMin && (x < p.Min || (p.MinExcl && x == p.Min)) {
			return fail()
		}
		if p.HasMax && (x > p.Max || (p.MaxExcl && x == p.Max)) {
			return fail()
		}
	case Choice:
		for _, c := range p.Choices {
			if v == c {
				return nil
			}
		}
		return fail()
	case Bool:
		if _, err := strconv.ParseBool(v); err != nil {
			return fail()
		}
	}
	return nil
}

// Values are validated parameter values with defaults filled in.
type Values map[string]string

// Int returns an Int parameter (validated beforehand).
func (v Values) Int(name string) int { n, _ := strconv.Atoi(strings.TrimSpace(v[name])); return n }

// Float returns a Float parameter.
func (v Values) Float(name string) float64 {
	f, _ := strconv.ParseFloat(strings.TrimSpace(v[name]), 64)
	return f
}

// Str returns a String, Choice or Path parameter.
func (v Values) Str(name string) string { return strings.TrimSpace(v[name]) }

// Bool returns a Bool parameter.
func (v Values) Bool(name string) bool {
	b, _ := strconv.ParseBool(strings.TrimSpace(v[name]))
	return b
}

// Info describes a built instance to the user interface.
type Info struct {
	Dim     int      `json:"dim"`
	Samples int      `json:"samples"`
	Blocks  int      `json:"blocks"`
	FStar   *float64 `json:"fstar,omitempty"` // the optimal value where known
	// Problem-specific panels for the dashboard (GFLASSO matrices and graph,
	// 2-D geometry for the teaching view, decoded words, …), JSON-encodable.
	Panels map[string]any `json:"panels,omitempty"`
}

// Instance is one built problem instance, from which methods are made. It is
// safe for concurrent use: methods made from it run in parallel.
type Instance interface {
	Info() Info
	// Method configures an algorithm on this instance. seed drives every
	// random choice of the run.
	Method(a spec.Algo, lim solver.Limits, seed int64) (solver.Method, error)
}

// Scenario is one entry of the catalogue.
type Scenario struct {
	Name  string
	Title string
	Help  string // a sentence for the start page
	Group string // "toy", "model", "gflasso", "ssvm"
	// Params in display order.
	Params []Param
	// Algorithms this problem supports, in display order.
	Algorithms []string
	// Defaults are the algorithms the dashboard proposes: the FW method and
	// its proximal (or classic) baseline.
	Defaults []spec.Algo
	// OwnSteps says every method takes its step from the problem (the
	// structural SVMs' closed-form line search): no step-size rule or L
	// applies. Averages says the methods report a weighted average of the
	// iterates, which an algorithm row may turn off (no_average).
	OwnSteps, Averages bool
	// Build makes the instance deterministically from the values and seed.
	Build func(ctx context.Context, v Values, seed int64) (Instance, error)
	// Iters and Passes are the limits of a run whose spec gives neither
	// (both zero: spec.DefaultIters iterations and no pass limit). A problem
	// whose evaluation costs passes of work (the OCR structural SVM) runs
	// for passes by default, so that a default run's first and last
	// evaluations stay a small part of it.
	Iters  int
	Passes float64
	// Memory, when set, is the instance's expected size in bytes from its
	// parameters, before it is built (0: not known beforehand, e.g. from
	// the user's data files).
	Memory func(v Values) int64
}

// ExpectedBytes is Memory(v), or 0 when the scenario has no estimate.
func (s *Scenario) ExpectedBytes(v Values) int64 {
	if s.Memory == nil {
		return 0
	}
	return s.Memory(v)
}

// Budget returns the limits of a run of s that gives neither: Iters and
// Passes, or spec.DefaultIters iterations and no pass limit.
func (s *Scenario) Budget() (iters int, passes float64) {
	if s.Iters == 0 && s.Passes == 0 {
		return spec.DefaultIters, 0
	}
	return s.Iters, s.Passes
}

// ApplyBudget gives a run spec without iteration or pass limits its
// problem's default ones (Scenario.Budget); it leaves any other spec, or an
// unknown problem's, unchanged.
func ApplyBudget(r *spec.Run) {
	if r.Iters != 0 || r.Passes != 0 {
		return
	}
	if s, ok := Lookup(r.Problem); ok {
		r.Iters, r.Passes = s.Budget()
	}
}

// Preset is a ready-made run (a paper figure, a teaching demonstration).
type Preset struct {
	Name  string
	Title string
	Help  string
	Spec  spec.Run
}

var (
	mu        sync.RWMutex
	scenarios = map[string]*Scenario{}
	presets   = map[string]*Preset{}
)

// Register adds a scenario; it panics on a duplicate name (a programming error
// caught at init time).
func Register(s *Scenario) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := scenarios[s.Name]; dup {
		panic("scenarios: duplicate scenario " + s.Name)
	}
	scenarios[s.Name] = s
}

// RegisterPreset adds a preset.
func RegisterPreset(p *Preset) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := presets[p.Name]; dup {
		panic("scenarios: duplicate preset " + p.Name)
	}
	presets[p.Name] = p
}

// Lookup returns the scenario with the given name.
func Lookup(name string) (*Scenario, bool) {
	mu.RLock()
	defer mu.RUnlock()
	s, ok := scenarios[name]
	return s, ok
}

// LookupPreset returns a copy of the preset with the given name, which the
// caller may change (validation fills defaults in place).
func LookupPreset(name string) (*Preset, bool) {
	mu.RLock()
	defer mu.RUnlock()
	p, ok := presets[name]
	if !ok {
		return nil, false
	}
	return p.clone(), true
}

// clone copies a preset deeply enough that changing the copy's spec leaves
// the registered one alone.
func (p *Preset) clone() *Preset {
	c := *p
	c.Spec.Algorithms = append([]spec.Algo(nil), p.Spec.Algorithms...)
	if p.Spec.Params != nil {
		c.Spec.Params = spec.Params{}
		for k, v := range p.Spec.Params {
			c.Spec.Params[k] = v
		}
	}
	return &c
}

// All returns every scenario, sorted by group then name.
func All() []*Scenario {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]*Scenario, 0, len(scenarios))
	for _, s := range scenarios {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Group != out[j].Group {
			return out[i].Group < out[j].Group
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Presets returns every preset, sorted by name.
func Presets() []*Preset {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]*Preset, 0, len(presets))
	for _, p := range presets {
		out = append(out, p.clone())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Names returns the scenario names, sorted.
func Names() []string {
	var ns []string
	for _, s := range All() {
		ns = append(ns, s.Name)
	}
	sort.Strings(ns)
	return ns
}

// Values validates user parameters against the scenario and fills defaults.
// Unknown names are errors (a typo must not be silently ignored).
func (s *Scenario) Values(p spec.Params) (Values, error) {
	out := Values{}
	byName := map[string]Param{}
	for _, prm := range s.Params {
		byName[prm.Name] = prm
		out[prm.Name] = prm.Default
	}
	for _, k := range p.Keys() {
		prm, ok := byName[k]
		if !ok {
			var names []string
			for _, q := range s.Params {
				names = append(names, q.Name)
			}
			return nil, spec.Errorf("params."+k, "unknown parameter for problem %s (known: %s)", s.Name, strings.Join(names, ", "))
		}
		if err := prm.Check(p[k]); err != nil {
			return nil, err
		}
		out[k] = strings.TrimSpace(p[k])
	}
	return out, nil
}

// Supports reports whether the scenario runs the algorithm.
func (s *Scenario) Supports(algo string) bool {
	for _, a := range s.Algorithms {
		if a == algo {
			return true
		}
	}
	return false
}

// Resolve validates a run spec completely: the generic rules, the problem's
// parameters and that each algorithm applies to the problem. It returns the
// scenario and the parameter values.
func Resolve(r *spec.Run) (*Scenario, Values, error) {
	if r.Outside {
		return nil, nil, spec.Errorf("outside", "marks a run opened from outside (POST /api/live/runs), whose records come from a program fwlab does not run: a run of the catalogue cannot have it")
	}
	ApplyBudget(r)
	if err := r.Normalize(); err != nil {
		return nil, nil, err
	}
	s, ok := Lookup(r.Problem)
	if !ok {
		return nil, nil, spec.Errorf("problem", "unknown problem %q (one of %s)", r.Problem, strings.Join(Names(), ", "))
	}
	v, err := s.Values(r.Params)
	if err != nil {
		return nil, nil, err
	}
	for i, a := range r.Algorithms {
		if !s.Supports(a.Algo) {
			return nil, nil, spec.Errorf(fmt.Sprintf("algorithms[%d].algo", i), "%s does not apply to problem %s (use one of %s)", a.Algo, s.Name, strings.Join(s.Algorithms, ", "))
		}
	}
	return s, v, nil
}

// LimitsOf extracts the stopping rules of a normalised run spec.
func LimitsOf(r *spec.Run) solver.Limits {
	return solver.Limits{MaxIters: r.Iters, MaxPasses: r.Passes, GapTol: r.Gap, EvalEvery: r.EvalEvery}
}
