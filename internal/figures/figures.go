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
	"sort"
	"strconv"
	"strings"

	"github.com/fwlab/fwlab/internal/palette"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
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

// Colour returns the colour of the i-th series of a panel (the palette
// the dashboard's charts share).
func Colour(i int) color.RGBA { return palette.Colour(i) }

// Size is a figure's size preset: its width and the size of its text.
type Size struct {
	Name    string
	Width   vg.Length
	Text    vg.Length // titles, axis labels and the legend
	Tick    vg.Length // tick labels and the colour bars' labels
	MaxCols int       // panels per row at most
}

// Sizes are the presets of -figsize: a journal column, a page's text
// width (both with 8–9 pt text, as set in a paper) and a 16:9 slide.
var Sizes = map[string]Size{
	"column": {Name: "column", Width: 3.5 * vg.Inch, Text: 8, Tick: 8, MaxCols: 2},
	"page":   {Name: "page", Width: 7 * vg.Inch, Text: 9, Tick: 8, MaxCols: 4},
	"slide":  {Name: "slide", Width: 13.3 * vg.Inch, Text: 16, Tick: 14, MaxCols: 4},
}

// DefaultSize is the preset Render uses.
const DefaultSize = "page"

// SizeNamed returns the preset of a name (column, page or slide).
func SizeNamed(name string) (Size, error) {
	if sz, ok := Sizes[name]; ok {
		return sz, nil
	}
	return Size{}, fmt.Errorf("the figure size must be column (3.5 in), page (7 in) or slide (13.3 in), got %q", name)
}

// face is the figures' typeface: Liberation Sans carries every glyph the
// titles use (λ, γ, −, ≤, ·, –, ρ, α, ×), and is embedded in every format.
var face = font.Font{Typeface: "Liberation", Variant: "Sans"}

// textStyle is the style of text of the given size.
func textStyle(size vg.Length) text.Style {
	return text.Style{Color: color.Black, Font: font.From(face, size), Handler: plot.DefaultTextHandler}
}

// Render draws the figure at the default size (a page's width) in the
// given format (svg, png or pdf) to w.
func (f *Figure) Render(w io.Writer, format string) error {
	return f.RenderSize(w, format, Sizes[DefaultSize])
}

// RenderSize draws the figure at a size preset: panels on one grid (their
// plotting areas aligned), lettered (a), (b), … in reading order, each
// about 3:4 high, the figure's width the preset's; text at the preset's
// size, in a font embedded in the file (PDF text stays Unicode).
func (f *Figure) RenderSize(w io.Writer, format string, sz Size) error {
	if err := f.Validate(); err != nil {
		return err
	}
	cols := f.Cols
	if cols == 0 || cols > len(f.Panels) {
		cols = len(f.Panels)
	}
	if sz.MaxCols > 0 && cols > sz.MaxCols {
		cols = sz.MaxCols
	}
	rows := (len(f.Panels) + cols - 1) / cols
	width := sz.Width
	pw := width / vg.Length(cols)
	titleH := vg.Length(0)
	tsty := textStyle(sz.Text)
	tsty.XAlign, tsty.YAlign = draw.XCenter, draw.YTop
	var titleLines []string
	if f.Title != "" {
		titleLines = wrapText(tsty, f.Title, width-2*sz.Text)
		titleH = vg.Length(len(titleLines))*1.3*sz.Text + sz.Text
	}
	// One legend for the figure: a series keeps its colour and dash in
	// every panel, by its name.
	styles := map[string]int{}
	var entries []legendEntry
	for _, p := range f.Panels {
		if p.Lines == nil {
			continue
		}
		for _, se := range p.Lines.Series {
			if _, ok := styles[se.Name]; !ok {
				styles[se.Name] = len(styles)
				entries = append(entries, legendEntry{name: se.Name, line: seriesLine(styles[se.Name], sz), band: se.Lo != nil})
			}
		}
	}
	probe := draw.Canvas{Rectangle: vg.Rectangle{Max: vg.Point{X: width - 2*sz.Text, Y: 1000}}}
	legendH := figureLegend(probe, entries, sz, false)
	cells := make([][]*cell, rows)
	for r := range cells {
		cells[r] = make([]*cell, cols)
	}
	for i, p := range f.Panels {
		cl, err := p.plot(i, sz, styles, pw)
		if err != nil {
			return err
		}
		cells[i/cols][i%cols] = cl
	}
	// The grid is laid out first: its height follows from the plotting
	// areas' width (the figure's, less the margins) and their aspect.
	pad := sz.Text * 0.6
	lay := gridLayout{cells: cells, padX: pad * 1.5, padY: pad, padTop: pad / 2, padBottom: pad / 2, padLeft: pad / 2, padRight: pad, aspect: 0.62}
	lay.freeze(draw.Canvas{Rectangle: vg.Rectangle{Max: vg.Point{X: width, Y: vg.Length(rows) * pw * 0.78}}})
	height := lay.gridH + titleH + legendH
	var c vg.CanvasWriterTo
	switch format {
	case "svg":
		c = vgsvg.NewWith(vgsvg.UseWH(width, height), vgsvg.EmbedFonts(true))
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(200), vgimg.UseBackgroundColor(color.White))}
	case "pdf":
		c = newPDF(width, height)
	default:
		return fmt.Errorf("figure: format must be svg, png or pdf, got %q", format)
	}
	dc := draw.New(c)
	if f.Title != "" {
		for k, line := range titleLines {
			dc.FillText(tsty, vg.Point{X: width / 2, Y: height - sz.Text/2 - vg.Length(k)*1.3*sz.Text}, line)
		}
		dc = draw.Crop(dc, 0, 0, 0, -titleH)
	}
	if legendH > 0 {
		figureLegend(draw.Crop(dc, sz.Text, -sz.Text, 0, 0), entries, sz, true)
		dc = draw.Crop(dc, 0, 0, 0, -legendH)
	}
	for i := range f.Panels {
		cl := cells[i/cols][i%cols]
		cv, data := lay.canvas(dc, i/cols, i%cols)
		cl.pl.Draw(cv)
		if cl.cb != nil {
			cl.cb.draw(cv, data)
		}
	}
	_, err := c.WriteTo(w)
	return err
}

// wrapText breaks s at spaces into lines no wider than w (a word wider
// than w stays whole on its line).
func wrapText(sty text.Style, s string, w vg.Length) []string {
	var lines []string
	cur := ""
	for _, word := range strings.Fields(s) {
		try := word
		if cur != "" {
			try = cur + " " + word
		}
		if cur != "" && sty.Width(try) > w {
			lines = append(lines, cur)
			cur = word
			continue
		}
		cur = try
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

// letter is the panel letter of index i: a … z, then aa, ab, …
func letter(i int) string {
	if i < 26 {
		return string(rune('a' + i))
	}
	return letter(i/26-1) + letter(i%26)
}

// style sets a plot's text to the preset's sizes and typeface, keeping
// the alignments and rotations plot.New gives.
func style(pl *plot.Plot, sz Size) {
	set := func(st *text.Style, size vg.Length) {
		st.Font = font.From(face, size)
	}
	set(&pl.Title.TextStyle, sz.Text)
	pl.Title.Padding = sz.Text / 3
	for _, ax := range []*plot.Axis{&pl.X, &pl.Y} {
		set(&ax.Label.TextStyle, sz.Text)
		ax.Label.TextStyle.Handler = unboxed{text.Plain{Fonts: font.DefaultCache}}
		set(&ax.Tick.Label, sz.Tick)
		ax.Tick.Label.Handler = newSupText()
		ax.Padding = sz.Text / 4
		ax.Tick.Length = sz.Text / 3
		ax.Label.Padding = sz.Text / 4
	}
	set(&pl.Legend.TextStyle, sz.Text)
}

// legendEntry is a series of the figure's legend.
type legendEntry struct {
	name string
	line draw.LineStyle
	band bool
}

// figureLegend draws the figure's one legend, a centred row (wrapped when
// needed) of each series' line and name, at the top of dc; it returns the
// height it took.
func figureLegend(dc draw.Canvas, entries []legendEntry, sz Size, draw_ bool) vg.Length {
	if len(entries) == 0 {
		return 0
	}
	sty := textStyle(sz.Text)
	sty.YAlign = draw.YCenter
	thumb := 2.4 * sz.Text
	gap := sz.Text
	lineH := 1.6 * sz.Text
	W := dc.Max.X - dc.Min.X
	// lay out rows
	var rows [][]int
	var widths []vg.Length
	cur, w := []int{}, vg.Length(0)
	for i, e := range entries {
		ew := thumb + sz.Text/2 + sty.Width(e.name) + gap
		if len(cur) > 0 && w+ew > W {
			rows, widths = append(rows, cur), append(widths, w)
			cur, w = nil, 0
		}
		cur, w = append(cur, i), w+ew
	}
	rows, widths = append(rows, cur), append(widths, w)
	if !draw_ {
		return vg.Length(len(rows)) * lineH
	}
	for r, row := range rows {
		y := dc.Max.Y - lineH*vg.Length(r) - lineH/2
		x := dc.Min.X + (W-widths[r])/2
		for _, i := range row {
			e := entries[i]
			if e.band {
				c := e.line.Color.(color.RGBA)
				dc.FillPolygon(color.NRGBA{c.R, c.G, c.B, 64}, []vg.Point{{X: x, Y: y - sz.Text/3}, {X: x + thumb, Y: y - sz.Text/3}, {X: x + thumb, Y: y + sz.Text/3}, {X: x, Y: y + sz.Text/3}})
			}
			dc.StrokeLine2(e.line, x, y, x+thumb, y)
			dc.FillText(sty, vg.Point{X: x + thumb + sz.Text/2, Y: y}, e.name)
			x += thumb + sz.Text/2 + sty.Width(e.name) + gap
		}
	}
	return vg.Length(len(rows)) * lineH
}

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

func (h *Heat) draw(pl *plot.Plot, cl *cell) error {
	m := heatScale(h.Z)
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
	pl.Y.Label.Text = fmt.Sprintf("row of %d", rows)
	pl.Y.Tick.Marker = indexTicks{n: rows, flip: true, r: cl.y}
	pl.X.Tick.Marker = indexTicks{n: cols, r: cl.x}
	pl.X.Label.Text = fmt.Sprintf("column of %d", cols)
	return nil
}

// heatScale is the largest magnitude of a matrix's finite values (1 for
// none): its colours run from −scale (blue) to +scale (red).
func heatScale(z [][]float64) float64 {
	m := 0.0
	for _, row := range z {
		for _, v := range row {
			if finite(v) {
				m = math.Max(m, math.Abs(v))
			}
		}
	}
	if m == 0 {
		m = 1
	}
	return m
}

// colourBar is a heat map's colour scale, drawn beside its plotting area:
// a strip of the diverging map from −scale (bottom) to +scale (top),
// labelled at both ends and at zero; a scale far from 1 is written as
// mantissas with the common factor (×10^k) under the bar.
type colourBar struct {
	m      float64
	sty    text.Style
	labels []string
	factor string
	sz     Size
}

func newColourBar(h *Heat, sz Size) *colourBar {
	m := heatScale(h.Z)
	sty := textStyle(sz.Tick)
	sty.YAlign = draw.YCenter
	sty.Handler = newSupText()
	b := &colourBar{m: m, sty: sty, sz: sz}
	top := m
	if m >= 1e4 || m < 1e-2 {
		e := int(math.Floor(math.Log10(m)))
		top = m / math.Pow10(e)
		b.factor = "×" + decadeLabel(e)
	}
	b.labels = []string{FormatNumber(-top, 2), "0", FormatNumber(top, 2)}
	return b
}

// width is the room the bar and its labels take.
func (b *colourBar) width() vg.Length {
	w := vg.Length(0)
	for _, l := range append(b.labels, b.factor) {
		w = max(w, b.sty.Width(l))
	}
	return b.sz.Text*1.5 + w
}

// draw puts the bar right of the plotting area da, within c.
func (b *colourBar) draw(c, da draw.Canvas) {
	cm := moreland.SmoothBlueRed()
	cm.SetMin(-1)
	cm.SetMax(1)
	x0 := da.Max.X + b.sz.Text/2
	x1 := x0 + b.sz.Text*0.7
	y0, y1 := da.Min.Y, da.Max.Y
	const n = 64
	for k := 0; k < n; k++ {
		v := -1 + 2*(float64(k)+0.5)/n
		col, err := cm.At(v)
		if err != nil {
			continue
		}
		ya := y0 + (y1-y0)*vg.Length(k)/n
		yb := y0 + (y1-y0)*vg.Length(k+1)/n + (y1-y0)/n/4 // overlap: no seams
		c.FillPolygon(col, []vg.Point{{X: x0, Y: ya}, {X: x1, Y: ya}, {X: x1, Y: min(yb, y1)}, {X: x0, Y: min(yb, y1)}})
	}
	c.StrokeLines(draw.LineStyle{Color: color.Gray{Y: 80}, Width: 0.4}, []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}, {X: x0, Y: y0}})
	for i, y := range []vg.Length{y0, (y0 + y1) / 2, y1} {
		c.FillText(b.sty, vg.Point{X: x1 + b.sz.Text/4, Y: y}, b.labels[i])
	}
	if b.factor != "" {
		c.FillText(b.sty, vg.Point{X: x0, Y: y0 - 1.3*b.sz.Tick}, b.factor)
	}
}

// indexTicks labels the axis of a heat map with whole row or column
// indices (rows counted from the top when flip is set), every 1, 2, 5,
// 10, … indices: the finest step whose labels fit the room, at most seven.
type indexTicks struct {
	n    int
	flip bool
	r    *room
}

func (t indexTicks) Ticks(min, max float64) []plot.Tick {
	steps := []int{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000}
	step := steps[len(steps)-1]
	for _, s := range steps {
		if (t.n-1)/s+1 > 7 {
			continue
		}
		var labels []string
		for i := 0; i < t.n; i += s {
			labels = append(labels, strconv.Itoa(i))
		}
		if t.r == nil || t.n <= 1 || t.r.fits(labels, vg.Length(float64(s)/float64(t.n))*t.r.length) {
			step = s
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
