package figures

import (
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

// Tick labels are written as a person would write them in a paper: nice
// values (1, 2 or 5 × 10^k) without trailing zeros, a true minus sign,
// and powers of ten as 10 with a raised exponent. An exponent is written
// in a label as "^" followed by it ("10^−3", "2×10^5"); supText draws it
// raised and smaller.

// minus is the typographic minus sign the labels use.
const minus = "−"

// superscript marks the start of a label's exponent.
const superscript = "^"

// supText is the text handler of tick labels: text.Plain, except that a
// single line holding "^" draws what follows it as a superscript (0.7 of
// the size, raised by 0.45 of the size).
type supText struct{ text.Plain }

func newSupText() supText { return supText{text.Plain{Fonts: font.DefaultCache}} }

const (
	supScale = 0.7
	supRaise = 0.45
)

func (h supText) split(txt string, fnt font.Font) (base, exp string, small font.Font, ok bool) {
	i := strings.Index(txt, superscript)
	if i < 0 || strings.Contains(txt, "\n") {
		return txt, "", fnt, false
	}
	small = fnt
	small.Size = fnt.Size * supScale
	return txt[:i], txt[i+len(superscript):], small, true
}

// Box is the box of the base and its raised exponent.
func (h supText) Box(txt string, fnt font.Font) (width, height, depth vg.Length) {
	base, exp, small, ok := h.split(txt, fnt)
	if !ok {
		return h.Plain.Box(txt, fnt)
	}
	w, ht, d := h.Plain.Box(base, fnt)
	ew, eh, _ := h.Plain.Box(exp, small)
	return w + ew, max(ht, fnt.Size*supRaise+eh), d
}

// Draw draws the base, then the exponent raised after it; alignment is
// of the whole label.
func (h supText) Draw(c vg.Canvas, txt string, sty text.Style, pt vg.Point) {
	base, exp, small, ok := h.split(txt, sty.Font)
	if !ok || sty.Rotation != 0 {
		h.Plain.Draw(c, strings.Replace(txt, superscript, "", 1), sty, pt)
		return
	}
	w, ht, d := h.Box(txt, sty.Font)
	bw, _, _ := h.Plain.Box(base, sty.Font)
	// the baseline of the whole label: alignments as text.Plain applies them
	x := pt.X + vg.Length(sty.XAlign)*w
	y := pt.Y + vg.Length(sty.YAlign)*(ht+d) + d
	fb := h.Fonts.Lookup(sty.Font, sty.Font.Size)
	fe := h.Fonts.Lookup(small, small.Size)
	c.SetColor(sty.Color)
	c.FillString(fb, vg.Point{X: x, Y: y}, base)
	c.FillString(fe, vg.Point{X: x + bw, Y: y + sty.Font.Size*supRaise}, exp)
}

// Plain returns a label without its superscript mark ("10^−3" → "10−3"),
// the text a PDF's text extraction reads.
func Plain(label string) string { return strings.Replace(label, superscript, "", 1) }

// trim drops trailing zeros after a decimal point, and the point itself.
func trim(s string) string {
	if strings.Contains(s, ".") && !strings.ContainsAny(s, "eE") {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	return s
}

// signed writes a leading minus as the typographic minus.
func signed(s string) string {
	if strings.HasPrefix(s, "-") {
		return minus + s[1:]
	}
	return s
}

// FormatNumber writes v with at most digits significant digits, no
// trailing zeros, a true minus sign, and as m×10^k when it is very large
// or very small (|v| ≥ 10⁶ or < 10⁻⁴).
func FormatNumber(v float64, digits int) string {
	if v == 0 || !finite(v) {
		if v == 0 {
			return "0"
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	a := math.Abs(v)
	if a >= 1e6 || a < 1e-4 {
		e := int(math.Floor(math.Log10(a)))
		m := v / math.Pow10(e)
		ms := trim(strconv.FormatFloat(m, 'f', max(digits-1, 0), 64))
		if ms == "10" || ms == "-10" { // rounding carried into the next power
			e++
			ms = trim(strconv.FormatFloat(v/math.Pow10(e), 'f', max(digits-1, 0), 64))
		}
		if ms == "1" {
			return "10" + superscript + signed(strconv.Itoa(e))
		}
		if ms == "-1" {
			return minus + "10" + superscript + signed(strconv.Itoa(e))
		}
		return signed(ms) + "×10" + superscript + signed(strconv.Itoa(e))
	}
	d := max(0, digits-1-int(math.Floor(math.Log10(a))))
	return signed(trim(strconv.FormatFloat(v, 'f', d, 64)))
}

// formatStep writes v, a multiple of step (a nice step, 1, 2 or 5 ×
// 10^k), with as many decimals as the step needs and none more.
func formatStep(v, step, big float64) string {
	if math.Abs(v) < step*1e-9 {
		return "0"
	}
	if big >= 1e6 || big < 1e-4 {
		// m×10^e with the mantissa's digits the step needs
		e := int(math.Floor(math.Log10(big)))
		se := int(math.Floor(math.Log10(step) + 1e-9))
		return FormatNumber(v, max(e-se+1, 1))
	}
	d := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	return signed(trim(strconv.FormatFloat(v, 'f', d, 64)))
}

// room is the length an axis has for its tick labels: the plotting
// area's width (horizontal axis) or height (vertical axis), and the style
// of the labels, so that a ticker puts no more labels than fit.
type room struct {
	length   vg.Length
	vertical bool
	sty      text.Style
}

// fits reports whether labels spaced by gap (in points) along the axis
// stay apart: an em between neighbours across, 1.4 line heights up.
func (r room) fits(labels []string, gap vg.Length) bool {
	if r.length <= 0 {
		return true
	}
	need := vg.Length(0)
	for _, l := range labels {
		if l == "" {
			continue
		}
		if r.vertical {
			need = max(need, 1.4*r.sty.Height(l))
		} else {
			need = max(need, r.sty.Width(l)+r.sty.Font.Size)
		}
	}
	return gap >= need
}

// niceSteps are the steps tried from fine to coarse around 10^k.
var niceSteps = []float64{1, 2, 5}

// linTicks marks a linear axis at multiples of a nice step (1, 2 or 5 ×
// 10^k), the finest whose labels fit the room, at most seven labels, with
// an unlabelled tick halfway between labels.
type linTicks struct {
	r *room
	// log: the axis is logarithmic (a range of less than a decade), where
	// the labels are closest at the top
	log bool
}

func (t linTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || !finite(lo) || !finite(hi) {
		return nil
	}
	span := hi - lo
	big := math.Max(math.Abs(lo), math.Abs(hi))
	e := int(math.Floor(math.Log10(span))) - 2
	best := 0.0
	for ; e < 310 && best == 0; e++ {
		for _, m := range niceSteps {
			step := m * math.Pow(10, float64(e))
			first, last := math.Ceil(lo/step-1e-9), math.Floor(hi/step+1e-9)
			n := int(last-first) + 1
			if n > 7 {
				continue
			}
			var labels []string
			for i := first; i <= last; i++ {
				labels = append(labels, formatStep(i*step, step, big))
			}
			gap := step / span
			if t.log && n >= 2 && (last-1)*step > 0 {
				gap = math.Log10(last/(last-1)) / math.Log10(hi/lo)
			}
			if t.r == nil || t.r.fits(labels, vg.Length(gap)*t.r.length) || n <= 1 {
				// the finest step that fits (one label only when no two fit)
				best = step
				break
			}
		}
	}
	if best == 0 || math.IsInf(best, 0) {
		return nil
	}
	step := best
	first, last := math.Ceil(lo/step-1e-9), math.Floor(hi/step+1e-9)
	var out []plot.Tick
	for i := first; i <= last; i++ {
		out = append(out, plot.Tick{Value: i * step, Label: formatStep(i*step, step, big)})
	}
	// unlabelled ticks halfway
	for i := first - 1; i <= last; i++ {
		if mid := (i + 0.5) * step; mid >= lo && mid <= hi {
			out = append(out, plot.Tick{Value: mid})
		}
	}
	return out
}

// logTicks marks a logarithmic axis. Over two decades or more: labels at
// powers of ten written 10^k, every decade or every 2nd, 3rd, 5th, …
// (the finest whose labels fit the room, at most six), unlabelled ticks at
// the other decades and, over at most three decades, at 2–9 × 10^k. Over
// less: labels at 1, 2 and 5 × 10^k when two of them fall in the range,
// else nice linear ticks.
type logTicks struct{ r *room }

func (t logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) || math.IsInf(hi, 0) {
		return nil
	}
	in := func(v float64) bool { return v >= lo*(1-1e-12) && v <= hi*(1+1e-12) }
	e0, e1 := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	var decades []int
	for e := e0; e <= e1; e++ {
		if in(math.Pow(10, float64(e))) {
			decades = append(decades, e)
		}
	}
	logSpan := math.Log10(hi) - math.Log10(lo)
	if len(decades) >= 2 {
		every := 1
		for _, k := range []int{1, 2, 3, 5, 10, 20, 50, 100} {
			every = k
			var labels []string
			for _, e := range decades {
				if e%k == 0 {
					labels = append(labels, decadeLabel(e))
				}
			}
			gap := vg.Length(float64(k) / logSpan)
			if len(labels) <= 6 && (t.r == nil || t.r.fits(labels, gap*t.r.length)) {
				break
			}
		}
		var out []plot.Tick
		for e := e0; e <= e1; e++ {
			v := math.Pow(10, float64(e))
			if in(v) {
				tk := plot.Tick{Value: v}
				if e%every == 0 {
					tk.Label = decadeLabel(e)
				}
				out = append(out, tk)
			}
			if len(decades) <= 4 && e < e1 {
				for m := 2; m <= 9; m++ {
					if w := float64(m) * v; in(w) {
						out = append(out, plot.Tick{Value: w})
					}
				}
			}
		}
		return out
	}
	// less than two decades: 1, 2 and 5 × 10^k, labelled
	var out []plot.Tick
	var labels []string
	for e := e0; e <= e1; e++ {
		for _, m := range []float64{1, 2, 5} {
			if v := m * math.Pow(10, float64(e)); in(v) {
				out = append(out, plot.Tick{Value: v, Label: FormatNumber(v, 1)})
				labels = append(labels, FormatNumber(v, 1))
			}
		}
	}
	if len(out) >= 2 && (t.r == nil || t.r.fits(labels, vg.Length(math.Log10(2)/logSpan)*t.r.length)) {
		return out
	}
	return linTicks{r: t.r, log: true}.Ticks(lo, hi)
}

// decadeLabel writes 10^e.
func decadeLabel(e int) string { return "10" + superscript + signed(strconv.Itoa(e)) }

// unboxed draws an axis label as text.Plain does but reports it as taking
// no length along its axis: gonum/plot places that box at the middle of
// the axis's values, which on a log axis is not the middle of the axis, and
// then shrinks the plotting area around it. The layout keeps every
// plotting area longer than its axis labels instead.
type unboxed struct{ text.Plain }

func (h unboxed) Box(txt string, fnt font.Font) (width, height, depth vg.Length) {
	_, height, depth = h.Plain.Box(txt, fnt)
	return 0, height, depth
}
