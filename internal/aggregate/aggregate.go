// Package aggregate summarises replications: given R traces of iteration
// records (one per seed), it gives the median, minimum and maximum of a
// field per iteration, or on a common grid of effective passes or seconds.
//
// Only evaluated records (those carrying the objective) hold values. Values
// are step-interpolated: at an abscissa x a trace contributes the value of
// its last evaluated record at or before x, and a trace that has ended (it
// converged or hit a limit) keeps contributing its final value to the right
// of its end. A trace with no evaluated record at or before x does not
// contribute at x. For the logarithmic fields a value that is not positive
// (F − F* ≤ 0 at rounding level, a zero gap) has no logarithm: that trace
// does not contribute at that point, and Stat.N counts only contributing
// traces. The median of an even number of values is the mean of the two
// middle ones (for the log fields: the mean of the logs).
package aggregate

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/fwlab/fwlab/internal/solver"
)

// Field is the quantity aggregated.
type Field int

// Fields.
const (
	Objective    Field = iota // F
	LogObjective              // log10 F
	Subopt                    // F − F*
	LogSubopt                 // log10(F − F*)
	Gap                       // the FW duality gap
	LogGap                    // log10 gap
)

var fieldNames = []string{"objective", "log10_objective", "subopt", "log10_subopt", "gap", "log10_gap"}

// String returns the field's JSON-friendly name.
func (f Field) String() string {
	if f >= 0 && int(f) < len(fieldNames) {
		return fieldNames[f]
	}
	return fmt.Sprintf("Field(%d)", int(f))
}

// ParseField maps a name of String back to the field.
func ParseField(s string) (Field, error) {
	for i, n := range fieldNames {
		if n == s {
			return Field(i), nil
		}
	}
	return 0, fmt.Errorf("aggregate: unknown field %q (one of %v)", s, fieldNames)
}

// Value extracts the field from an evaluated record: false for a record
// that was not evaluated, or a log field of a value that is not positive.
func (f Field) Value(r *solver.Record, fstar float64) (float64, bool) { return f.value(r, fstar) }

// value extracts the field from an evaluated record.
func (f Field) value(r *solver.Record, fstar float64) (float64, bool) {
	if r.Objective == nil {
		return 0, false
	}
	var v float64
	switch f {
	case Objective, LogObjective:
		v = *r.Objective
	case Subopt, LogSubopt:
		v = *r.Objective - fstar
	case Gap, LogGap:
		if r.Gap == nil {
			return 0, false
		}
		v = *r.Gap
	default:
		return 0, false
	}
	switch f {
	case LogObjective, LogSubopt, LogGap:
		if !(v > 0) || math.IsInf(v, 0) {
			return 0, false
		}
		v = math.Log10(v)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// Axis is an abscissa of the records.
type Axis int

// Axes.
const (
	Iterations Axis = iota
	Passes
	Seconds
)

func (a Axis) of(r *solver.Record) float64 {
	switch a {
	case Passes:
		return r.Passes
	case Seconds:
		return r.Time
	}
	return float64(r.K)
}

// Stat is the summary at one abscissa.
type Stat struct {
	X      float64 `json:"x"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	N      int     `json:"n"` // traces contributing
}

// point is one evaluated value of a trace at an abscissa.
type point struct{ x, v float64 }

// series extracts a trace's evaluated points in record order. Abscissae are
// non-decreasing in a trace (iterations, passes and seconds all grow).
func series(tr []solver.Record, a Axis, f Field, fstar float64) []point {
	var out []point
	for i := range tr {
		r := &tr[i]
		if r.Objective == nil {
			continue
		}
		v, ok := f.value(r, fstar)
		if !ok {
			v = math.NaN() // evaluated, but no value: the trace is silent here
		}
		out = append(out, point{a.of(r), v})
	}
	return out
}

// at returns the step-interpolated value of s at x.
func at(s []point, x float64) (float64, bool) {
	i := sort.Search(len(s), func(i int) bool { return s[i].x > x }) - 1
	if i < 0 || math.IsNaN(s[i].v) {
		return 0, false
	}
	return s[i].v, true
}

func summarise(x float64, vals []float64) Stat {
	st := Stat{X: x, N: len(vals)}
	if len(vals) == 0 {
		st.Median, st.Min, st.Max = math.NaN(), math.NaN(), math.NaN()
		return st
	}
	sort.Float64s(vals)
	st.Min, st.Max = vals[0], vals[len(vals)-1]
	m := len(vals) / 2
	if len(vals)%2 == 1 {
		st.Median = vals[m]
	} else {
		st.Median = (vals[m-1] + vals[m]) / 2
	}
	return st
}

// ByIteration aggregates f at every iteration at which at least one trace
// has an evaluated record, in increasing order.
func ByIteration(traces [][]solver.Record, f Field, fstar float64) []Stat {
	ks := map[float64]bool{}
	for _, tr := range traces {
		for i := range tr {
			if tr[i].Objective != nil {
				ks[float64(tr[i].K)] = true
			}
		}
	}
	grid := make([]float64, 0, len(ks))
	for k := range ks {
		grid = append(grid, k)
	}
	sort.Float64s(grid)
	return OnGrid(traces, Iterations, grid, f, fstar)
}

// OnGrid aggregates f at the given abscissae (any order) of axis a.
func OnGrid(traces [][]solver.Record, a Axis, grid []float64, f Field, fstar float64) []Stat {
	ss := make([][]point, len(traces))
	for i, tr := range traces {
		ss[i] = series(tr, a, f, fstar)
	}
	out := make([]Stat, len(grid))
	vals := make([]float64, 0, len(traces))
	for gi, x := range grid {
		vals = vals[:0]
		for _, s := range ss {
			if v, ok := at(s, x); ok {
				vals = append(vals, v)
			}
		}
		out[gi] = summarise(x, vals)
	}
	return out
}

// LinearGrid returns n ≥ 2 equally spaced abscissae from the smallest to
// the largest value of axis a over the evaluated records of all traces (nil
// when there is none).
func LinearGrid(traces [][]solver.Record, a Axis, n int) []float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, tr := range traces {
		for i := range tr {
			if tr[i].Objective == nil {
				continue
			}
			x := a.of(&tr[i])
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
	}
	if math.IsInf(lo, 0) || n < 1 {
		return nil
	}
	if n == 1 || hi == lo {
		return []float64{hi}
	}
	g := make([]float64, n)
	for i := range g {
		g[i] = lo + (hi-lo)*float64(i)/float64(n-1)
	}
	g[n-1] = hi
	return g
}

// MarshalJSON writes a Stat with no contributing trace (NaN statistics) with
// null values, since JSON has no NaN.
func (s Stat) MarshalJSON() ([]byte, error) {
	num := func(v float64) string {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return "null"
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return []byte(fmt.Sprintf(`{"x":%s,"median":%s,"min":%s,"max":%s,"n":%d}`,
		num(s.X), num(s.Median), num(s.Min), num(s.Max), s.N)), nil
}
