package figures

import (
	"math"
	"sort"

	"github.com/fwlab/fwlab/internal/aggregate"
	"github.com/fwlab/fwlab/internal/solver"
)

// TraceSource is one trace read as a stream: its number of records, and a
// walk over the records [from, to) in order until fn returns false (the
// record passed to fn may be reused after fn returns).
type TraceSource struct {
	Len  int
	Each func(from, to int, fn func(r *solver.Record) bool)
}

// StreamTraces are the replications of one algorithm, as streams.
type StreamTraces struct {
	Algo   string
	Traces []TraceSource
}

// DefaultColumns is the number of columns FromRunStream decimates to: a
// page-wide panel's pixel columns at print resolution.
const DefaultColumns = 800

// bin is one column of one trace: the smallest, largest and last value of
// its evaluated records there; void when it had evaluated records but none
// with a value (F − F* ≤ 0 at rounding level on a log axis).
type bin struct {
	lo, hi, last float64
	void         bool
}

// binned is one trace's decimation on one panel.
type binned struct{ b []bin }

func newBinned(n int) *binned {
	b := make([]bin, n)
	for i := range b {
		b[i] = bin{lo: math.NaN(), hi: math.NaN(), last: math.NaN()}
	}
	return &binned{b: b}
}

func (t *binned) add(col int, v float64) {
	p := &t.b[col]
	if math.IsNaN(p.lo) {
		p.lo, p.hi = v, v
	} else {
		p.lo, p.hi = math.Min(p.lo, v), math.Max(p.hi, v)
	}
	p.last = v
}

// none marks a column whose evaluated records had no value.
func (t *binned) none(col int) {
	if math.IsNaN(t.b[col].last) {
		t.b[col].void = true
	}
}

// carry step-interpolates: a column without a record of its own takes the
// trace's value so far (and, past its end, its final value), as
// package aggregate does; after a record without a value the trace
// contributes nothing until its next value.
func (t *binned) carry() {
	cur := math.NaN()
	for i := range t.b {
		switch {
		case !math.IsNaN(t.b[i].last):
			cur = t.b[i].last
		case t.b[i].void:
			cur = math.NaN()
		default:
			t.b[i] = bin{lo: cur, hi: cur, last: cur}
		}
	}
}

// axisRange is the abscissa range of a panel over every trace.
type axisRange struct{ lo, hi float64 }

func (a axisRange) col(x float64, n int) int {
	if !(a.hi > a.lo) {
		return 0
	}
	c := int((x - a.lo) / (a.hi - a.lo) * float64(n))
	return min(max(c, 0), n-1)
}

func (a axisRange) x(col, n int) float64 {
	if !(a.hi > a.lo) {
		return a.lo
	}
	return a.lo + (float64(col)+0.5)*(a.hi-a.lo)/float64(n)
}

// FromRunStream is FromRun for traces read as streams, in memory bounded
// by the columns whatever the records: each panel is decimated per column
// (about a pixel column), keeping every trace's smallest, largest and last
// value there. The line is the median over the replications of their last
// values, the band the smallest to the largest value any replication took
// in the column, so spikes and drop steps stay visible. The records are
// walked once after the first and last record of each trace give the
// axes' ranges (twice without F*: the first walk finds the best F).
// columns ≤ 0 takes DefaultColumns.
func FromRunStream(title string, algos []StreamTraces, fstar float64, columns int, extra ...Panel) *Figure {
	if columns <= 0 {
		columns = DefaultColumns
	}
	// the abscissae's ranges, from each trace's ends; where each
	// algorithm's last replication ended
	its, passes := axisRange{math.Inf(1), math.Inf(-1)}, axisRange{math.Inf(1), math.Inf(-1)}
	endK, endP := make([]float64, len(algos)), make([]float64, len(algos))
	for i, a := range algos {
		endK[i], endP[i] = math.Inf(-1), math.Inf(-1)
		for _, t := range a.Traces {
			if t.Len == 0 {
				continue
			}
			ends := func(r *solver.Record) bool {
				its.lo, its.hi = math.Min(its.lo, float64(r.K)), math.Max(its.hi, float64(r.K))
				passes.lo, passes.hi = math.Min(passes.lo, r.Passes), math.Max(passes.hi, r.Passes)
				endK[i], endP[i] = math.Max(endK[i], float64(r.K)), math.Max(endP[i], r.Passes)
				return true
			}
			t.Each(0, 1, ends)
			t.Each(t.Len-1, t.Len, ends)
		}
	}
	// without F*, the smallest F reached (one more walk of the records)
	best := math.Inf(1)
	if !finite(fstar) {
		for _, a := range algos {
			for _, t := range a.Traces {
				t.Each(0, t.Len, func(r *solver.Record) bool {
					if o := r.Objective; o != nil && finite(*o) {
						best = math.Min(best, *o)
					}
					return true
				})
			}
		}
	}
	field, ylabel, fstar := objectiveAxis(fstar, best)
	field = map[aggregate.Field]aggregate.Field{aggregate.Subopt: aggregate.LogSubopt, aggregate.Objective: aggregate.LogObjective}[field]
	byIter := &Lines{XLabel: "iteration", YLabel: ylabel, LogY: true}
	byPass := &Lines{XLabel: "effective passes", YLabel: ylabel, LogY: true}
	gap := &Lines{XLabel: "iteration", YLabel: "duality gap", LogY: true}
	for ai, a := range algos {
		var oi, op, gi []*binned
		for _, t := range a.Traces {
			bi, bp, bg := newBinned(columns), newBinned(columns), newBinned(columns)
			t.Each(0, t.Len, func(r *solver.Record) bool {
				ci, cp := its.col(float64(r.K), columns), passes.col(r.Passes, columns)
				if v, ok := logValue(r, field, fstar); ok {
					bi.add(ci, v)
					bp.add(cp, v)
				} else if r.Objective != nil {
					bi.none(ci)
					bp.none(cp)
				}
				if v, ok := logValue(r, aggregate.LogGap, fstar); ok {
					bg.add(ci, v)
				} else if r.Gap != nil {
					bg.none(ci)
				}
				return true
			})
			for _, b := range []*binned{bi, bp, bg} {
				b.carry()
			}
			oi, op, gi = append(oi, bi), append(op, bp), append(gi, bg)
		}
		ki, kp := its.col(endK[ai], columns), passes.col(endP[ai], columns)
		byIter.Series = append(byIter.Series, Pow10(combine(a.Algo, oi, its, columns, ki)))
		byPass.Series = append(byPass.Series, Pow10(combine(a.Algo, op, passes, columns, kp)))
		gap.Series = append(gap.Series, Pow10(combine(a.Algo, gi, its, columns, ki)))
	}
	f := &Figure{Title: title, Cols: 3, Panels: []Panel{
		{Title: ylabel + " against iterations", Lines: byIter},
		{Title: ylabel + " against effective passes", Lines: byPass},
		{Title: "duality gap against iterations", Lines: gap},
	}}
	f.Panels = append(f.Panels, extra...)
	return f
}

// logValue is log10 of the field of an evaluated record (aggregate's
// rules: none for a value that is not positive).
func logValue(r *solver.Record, f aggregate.Field, fstar float64) (float64, bool) {
	return f.Value(r, fstar)
}

// combine makes the series of an algorithm from its traces' columns: the
// median of their last values, the band from the least to the greatest
// value in the column; a column no trace reached, or beyond the column
// end where the algorithm's last replication ended, is missing.
func combine(name string, ts []*binned, ax axisRange, n, end int) Series {
	s := Series{Name: name, X: make(Floats, n), Y: make(Floats, n), Lo: make(Floats, n), Hi: make(Floats, n)}
	band := false
	vals := make([]float64, 0, len(ts))
	for c := 0; c < n; c++ {
		s.X[c] = ax.x(c, n)
		vals = vals[:0]
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, t := range ts {
			b := t.b[c]
			if math.IsNaN(b.last) || c > end {
				continue
			}
			vals = append(vals, b.last)
			lo, hi = math.Min(lo, b.lo), math.Max(hi, b.hi)
		}
		if len(vals) == 0 {
			s.Y[c], s.Lo[c], s.Hi[c] = math.NaN(), math.NaN(), math.NaN()
			continue
		}
		sort.Float64s(vals)
		m := vals[len(vals)/2]
		if len(vals)%2 == 0 {
			m = (vals[len(vals)/2-1] + m) / 2
		}
		s.Y[c], s.Lo[c], s.Hi[c] = m, lo, hi
		if hi > lo {
			band = true
		}
	}
	if !band {
		s.Lo, s.Hi = nil, nil
	}
	return s
}
