package figures

import (
	"math"
	"sort"

	"github.com/fwlab/fwlab/internal/aggregate"
	"github.com/fwlab/fwlab/internal/solver"
)

// StatSeries turns aggregated statistics into a series: the median as the
// line, min and max as the band (left out when every abscissa has a single
// trace, where the band would be the line). Abscissae with no contributing
// trace are missing values.
func StatSeries(name string, st []aggregate.Stat) Series {
	s := Series{Name: name, X: make(Floats, len(st)), Y: make(Floats, len(st))}
	lo, hi := make(Floats, len(st)), make(Floats, len(st))
	band := false
	for i, x := range st {
		s.X[i] = x.X
		if x.N == 0 {
			s.Y[i], lo[i], hi[i] = math.NaN(), math.NaN(), math.NaN()
			continue
		}
		s.Y[i], lo[i], hi[i] = x.Median, x.Min, x.Max
		if x.N > 1 {
			band = true
		}
	}
	if band {
		s.Lo, s.Hi = lo, hi
	}
	return s
}

// Pow10 returns the series with every value v replaced by 10^v: statistics
// aggregated on a log10 scale, to be drawn on a logarithmic axis.
func Pow10(s Series) Series {
	p := func(f Floats) Floats {
		if f == nil {
			return nil
		}
		out := make(Floats, len(f))
		for i, v := range f {
			out[i] = math.Pow(10, v)
		}
		return out
	}
	return Series{Name: s.Name, X: s.X, Y: p(s.Y), Lo: p(s.Lo), Hi: p(s.Hi)}
}

// MaxPoints bounds the points of a series against iterations in FromRun.
const MaxPoints = 2000

// RunTraces are the replications of one algorithm of a run.
type RunTraces struct {
	Algo   string
	Traces [][]solver.Record
}

// FromRun builds the figure of a run from its traces: for every algorithm
// the median over its replications with a min–max band of the objective
// (of F − F* when fstar is finite) against iterations and against
// effective passes, and of the duality gap against iterations, all on
// logarithmic axes; extra panels (heat maps of the instance's matrices,
// say) follow. Against iterations a series holds every evaluated iteration,
// or an even grid of MaxPoints when there are more; against passes an even
// grid of 200 points. The dashboard's server can call it to offer a run's
// figure as a file; Render writes it.
func FromRun(title string, algos []RunTraces, fstar float64, extra ...Panel) *Figure {
	field, ylabel := aggregate.Objective, "objective F"
	if finite(fstar) {
		field, ylabel = aggregate.Subopt, "F − F*"
	}
	var all [][]solver.Record
	for _, a := range algos {
		all = append(all, a.Traces...)
	}
	grid := aggregate.LinearGrid(all, aggregate.Passes, 200)
	// Against iterations: every evaluated iteration, or an even grid of
	// MaxPoints when there are more (a long run stays a small file).
	byIteration := func(tr [][]solver.Record, f aggregate.Field) []aggregate.Stat {
		st := aggregate.ByIteration(tr, f, fstar)
		if len(st) > MaxPoints {
			st = aggregate.OnGrid(tr, aggregate.Iterations, aggregate.LinearGrid(all, aggregate.Iterations, MaxPoints), f, fstar)
		}
		return st
	}
	byIter := &Lines{XLabel: "iteration", YLabel: ylabel, LogY: true}
	byPass := &Lines{XLabel: "effective passes", YLabel: ylabel, LogY: true}
	gap := &Lines{XLabel: "iteration", YLabel: "duality gap", LogY: true}
	for _, a := range algos {
		byIter.Series = append(byIter.Series, StatSeries(a.Algo, byIteration(a.Traces, field)))
		byPass.Series = append(byPass.Series, StatSeries(a.Algo, aggregate.OnGrid(a.Traces, aggregate.Passes, grid, field, fstar)))
		gap.Series = append(gap.Series, StatSeries(a.Algo, byIteration(a.Traces, aggregate.Gap)))
	}
	f := &Figure{Title: title, Cols: 3, Panels: []Panel{
		{Title: ylabel + " against iterations", Lines: byIter},
		{Title: ylabel + " against effective passes", Lines: byPass},
		{Title: "duality gap against iterations", Lines: gap},
	}}
	f.Panels = append(f.Panels, extra...)
	return f
}

// HeatPanels returns a heat-map panel for every matrix ([][]float64, not
// empty, rectangular) among an instance's panels, by name; the other
// panels are left out.
func HeatPanels(panels map[string]any) []Panel {
	keys := make([]string, 0, len(panels))
	for k := range panels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []Panel
	for _, k := range keys {
		z, ok := panels[k].([][]float64)
		if !ok || len(z) == 0 || len(z[0]) == 0 {
			continue
		}
		rect := true
		for _, row := range z {
			rect = rect && len(row) == len(z[0])
		}
		if rect {
			out = append(out, Panel{Title: k, Heat: &Heat{Z: z}})
		}
	}
	return out
}
