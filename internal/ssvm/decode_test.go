package ssvm

import (
	"math"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
)

// meanLoss is the average normalised Hamming loss of decoded words.
func meanLoss(ws []DecodedWord) float64 {
	s := 0.0
	for _, w := range ws {
		s += float64(w.Errors) / float64(len(w.Truth))
	}
	return s / float64(len(ws))
}

func TestDecodeWordsMatchesTestError(t *testing.T) {
	p := smallChain(t, 20, 15, 0.1)
	n := p.N()
	m, err := p.NewMethod(Options{Algo: AlgoBCFWAS, Average: true, Schedule: paperSchedule(),
		Limits: solver.Limits{MaxIters: 10 * n, EvalEvery: n}, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	_, res := recordAll(t, m)
	zero := make([]float64, p.D)
	ev := newEvaluator(p)
	for _, tc := range []struct {
		name string
		w    []float64
	}{{"zero", zero}, {"trained", res.X}} {
		all, err := p.DecodeWords(tc.w, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != len(p.Test.Words) {
			t.Fatalf("%s: %d words decoded, want the %d test words", tc.name, len(all), len(p.Test.Words))
		}
		if got, want := meanLoss(all), ev.TestError(tc.w); math.Abs(got-want) > 1e-12 {
			t.Fatalf("%s: mean loss of the decoded words %v, the evaluator's test error %v", tc.name, got, want)
		}
		for i, d := range all {
			wd := p.Test.Words[i]
			if len(d.Truth) != wd.Len || len(d.Predicted) != wd.Len {
				t.Fatalf("%s word %d: lengths %d/%d, want %d", tc.name, i, len(d.Truth), len(d.Predicted), wd.Len)
			}
			diff := 0
			for j := range d.Truth {
				if d.Truth[j] != byte('a'+p.Test.Y[wd.Start+j]) {
					t.Fatalf("%s word %d: truth %q does not spell the labels", tc.name, i, d.Truth)
				}
				if d.Truth[j] != d.Predicted[j] {
					diff++
				}
			}
			if diff != d.Errors {
				t.Fatalf("%s word %d: %q vs %q differ in %d letters, Errors = %d", tc.name, i, d.Truth, d.Predicted, diff, d.Errors)
			}
			if tc.name == "zero" && d.Predicted != strings.Repeat("a", wd.Len) {
				t.Fatalf("w = 0 scores every labelling 0, ties go to label 0: got %q", d.Predicted)
			}
		}
		t.Logf("%s: test error %.4f", tc.name, meanLoss(all))
	}
	if z, tr := ev.TestError(zero), ev.TestError(res.X); !(tr < z) {
		t.Fatalf("training did not lower the test error: %v at w = 0, %v trained", z, tr)
	}
	few, err := p.DecodeWords(res.X, 4)
	if err != nil || len(few) != 4 {
		t.Fatalf("max 4: %d words, %v", len(few), err)
	}
	if _, err := p.DecodeWords(res.X[1:], 4); err == nil {
		t.Fatal("a short weight vector was accepted")
	}
	// Without a test set, the training words are decoded.
	q, err := NewProblem(p.Train, nil, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	tw, err := q.DecodeWords(res.X, 0)
	if err != nil || len(tw) != n {
		t.Fatalf("no test set: %d words, want the %d training words (%v)", len(tw), n, err)
	}
}
