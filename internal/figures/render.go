package figures

import (
	"fmt"
	"image/color"
	"io"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

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
