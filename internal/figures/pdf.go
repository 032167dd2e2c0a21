package figures

// A PDF canvas for gonum/plot whose text is Unicode: gonum's own vgpdf
// encodes text as Windows-1252, so λ, γ, −, ≤ and the like come out as
// mojibake. This canvas embeds each TrueType face once as a UTF-8 font
// (go-pdf/fpdf subsets it and writes its ToUnicode map), so the glyphs are
// drawn and text extraction (pdftotext) reads them back.

import (
	"bufio"
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"

	pdf "codeberg.org/go-pdf/fpdf"
	stdfnt "golang.org/x/image/font"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
)

type pdfState struct {
	fill, line color.Color
	width      vg.Length
}

// pdfCanvas implements vg.CanvasWriterTo on an fpdf document, in points,
// with the origin at the bottom left as vg expects.
type pdfCanvas struct {
	doc    *pdf.Fpdf
	w, h   vg.Length
	stack  []pdfState
	fonts  map[string]bool
	images int
	err    error
}

func newPDF(w, h vg.Length) *pdfCanvas {
	doc := pdf.NewCustom(&pdf.InitType{UnitStr: "pt", Size: pdf.SizeType{Wd: w.Points(), Ht: h.Points()}})
	doc.SetMargins(0, 0, 0)
	doc.SetAutoPageBreak(false, 0)
	doc.SetCompression(true)
	c := &pdfCanvas{doc: doc, w: w, h: h, stack: []pdfState{{fill: color.Black, line: color.Black}}, fonts: map[string]bool{}}
	doc.AddPage()
	c.Push()
	c.Translate(vg.Point{X: 0, Y: h})
	c.Scale(1, -1)
	vg.Initialize(c)
	return c
}

func (c *pdfCanvas) top() *pdfState { return &c.stack[len(c.stack)-1] }

func (c *pdfCanvas) Size() (vg.Length, vg.Length) { return c.w, c.h }

func (c *pdfCanvas) SetLineWidth(w vg.Length) {
	c.top().width = w
	c.doc.SetLineWidth(w.Points())
}

func (c *pdfCanvas) SetLineDash(dashes []vg.Length, offs vg.Length) {
	ds := make([]float64, len(dashes))
	for i, d := range dashes {
		ds[i] = d.Points()
	}
	c.doc.SetDashPattern(ds, offs.Points())
}

func (c *pdfCanvas) SetColor(clr color.Color) {
	if clr == nil {
		clr = color.Black
	}
	c.top().fill, c.top().line = clr, clr
	r, g, b, a := clr.RGBA()
	if a == 0 {
		c.doc.SetAlpha(0, "Normal")
		return
	}
	// un-premultiply
	r8, g8, b8 := int(r*255/a), int(g*255/a), int(b*255/a)
	c.doc.SetFillColor(r8, g8, b8)
	c.doc.SetDrawColor(r8, g8, b8)
	c.doc.SetTextColor(r8, g8, b8)
	c.doc.SetAlpha(float64(a)/math.MaxUint16, "Normal")
}

func (c *pdfCanvas) Rotate(rad float64) { c.doc.TransformRotate(-rad*180/math.Pi, 0, 0) }

func (c *pdfCanvas) Translate(pt vg.Point) { c.doc.TransformTranslate(pt.X.Points(), pt.Y.Points()) }

func (c *pdfCanvas) Scale(x, y float64) { c.doc.TransformScale(x*100, y*100, 0, 0) }

func (c *pdfCanvas) Push() {
	c.stack = append(c.stack, *c.top())
	c.doc.TransformBegin()
}

func (c *pdfCanvas) Pop() {
	c.doc.TransformEnd()
	c.stack = c.stack[:len(c.stack)-1]
}

func (c *pdfCanvas) Stroke(p vg.Path) {
	if c.top().width > 0 {
		c.path(p, "D")
	}
}

func (c *pdfCanvas) Fill(p vg.Path) { c.path(p, "F") }

func (c *pdfCanvas) path(p vg.Path, style string) {
	var x0, y0 float64
	for _, comp := range p {
		switch comp.Type {
		case vg.MoveComp:
			x0, y0 = comp.Pos.X.Points(), comp.Pos.Y.Points()
			c.doc.MoveTo(x0, y0)
		case vg.LineComp:
			c.doc.LineTo(comp.Pos.X.Points(), comp.Pos.Y.Points())
		case vg.ArcComp:
			c.arc(comp, style)
		case vg.CurveComp:
			px, py := comp.Pos.X.Points(), comp.Pos.Y.Points()
			switch len(comp.Control) {
			case 1:
				c.doc.CurveTo(comp.Control[0].X.Points(), comp.Control[0].Y.Points(), px, py)
			case 2:
				c.doc.CurveBezierCubicTo(comp.Control[0].X.Points(), comp.Control[0].Y.Points(), comp.Control[1].X.Points(), comp.Control[1].Y.Points(), px, py)
			}
		case vg.CloseComp:
			c.doc.LineTo(x0, y0)
			c.doc.ClosePath()
		}
	}
	c.doc.DrawPath(style)
}

// arc draws an arc as cubic Bézier pieces of at most a quarter turn.
func (c *pdfCanvas) arc(comp vg.PathComp, style string) {
	cx, cy, r := comp.Pos.X.Points(), comp.Pos.Y.Points(), comp.Radius.Points()
	a0 := comp.Start
	n := int(math.Ceil(math.Abs(comp.Angle) / (math.Pi / 2)))
	if n == 0 {
		n = 1
	}
	da := comp.Angle / float64(n)
	k := 4.0 / 3 * math.Tan(da/4)
	c.doc.LineTo(cx+r*math.Cos(a0), cy+r*math.Sin(a0))
	for i := 0; i < n; i++ {
		a1 := a0 + da
		x0, y0 := math.Cos(a0), math.Sin(a0)
		x1, y1 := math.Cos(a1), math.Sin(a1)
		c.doc.CurveBezierCubicTo(cx+r*(x0-k*y0), cy+r*(y0+k*x0), cx+r*(x1+k*y1), cy+r*(y1-k*x1), cx+r*x1, cy+r*y1)
		a0 = a1
	}
}

// FillString writes str with its baseline starting at pt, as UTF-8 text
// in the face's embedded font.
func (c *pdfCanvas) FillString(fnt font.Face, pt vg.Point, str string) {
	if fnt.Font.Size == 0 || str == "" {
		return
	}
	name := fontName(fnt.Font)
	if !c.fonts[name] {
		var raw bytes.Buffer
		if _, err := fnt.Face.WriteSourceTo(nil, &raw); err != nil {
			c.err = fmt.Errorf("figure: reading font %s: %w", name, err)
			return
		}
		c.doc.AddUTF8FontFromBytes(name, "", raw.Bytes())
		c.fonts[name] = true
	}
	c.doc.SetFont(name, "", fnt.Font.Size.Points())
	c.Push()
	c.Translate(pt)
	// fpdf writes text y-down: flip back around the baseline
	c.Scale(1, -1)
	c.doc.Text(0, 0, str)
	c.Pop()
}

func fontName(f font.Font) string {
	n := string(f.Typeface) + "-" + string(f.Variant)
	if f.Weight == stdfnt.WeightBold {
		n += "-Bold"
	}
	if f.Style == stdfnt.StyleItalic {
		n += "-Italic"
	}
	return n
}

func (c *pdfCanvas) DrawImage(rect vg.Rectangle, img image.Image) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		c.err = fmt.Errorf("figure: encoding an image: %w", err)
		return
	}
	c.images++
	name := fmt.Sprintf("img%d", c.images)
	opts := pdf.ImageOptions{ImageType: "png"}
	c.doc.RegisterImageOptionsReader(name, opts, &buf)
	// the image's top left, in the flipped frame
	c.Push()
	c.Translate(vg.Point{X: rect.Min.X, Y: rect.Max.Y})
	c.Scale(1, -1)
	sz := rect.Size()
	c.doc.ImageOptions(name, 0, 0, sz.X.Points(), sz.Y.Points(), false, opts, 0, "")
	c.Pop()
}

// WriteTo writes the PDF document.
func (c *pdfCanvas) WriteTo(w io.Writer) (int64, error) {
	if c.err != nil {
		return 0, c.err
	}
	c.Pop()
	c.doc.Close()
	if err := c.doc.Error(); err != nil {
		return 0, fmt.Errorf("figure: writing the PDF: %w", err)
	}
	cw := &countWriter{w: w}
	bw := bufio.NewWriter(cw)
	if err := c.doc.Output(bw); err != nil {
		return cw.n, err
	}
	return cw.n, bw.Flush()
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
