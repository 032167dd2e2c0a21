// Package figures draws fwlab's figures as files (SVG, PNG or PDF) with
// gonum.org/v1/plot. It takes plain data: named series with an optional
// band (median with min–max over replications, say), and heat maps of
// matrices, laid out as panels on a grid. What the panels hold is decided by
// the caller (the paper's figures in the solve command, a run's traces in
// FromRun); the data fed to the plot is a Figure value, which encodes as
// JSON, so tests can pin the numbers without comparing pictures.
package figures

import (
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Floats is a list of numbers in which NaN marks a missing value (a gap in
// a line, no band at that abscissa). In JSON a missing value is null.
type Floats []float64

// MarshalJSON writes NaN and infinities as null.
func (f Floats) MarshalJSON() ([]byte, error) {
	if f == nil {
		return []byte("null"), nil
	}
	b := []byte{'['}
	for i, v := range f {
		if i > 0 {
			b = append(b, ',')
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			b = append(b, "null"...)
		} else {
			b = strconv.AppendFloat(b, v, 'g', -1, 64)
		}
	}
	return append(b, ']'), nil
}

// UnmarshalJSON reads null as NaN.
func (f *Floats) UnmarshalJSON(b []byte) error {
	var raw []*float64
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if raw == nil {
		*f = nil
		return nil
	}
	out := make(Floats, len(raw))
	for i, p := range raw {
		if p == nil {
			out[i] = math.NaN()
		} else {
			out[i] = *p
		}
	}
	*f = out
	return nil
}

// Series is one named curve: Y against X, drawn as a line broken where Y is
// missing, and, when Lo and Hi are given (same length as X), a shaded band
// between them.
type Series struct {
	Name string `json:"name"`
	X    Floats `json:"x"`
	Y    Floats `json:"y"`
	Lo   Floats `json:"lo,omitempty"`
	Hi   Floats `json:"hi,omitempty"`
}

// Lines is a panel of series against a common x-axis. With LogY the
// y-axis is logarithmic (values ≤ 0 are left out).
type Lines struct {
	XLabel string   `json:"x_label"`
	YLabel string   `json:"y_label"`
	LogY   bool     `json:"log_y,omitempty"`
	Series []Series `json:"series"`
}

// Heat is a panel showing a matrix, row 0 at the top, on a diverging colour
// scale symmetric about zero (blue negative, light grey zero, red positive;
// NaN, a missing value, white).
type Heat struct {
	Z [][]float64 `json:"z"`
}

// Panel is one cell of the figure's grid: either Lines or Heat.
type Panel struct {
	Title string `json:"title"`
	Lines *Lines `json:"lines,omitempty"`
	Heat  *Heat  `json:"heat,omitempty"`
}

// Figure is a titled grid of panels, filled row by row, Cols per row.
type Figure struct {
	Title  string  `json:"title"`
	Cols   int     `json:"cols"`
	Panels []Panel `json:"panels"`
}

// Formats are the file formats Render writes.
var Formats = []string{"svg", "png", "pdf"}

// FormatOf returns the format named by a file name's extension.
func FormatOf(path string) (string, error) {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	for _, f := range Formats {
		if ext == f {
			return f, nil
		}
	}
	return "", fmt.Errorf("the file name must end in .svg, .png or .pdf to choose the figure's format, got %q", filepath.Base(path))
}

// Validate checks that the figure can be drawn: at least one panel, each
// with exactly one of Lines and Heat, series with matching lengths and
// rectangular matrices.
func (f *Figure) Validate() error {
	if len(f.Panels) == 0 {
		return fmt.Errorf("figure: no panels to draw")
	}
	if f.Cols < 0 {
		return fmt.Errorf("figure: cols must be at least 1 (or 0 for a single row), got %d", f.Cols)
	}
	for i, p := range f.Panels {
		if (p.Lines == nil) == (p.Heat == nil) {
			return fmt.Errorf("figure: panel %d (%q) must hold either lines or a heat map", i, p.Title)
		}
		if p.Lines != nil {
			for _, s := range p.Lines.Series {
				if len(s.Y) != len(s.X) {
					return fmt.Errorf("figure: panel %d series %q: %d x values, %d y values", i, s.Name, len(s.X), len(s.Y))
				}
				if (s.Lo == nil) != (s.Hi == nil) || (s.Lo != nil && (len(s.Lo) != len(s.X) || len(s.Hi) != len(s.X))) {
					return fmt.Errorf("figure: panel %d series %q: the band needs lo and hi, each with one value per x", i, s.Name)
				}
			}
		}
		if p.Heat != nil {
			if len(p.Heat.Z) == 0 || len(p.Heat.Z[0]) == 0 {
				return fmt.Errorf("figure: panel %d (%q): empty matrix", i, p.Title)
			}
			for r, row := range p.Heat.Z {
				if len(row) != len(p.Heat.Z[0]) {
					return fmt.Errorf("figure: panel %d (%q): row %d has %d values, row 0 has %d", i, p.Title, r, len(row), len(p.Heat.Z[0]))
				}
			}
		}
	}
	return nil
}

// Colours of the series, in order (colour-blind safe, Okabe–Ito).
var colours = []color.RGBA{
	{0, 114, 178, 255},   // blue
	{213, 94, 0, 255},    // vermillion
	{0, 158, 115, 255},   // green
	{204, 121, 167, 255}, // purple
	{230, 159, 0, 255},   // orange
	{86, 180, 233, 255},  // sky
	{0, 0, 0, 255},       // black
}

// Colour returns the colour of the i-th series of a panel.
func Colour(i int) color.RGBA { return colours[i%len(colours)] }

// Render draws the figure in the given format (svg, png or pdf) to w. A
// panel is about 4.5 × 3.4 inches.
func (f *Figure) Render(w io.Writer, format string) error {
	if err := f.Validate(); err != nil {
		return err
	}
	cols := f.Cols
	if cols == 0 || cols > len(f.Panels) {
		cols = len(f.Panels)
	}
	rows := (len(f.Panels) + cols - 1) / cols
	pw, ph := 4.5*vg.Inch, 3.4*vg.Inch
	titleH := vg.Length(0)
	if f.Title != "" {
		titleH = 0.45 * vg.Inch
	}
	width, height := vg.Length(cols)*pw, vg.Length(rows)*ph+titleH
	var c vg.CanvasWriterTo
	switch format {
	case "svg":
		c = vgsvg.New(width, height)
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(120), vgimg.UseBackgroundColor(color.White))}
	case "pdf":
		c = vgpdf.New(width, height)
	default:
		return fmt.Errorf("figure: format must be svg, png or pdf, got %q", format)
	}
	dc := draw.New(c)
	if f.Title != "" {
		fnt := plot.DefaultFont
		fnt.Size = vg.Points(13)
		sty := text.Style{Color: color.Black, Font: fnt, Handler: plot.DefaultTextHandler,
			XAlign: draw.XCenter, YAlign: draw.YCenter}
		dc.FillText(sty, vg.Point{X: width / 2, Y: height - titleH/2}, f.Title)
		dc = draw.Crop(dc, 0, 0, 0, -titleH)
	}
	grid := make([][]*plot.Plot, rows)
	for r := range grid {
		grid[r] = make([]*plot.Plot, cols)
	}
	for i, p := range f.Panels {
		pl, err := p.plot(i)
		if err != nil {
			return err
		}
		grid[i/cols][i%cols] = pl
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}
	canvases := plot.Align(grid, tiles, dc)
	for r := range grid {
		for col := range grid[r] {
			if grid[r][col] != nil {
				grid[r][col].Draw(canvases[r][col])
			}
		}
	}
	_, err := c.WriteTo(w)
	return err
}

func (p Panel) plot(i int) (*plot.Plot, error) {
	pl := plot.New()
	pl.Title.Text = p.Title
	if p.Heat != nil {
		return pl, p.Heat.draw(pl)
	}
	l := p.Lines
	pl.X.Label.Text, pl.Y.Label.Text = l.XLabel, l.YLabel
	if l.LogY {
		pl.Y.Scale = plot.LogScale{}
		pl.Y.Tick.Marker = logTicks{}
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
	for si, s := range l.Series {
		col := Colour(si)
		var thumbs []plot.Thumbnailer
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
				if len(thumbs) == 0 {
					thumbs = append(thumbs, poly) // the band in the legend too
				}
			}
		}
		var line *plotter.Line
		for _, run := range runs(len(s.X), func(j int) bool { return ok(s.Y[j]) && finite(s.X[j]) }) {
			pts := make(plotter.XYs, len(run))
			for k, j := range run {
				pts[k] = plotter.XY{X: s.X[j], Y: s.Y[j]}
			}
			ln, err := plotter.NewLine(pts)
			if err != nil {
				return nil, fmt.Errorf("figure: panel %d series %q: %w", i, s.Name, err)
			}
			ln.Color, ln.Width = col, vg.Points(1.5)
			pl.Add(ln)
			line = ln
		}
		if line == nil {
			// keep the series in the legend even with nothing to draw
			line = &plotter.Line{LineStyle: draw.LineStyle{Color: col, Width: vg.Points(1.5)}}
		}
		thumbs = append(thumbs, line)
		pl.Legend.Add(s.Name, thumbs...)
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
	return pl, nil
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

// grid adapts a matrix to plotter.GridXYZ with row 0 at the top.
// Values are divided by scale, so that the colour scale is always [−1, 1]
// whatever the magnitude (tiny or huge values alike).
type grid struct {
	z     [][]float64
	scale float64
}

func (g grid) Dims() (c, r int)   { return len(g.z[0]), len(g.z) }
func (g grid) Z(c, r int) float64 { return g.z[len(g.z)-1-r][c] / g.scale }
func (g grid) X(c int) float64    { return float64(c) }
func (g grid) Y(r int) float64    { return float64(r) }
func (g grid) Min() float64       { return -1 }
func (g grid) Max() float64       { return 1 }

func (h *Heat) draw(pl *plot.Plot) error {
	m := 0.0
	for _, row := range h.Z {
		for _, v := range row {
			if finite(v) {
				m = math.Max(m, math.Abs(v))
			}
		}
	}
	if m == 0 {
		m = 1
	}
	cm := moreland.SmoothBlueRed()
	cm.SetMin(-1)
	cm.SetMax(1)
	pal := cm.Palette(255)
	hm := plotter.NewHeatMap(grid{z: h.Z, scale: m}, pal)
	hm.NaN = color.White // missing values; zero is light grey
	// ±Inf take the ends of the scale
	hm.Underflow, hm.Overflow = pal.Colors()[0], pal.Colors()[len(pal.Colors())-1]
	pl.Add(hm)
	// Row and column indices as the axes (row 0 at the top).
	rows, cols := len(h.Z), len(h.Z[0])
	pl.Y.Label.Text = fmt.Sprintf("row (of %d)", rows)
	pl.Y.Tick.Marker = indexTicks{n: rows, flip: true}
	pl.X.Tick.Marker = indexTicks{n: cols}
	pl.X.Label.Text = fmt.Sprintf("column (of %d); blue −%.3g … red +%.3g", cols, m, m)
	return nil
}

// logTicks marks a logarithmic axis: ticks at 1–9 × 10^k, labels at the
// powers of ten (at most about eight of them, every second or fifth decade
// on a long range); on less than a decade also at 2 and 5 × 10^k, or every
// tick, or evenly spaced ticks on a very narrow range.
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []plot.Tick {
	if !(min > 0) || !(max > min) || math.IsInf(max, 0) {
		return nil
	}
	e0, e1 := int(math.Floor(math.Log10(min))), int(math.Ceil(math.Log10(max)))
	type tick struct {
		v    float64
		lead int
		e    int
	}
	var ts []tick
	for e := e0; e <= e1; e++ {
		for m := 1; m <= 9; m++ {
			if e == e1 && m > 1 {
				break
			}
			ts = append(ts, tick{float64(m) * math.Pow10(e), m, e})
		}
	}
	in := func(t tick) bool { return t.v >= min*(1-1e-12) && t.v <= max*(1+1e-12) }
	label := func(keep func(t tick) bool) ([]plot.Tick, int) {
		out := make([]plot.Tick, len(ts))
		n := 0
		for i, t := range ts {
			out[i].Value = t.v
			if keep(t) && in(t) {
				out[i].Label = strconv.FormatFloat(t.v, 'g', 2, 64)
				n++
			}
		}
		return out, n
	}
	decades := 0
	for _, t := range ts {
		if t.lead == 1 && in(t) {
			decades++
		}
	}
	if decades >= 2 {
		every := 1
		for _, k := range []int{1, 2, 3, 5, 10, 20, 50, 100} {
			every = k
			if decades/k <= 8 {
				break
			}
		}
		out, _ := label(func(t tick) bool { return t.lead == 1 && t.e%every == 0 })
		return out
	}
	if out, n := label(func(t tick) bool { return t.lead == 1 || t.lead == 2 || t.lead == 5 }); n >= 2 {
		return out
	}
	if out, n := label(func(tick) bool { return true }); n >= 2 {
		return out
	}
	return plot.DefaultTicks{}.Ticks(min, max)
}

// indexTicks labels the axis of a heat map with whole row or column
// indices (rows counted from the top when flip is set).
type indexTicks struct {
	n    int
	flip bool
}

func (t indexTicks) Ticks(min, max float64) []plot.Tick {
	step := 1
	for _, s := range []int{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000} {
		step = s
		if t.n/s <= 6 {
			break
		}
	}
	var out []plot.Tick
	for i := 0; i < t.n; i += step {
		v := float64(i)
		if t.flip {
			v = float64(t.n - 1 - i)
		}
		out = append(out, plot.Tick{Value: v, Label: strconv.Itoa(i)})
	}
	return out
}
