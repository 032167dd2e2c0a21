package figtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/figures"
)

// Check renders fig at column, page and slide size and fails on what
// Problems finds (overlapping or clipped text, titles cut short,
// misaligned plotting areas, numbers with trailing zeros), and on a PDF of
// it whose extracted text lacks a number as the SVG writes it.
func Check(t *testing.T, name string, fig *figures.Figure) {
	t.Helper()
	for _, size := range []string{"column", "page", "slide"} {
		sz, err := figures.SizeNamed(size)
		if err != nil {
			t.Fatal(err)
		}
		var svg, pdf bytes.Buffer
		if err := fig.RenderSize(&svg, "svg", sz); err != nil {
			t.Fatalf("%s at %s size: %v", name, size, err)
		}
		if err := fig.RenderSize(&pdf, "pdf", sz); err != nil {
			t.Fatalf("%s at %s size: %v", name, size, err)
		}
		CheckFiles(t, name+" at "+size+" size", svg.Bytes(), pdf.Bytes(), len(fig.Panels))
	}
}

// CheckFiles checks one figure drawn as SVG and as PDF, with the given
// number of panels: the SVG reads cleanly (Problems) and pdftotext finds
// every number as written. FWLAB_FIGDIR names a folder to keep the files
// in for a look.
func CheckFiles(t *testing.T, name string, svg, pdf []byte, panels int) {
	t.Helper()
	doc, err := Parse(svg)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if dir := os.Getenv("FWLAB_FIGDIR"); dir != "" {
		base := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		_ = os.WriteFile(base+".svg", svg, 0o644)
		_ = os.WriteFile(base+".pdf", pdf, 0o644)
	}
	if len(doc.Numbers()) < 6 || len(doc.YAxes) < panels {
		t.Fatalf("%s: %d numbers, %d plotting areas read back; want tick labels and %d areas", name, len(doc.Numbers()), len(doc.YAxes), panels)
	}
	for _, p := range doc.Problems() {
		t.Errorf("%s: %s", name, p)
	}
	if _, err := exec.LookPath("pdftotext"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("pdftotext (poppler-utils) is needed")
		}
		t.Skip("SKIPPED: pdftotext (poppler-utils) is not installed")
	}
	p := filepath.Join(t.TempDir(), "f.pdf")
	if err := os.WriteFile(p, pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	// -raw keeps the text in drawing order: an exponent right after its base
	out, err := exec.Command("pdftotext", "-raw", p, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	words := map[string]bool{}
	for _, w := range strings.Fields(string(out)) {
		words[w] = true
	}
	for _, n := range doc.Numbers() {
		if !words[n.Plain()] {
			t.Errorf("%s: the PDF's text lacks the number %q as written (%q)", name, n.Plain(), n.S)
		}
	}
}
