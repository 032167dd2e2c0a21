package benchtable

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ScalingTable describes a table of how a cost grows with the size of an
// instance: each sub-benchmark of Bench is one size (one row, in the order
// of Expect, then of appearance), which reports its size as the metric
// Size; the fitted exponent e of a column is the slope of the
// least-squares line through (log size, log value) over the rows that
// have a positive value (value ∝ size^e).
type ScalingTable struct {
	Bench      string // benchmark whose sub-benchmarks are the sizes
	Title      string // markdown printed before the table
	SizeHeader string // header of the first column (the sub-benchmark's name)
	Size       string // unit of the metric giving the size
	FitLabel   string // first cell of the exponents' row
	// Expect names the sub-benchmarks (after "Bench/") that a full run
	// reports; one missing from the output gets a row that says so.
	Expect  []string
	Columns []ScalingColumn
	// UnitScale converts a metric to the quantity shown: a value is
	// multiplied by UnitScale[unit] (when set) on reading. Go's benchmark
	// output prints small metrics with seven decimals, so a benchmark
	// reports them in multiples (a relative error 3e-7 as 0.3 "best/1e-6",
	// UnitScale 1e-6).
	UnitScale map[string]float64
}

// ScalingColumn is one column of a ScalingTable.
type ScalingColumn struct {
	Header string
	// Units are the metrics shown: one is a value; several are integers
	// joined by "×" (the dimensions of an instance), never fitted.
	Units []string
	// Sci prints the value as 1.2e-08 rather than with three significant
	// digits.
	Sci bool
	// Int prints the value as a whole number (an iteration count).
	Int bool
	// Fit gives the column's fitted exponent in the last row.
	Fit bool
	// Iters and Best name the metrics of a run that may not reach the
	// column's accuracy: when the column's unit is missing, the cell says
	// "not reached in <Iters> iterations (best <Best>)".
	Iters, Best string
}

// ScalingRow is one size of a scaling table.
type ScalingRow struct {
	Name   string    // the sub-benchmark's name, after "Bench/"
	Run    bool      // the output has the sub-benchmark
	Size   float64   // the size metric's median
	Cells  []string  // one per column
	Values []float64 // one per column: the median, NaN when absent or joined
}

// Scaling is a scaling table filled from a benchmark output.
type Scaling struct {
	Table     *ScalingTable
	Rows      []ScalingRow
	Exponents []float64 // one per column, NaN when not fitted
}

// BuildScaling fills the table t from the results of out. A sub-benchmark
// of t.Bench without the size metric, or with a size that is not a
// positive finite number, is an error naming it.
func BuildScaling(out *Output, t *ScalingTable) (*Scaling, error) {
	s := &Scaling{Table: t}
	byName := map[string]*Result{}
	var order []string
	for _, r := range out.Results {
		sub, ok := strings.CutPrefix(r.Name, t.Bench+"/")
		if !ok || sub == "" {
			continue
		}
		if _, dup := byName[sub]; !dup {
			order = append(order, sub)
		}
		byName[sub] = r
	}
	names := append([]string(nil), t.Expect...)
	for _, n := range order {
		if !contains(names, n) {
			names = append(names, n)
		}
	}
	for _, n := range names {
		r := byName[n]
		if r == nil {
			s.Rows = append(s.Rows, missingRow(n, len(t.Columns)))
			continue
		}
		row, err := scalingRow(r, n, t)
		if err != nil {
			return nil, err
		}
		s.Rows = append(s.Rows, row)
	}
	s.Exponents = make([]float64, len(t.Columns))
	for c, col := range t.Columns {
		s.Exponents[c] = math.NaN()
		if col.Fit && len(col.Units) == 1 {
			var x, y []float64
			for _, row := range s.Rows {
				if row.Run {
					x, y = append(x, row.Size), append(y, row.Values[c])
				}
			}
			s.Exponents[c] = FitExponent(x, y)
		}
	}
	return s, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// missingRow is the row of an expected size the output does not have.
func missingRow(name string, cols int) ScalingRow {
	row := ScalingRow{Name: name, Size: math.NaN(), Cells: make([]string, cols), Values: make([]float64, cols)}
	for c := range row.Cells {
		row.Cells[c], row.Values[c] = "not run", math.NaN()
	}
	return row
}

// scalingRow fills the row of one size from its result.
func scalingRow(r *Result, name string, t *ScalingTable) (ScalingRow, error) {
	size, ok := t.median(r, t.Size)
	if !ok {
		return ScalingRow{}, fmt.Errorf("%s: no size metric %q", r.Name, t.Size)
	}
	if !(size > 0) || math.IsInf(size, 0) {
		return ScalingRow{}, fmt.Errorf("%s: size metric %q must be a positive finite number, got %v", r.Name, t.Size, size)
	}
	row := ScalingRow{Name: name, Run: true, Size: size}
	for _, col := range t.Columns {
		cell, v := scalingCell(r, &col, t)
		row.Cells = append(row.Cells, cell)
		row.Values = append(row.Values, v)
	}
	return row, nil
}

// scalingCell is one cell of a row and its value (NaN when the cell is not
// one value).
func scalingCell(r *Result, col *ScalingColumn, t *ScalingTable) (string, float64) {
	if len(col.Units) != 1 {
		parts := make([]string, len(col.Units))
		for i, u := range col.Units {
			v, ok := t.median(r, u)
			if !ok {
				return "—", math.NaN()
			}
			parts[i] = strconv.FormatFloat(v, 'f', -1, 64)
		}
		return strings.Join(parts, "×"), math.NaN()
	}
	unit := col.Units[0]
	v, ok := t.median(r, unit)
	if !ok {
		return notReached(r, col, t), math.NaN()
	}
	cell := FormatNumber(v)
	switch {
	case col.Sci:
		cell = fmt.Sprintf("%.1e", v)
	case col.Int:
		cell = FormatInt(v)
	}
	if n := len(r.Vals[unit]); n < r.Runs {
		cell += fmt.Sprintf(" (%d of %d runs)", n, r.Runs)
	}
	return cell, v
}

// notReached is the cell of a run that did not report the column's unit.
func notReached(r *Result, col *ScalingColumn, t *ScalingTable) string {
	if col.Iters == "" {
		return "—"
	}
	it, ok := t.median(r, col.Iters)
	if !ok {
		return "—"
	}
	s := fmt.Sprintf("not reached in %s iterations", FormatInt(it))
	if best, ok := t.median(r, col.Best); ok && col.Best != "" {
		s += fmt.Sprintf(" (best %.1e)", best)
	}
	return s
}

// median is the median of a metric of r in the table's units.
func (t *ScalingTable) median(r *Result, unit string) (float64, bool) {
	v, ok := r.Median(unit)
	if sc, set := t.UnitScale[unit]; ok && set {
		v *= sc
	}
	return v, ok
}

// FormatInt prints an iteration count: the integer nearest v.
func FormatInt(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) >= 1e15 {
		return FormatNumber(v)
	}
	return strconv.FormatInt(int64(math.Round(v)), 10)
}

// FitExponent is the slope of the least-squares line through
// (log x_i, log y_i) over the points with finite positive x_i and y_i;
// NaN with fewer than two distinct x.
func FitExponent(x, y []float64) float64 {
	var sx, sy, sxx, sxy, n float64
	for i := range x {
		if !positive(x[i]) || !positive(y[i]) {
			continue
		}
		lx, ly := math.Log(x[i]), math.Log(y[i])
		sx, sy, sxx, sxy, n = sx+lx, sy+ly, sxx+lx*lx, sxy+lx*ly, n+1
	}
	den := n*sxx - sx*sx
	if n < 2 || !(den > 1e-12*n*sxx) {
		return math.NaN()
	}
	return (n*sxy - sx*sy) / den
}

func positive(v float64) bool { return v > 0 && !math.IsInf(v, 0) }

// Markdown renders the table: its title, a row per size and, when a column
// is fitted, a last row with the exponents.
func (s *Scaling) Markdown() string {
	t := s.Table
	var b strings.Builder
	if t.Title != "" {
		b.WriteString(strings.TrimRight(t.Title, "\n") + "\n\n")
	}
	b.WriteString("| " + cell(t.SizeHeader))
	for _, c := range t.Columns {
		b.WriteString(" | " + cell(c.Header))
	}
	b.WriteString(" |\n|---" + strings.Repeat("|---", len(t.Columns)) + "|\n")
	for _, r := range s.Rows {
		b.WriteString("| " + cell(r.Name))
		for _, c := range r.Cells {
			b.WriteString(" | " + cell(c))
		}
		b.WriteString(" |\n")
	}
	fitted := false
	for _, col := range t.Columns {
		fitted = fitted || (col.Fit && len(col.Units) == 1)
	}
	if fitted {
		label := t.FitLabel
		if label == "" {
			label = "exponent e (∝ " + t.Size + "^e)"
		}
		b.WriteString("| " + cell(label))
		for c, col := range t.Columns {
			e := ""
			if col.Fit && len(col.Units) == 1 {
				e = "—"
				if !math.IsNaN(s.Exponents[c]) {
					e = strconv.FormatFloat(s.Exponents[c], 'f', 2, 64)
				}
			}
			b.WriteString(" | " + e)
		}
		b.WriteString(" |\n")
	}
	return b.String()
}
