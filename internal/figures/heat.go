package figures

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

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
