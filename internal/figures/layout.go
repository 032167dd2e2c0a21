package figures

import (
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// cell is one panel's plot, with the rooms its tickers fit their labels
// into and, for a heat map, its colour bar.
type cell struct {
	pl   *plot.Plot
	x, y *room
	cb   *colourBar
	// title is the panel's title unwrapped
	title string
}

// gridLayout places the panels on one grid: every plotting area (the
// data's rectangle) of the figure has the same width and height, those of
// a row share their top and bottom edges and those of a column their left
// and right edges, whatever their titles, tick labels or colour bars take.
// The margins of a column are the widest its panels need, those of a row
// the tallest.
type gridLayout struct {
	cells                                [][]*cell
	padX, padY                           vg.Length
	padTop, padBottom, padLeft, padRight vg.Length
	left, right, bottom, top             []vg.Length
	dataW, dataH                         vg.Length
	width, height                        vg.Length
	// aspect is the plotting areas' height over their width
	aspect float64
	// gridH is the height the grid takes
	gridH vg.Length
}

// margins measures every panel's margins on a provisional tile and sets
// the grid's column and row margins and the plotting areas' size.
func (g *gridLayout) margins(dc draw.Canvas) {
	rows, cols := len(g.cells), len(g.cells[0])
	W, H := dc.Max.X-dc.Min.X, dc.Max.Y-dc.Min.Y
	tw := (W - g.padLeft - g.padRight - g.padX*vg.Length(cols-1)) / vg.Length(cols)
	th := (H - g.padTop - g.padBottom - g.padY*vg.Length(rows-1)) / vg.Length(rows)
	g.left, g.right = make([]vg.Length, cols), make([]vg.Length, cols)
	g.bottom, g.top = make([]vg.Length, rows), make([]vg.Length, rows)
	for r, row := range g.cells {
		for c, cl := range row {
			if cl == nil {
				continue
			}
			l, rt, b, t := cl.own(dc, tw, th)
			if cl.cb != nil {
				rt += cl.cb.width()
			}
			g.left[c], g.right[c] = max(g.left[c], l), max(g.right[c], rt)
			g.bottom[r], g.top[r] = max(g.bottom[r], b), max(g.top[r], t)
		}
	}
	sum := func(v []vg.Length) (s vg.Length) {
		for _, x := range v {
			s += x
		}
		return s
	}
	g.dataW = (W - g.padLeft - g.padRight - g.padX*vg.Length(cols-1) - sum(g.left) - sum(g.right)) / vg.Length(cols)
	g.dataH = g.dataW * vg.Length(g.aspect)
	// tall enough for every y-axis label along it (gonum/plot would
	// otherwise pad the plotting area around a label that sticks out)
	for _, row := range g.cells {
		for _, cl := range row {
			if cl != nil && cl.pl.Y.Label.Text != "" {
				st := cl.pl.Y.Label.TextStyle
				fc := font.DefaultCache.Lookup(st.Font, st.Font.Size)
				w := fc.Width(cl.pl.Y.Label.Text)
				g.dataH = max(g.dataH, w+st.Font.Size)
			}
		}
	}
	g.width, g.height = W, H
	g.gridH = g.padTop + g.padBottom + g.padY*vg.Length(rows-1) + sum(g.top) + sum(g.bottom) + vg.Length(rows)*g.dataH
}

// own is a panel's margins around its plotting area on a tile tw × th:
// left (the y-axis), right, bottom (the x-axis) and top (the title).
func (cl *cell) own(dc draw.Canvas, tw, th vg.Length) (l, r, b, t vg.Length) {
	cv := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{Max: vg.Point{X: tw, Y: th}}}
	d := cl.pl.DataCanvas(cv)
	return d.Min.X, tw - d.Max.X, d.Min.Y, th - d.Max.Y
}

// freeze fits every axis's ticks to the plotting area's size and keeps
// them, so that the margins measured next are the margins drawn; dc is a
// provisional canvas of the grid's width (its height only sizes the
// tiles the margins are measured on).
func (g *gridLayout) freeze(dc draw.Canvas) {
	g.margins(dc)
	for _, row := range g.cells {
		for _, cl := range row {
			if cl == nil {
				continue
			}
			if cl.x != nil {
				cl.x.length = g.dataW
			}
			if cl.y != nil {
				cl.y.length = g.dataH
			}
			for _, ax := range []*plot.Axis{&cl.pl.X, &cl.pl.Y} {
				ax.Tick.Marker = plot.ConstantTicks(ax.Tick.Marker.Ticks(ax.Min, ax.Max))
			}
			cl.pl.Add(newFrame(cl.pl))
		}
	}
	g.margins(dc)
	g.wrapTitles(dc)
	g.margins(dc)
}

// wrapTitles breaks each panel's title into lines that fit above its
// column: gonum/plot centres a title over the panel's canvas, which the
// column's margins may leave off-centre.
func (g *gridLayout) wrapTitles(dc draw.Canvas) {
	rows, cols := len(g.cells), len(g.cells[0])
	tw := (g.width - g.padLeft - g.padRight - g.padX*vg.Length(cols-1)) / vg.Length(cols)
	th := (g.height - g.padTop - g.padBottom - g.padY*vg.Length(rows-1)) / vg.Length(rows)
	for _, row := range g.cells {
		for c, cl := range row {
			if cl == nil || cl.title == "" {
				continue
			}
			l, r, _, _ := cl.own(dc, tw, th)
			// the canvas's centre, from the column's left edge
			centre := g.left[c] - l + (l+g.dataW+r)/2
			right := g.left[c] + g.dataW + g.right[c]
			w := 2 * min(centre, right-centre)
			cl.pl.Title.Text = strings.Join(wrapText(cl.pl.Title.TextStyle, cl.title, w), "\n")
		}
	}
}

// canvas returns the canvas to draw panel (r, c) on and its plotting
// area.
func (g *gridLayout) canvas(dc draw.Canvas, r, c int) (draw.Canvas, draw.Canvas) {
	x := dc.Min.X + g.padLeft
	for k := 0; k < c; k++ {
		x += g.left[k] + g.dataW + g.right[k] + g.padX
	}
	x += g.left[c]
	y := dc.Max.Y - g.padTop
	for k := 0; k < r; k++ {
		y -= g.top[k] + g.dataH + g.bottom[k] + g.padY
	}
	y -= g.top[r]
	target := vg.Rectangle{Min: vg.Point{X: x, Y: y - g.dataH}, Max: vg.Point{X: x + g.dataW, Y: y}}
	cl := g.cells[r][c]
	W, H := g.width, g.height
	tw := (W - g.padLeft - g.padRight - g.padX*vg.Length(len(g.cells[0])-1)) / vg.Length(len(g.cells[0]))
	th := (H - g.padTop - g.padBottom - g.padY*vg.Length(len(g.cells)-1)) / vg.Length(len(g.cells))
	l, rt, b, t := cl.own(dc, tw, th)
	cv := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
		Min: vg.Point{X: target.Min.X - l, Y: target.Min.Y - b},
		Max: vg.Point{X: target.Max.X + rt, Y: target.Max.Y + t}}}
	// The margins a plot takes could still depend a little on its size:
	// settle the canvas so that the plotting area is the target.
	for k := 0; k < 4; k++ {
		d := cl.pl.DataCanvas(cv)
		cv.Min.X += target.Min.X - d.Min.X
		cv.Max.X += target.Max.X - d.Max.X
		cv.Min.Y += target.Min.Y - d.Min.Y
		cv.Max.Y += target.Max.Y - d.Max.Y
	}
	return cv, draw.Canvas{Canvas: dc.Canvas, Rectangle: target}
}

// frame reserves room around a plot's plotting area for the tick labels
// that overhang its ends: half the widest x-axis label left and right,
// half the tallest y-axis label above and below. gonum/plot pads a
// plotting area only for glyphs that would stick out of its canvas, which
// makes the area jump as the canvas grows; with the frame's glyphs always
// the outermost, the plotting area is the canvas less fixed margins.
type frame struct{ l, r, b, t vg.Length }

func newFrame(pl *plot.Plot) frame {
	var f frame
	for _, t := range pl.X.Tick.Marker.Ticks(pl.X.Min, pl.X.Max) {
		if t.Label != "" {
			w := pl.X.Tick.Label.Rectangle(t.Label).Size().X/2 + 1
			f.l, f.r = max(f.l, w), max(f.r, w)
		}
	}
	for _, t := range pl.Y.Tick.Marker.Ticks(pl.Y.Min, pl.Y.Max) {
		if t.Label != "" {
			h := pl.Y.Tick.Label.Rectangle(t.Label).Size().Y/2 + 1
			f.b, f.t = max(f.b, h), max(f.t, h)
		}
	}
	return f
}

// Plot draws nothing.
func (frame) Plot(draw.Canvas, *plot.Plot) {}

// GlyphBoxes are the four margins, at the ends of the axes.
func (f frame) GlyphBoxes(*plot.Plot) []plot.GlyphBox {
	return []plot.GlyphBox{
		{X: 0, Y: 0.5, Rectangle: vg.Rectangle{Min: vg.Point{X: -f.l}, Max: vg.Point{X: 0}}},
		{X: 1, Y: 0.5, Rectangle: vg.Rectangle{Min: vg.Point{X: 0}, Max: vg.Point{X: f.r}}},
		{X: 0.5, Y: 0, Rectangle: vg.Rectangle{Min: vg.Point{Y: -f.b}, Max: vg.Point{Y: 0}}},
		{X: 0.5, Y: 1, Rectangle: vg.Rectangle{Min: vg.Point{Y: 0}, Max: vg.Point{Y: f.t}}},
	}
}
