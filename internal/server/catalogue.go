package server

import (
	"net/http"

	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/spec"
)

// Catalogue is the body of GET /api/scenarios: every problem with its
// parameters, the algorithms, the run-level defaults and limits, and the
// presets.
type Catalogue struct {
	Problems   []Problem     `json:"problems"`
	Algorithms []Algorithm   `json:"algorithms"`
	Defaults   Defaults      `json:"defaults"`
	Presets    []PresetEntry `json:"presets"`
}

// Problem is one scenario of the catalogue.
type Problem struct {
	Name       string      `json:"name"`
	Title      string      `json:"title"`
	Help       string      `json:"help"`
	Group      string      `json:"group"`
	Params     []Param     `json:"params"`
	Algorithms []string    `json:"algorithms"` // those that apply, in display order
	Defaults   []spec.Algo `json:"defaults"`   // the algorithms proposed by default, normalised
	// Iters and Passes are the limits of a run that gives neither.
	Iters  int     `json:"iters"`
	Passes float64 `json:"passes"`
	// OwnSteps: every method takes its step from the problem (no step-size
	// rule or L); Averages: the methods report a weighted average, which a
	// row may turn off (no_average). See scenarios.Scenario.
	OwnSteps bool `json:"own_steps"`
	Averages bool `json:"averages"`
}

// Param is one problem parameter (see scenarios.ParamView).
type Param = scenarios.ParamView

// Algorithm is one algorithm of the table (spec.Algorithms), with the rules
// the page applies: Stochastic ones take a batch schedule, Blockwise ones r.
type Algorithm struct {
	Name       string `json:"name"`
	Family     string `json:"family"`
	Stochastic bool   `json:"stochastic"`
	// Stepsizes are the step-size rules it takes, Stepsize its default;
	// OwnStep, when set, says how it moves without a rule.
	Stepsizes []string `json:"stepsizes"`
	Stepsize  string   `json:"stepsize"`
	OwnStep   string   `json:"own_step,omitempty"`
	TakesL    bool     `json:"takes_L"`
	Blockwise bool     `json:"blockwise"`
	// Method is how it runs: the method of its family's code (for the
	// family fw its directions: fw, away or pairwise).
	Method string `json:"method"`
	// Settings are the spec fields it takes beyond the common ones.
	Settings []string `json:"settings,omitempty"`
	// SlackCollapse: with slack=collapse it runs the slack collapse.
	SlackCollapse bool `json:"slack_collapse"`
	// NotInPaper, when set, says that the algorithm is a baseline that is
	// not a method of the paper, and what it is.
	NotInPaper string `json:"not_in_paper,omitempty"`
}

// Defaults are the values a spec field takes when left out (zero), and the
// limits of the run-level numbers.
type Defaults struct {
	Iters           int     `json:"iters"`
	EvalEvery       int     `json:"eval_every"`
	Replications    int     `json:"replications"`
	Stepsize        string  `json:"stepsize"`
	Schedule        string  `json:"schedule"`
	Rho             float64 `json:"rho"`
	Alpha           float64 `json:"alpha"`
	M0              int     `json:"m0"`
	Growth          float64 `json:"growth"`
	L               string  `json:"L"`
	MaxIters        int     `json:"max_iters"`
	MaxReplications int     `json:"max_replications"`
	MaxAlgorithms   int     `json:"max_algorithms"`
	MaxRecords      int     `json:"max_records"`       // (iters + 1) × algorithms × replications
	MaxTotalRecords int     `json:"max_total_records"` // all stored runs together
}

// PresetEntry is one ready-made run; the client POSTs its spec.
type PresetEntry struct {
	Name  string   `json:"name"`
	Title string   `json:"title"`
	Help  string   `json:"help"`
	Spec  spec.Run `json:"spec"`
}

func (s *Server) catalogue() Catalogue {
	c := Catalogue{
		Problems: []Problem{},
		Defaults: Defaults{
			Iters: spec.DefaultIters, EvalEvery: spec.DefaultEval, Replications: 1,
			Stepsize: spec.DefaultStepsize, Schedule: spec.DefaultSchedule,
			Rho: spec.DefaultRho, Alpha: spec.DefaultAlpha, M0: spec.DefaultM0, Growth: spec.DefaultGrowth, L: "auto",
			MaxIters: spec.MaxIters, MaxReplications: spec.MaxReplications, MaxAlgorithms: spec.MaxAlgorithms,
			MaxRecords: s.mgr.Options().MaxRecords, MaxTotalRecords: s.mgr.Options().MaxTotalRecords,
		},
		Presets: presetEntries(),
	}
	c.Algorithms = algorithms()
	for _, sc := range scenarios.All() {
		p := Problem{Name: sc.Name, Title: sc.Title, Help: sc.Help, Group: sc.Group,
			Params: []Param{}, Algorithms: append([]string{}, sc.Algorithms...), Defaults: []spec.Algo{},
			OwnSteps: sc.OwnSteps, Averages: sc.Averages}
		p.Iters, p.Passes = sc.Budget()
		for _, prm := range sc.Params {
			p.Params = append(p.Params, prm.View())
		}
		for _, a := range sc.Defaults {
			_ = a.Normalize("") // fills the defaults; an invalid default is shown as registered
			p.Defaults = append(p.Defaults, a)
		}
		c.Problems = append(c.Problems, p)
	}
	return c
}

// algorithms is the catalogue's algorithm table, from spec.Algorithms: the
// API serves it and the start page embeds it (mountPages), so that the page
// takes every rule of an algorithm row from it.
func algorithms() []Algorithm {
	out := []Algorithm{}
	for _, a := range spec.Algorithms {
		out = append(out, Algorithm{Name: a.Name, Family: a.Family, Stochastic: a.Stochastic,
			Stepsizes: a.Stepsizes, Stepsize: a.Stepsize, OwnStep: a.OwnStep, TakesL: a.TakesL, Blockwise: a.Blockwise,
			Method: a.Method, Settings: a.Settings, SlackCollapse: a.Reshape, NotInPaper: a.NotInPaper})
	}
	return out
}

func presetEntries() []PresetEntry {
	out := []PresetEntry{}
	for _, p := range scenarios.Presets() {
		out = append(out, PresetEntry{Name: p.Name, Title: p.Title, Help: p.Help, Spec: p.Spec})
	}
	return out
}

func (s *Server) handleScenarios(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.catalogue())
}

func (s *Server) handlePresets(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, presetEntries())
}
