package figures

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"image/png"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
)

func sample() *Figure {
	nan := math.NaN()
	return &Figure{Title: "A test figure", Cols: 2, Panels: []Panel{
		{Title: "objective", Lines: &Lines{XLabel: "iteration", YLabel: "F", LogY: true, Series: []Series{
			{Name: "alpha-method", X: Floats{0, 1, 2, 3, 4}, Y: Floats{10, 5, nan, 1, 0.5}, Lo: Floats{9, 4, nan, 0.8, 0.4}, Hi: Floats{11, 6, nan, 1.2, 0.6}},
			{Name: "beta-method", X: Floats{0, 1, 2, 3, 4}, Y: Floats{10, 8, 0, -1, 2}}, // ≤ 0 is left out on a log axis
		}}},
		{Title: "linear", Lines: &Lines{XLabel: "passes", YLabel: "gap", Series: []Series{
			{Name: "gamma-method", X: Floats{0, 0.5, 1}, Y: Floats{3, -2, 1}},
		}}},
		{Title: "a matrix", Heat: &Heat{Z: [][]float64{{1, 0, -1}, {0.5, nan, 2}}}},
	}}
}

// svgText returns every text node of an SVG document, checking on the way
// that it parses as XML with an <svg> root.
func svgText(t *testing.T, b []byte) []string {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	var texts []string
	root := ""
	inText := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not valid XML: %v", err)
		}
		switch v := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = v.Name.Local
			}
			inText = v.Name.Local == "text"
		case xml.EndElement:
			inText = false
		case xml.CharData:
			if inText {
				texts = append(texts, string(v))
			}
		}
	}
	if root != "svg" {
		t.Fatalf("root element %q, want svg", root)
	}
	return texts
}

func TestRenderSVGIsXMLWithTitlesAndNames(t *testing.T) {
	var b bytes.Buffer
	if err := sample().Render(&b, "svg"); err != nil {
		t.Fatal(err)
	}
	texts := strings.Join(svgText(t, b.Bytes()), "\n")
	for _, want := range []string{"A test figure", "objective", "linear", "a matrix", "alpha-method", "beta-method", "gamma-method", "iteration", "passes"} {
		if !strings.Contains(texts, want) {
			t.Errorf("the SVG's text does not hold %q", want)
		}
	}
}

func TestRenderPNGAndPDF(t *testing.T) {
	var b bytes.Buffer
	if err := sample().Render(&b, "png"); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	// a page's width (7 in) at 200 dpi; two rows of plotting areas 0.62
	// as high as wide (under 3.5 in), with their titles and axes, plus
	// the figure's title and legend
	if w, h := img.Bounds().Dx(), img.Bounds().Dy(); w != 1400 || h < 800 || h > 1300 {
		t.Errorf("PNG %d×%d, want 1400 wide and about 1050 high", w, h)
	}
	b.Reset()
	if err := sample().Render(&b, "pdf"); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b.Bytes(), []byte("%PDF-")) || !bytes.Contains(b.Bytes(), []byte("%%EOF")) {
		t.Errorf("not a PDF: %.20q", b.Bytes())
	}
}

func TestRenderRejectsBadFigures(t *testing.T) {
	for _, c := range []struct {
		name string
		f    Figure
		want string
	}{
		{"empty", Figure{}, "no panels"},
		{"both kinds", Figure{Panels: []Panel{{Lines: &Lines{}, Heat: &Heat{Z: [][]float64{{1}}}}}}, "either lines or a heat map"},
		{"lengths", Figure{Panels: []Panel{{Lines: &Lines{Series: []Series{{Name: "s", X: Floats{1, 2}, Y: Floats{1}}}}}}}, "2 x values, 1 y values"},
		{"half a band", Figure{Panels: []Panel{{Lines: &Lines{Series: []Series{{Name: "s", X: Floats{1}, Y: Floats{1}, Lo: Floats{1}}}}}}}, "band needs lo and hi"},
		{"ragged", Figure{Panels: []Panel{{Title: "m", Heat: &Heat{Z: [][]float64{{1, 2}, {3}}}}}}, "row 1 has 1 values"},
		{"empty matrix", Figure{Panels: []Panel{{Title: "m", Heat: &Heat{}}}}, "empty matrix"},
	} {
		err := c.f.Render(io.Discard, "svg")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	if err := sample().Render(io.Discard, "gif"); err == nil || !strings.Contains(err.Error(), "svg, png or pdf") {
		t.Errorf("format gif: %v", err)
	}
}

func TestFormatOf(t *testing.T) {
	for in, want := range map[string]string{"a/fig1.svg": "svg", "F.PNG": "png", "x.pdf": "pdf", "x.json": "", "svg": ""} {
		got, err := FormatOf(in)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("FormatOf(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestFloatsJSONRoundTrip(t *testing.T) {
	in := Floats{1, math.NaN(), -2.5, math.Inf(1), 1e-300}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "[1,null,-2.5,null,1e-300]" {
		t.Fatalf("%s", b)
	}
	var out Floats
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if len(out) != 5 || out[0] != 1 || !math.IsNaN(out[1]) || out[2] != -2.5 || !math.IsNaN(out[3]) || out[4] != 1e-300 {
		t.Fatalf("%v", out)
	}
}

func TestRuns(t *testing.T) {
	keep := []bool{true, true, false, true, false, false, true}
	got := runs(len(keep), func(i int) bool { return keep[i] })
	want := [][]int{{0, 1}, {3}, {6}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%v, want %v", got, want)
	}
}

func rec(k int, passes, obj, gap float64) solver.Record {
	return solver.Record{K: k, Passes: passes, Objective: &obj, Gap: &gap}
}

// FromRun's series are the median and min–max of the replications,
// checked here against values worked out by hand.
func TestFromRunMedianAndBand(t *testing.T) {
	a := RunTraces{Algo: "afw", Traces: [][]solver.Record{
		{rec(0, 0, 10, 4), rec(1, 1, 6, 2), rec(2, 2, 3, 1)},
		{rec(0, 0, 10, 4), rec(1, 1, 8, 3), rec(2, 2, 5, 2)},
		{rec(0, 0, 10, 4), rec(1, 1, 7, 1)}, // ended at iteration 1: keeps 7 on
	}}
	f := FromRun("run", []RunTraces{a}, 2)
	if len(f.Panels) != 3 {
		t.Fatalf("%d panels", len(f.Panels))
	}
	s := f.Panels[0].Lines.Series[0]
	if s.Name != "afw" || !reflect.DeepEqual(s.X, Floats{0, 1, 2}) {
		t.Fatalf("series %+v", s)
	}
	// F − F* with F* = 2: iteration 1 has 4, 6, 5; iteration 2 has 1, 3, 5.
	if !reflect.DeepEqual(s.Y, Floats{8, 5, 3}) || !reflect.DeepEqual(s.Lo, Floats{8, 4, 1}) || !reflect.DeepEqual(s.Hi, Floats{8, 6, 5}) {
		t.Fatalf("median %v lo %v hi %v", s.Y, s.Lo, s.Hi)
	}
	g := f.Panels[2].Lines.Series[0]
	if !reflect.DeepEqual(g.Y, Floats{4, 2, 1}) || !reflect.DeepEqual(g.Hi, Floats{4, 3, 2}) {
		t.Fatalf("gap median %v hi %v", g.Y, g.Hi)
	}
	// Without F*: F − the best F reached (3), as the run page draws it;
	// the best point itself has no logarithm.
	f = FromRun("run", []RunTraces{a}, math.NaN())
	if y := f.Panels[0].Lines.Series[0].Y; !reflect.DeepEqual(y, Floats{7, 4, 2}) || f.Panels[0].Lines.YLabel != "F − best F seen" {
		t.Fatalf("F − best median %v, label %q", y, f.Panels[0].Lines.YLabel)
	}
	if err := f.Render(io.Discard, "svg"); err != nil {
		t.Fatal(err)
	}
}

func TestStatSeriesSingleTraceHasNoBand(t *testing.T) {
	f := FromRun("run", []RunTraces{{Algo: "fw", Traces: [][]solver.Record{{rec(0, 0, 3, 1), rec(1, 1, 2, 0.5)}}}}, math.NaN())
	if s := f.Panels[0].Lines.Series[0]; s.Lo != nil || s.Hi != nil {
		t.Fatalf("one replication drew a band: %+v", s)
	}
}

func TestPow10(t *testing.T) {
	s := Pow10(Series{Name: "x", X: Floats{0, 1}, Y: Floats{0, 2}, Lo: Floats{-1, 1}, Hi: Floats{1, math.NaN()}})
	if !reflect.DeepEqual(s.Y, Floats{1, 100}) || !reflect.DeepEqual(s.Lo, Floats{0.1, 10}) || s.Hi[0] != 10 || !math.IsNaN(s.Hi[1]) {
		t.Fatalf("%+v", s)
	}
}

func TestLogTicksLabelPowersOfTenSparingly(t *testing.T) {
	ts := logTicks{}.Ticks(3e-16, 20)
	var labels []string
	for _, tk := range ts {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
			if e := math.Log10(tk.Value); math.Abs(e-math.Round(e)) > 1e-9 {
				t.Errorf("label %q at %v, not a power of ten", tk.Label, tk.Value)
			}
		}
	}
	if len(labels) < 4 || len(labels) > 9 {
		t.Fatalf("%d labels: %v", len(labels), labels)
	}
	for _, l := range labels {
		if len([]rune(Plain(l))) > 6 {
			t.Errorf("label %q is not short", l)
		}
	}
}

// The heat map's grid puts the matrix's row 0 at the top (largest y).
func TestHeatRowZeroOnTop(t *testing.T) {
	g := grid{z: [][]float64{{1, 2, 3}, {4, 5, 6}}, scale: 1}
	c, r := g.Dims()
	if c != 3 || r != 2 {
		t.Fatalf("dims %d×%d", c, r)
	}
	top := r - 1 // largest y
	if g.Y(top) <= g.Y(0) || g.Z(0, top) != 1 || g.Z(2, top) != 3 || g.Z(0, 0) != 4 {
		t.Fatalf("top row %v %v %v, bottom %v", g.Z(0, top), g.Z(1, top), g.Z(2, top), g.Z(0, 0))
	}
	ticks := indexTicks{n: 2, flip: true}.Ticks(-0.5, 1.5)
	for _, tk := range ticks {
		if (tk.Label == "0") != (tk.Value == 1) {
			t.Errorf("tick %q at y = %v: row 0 is at the top (y = 1)", tk.Label, tk.Value)
		}
	}
}

// Render never panics, whatever numbers a run produced: it draws or
// returns an error.
func FuzzRender(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8}, true, uint8(2))
	f.Add([]byte{0, 0, 0, 0}, false, uint8(1))
	f.Add([]byte{255, 255, 255, 255, 255, 255, 255, 127, 0, 0, 0, 0, 0, 0, 248, 127}, true, uint8(3))
	f.Fuzz(func(t *testing.T, raw []byte, logY bool, rows uint8) {
		// 8 bytes per float64, any bit pattern (NaN, ±Inf, subnormals).
		var v []float64
		for i := 0; i+8 <= len(raw) && len(v) < 64; i += 8 {
			var u uint64
			for j := 0; j < 8; j++ {
				u |= uint64(raw[i+j]) << (8 * j)
			}
			v = append(v, math.Float64frombits(u))
		}
		n := len(v) / 4
		s := Series{Name: "s", X: Floats(v[:n]), Y: Floats(v[n : 2*n]), Lo: Floats(v[2*n : 3*n]), Hi: Floats(v[3*n : 4*n])}
		fig := &Figure{Panels: []Panel{{Title: "l", Lines: &Lines{LogY: logY, Series: []Series{s}}}}}
		if r := int(rows%4) + 1; len(v) >= r {
			c := len(v) / r
			z := make([][]float64, r)
			for i := range z {
				z[i] = v[i*c : (i+1)*c]
			}
			fig.Panels = append(fig.Panels, Panel{Title: "h", Heat: &Heat{Z: z}})
		}
		_ = fig.Render(io.Discard, "svg")
	})
}

func TestHeatPanels(t *testing.T) {
	ps := HeatPanels(map[string]any{
		"b":      [][]float64{{1, 2}, {3, 4}},
		"a":      [][]float64{{1}},
		"ragged": [][]float64{{1, 2}, {3}},
		"empty":  [][]float64{},
		"words":  []string{"x"},
	})
	if len(ps) != 2 || ps[0].Title != "a" || ps[1].Title != "b" || ps[1].Heat.Z[1][0] != 3 {
		t.Fatalf("%+v", ps)
	}
}

// Less than a decade still gets at least two labels within the range.
func TestLogTicksNarrowRange(t *testing.T) {
	for _, r := range [][2]float64{{0.3, 1.5}, {0.12, 0.18}, {2.1, 2.9}, {40, 300}} {
		n := 0
		for _, tk := range (logTicks{}).Ticks(r[0], r[1]) {
			if tk.Label != "" && tk.Value >= r[0] && tk.Value <= r[1] {
				n++
				if v, err := strconv.ParseFloat(tk.Label, 64); err != nil || math.Abs(v-tk.Value) > 1e-9*tk.Value {
					t.Errorf("label %q at %v", tk.Label, tk.Value)
				}
			}
		}
		if n < 2 {
			t.Errorf("range %v: %d labels", r, n)
		}
	}
}

// A long run is drawn from at most MaxPoints points per series, from its
// first to its last iteration.
func TestFromRunCapsPoints(t *testing.T) {
	var tr []solver.Record
	for k := 0; k <= 5000; k++ {
		tr = append(tr, rec(k, float64(k), 1+1/float64(k+1), 1/float64(k+1)))
	}
	f := FromRun("long", []RunTraces{{Algo: "fw", Traces: [][]solver.Record{tr}}}, math.NaN())
	for _, i := range []int{0, 2} {
		s := f.Panels[i].Lines.Series[0]
		if len(s.X) != MaxPoints || s.X[0] != 0 || s.X[len(s.X)-1] != 5000 {
			t.Fatalf("panel %d: %d points from %v to %v", i, len(s.X), s.X[0], s.X[len(s.X)-1])
		}
		// step-interpolated: the value at x is the last record's at or before x
		// (F − best, best F = 1 + 1/5001, on panel 0)
		for j, x := range s.X {
			k := math.Floor(x)
			want := 1 / (k + 1)
			if i == 0 {
				want = (1 + 1/(k+1)) - (1 + 1/5001.0)
			}
			if s.Y[j] != want {
				t.Fatalf("panel %d at x = %v: %v, want %v", i, x, s.Y[j], want)
			}
		}
	}
}

// A trace ends where its run ended: afw stopped at iteration 11 (pass 11)
// while fw ran to 200; afw's series has no point beyond 11 on any panel,
// in FromRun and in FromRunStream alike.
func TestSeriesEndWhereTheRunEnded(t *testing.T) {
	mk := func(n int) []solver.Record {
		var out []solver.Record
		for k := 0; k <= n; k++ {
			out = append(out, rec(k, float64(k), 1+1/float64(k+1), 1/float64(k+1)))
		}
		return out
	}
	afw, fw := mk(11), mk(200)
	check := func(name string, f *Figure) {
		for p := 0; p < 3; p++ {
			s := f.Panels[p].Lines.Series[0]
			last := math.Inf(-1)
			for i, x := range s.X {
				if !math.IsNaN(s.Y[i]) {
					last = math.Max(last, x)
				}
			}
			// (a streamed figure's point is its column's centre: 11.5 for
			// the column from 11 to 12)
			if last > 11.5 || last < 10 {
				t.Errorf("%s panel %d: afw drawn to x = %v, want it to end at 11", name, p, last)
			}
		}
	}
	check("FromRun", FromRun("r", []RunTraces{{Algo: "afw", Traces: [][]solver.Record{afw}}, {Algo: "fw", Traces: [][]solver.Record{fw}}}, 0.5))
	check("FromRunStream", FromRunStream("r", []StreamTraces{{Algo: "afw", Traces: []TraceSource{srcOf(afw)}}, {Algo: "fw", Traces: []TraceSource{srcOf(fw)}}}, 0.5, 200))
}
