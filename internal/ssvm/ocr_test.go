package ssvm

import (
	"errors"
	"os"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
)

// ocrProblem loads the OCR data (skipping the test when it is absent).
func ocrProblem(t testing.TB, lambda float64) *Problem {
	t.Helper()
	c, err := LoadOCR("")
	if errors.Is(err, ErrNoData) {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set, so this is a failure: OCR data absent: %v", err)
		}
		t.Skipf("OCR data absent: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	tr, te, err := c.Split("train")
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewProblem(tr, te, lambda)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestOCRData(t *testing.T) {
	c, err := LoadOCR("")
	if errors.Is(err, ErrNoData) {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set, so this is a failure: OCR data absent: %v", err)
		}
		t.Skipf("OCR data absent: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := len(c.Data.Words); got != 6877 {
		t.Fatalf("words: got %d, want 6877", got)
	}
	if got := c.Data.Letters(); got != 52152 {
		t.Fatalf("letters: got %d, want 52152", got)
	}
	tr, te, _ := c.Split("train")
	if len(tr.Words) != 6251 || tr.Letters() != 47535 || len(te.Words) != 626 || te.Letters() != 4617 {
		t.Fatalf("split: train %d words %d letters, test %d words %d letters", len(tr.Words), tr.Letters(), len(te.Words), te.Letters())
	}
	if tr.Dim() != 4082 {
		t.Fatalf("d = %d, want 4082", tr.Dim())
	}
	small, big, _ := c.Split("small")
	if len(small.Words) != 626 || len(big.Words) != 6251 {
		t.Fatalf("small split: %d and %d words", len(small.Words), len(big.Words))
	}
	// The first word is "ommanding" (fold 0).
	w := c.Data.Words[0]
	s := make([]byte, w.Len)
	for t, y := range c.Data.Y[w.Start : w.Start+w.Len] {
		s[t] = byte('a' + y)
	}
	if string(s) != "ommanding" || c.Folds[0] != 0 {
		t.Fatalf("first word %q fold %d", s, c.Folds[0])
	}
	// Loading twice shares the corpus.
	c2, _ := LoadOCR("")
	if c2 != c {
		t.Fatal("the corpus is read again instead of shared")
	}
}

func TestOCRBCFW(t *testing.T) {
	if testing.Short() {
		t.Skip("20 passes over OCR")
	}
	p := ocrProblem(t, 0.01)
	n := p.N()
	m, err := p.NewMethod(Options{Algo: AlgoBCFW, Average: true, Limits: solver.Limits{MaxIters: 20 * n, EvalEvery: 5 * n}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	recs, res := recordAll(t, m)
	for _, r := range recs {
		if r.Evaluated() {
			t.Logf("pass %4.1f: primal %.5f gap %.5f rel %.4f test err w̄ %.4f w %.4f (%.1fs)", r.Passes, *r.Objective, *r.Gap, r.Extra["rel_gap"], r.Extra["test_err_avg"], r.Extra["test_err"], r.Time)
		}
	}
	last := recs[len(recs)-1]
	if res.Summary.Gap >= 0.1 {
		t.Fatalf("gap after 20 passes %v, want < 0.1", res.Summary.Gap)
	}
	if te := last.Extra["test_err_avg"]; te < 0.11 || te > 0.13 {
		t.Fatalf("test error of w̄ %v, want 0.11–0.13", te)
	}
}
