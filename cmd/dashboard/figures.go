package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fwlab/fwlab/internal/figures"
	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/ssvm"
)

// figureArgs are what a figure preset takes from the command line: the
// solve flags the user set explicitly, and the problem parameters.
type figureArgs struct {
	o      solveOpts
	set    map[string]bool
	params map[string]string
}

// figureFunc runs a paper-figure preset and returns its JSON-able data.
type figureFunc func(ctx context.Context, a figureArgs) (any, error)

// figurePreset is a preset whose output is a figure: its data (written as
// JSON) and the drawing of that data (written as SVG, PNG or PDF when -out
// names such a file).
type figurePreset struct {
	run  figureFunc
	draw func(data any) *figures.Figure
	// flags are the solve flags the preset takes besides -scenario, -out and
	// -format; params the problem's flags it takes (nil: every one).
	flags, params []string
}

// checkFlags refuses the flags a figure preset would otherwise ignore.
func (fp *figurePreset) checkFlags(name string, set map[string]bool, isParam func(string) bool) error {
	ok := map[string]bool{"scenario": true, "out": true, "format": true, "figsize": true}
	for _, f := range fp.flags {
		ok[f] = true
	}
	var takes []string
	for _, f := range fp.flags {
		takes = append(takes, "-"+f)
	}
	if fp.params == nil {
		takes = append(takes, "the problem's flags")
	} else {
		for _, f := range fp.params {
			ok[f] = true
			takes = append(takes, "-"+f)
		}
	}
	var names []string
	for f := range set {
		names = append(names, f)
	}
	sort.Strings(names)
	for _, f := range names {
		if ok[f] || (fp.params == nil && isParam(f)) {
			continue
		}
		return fmt.Errorf("-%s: the %s preset does not use it (it takes -out, -format, %s)", f, name, strings.Join(takes, ", "))
	}
	return nil
}

// figurePresets are the presets whose output is a figure's data rather
// than a list of traces.
var figurePresets = map[string]*figurePreset{
	"paper-fig1": {
		run: func(ctx context.Context, a figureArgs) (any, error) {
			// Figure1Options reads 0 as "the preset's value".
			if a.set["seed"] && a.o.seed == 0 {
				return nil, spec.Errorf("seed", "the paper-fig1 preset takes a seed of at least 1, got 0")
			}
			for _, c := range []struct {
				name string
				v    int
			}{{"replications", a.o.reps}, {"iters", a.o.iters}} {
				if a.set[c.name] && c.v < 1 {
					return nil, spec.Errorf(c.name, "the paper-fig1 preset takes at least 1, got %d", c.v)
				}
			}
			opt := scenarios.Figure1Options{Seed: a.o.seed, Params: spec.Params{}}
			if a.set["replications"] {
				opt.Replications = a.o.reps
			}
			if a.set["iters"] {
				opt.Iters = a.o.iters
			}
			if a.set["eval-every"] {
				opt.EvalEvery = a.o.evalEvery
			}
			for k, v := range a.params {
				opt.Params[k] = v
			}
			return scenarios.Figure1(ctx, opt)
		},
		draw:  func(d any) *figures.Figure { return paperFigure1(d.(*scenarios.Figure1Data)) },
		flags: []string{"seed", "replications", "iters", "eval-every"},
	},
	"paper-fig2": {
		run: func(ctx context.Context, a figureArgs) (any, error) {
			if a.set["passes"] && !(a.o.passes > 0) {
				return nil, spec.Errorf("passes", "the paper-fig2 preset takes a positive number of passes, got %v", a.o.passes)
			}
			opt := scenarios.Figure2Options{Seed: a.o.seed, Data: a.params["data"], Split: a.params["split"]}
			if a.set["passes"] {
				opt.Passes = a.o.passes
			}
			if a.set["eval-every"] {
				opt.EvalEvery = a.o.evalEvery
			}
			if a.o.algo.NoAverage {
				opt.NoAverage = true
			}
			return scenarios.Figure2(ctx, opt)
		},
		draw:   func(d any) *figures.Figure { return paperFigure2(d.(*ssvm.Figure2Data)) },
		flags:  []string{"seed", "passes", "eval-every", "no-average"},
		params: []string{"data", "split"},
	},
}

func special(name string) *figurePreset { return figurePresets[name] }

// runFigure runs a figure preset and writes its data as one JSON document,
// or draws the figure when -out names an .svg, .png or .pdf file.
func runFigure(name string, a figureArgs, stdout, stderr io.Writer) int {
	o := a.o
	if o.format != "json" && o.format != "jsonl" {
		fmt.Fprintf(stderr, "dashboard solve: -format: the %s preset writes json, got %q\n", name, o.format)
		return 2
	}
	drawAs := ""
	if ext := filepath.Ext(o.out); ext != "" && !strings.EqualFold(ext, ".json") {
		f, err := figures.FormatOf(o.out)
		if err != nil {
			fmt.Fprintf(stderr, "dashboard solve: -out: %v (or .json for the figure's data)\n", err)
			return 2
		}
		drawAs = f
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	fp := figurePresets[name]
	data, err := fp.run(ctx, a)
	if err != nil {
		var fe *spec.FieldError
		if errors.As(err, &fe) {
			fmt.Fprintf(stderr, "dashboard solve: %s: %s\n", name, flagError(err))
			return 2
		}
		fmt.Fprintf(stderr, "dashboard solve: %s: %v\n", name, err)
		return 1
	}
	w := stdout
	var file *os.File
	if o.out != "" {
		f, err := os.Create(o.out)
		if err != nil {
			fmt.Fprintf(stderr, "dashboard solve: -out: %v\n", err)
			return 1
		}
		file, w = f, f
	}
	if drawAs != "" {
		sz, _ := figures.SizeNamed(o.figsize) // checked with the flags
		err = fp.draw(data).RenderSize(w, drawAs, sz)
	} else {
		err = writeFigureData(w, sanitize(data))
	}
	if file != nil {
		if cerr := file.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "dashboard solve: writing the output: %v\n", err)
		return 1
	}
	return 0
}

// writeFigureData writes a figure preset's data as one JSON object whose
// first field, "format", says what it is (figureDataFormat), so that
// `dashboard import` can tell it from a run bundle.
func writeFigureData(w io.Writer, data any) error {
	b, err := json.MarshalIndent(data, "", " ")
	if err != nil {
		return err
	}
	if len(b) < 2 || b[0] != '{' {
		return fmt.Errorf("figure data is not a JSON object")
	}
	head := "{\n \"format\": \"" + figureDataFormat + "\""
	if len(bytes.TrimSpace(b[1:len(b)-1])) > 0 {
		head += ","
	}
	if _, err := io.WriteString(w, head); err != nil {
		return err
	}
	_, err = w.Write(append(b[1:], '\n'))
	return err
}

// paperFigure1 lays out the paper's Figure 1: (a) the true B, (b) SPG's and
// (c) bc-ssfw-as's estimates, (d) the truncated correlation matrix of Y, and
// (e) the objective against iterations (median with the min–max band over
// the replications) with a detail of its start; then the relative error
// (F − F*)/F* against iterations and against effective passes.
func paperFigure1(d *scenarios.Figure1Data) *figures.Figure {
	f := &figures.Figure{Cols: 4,
		Title: fmt.Sprintf("Graph-guided fused LASSO (paper Figure 1): N = %s, J = %s, K = %s, λ = %s, γ = %s; seed %d, median and min–max of %d replications",
			d.Params["n"], d.Params["j"], d.Params["k"], d.Params["lambda"], d.Params["gamma"], d.Seed, d.Replications)}
	for _, h := range []struct {
		title string
		z     [][]float64
	}{{"true B", d.BTrue}, {"B by SPG", d.BSPG}, {"B by bc-ssfw-as", d.BBCSSFWAS}, {"truncated correlation of Y", d.Corr}} {
		if len(h.z) > 0 && len(h.z[0]) > 0 {
			f.Panels = append(f.Panels, figures.Panel{Title: h.title, Heat: &figures.Heat{Z: h.z}})
		}
	}
	obj := &figures.Lines{XLabel: "iteration", YLabel: "objective F(B)", LogY: true}
	detail := &figures.Lines{XLabel: "iteration", YLabel: "objective F(B)", LogY: true}
	relIt := &figures.Lines{XLabel: "iteration", YLabel: "(F − F*) / F*", LogY: true}
	relPass := &figures.Lines{XLabel: "effective passes", YLabel: "(F − F*) / F*", LogY: true}
	// the detail: the first tenth of the iterations, at least 50
	cut := math.Max(50, float64(d.Iters)/10)
	rel := func(s figures.Series) figures.Series {
		s = figures.Pow10(s)
		for _, v := range []figures.Floats{s.Y, s.Lo, s.Hi} {
			for i := range v {
				v[i] /= d.FStar
			}
		}
		return s
	}
	for _, a := range d.Algorithms {
		s := figures.Pow10(figures.StatSeries(a.Algo, a.LogObjective.Iterations))
		obj.Series = append(obj.Series, s)
		detail.Series = append(detail.Series, head(s, cut))
		relIt.Series = append(relIt.Series, rel(figures.StatSeries(a.Algo, a.LogSubopt.Iterations)))
		relPass.Series = append(relPass.Series, rel(figures.StatSeries(a.Algo, a.LogSubopt.Passes)))
	}
	f.Panels = append(f.Panels,
		figures.Panel{Title: "objective", Lines: obj},
		figures.Panel{Title: fmt.Sprintf("objective, detail: iterations ≤ %g", cut), Lines: detail},
		figures.Panel{Title: fmt.Sprintf("relative error, F* = %.10g", d.FStar), Lines: relIt},
		figures.Panel{Title: "relative error against effective passes", Lines: relPass})
	return f
}

// head keeps the points of s with x ≤ cut.
func head(s figures.Series, cut float64) figures.Series {
	n := 0
	for n < len(s.X) && s.X[n] <= cut {
		n++
	}
	out := figures.Series{Name: s.Name, X: s.X[:n], Y: s.Y[:n]}
	if s.Lo != nil {
		out.Lo, out.Hi = s.Lo[:n], s.Hi[:n]
	}
	return out
}

// paperFigure2 lays out the paper's Figure 2: for every λ the duality gap
// of each algorithm against effective passes, and below it the relative
// gap (gap / primal objective) the paper plots.
func paperFigure2(d *ssvm.Figure2Data) *figures.Figure {
	var lambdas []float64
	seen := map[float64]bool{}
	for _, s := range d.Series {
		if !seen[s.Lambda] {
			seen[s.Lambda] = true
			lambdas = append(lambdas, s.Lambda)
		}
	}
	iterate := "averaged iterates"
	if !d.Averaged {
		iterate = "plain iterates"
	}
	f := &figures.Figure{Cols: len(lambdas),
		Title: fmt.Sprintf("Structural SVM on OCR (paper Figure 2): n = %d, d = %d, %s", d.N, d.D, iterate)}
	var rel []figures.Panel
	for _, lam := range lambdas {
		gap := &figures.Lines{XLabel: "effective passes", YLabel: "duality gap", LogY: true}
		rg := &figures.Lines{XLabel: "effective passes", YLabel: "relative duality gap", LogY: true}
		for _, s := range d.Series {
			if s.Lambda != lam {
				continue
			}
			gap.Series = append(gap.Series, figures.Series{Name: s.Algo, X: s.Passes, Y: s.Gap})
			rg.Series = append(rg.Series, figures.Series{Name: s.Algo, X: s.Passes, Y: s.RelGap})
		}
		f.Panels = append(f.Panels, figures.Panel{Title: fmt.Sprintf("λ = %g", lam), Lines: gap})
		rel = append(rel, figures.Panel{Title: fmt.Sprintf("λ = %g: gap / primal", lam), Lines: rg})
	}
	f.Panels = append(f.Panels, rel...)
	return f
}

// drawRun draws a run's figure (figures.FromRun: median and min–max band
// over the replications of every algorithm, F − F* when the instance knows
// F*, else F − the best F reached) with a heat map of every matrix among
// the instance's panels and of each algorithm's final estimate (its first
// replication's, for GFLASSO's B), and writes it to path.
func drawRun(path, format, size string, run *spec.Run, inst scenarios.Instance, traces []traceOut) error {
	info := inst.Info()
	var algos []figures.RunTraces
	idx := map[string]int{}
	for _, t := range traces {
		i, ok := idx[t.Algo]
		if !ok {
			i = len(algos)
			idx[t.Algo] = i
			algos = append(algos, figures.RunTraces{Algo: t.Algo})
		}
		algos[i].Traces = append(algos[i].Traces, t.Records)
	}
	fstar := math.NaN()
	if info.FStar != nil {
		fstar = *info.FStar
	}
	title := fmt.Sprintf("%s, seed %d", run.Problem, run.Seed)
	if run.Replications > 1 {
		title += fmt.Sprintf(": median and min–max of %d replications", run.Replications)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	sz, err := figures.SizeNamed(size)
	if err == nil {
		extra := figures.HeatPanels(info.Panels)
		if rp, ok := inst.(scenarios.ResultPanels); ok {
			seen := map[string]bool{}
			for _, t := range traces {
				if seen[t.Algo] || len(t.X) == 0 {
					continue
				}
				seen[t.Algo] = true
				if p, perr := rp.ResultPanels(t.X); perr == nil {
					extra = append(extra, figures.EstimatePanels(t.Algo, p)...)
				}
			}
		}
		err = figures.FromRun(title, algos, fstar, extra...).RenderSize(f, format, sz)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// sanitize replaces non-finite numbers (which JSON cannot hold) by null in
// the maps and slices the command builds itself; solver records and
// summaries do that on their own.
func sanitize(v any) any {
	switch t := v.(type) {
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return nil
		}
		return t
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = sanitize(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = sanitize(e)
		}
		return out
	}
	return v
}
