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
// the median over its replications with a min–max band of F − F* (when
// fstar is finite, else F − the best F any trace reached, as the run page
// draws it) against iterations and against effective passes, and of the
// duality gap against iterations, all on logarithmic axes; extra panels
// (heat maps of the instance's matrices, say) follow. An algorithm's
// series ends where its last replication ended. Against iterations a series holds every evaluated iteration,
// or an even grid of MaxPoints when there are more; against passes an even
// grid of 200 points. The dashboard's server can call it to offer a run's
// figure as a file; Render writes it.
func FromRun(title string, algos []RunTraces, fstar float64, extra ...Panel) *Figure {
	var all [][]solver.Record
	for _, a := range algos {
		all = append(all, a.Traces...)
	}
	best := math.Inf(1)
	for _, tr := range all {
		for i := range tr {
			if o := tr[i].Objective; o != nil && finite(*o) {
				best = math.Min(best, *o)
			}
		}
	}
	field, ylabel, fstar := objectiveAxis(fstar, best)
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
		endK, endP := math.Inf(-1), math.Inf(-1)
		for _, tr := range a.Traces {
			if len(tr) > 0 {
				endK, endP = math.Max(endK, float64(tr[len(tr)-1].K)), math.Max(endP, tr[len(tr)-1].Passes)
			}
		}
		byIter.Series = append(byIter.Series, endAt(StatSeries(a.Algo, byIteration(a.Traces, field)), endK))
		byPass.Series = append(byPass.Series, endAt(StatSeries(a.Algo, aggregate.OnGrid(a.Traces, aggregate.Passes, grid, field, fstar)), endP))
		gap.Series = append(gap.Series, endAt(StatSeries(a.Algo, byIteration(a.Traces, aggregate.Gap)), endK))
	}
	f := &Figure{Title: title, Cols: 3, Panels: []Panel{
		{Title: ylabel + " against iterations", Lines: byIter},
		{Title: ylabel + " against effective passes", Lines: byPass},
		{Title: "duality gap against iterations", Lines: gap},
	}}
	f.Panels = append(f.Panels, extra...)
	return f
}

// objectiveAxis chooses what the objective panels draw: F − F* when F*
// is known, else F − best with best the smallest F any trace reached (that
// point itself has no logarithm and is not drawn), else F. It returns the
// field, the axis label and the value subtracted.
func objectiveAxis(fstar, best float64) (aggregate.Field, string, float64) {
	switch {
	case finite(fstar):
		return aggregate.Subopt, "F − F*", fstar
	case finite(best):
		return aggregate.Subopt, "F − best F seen", best
	}
	return aggregate.Objective, "objective F", fstar
}

// endAt leaves out the points of s beyond end: a series stops where its
// run stopped rather than carrying its last value on to the right.
func endAt(s Series, end float64) Series {
	for i, x := range s.X {
		if x > end {
			s.Y[i] = math.NaN()
			if s.Lo != nil {
				s.Lo[i], s.Hi[i] = math.NaN(), math.NaN()
			}
		}
	}
	return s
}

// heatTitles name the matrices of instances' panels in a figure.
var heatTitles = map[string]string{
	"B_true": "true B",
	"corr":   "correlation graph (thresholded correlation of Y)",
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
		z, ok := Matrix(panels[k])
		if !ok || len(z) == 0 || len(z[0]) == 0 {
			continue
		}
		rect := true
		for _, row := range z {
			rect = rect && len(row) == len(z[0])
		}
		if rect {
			title := k
			if t, ok := heatTitles[k]; ok {
				title = t
			}
			out = append(out, Panel{Title: title, Heat: &Heat{Z: z}})
		}
	}
	return out
}

// Matrix reads a matrix from a panel's value, as built ([][]float64) or
// as decoded from JSON ([]any of []any of numbers).
func Matrix(v any) ([][]float64, bool) {
	switch m := v.(type) {
	case [][]float64:
		return m, true
	case []any:
		out := make([][]float64, len(m))
		for i, row := range m {
			r, ok := row.([]any)
			if !ok {
				return nil, false
			}
			out[i] = make([]float64, len(r))
			for j, x := range r {
				f, ok := x.(float64)
				if !ok {
					return nil, false
				}
				out[i][j] = f
			}
		}
		return out, true
	}
	return nil, false
}

// EstimatePanels returns the heat map of an algorithm's final estimate
// among a finished trace's panels (scenarios.ResultPanels: "B", GFLASSO's
// coefficient matrix), titled with the algorithm; none when it has none.
func EstimatePanels(algo string, panels map[string]any) []Panel {
	z, ok := Matrix(panels["B"])
	if !ok || len(z) == 0 || len(z[0]) == 0 {
		return nil
	}
	for _, row := range z {
		if len(row) != len(z[0]) {
			return nil
		}
	}
	return []Panel{{Title: "B by " + algo, Heat: &Heat{Z: z}}}
}
