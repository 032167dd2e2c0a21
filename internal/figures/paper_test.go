package figures

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"

	"github.com/fwlab/fwlab/internal/palette"
)

// the glyphs the figures' titles and labels use
const glyphs = "λγ−≤·–ρα×"

func glyphFigure() *Figure {
	return &Figure{Title: "λ = 1, γ = 2: F − F* ≤ 1e-3 · median – max", Cols: 2, Panels: []Panel{
		{Title: "ρ × α", Lines: &Lines{XLabel: "iteration", YLabel: "F − F*", LogY: true, Series: []Series{
			{Name: "ssfw-as", X: Floats{0, 1, 2, 3}, Y: Floats{1, 0.1, 0.01, 0.001}},
			{Name: "fw", X: Floats{0, 1, 2, 3}, Y: Floats{1, 0.5, 0.25, 0.125}},
		}}},
		{Title: "heat", Heat: &Heat{Z: [][]float64{{2.5, -1}, {0, 1}}}},
	}}
}

// The figures' typeface carries every glyph used, so SVG, PNG and PDF
// draw them all.
func TestFontCarriesEveryGlyph(t *testing.T) {
	fc := font.DefaultCache.Lookup(font.From(face, 9), 9)
	var buf bytes.Buffer
	_ = buf
	for _, r := range glyphs {
		idx, err := fc.Face.GlyphIndex(nil, r)
		if err != nil || idx == 0 {
			t.Errorf("%s %s lacks %q (glyph %d, %v)", face.Typeface, face.Variant, r, idx, err)
		}
	}
}

// PDF text is Unicode: pdftotext reads λ, γ and the rest back; the SVG
// embeds its font and holds the same text.
func TestPDFAndSVGTextIsUnicode(t *testing.T) {
	if _, err := exec.LookPath("pdftotext"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("pdftotext (poppler-utils) is needed")
		}
		t.Skip("SKIPPED: pdftotext (poppler-utils) is not installed")
	}
	var b bytes.Buffer
	if err := glyphFigure().Render(&b, "pdf"); err != nil {
		t.Fatal(err)
	}
	p := t.TempDir() + "/f.pdf"
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("pdftotext", p, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	for _, r := range glyphs {
		if !strings.ContainsRune(string(out), r) {
			t.Errorf("the PDF's text lacks %q: %q", r, out)
		}
	}
	if strings.Contains(string(out), "Î") {
		t.Errorf("the PDF's text holds mojibake: %q", out)
	}
	b.Reset()
	if err := glyphFigure().Render(&b, "svg"); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	if !strings.Contains(svg, "@font-face") || !strings.Contains(svg, "base64,") {
		t.Error("the SVG does not embed its font")
	}
	for _, r := range glyphs {
		if !strings.ContainsRune(svg, r) {
			t.Errorf("the SVG lacks %q", r)
		}
	}
}

// -figsize: the width of each preset, and text of 8–9 pt on paper.
func TestFigureSizes(t *testing.T) {
	sizeRe := regexp.MustCompile(`font-size:([0-9.]+)px`)
	for _, tc := range []struct {
		name   string
		width  float64
		lo, hi float64
	}{{"column", 252, 8, 9}, {"page", 504, 8, 9}, {"slide", 957.6, 14, 16}} {
		sz, err := SizeNamed(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := glyphFigure().RenderSize(&b, "svg", sz); err != nil {
			t.Fatal(err)
		}
		svg := b.String()
		if !strings.Contains(svg, `width="`+strconv.FormatFloat(tc.width, 'g', -1, 64)+`pt"`) {
			t.Errorf("%s: %.120q, want %g pt wide", tc.name, svg[strings.Index(svg, "<svg"):], tc.width)
		}
		for _, m := range sizeRe.FindAllStringSubmatch(svg, -1) {
			v, _ := strconv.ParseFloat(m[1], 64)
			if math.Abs(v-supScale*float64(sz.Tick)) < 1e-6 {
				continue // an exponent: 0.7 of the tick labels' size
			}
			if v < tc.lo || v > tc.hi {
				t.Errorf("%s: text of %g pt, want %g–%g", tc.name, v, tc.lo, tc.hi)
				break
			}
		}
	}
	if _, err := SizeNamed("poster"); err == nil || !strings.Contains(err.Error(), "column (3.5 in), page (7 in) or slide (13.3 in)") {
		t.Errorf("an unknown size: %v", err)
	}
}

// Panels are lettered (a), (b), … in order; the heat map has a colour bar
// labelled with its scale; one legend names each series once.
func TestPanelsLetteredWithColourBarAndOneLegend(t *testing.T) {
	f := glyphFigure()
	f.Panels = append(f.Panels, f.Panels[0], f.Panels[1])
	var b bytes.Buffer
	if err := f.Render(&b, "svg"); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	last := -1
	for _, l := range []string{"(a) ρ × α", "(b) heat", "(c) ρ × α", "(d) heat"} {
		i := strings.Index(svg, l)
		if i < 0 {
			t.Errorf("no panel titled %q", l)
		}
		if strings.Count(svg, ">"+l+"<") > 1 {
			t.Errorf("%q appears twice", l)
		}
		last = i
	}
	_ = last
	for _, l := range []string{">2.5<", ">−2.5<", ">0<"} {
		if !strings.Contains(svg, l) {
			t.Errorf("the colour bar lacks the label %s", l)
		}
	}
	if n := strings.Count(svg, ">ssfw-as<"); n != 1 {
		t.Errorf("ssfw-as named %d times, want once in the figure's legend", n)
	}
}

// Series differ by line style as well as colour, from the palette the
// dashboard loads (palette.json).
func TestSeriesColourAndDashFromThePalette(t *testing.T) {
	var file struct {
		Colors []string    `json:"colors"`
		Dashes [][]float64 `json:"dashes"`
	}
	if err := json.Unmarshal(palette.JSON, &file); err != nil {
		t.Fatal(err)
	}
	sz := Sizes["page"]
	seen := map[string]bool{}
	for i := range file.Colors {
		ls := seriesLine(i, sz)
		c := Colour(i)
		if got := "#" + strings.ToUpper(hex2(c.R)+hex2(c.G)+hex2(c.B)); got != strings.ToUpper(file.Colors[i]) {
			t.Errorf("series %d colour %s, palette.json %s", i, got, file.Colors[i])
		}
		if len(ls.Dashes) != len(file.Dashes[i]) {
			t.Errorf("series %d dashes %v, palette.json %v", i, ls.Dashes, file.Dashes[i])
		}
		key := ""
		for _, d := range ls.Dashes {
			key += strconv.FormatFloat(float64(d/vg.Points(1)), 'g', 3, 64) + ","
		}
		if seen[key] {
			t.Errorf("series %d repeats the dash pattern %q", i, key)
		}
		seen[key] = true
	}
}

func hex2(v uint8) string {
	s := strconv.FormatUint(uint64(v), 16)
	return strings.Repeat("0", 2-len(s)) + s
}

// A stretch that was not evaluated is not bridged: the line breaks where
// consecutive abscissae are far apart, not on a regular grid.
func TestSplitGaps(t *testing.T) {
	x := Floats{}
	for i := 0; i <= 20; i++ {
		x = append(x, float64(i))
	}
	for i := 80; i <= 100; i++ {
		x = append(x, float64(i))
	}
	all := make([]int, len(x))
	for i := range all {
		all[i] = i
	}
	got := splitGaps(x, [][]int{all})
	if len(got) != 2 || len(got[0]) != 21 || x[got[1][0]] != 80 {
		t.Errorf("split %v", got)
	}
	reg := Floats{0, 10, 20, 30, 40, 50, 60}
	if got := splitGaps(reg, [][]int{{0, 1, 2, 3, 4, 5, 6}}); len(got) != 1 {
		t.Errorf("a regular grid was split: %v", got)
	}
	// geometric spacing, as an adaptive evaluation cadence gives: the long
	// last stretches are left blank
	geo := Floats{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}
	if got := splitGaps(geo, [][]int{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}}); len(got) < 2 {
		t.Errorf("a geometric grid was bridged: %v", got)
	}
	_ = math.Inf
}
