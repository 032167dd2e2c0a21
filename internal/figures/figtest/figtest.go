// Package figtest reads a figure's SVG back as a reader sees it, for tests:
// every text with the box its glyphs take, and every plotting area (from
// its axis lines); and it lists what a reader would stumble on: texts that
// overlap or leave the figure, a title cut short with "…", plotting areas
// of a row (or a column) whose edges differ, and numbers written with
// trailing zeros or in e-notation.
package figtest

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	_ "gonum.org/v1/plot" // registers the Liberation fonts in font.DefaultCache
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
)

// Rect is a rectangle in points, the origin at the figure's bottom left.
type Rect struct{ MinX, MinY, MaxX, MaxY float64 }

func (r Rect) overlaps(o Rect, tol float64) bool {
	return math.Min(r.MaxX, o.MaxX)-math.Max(r.MinX, o.MinX) > tol &&
		math.Min(r.MaxY, o.MaxY)-math.Max(r.MinY, o.MinY) > tol
}

// Text is one text of the figure: a label with its exponent joined
// ("10^−3" for 10 with a raised −3), its size and its ink box.
type Text struct {
	S    string
	Size float64
	Box  Rect
	// Sup is the exponent part of S (after "^"), empty for none.
	Sup string
}

// Plain is the text as a PDF's text extraction reads it (the exponent
// right after its base).
func (t Text) Plain() string { return strings.Replace(t.S, "^", "", 1) }

// Doc is a figure read back.
type Doc struct {
	Width, Height float64
	Texts         []Text
	// Areas are the plotting areas: each x-axis line's horizontal span with
	// the vertical span of the y-axis line that meets it.
	XAxes, YAxes []Rect
}

var (
	sizeRe = regexp.MustCompile(`font-size:([0-9.]+)px`)
	moveRe = regexp.MustCompile(`^M([-0-9.e]+),([-0-9.e]+)L([-0-9.e]+),([-0-9.e]+)$`)
	vbRe   = regexp.MustCompile(`^0 0 ([0-9.e]+) ([0-9.e]+)$`)
)

// face is the figures' typeface (package figures draws every text in it).
var face = font.Font{Typeface: "Liberation", Variant: "Sans"}

// Ink is the part of the em a text's glyphs take above and below the
// baseline (capitals and digits reach 0.73 em, descenders 0.21 em).
const inkUp, inkDown = 0.75, 0.21

// Parse reads an SVG that gonum/plot's vgsvg canvas wrote.
func Parse(svg []byte) (*Doc, error) {
	d := &Doc{}
	texts, err := d.scan(svg)
	if err != nil {
		return nil, err
	}
	d.placeTexts(texts)
	return d, nil
}

// rawText is a text as the SVG writes it: its string, its baseline's
// position in the SVG's coordinates, its font size, and whether a group
// rotates it by 90°.
type rawText struct {
	s       string
	x, y    float64
	size    float64
	rotated bool
}

// scan reads the SVG's elements: the size from its viewBox, the axes from
// its paths, and its texts, which it returns in the order written.
func (d *Doc) scan(svg []byte) ([]rawText, error) {
	dec := xml.NewDecoder(bytes.NewReader(svg))
	var rot []bool // per open <g>: rotated by 90°
	var texts []rawText
	var cur *rawText
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("the SVG is not valid XML: %w", err)
		}
		switch v := tok.(type) {
		case xml.StartElement:
			attr := map[string]string{}
			for _, a := range v.Attr {
				attr[a.Name.Local] = a.Value
			}
			switch v.Name.Local {
			case "svg":
				m := vbRe.FindStringSubmatch(attr["viewBox"])
				if m == nil {
					return nil, fmt.Errorf("the SVG's viewBox %q", attr["viewBox"])
				}
				d.Width, _ = strconv.ParseFloat(m[1], 64)
				d.Height, _ = strconv.ParseFloat(m[2], 64)
			case "g":
				rot = append(rot, attr["transform"] == "rotate(90)")
			case "text":
				r := rawText{rotated: len(rot) > 0 && rot[len(rot)-1]}
				r.x, _ = strconv.ParseFloat(attr["x"], 64)
				r.y, _ = strconv.ParseFloat(attr["y"], 64)
				if m := sizeRe.FindStringSubmatch(attr["style"]); m != nil {
					r.size, _ = strconv.ParseFloat(m[1], 64)
				}
				if attr["transform"] != "scale(1, -1)" {
					return nil, fmt.Errorf("a text with the transform %q", attr["transform"])
				}
				cur = &r
			case "path":
				d.addAxis(attr)
			}
		case xml.EndElement:
			switch v.Name.Local {
			case "g":
				if len(rot) > 0 {
					rot = rot[:len(rot)-1]
				}
			case "text":
				if cur != nil {
					texts = append(texts, *cur)
				}
				cur = nil
			}
		case xml.CharData:
			if cur != nil {
				cur.s += string(v)
			}
		}
	}
	return texts, nil
}

// addAxis adds a path to the axes when it is one: a black line half a
// point wide, horizontal (an x axis) or vertical (a y axis), longer than
// 20 points.
func (d *Doc) addAxis(attr map[string]string) {
	st := attr["style"]
	if !strings.Contains(st, "stroke:#000000") || !strings.Contains(st, "stroke-width:0.5;") && !strings.HasSuffix(st, "stroke-width:0.5") {
		return
	}
	m := moveRe.FindStringSubmatch(attr["d"])
	if m == nil {
		return
	}
	var p [4]float64
	for i := range p {
		p[i], _ = strconv.ParseFloat(m[i+1], 64)
	}
	// the outer group flips y: path coordinates are from the bottom
	switch {
	case p[1] == p[3] && math.Abs(p[2]-p[0]) > 20:
		d.XAxes = append(d.XAxes, Rect{MinX: math.Min(p[0], p[2]), MaxX: math.Max(p[0], p[2]), MinY: p[1], MaxY: p[1]})
	case p[0] == p[2] && math.Abs(p[3]-p[1]) > 20:
		d.YAxes = append(d.YAxes, Rect{MinX: p[0], MaxX: p[0], MinY: math.Min(p[1], p[3]), MaxY: math.Max(p[1], p[3])})
	}
}

// placeTexts adds the texts to d.Texts with the boxes their glyphs take
// in the figure's coordinates, an exponent joined to the text before it.
func (d *Doc) placeTexts(texts []rawText) {
	for _, r := range texts {
		fc := font.DefaultCache.Lookup(face, vg.Length(r.size))
		w := float64(fc.Width(r.s))
		// scale(1, -1): the text's baseline is at (x, −y) in the figure's
		// coordinates (origin bottom left)
		var box Rect
		if r.rotated {
			// rotate(90): (a, b) → (−b, a); the text runs upwards, the
			// glyphs' tops to the left
			bx, by := r.y, r.x // (x, −y) rotated
			box = Rect{MinX: bx - inkUp*r.size, MaxX: bx + inkDown*r.size, MinY: by, MaxY: by + w}
		} else {
			bx, by := r.x, -r.y
			box = Rect{MinX: bx, MaxX: bx + w, MinY: by - inkDown*r.size, MaxY: by + inkUp*r.size}
		}
		t := Text{S: r.s, Size: r.size, Box: box}
		// an exponent: smaller, starting where the text before it ends,
		// raised above its baseline
		if n := len(d.Texts); n > 0 && !r.rotated {
			p := &d.Texts[n-1]
			if p.Sup == "" && r.size < p.Size && math.Abs(box.MinX-p.Box.MaxX) < 0.01 && box.MinY > p.Box.MinY {
				p.S += "^" + r.s
				p.Sup = r.s
				p.Box.MaxX = box.MaxX
				p.Box.MaxY = math.Max(p.Box.MaxY, box.MaxY)
				continue
			}
		}
		d.Texts = append(d.Texts, t)
	}
}

// number matches a text written as a number: digits with an optional
// point, sign and exponent (m×10^k, 10^k, 1e-05).
var number = regexp.MustCompile(`^[−-]?(\d+(\.\d*)?(×10\^[−-]?\d+)?|10\^[−-]?\d+|\d+(\.\d*)?[eE][-+]?\d+)$`)

// Numbers returns the texts written as numbers: tick labels and the
// colour bars' labels.
func (d *Doc) Numbers() []Text {
	var out []Text
	for _, t := range d.Texts {
		if number.MatchString(t.S) {
			out = append(out, t)
		}
	}
	return out
}

var (
	trailing = regexp.MustCompile(`\.\d*0($|×)|\.($|×)`)
	enote    = regexp.MustCompile(`\d[eE][-+]?\d`)
)

// Problems lists what a reader would stumble on, each as a sentence.
func (d *Doc) Problems() []string {
	var out []string
	for i, t := range d.Texts {
		if strings.Contains(t.S, "…") {
			out = append(out, fmt.Sprintf("text %q is cut short", t.S))
		}
		b := t.Box
		if b.MinX < -0.5 || b.MinY < -0.5 || b.MaxX > d.Width+0.5 || b.MaxY > d.Height+0.5 {
			out = append(out, fmt.Sprintf("text %q (%.1f–%.1f × %.1f–%.1f) leaves the figure (%.1f × %.1f)", t.S, b.MinX, b.MaxX, b.MinY, b.MaxY, d.Width, d.Height))
		}
		for _, u := range d.Texts[i+1:] {
			if t.Box.overlaps(u.Box, 0.2) {
				out = append(out, fmt.Sprintf("texts %q and %q overlap (%.1f–%.1f × %.1f–%.1f and %.1f–%.1f × %.1f–%.1f)", t.S, u.S,
					t.Box.MinX, t.Box.MaxX, t.Box.MinY, t.Box.MaxY, u.Box.MinX, u.Box.MaxX, u.Box.MinY, u.Box.MaxY))
			}
		}
	}
	for _, t := range d.Numbers() {
		if trailing.MatchString(t.S) {
			out = append(out, fmt.Sprintf("number %q has trailing zeros", t.S))
		}
		if enote.MatchString(t.S) {
			out = append(out, fmt.Sprintf("number %q is in e-notation, not ×10^k", t.S))
		}
	}
	// plotting areas: y-axis lines whose vertical spans overlap are a row
	// and must share top and bottom; x-axis lines whose horizontal spans
	// overlap are a column and must share left and right
	out = append(out, aligned(d.YAxes, true)...)
	out = append(out, aligned(d.XAxes, false)...)
	return out
}

// aligned groups lines whose spans overlap and checks each group's spans
// are one.
func aligned(lines []Rect, vertical bool) []string {
	span := func(r Rect) (float64, float64) {
		if vertical {
			return r.MinY, r.MaxY
		}
		return r.MinX, r.MaxX
	}
	var out []string
	for i, a := range lines {
		a0, a1 := span(a)
		for _, b := range lines[i+1:] {
			b0, b1 := span(b)
			if math.Min(a1, b1)-math.Max(a0, b0) <= 0 {
				continue // not in one row (column)
			}
			if math.Abs(a0-b0) > 0.05 || math.Abs(a1-b1) > 0.05 {
				what := "columns' plotting areas have left and right edges"
				if vertical {
					what = "row's plotting areas have bottom and top edges"
				}
				out = append(out, fmt.Sprintf("a %s %.2f–%.2f and %.2f–%.2f", what, a0, a1, b0, b1))
			}
		}
	}
	return out
}
