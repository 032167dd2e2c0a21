package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"flag"
	"fmt"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/ssvm"
)

func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files in testdata")
	}
}

// updating reports whether the test run was given -update.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// smallFig1 are the flags of a small, quick paper-fig1 run: a reduced
// instance (N = 60, J = 12, K = 20: two groups of tasks, so two graph
// components), 2 replications of 40 iterations.
var smallFig1 = []string{"-scenario", "paper-fig1", "-replications", "2", "-iters", "40", "-eval-every", "5", "-n", "60", "-j", "12"}

// svgTexts parses an SVG document as XML and returns its text nodes.
func svgTexts(t *testing.T, b []byte) string {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	var texts []string
	root, inText := "", false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not valid XML: %v", err)
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
	return strings.Join(texts, "\n")
}

func TestSolvePaperFig1WritesSVG(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "f.svg")
	_, stderr, code := solve(t, append(smallFig1, "-out", out)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	texts := strings.ReplaceAll(svgTexts(t, b), "\n", " ") // titles wrap
	for _, want := range []string{"bc-ssfw-as", "spg", "(a) true B", "(b) B by SPG", "(c) B by bc-ssfw-as", "(d) truncated correlation of Y",
		"(e) objective", "relative error", "effective passes", "paper Figure 1"} {
		if !strings.Contains(texts, want) {
			t.Errorf("the SVG does not show %q", want)
		}
	}
}

func TestSolvePaperFig1PNGAndPDF(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"f.png", "f.PDF"} {
		out := filepath.Join(dir, name)
		_, stderr, code := solve(t, append(smallFig1, "-replications", "1", "-iters", "10", "-out", out)...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, ".png") {
			if _, err := png.Decode(bytes.NewReader(b)); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		} else if !bytes.HasPrefix(b, []byte("%PDF-")) {
			t.Errorf("%s: not a PDF", name)
		}
	}
}

func TestSolveFigureOutNamesTheFormats(t *testing.T) {
	out := filepath.Join(t.TempDir(), "f.gif")
	_, stderr, code := solve(t, append(smallFig1, "-out", out)...)
	if code != 2 || !strings.Contains(stderr, "-out:") || !strings.Contains(stderr, ".svg, .png or .pdf") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused -out file was created")
	}
}

// The numbers fed to Figure 1's plot, from a small seeded run, are pinned in
// testdata (go test -run TestPaperFig1FigureData -update rewrites them).
func TestPaperFig1FigureData(t *testing.T) {
	var fa figureArgs
	fa.set = map[string]bool{"replications": true, "iters": true, "eval-every": true}
	fa.o.reps, fa.o.iters, fa.o.evalEvery = 2, 40, 5
	fa.params = map[string]string{"n": "60", "j": "12"}
	data, err := figurePresets["paper-fig1"].run(context.Background(), fa)
	if err != nil {
		t.Fatal(err)
	}
	fig := paperFigure1(data.(*scenarios.Figure1Data))
	got, err := json.MarshalIndent(fig, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "paper-fig1-small.json")
	if updating() {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if msg := jsonClose("", g, w); msg != "" {
		t.Fatalf("figure data differs from %s: %s (if the change is intended, rerun with -update)", golden, msg)
	}
}

// jsonClose compares decoded JSON values, numbers to a relative 1e-9, and
// describes the first difference.
func jsonClose(path string, got, want any) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: got %.80v, want %.80v", path, got, want)
		}
		for k := range w {
			if msg := jsonClose(path+"."+k, g[k], w[k]); msg != "" {
				return msg
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: got %d values, want %d", path, len(g), len(w))
		}
		for i := range w {
			if msg := jsonClose(fmt.Sprintf("%s[%d]", path, i), g[i], w[i]); msg != "" {
				return msg
			}
		}
	case float64:
		g, ok := got.(float64)
		if !ok || math.Abs(g-w) > 1e-9*math.Max(math.Abs(w), 1e-300) {
			return fmt.Sprintf("%s: got %v, want %v", path, got, w)
		}
	default:
		if got != want {
			return fmt.Sprintf("%s: got %v, want %v", path, got, want)
		}
	}
	return ""
}

// Figure 2's layout: one gap panel per λ, the relative gaps below, one
// series per algorithm, fed the series' own numbers.
func TestPaperFigure2Layout(t *testing.T) {
	d := &ssvm.Figure2Data{N: 10, D: 5, Averaged: true}
	for _, lam := range []float64{0.05, 0.01, 0.001} {
		for j, algo := range []string{"bcfw-as", "bcfw"} {
			d.Series = append(d.Series, ssvm.Figure2Series{Algo: algo, Lambda: lam, Passes: []float64{0, 1, 2},
				Gap: []float64{1, lam, lam / float64(2+j)}, RelGap: []float64{1, 0.5, 0.25}})
		}
	}
	f := paperFigure2(d)
	if f.Cols != 3 || len(f.Panels) != 6 {
		t.Fatalf("%d columns, %d panels; want 3 and 6", f.Cols, len(f.Panels))
	}
	for i, lam := range []float64{0.05, 0.01, 0.001} {
		p := f.Panels[i]
		if p.Title != fmt.Sprintf("λ = %g", lam) || len(p.Lines.Series) != 2 || p.Lines.Series[0].Name != "bcfw-as" || p.Lines.Series[1].Name != "bcfw" {
			t.Fatalf("panel %d: %+v", i, p)
		}
		if s := p.Lines.Series[1]; s.Y[2] != lam/3 || s.X[2] != 2 || !p.Lines.LogY {
			t.Fatalf("panel %d: series %+v", i, s)
		}
		if r := f.Panels[3+i]; r.Lines.Series[0].Y[2] != 0.25 {
			t.Fatalf("relative panel %d: %+v", i, r)
		}
	}
	var b bytes.Buffer
	if err := f.Render(&b, "svg"); err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(t, b.Bytes())
	for _, want := range []string{"λ = 0.05", "λ = 0.001", "bcfw-as", "bcfw", "duality gap"} {
		if !strings.Contains(texts, want) {
			t.Errorf("the SVG does not show %q", want)
		}
	}
}

// The real Figure 2, cut to a fraction of a pass, when the OCR data is
// present (it is never part of the repository) and FWLAB_SLOW_TESTS is set:
// loading the data and six evaluations over 6251 words take 10–30 s.
func TestSolvePaperFig2WritesSVG(t *testing.T) {
	if os.Getenv("FWLAB_SLOW_TESTS") == "" {
		t.Skip("set FWLAB_SLOW_TESTS=1 to run paper-fig2 on the OCR data (10–30 s)")
	}
	if _, err := ssvm.ResolveOCR(""); err != nil {
		t.Skipf("OCR data not found: %v", err)
	}
	out := filepath.Join(t.TempDir(), "f2.svg")
	_, stderr, code := solve(t, "-scenario", "paper-fig2", "-passes", "0.002", "-eval-every", "1000", "-out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(t, b)
	for _, want := range []string{"λ = 0.05", "λ = 0.01", "λ = 0.001", "bcfw-as", "bcfw", "paper Figure 2"} {
		if !strings.Contains(texts, want) {
			t.Errorf("the SVG does not show %q", want)
		}
	}
}

// An ordinary run with -out FILE.svg draws its figure there (median and
// band per algorithm, F − F* when F* is known) and still writes its records
// on standard output.
func TestSolveRunFigure(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "run.svg")
	stdout, stderr, code := solve(t, "-problem", "toy-polygon", "-algo", "afw,fw", "-iters", "30", "-replications", "2", "-out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, `"summary"`) {
		t.Errorf("the records did not go to standard output: %.200s", stdout)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(t, b)
	for _, want := range []string{"afw", "fw", "F − F* against iterations", "effective passes", "duality gap", "2 replications"} {
		if !strings.Contains(texts, want) {
			t.Errorf("the SVG does not show %q", want)
		}
	}
	// GFLASSO's matrices come as heat maps.
	out = filepath.Join(dir, "g.svg")
	if _, stderr, code := solve(t, "-problem", "gflasso", "-n", "60", "-j", "12", "-algo", "bc-ssfw-as", "-iters", "10", "-out", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err = os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// GFLASSO's true B and each algorithm's estimate are heat maps; its
	// F* is unknown: the objective panels draw F − the best F reached.
	texts = strings.ReplaceAll(svgTexts(t, b), "\n", " ")
	for _, want := range []string{"true B", "B by bc-ssfw-as", "correlation graph", "F − best F seen"} {
		if !strings.Contains(texts, want) {
			t.Errorf("the GFLASSO figure lacks %q: %.300s", want, texts)
		}
	}
}
