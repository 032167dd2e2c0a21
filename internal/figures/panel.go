package figures

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strings"

	"github.com/fwlab/fwlab/internal/palette"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

func (p Panel) plot(i int, sz Size, styles map[string]int, pw vg.Length) (*cell, error) {
	pl := plot.New()
	style(pl, sz)
	pl.Title.Text = strings.Join(wrapText(pl.Title.TextStyle, "("+letter(i)+") "+p.Title, pw-2*sz.Text), "\n")
	cl := &cell{pl: pl, title: "(" + letter(i) + ") " + p.Title}
	if p.Heat != nil {
		cl.cb = newColourBar(p.Heat, sz)
		cl.x = &room{length: pw * 0.6, sty: pl.X.Tick.Label}
		cl.y = &room{length: pw * 0.5, vertical: true, sty: pl.Y.Tick.Label}
		return cl, p.Heat.draw(pl, cl)
	}
	l := p.Lines
	pl.X.Label.Text, pl.Y.Label.Text = l.XLabel, l.YLabel
	cl.x = &room{length: pw * 0.7, sty: pl.X.Tick.Label}
	cl.y = &room{length: pw * 0.5, vertical: true, sty: pl.Y.Tick.Label}
	pl.X.Tick.Marker = linTicks{r: cl.x}
	pl.Y.Tick.Marker = linTicks{r: cl.y}
	if l.LogY {
		pl.Y.Scale = plot.LogScale{}
		pl.Y.Tick.Marker = logTicks{cl.y}
	}
	pl.Add(plotter.NewGrid())
	ok := func(y float64) bool { return !math.IsNaN(y) && !math.IsInf(y, 0) && (!l.LogY || y > 0) }
	// Axis ranges must stay finite: values beyond ±1e300 cannot be drawn.
	for _, s := range l.Series {
		for _, v := range []Floats{s.X, s.Y, s.Lo, s.Hi} {
			for _, y := range v {
				if finite(y) && math.Abs(y) > maxDrawable {
					return nil, fmt.Errorf("figure: panel %d series %q: the value %g is beyond ±%g and cannot be drawn", i, s.Name, y, maxDrawable)
				}
			}
		}
	}
	for _, s := range l.Series {
		si := styles[s.Name]
		col := Colour(si)
		if s.Lo != nil {
			band := color.NRGBA{col.R, col.G, col.B, 64}
			for _, run := range runs(len(s.X), func(j int) bool { return ok(s.Lo[j]) && ok(s.Hi[j]) && finite(s.X[j]) }) {
				pts := make(plotter.XYs, 0, 2*len(run))
				for _, j := range run {
					pts = append(pts, plotter.XY{X: s.X[j], Y: s.Lo[j]})
				}
				for k := len(run) - 1; k >= 0; k-- {
					j := run[k]
					pts = append(pts, plotter.XY{X: s.X[j], Y: s.Hi[j]})
				}
				poly, err := plotter.NewPolygon(pts)
				if err != nil {
					return nil, fmt.Errorf("figure: panel %d series %q band: %w", i, s.Name, err)
				}
				poly.Color, poly.LineStyle.Width = band, 0
				pl.Add(poly)
			}
		}
		ls := seriesLine(si, sz)
		for _, run := range splitGaps(s.X, runs(len(s.X), func(j int) bool { return ok(s.Y[j]) && finite(s.X[j]) })) {
			pts := make(plotter.XYs, len(run))
			for k, j := range run {
				pts[k] = plotter.XY{X: s.X[j], Y: s.Y[j]}
			}
			if len(pts) == 1 {
				// a lone evaluated point: a dot, not an invisible line
				sc, err := plotter.NewScatter(pts)
				if err != nil {
					return nil, fmt.Errorf("figure: panel %d series %q: %w", i, s.Name, err)
				}
				sc.GlyphStyle = draw.GlyphStyle{Color: ls.Color, Radius: ls.Width * 1.2, Shape: draw.CircleGlyph{}}
				pl.Add(sc)
				continue
			}
			ln, err := plotter.NewLine(pts)
			if err != nil {
				return nil, fmt.Errorf("figure: panel %d series %q: %w", i, s.Name, err)
			}
			ln.LineStyle = ls
			pl.Add(ln)
		}
	}
	// Axis ranges set here, always of some width: the plot's own
	// autoscaling breaks on a single value of large magnitude.
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range l.Series {
		for _, v := range []Floats{s.Y, s.Lo, s.Hi} {
			for j, y := range v {
				if ok(y) && finite(s.X[j]) {
					ylo, yhi = math.Min(ylo, y), math.Max(yhi, y)
					xlo, xhi = math.Min(xlo, s.X[j]), math.Max(xhi, s.X[j])
				}
			}
		}
	}
	pl.X.Min, pl.X.Max = span(xlo, xhi, false)
	pl.Y.Min, pl.Y.Max = span(ylo, yhi, l.LogY)
	pl.Legend.Top = true
	return cl, nil
}

// span widens a data range [lo, hi] (empty when lo > hi) into an axis
// range of some width: a relative 1e-6 at least, a decade each way on a
// log axis, [0, 1] (or [0.1, 1]) with no data.
func span(lo, hi float64, log bool) (float64, float64) {
	if log {
		if lo > hi {
			return 0.1, 1
		}
		lo, hi = math.Max(lo, 1e-300), math.Min(hi, 1e300)
		if hi < lo*(1+1e-6) {
			lo, hi = math.Max(lo/10, 1e-300), math.Min(hi*10, 1e300)
		}
		return lo, hi
	}
	if lo > hi {
		return 0, 1
	}
	if w := 1e-6 * math.Max(math.Abs(lo), math.Abs(hi)); hi-lo <= w {
		if w == 0 {
			w = 1e-6
		}
		if w < 1e-300 {
			w = 1e-300
		}
		lo, hi = lo-w, hi+w
	}
	return lo, hi
}

// maxDrawable bounds the magnitude of the values of a line panel.
const maxDrawable = 1e300

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// seriesLine is the i-th series' line: its palette colour and dash
// pattern (so that series differ in print without colour), the width
// growing with the text.
func seriesLine(i int, sz Size) draw.LineStyle {
	w := vg.Points(math.Max(1, float64(sz.Text)/7))
	var dashes []vg.Length
	for _, d := range palette.Dashes(i) {
		dashes = append(dashes, vg.Points(d)*w/vg.Points(1))
	}
	return draw.LineStyle{Color: Colour(i), Width: w, Dashes: dashes}
}

// splitGaps breaks runs of points where consecutive abscissae are far
// apart (more than 4 % of the series' span and more than 6 times the
// median spacing): a stretch that was not evaluated is left blank rather
// than bridged by a straight line that would look like data.
func splitGaps(x Floats, rs [][]int) [][]int {
	var d []float64
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range rs {
		for k, j := range r {
			lo, hi = math.Min(lo, x[j]), math.Max(hi, x[j])
			if k > 0 {
				d = append(d, x[j]-x[r[k-1]])
			}
		}
	}
	if len(d) < 4 {
		return rs
	}
	sort.Float64s(d)
	limit := math.Max(6*d[len(d)/2], 0.04*(hi-lo))
	var out [][]int
	for _, r := range rs {
		start := 0
		for k := 1; k < len(r); k++ {
			if x[r[k]]-x[r[k-1]] > limit {
				out = append(out, r[start:k])
				start = k
			}
		}
		out = append(out, r[start:])
	}
	return out
}

// runs splits 0..n-1 into maximal runs of consecutive indices where keep
// holds.
func runs(n int, keep func(int) bool) [][]int {
	var out [][]int
	var cur []int
	for j := 0; j < n; j++ {
		if keep(j) {
			cur = append(cur, j)
			continue
		}
		if len(cur) > 0 {
			out = append(out, cur)
			cur = nil
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}
