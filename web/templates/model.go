// Package templates holds the dashboard's templ components and the view
// models they render. The generated *_templ.go files are committed.
package templates

import (
	"strconv"

	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/spec"
)

// Param is one problem parameter as the start page shows and checks it:
// the API's view of it (the same JSON), with the helpers the page needs.
type Param struct {
	scenarios.ParamView
}

// InputType is the HTML input type of the parameter's control.
func (p Param) InputType() string {
	switch p.Kind {
	case "int", "float":
		return "number"
	}
	return "text"
}

// Step is the HTML step attribute of a numeric control.
func (p Param) Step() string {
	if p.Kind == "int" {
		return "1"
	}
	return "any"
}

// Problem is one scenario of the catalogue.
type Problem struct {
	Name       string      `json:"name"`
	Title      string      `json:"title"`
	Help       string      `json:"help"`
	Group      string      `json:"group"`
	Params     []Param     `json:"params"`
	Algorithms []string    `json:"algorithms"`
	Defaults   []spec.Algo `json:"defaults"`
	// Iters and Passes are the limits of a run that gives neither.
	Iters  int     `json:"iters"`
	Passes float64 `json:"passes"`
	// OwnSteps and Averages are the scenario's (scenarios.Scenario): every
	// method takes its step from the problem; the methods report an
	// average a row may turn off.
	OwnSteps bool `json:"own_steps"`
	Averages bool `json:"averages"`
}

// Group is a set of problems shown together.
type Group struct {
	Name     string    `json:"name"`
	Title    string    `json:"title"`
	Problems []Problem `json:"problems"`
}

// Preset is a ready-made run.
type Preset struct {
	Name  string   `json:"name"`
	Title string   `json:"title"`
	Help  string   `json:"help"`
	Spec  spec.Run `json:"spec"`
}

// Catalogue is what the start page's script reads: problems, presets and
// the algorithm table, as embedded JSON.
type Catalogue struct {
	Groups  []Group  `json:"groups"`
	Presets []Preset `json:"presets"`
	// Algorithms is the API's algorithm table (web.Deps.Algorithms): the
	// rules of each algorithm row (step-size rules and default, own step,
	// L, stochastic, blockwise, not in the paper).
	Algorithms any      `json:"algorithms"`
	Defaults   Defaults `json:"defaults"`
}

// Defaults are the run-level and algorithm defaults of the spec package.
type Defaults struct {
	Stepsize        string  `json:"stepsize"`
	Schedule        string  `json:"schedule"`
	Rho             float64 `json:"rho"`
	Alpha           float64 `json:"alpha"`
	M0              int     `json:"m0"`
	Growth          float64 `json:"growth"`
	Iters           int     `json:"iters"`
	EvalEvery       int     `json:"eval_every"`
	MaxIters        int     `json:"max_iters"`
	MaxReplications int     `json:"max_replications"`
	MaxAlgorithms   int     `json:"max_algorithms"`
}

// StartPage is the view model of the start page.
type StartPage struct {
	Catalogue Catalogue
	// Selected is the problem chosen when the page opens.
	Selected string
	DataDir  string
	Asset    func(string) string
}

// RunPage is the view model of the live run page.
type RunPage struct {
	ID    string
	Asset func(string) string
}

// uploadHint names the format a file picker expects.
func uploadHint(format string) string {
	switch format {
	case "csv":
		return " (CSV)"
	case "svmlight":
		return " (svmlight/LIBSVM)"
	case "ocr":
		return " (OCR letters TSV, optionally gzip-compressed)"
	}
	return ""
}

func itoa(n int) string { return strconv.Itoa(n) }

func ftoa(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// fieldID is the DOM id of a problem parameter's control.
func fieldID(problem, param string) string { return "p-" + problem + "-" + param }

// HistoryPage is the view model of the history page.
type HistoryPage struct {
	Asset func(string) string
}

// ComparePage is the view model of the compare page; Runs is the
// comma-separated list of run ids from its URL.
type ComparePage struct {
	Runs  string
	Asset func(string) string
}

// SweepsPage is the view model of the sweeps' index.
type SweepsPage struct {
	Asset func(string) string
}

// SweepPage is the view model of a sweep's page.
type SweepPage struct {
	ID    string
	Asset func(string) string
}
