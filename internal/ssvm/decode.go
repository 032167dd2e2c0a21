package ssvm

import "fmt"

// DecodedWord is one word decoded with plain Viterbi (no loss term): the
// true and predicted labellings spelled as letters, and the number of
// positions where they differ.
type DecodedWord struct {
	Truth     string `json:"truth"`
	Predicted string `json:"predicted"`
	Errors    int    `json:"errors"`
}

// LabelRune spells label k: a–z for the first 26 labels (OCR's alphabet),
// then A–Z, then '?'.
func LabelRune(k int) rune {
	switch {
	case k >= 0 && k < 26:
		return rune('a' + k)
	case k >= 26 && k < 52:
		return rune('A' + k - 26)
	}
	return '?'
}

// DecodeWords decodes the first max words of the test set (of the training
// set when the problem has none) at the weights w and returns them with
// their true labellings. max ≤ 0 decodes every word. w must have length D.
func (p *Problem) DecodeWords(w []float64, max int) ([]DecodedWord, error) {
	if len(w) != p.D {
		return nil, fmt.Errorf("ssvm: decoding needs a weight vector of length %d, got %d", p.D, len(w))
	}
	ds := p.Test
	if ds == nil {
		ds = p.Train
	}
	words := ds.Words
	if max > 0 && len(words) > max {
		words = words[:max]
	}
	K := p.K
	first, last, trans := p.parts(w)
	dec := newDecoder(K, maxLen(ds))
	var E []float64
	out := make([]DecodedWord, 0, len(words))
	for _, wd := range words {
		if cap(E) < wd.Len*K {
			E = make([]float64, wd.Len*K)
		}
		E = E[:wd.Len*K]
		p.wordEmissions(ds, wd, w, E)
		truth := ds.Y[wd.Start : wd.Start+wd.Len]
		y := make([]int, wd.Len)
		dec.Viterbi(E, first, last, trans, nil, y)
		t, pr := make([]rune, wd.Len), make([]rune, wd.Len)
		errs := 0
		for i := range y {
			t[i], pr[i] = LabelRune(truth[i]), LabelRune(y[i])
			if y[i] != truth[i] {
				errs++
			}
		}
		out = append(out, DecodedWord{Truth: string(t), Predicted: string(pr), Errors: errs})
	}
	return out, nil
}
