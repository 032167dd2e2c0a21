package ssvm

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Problem is a structural SVM on chain data: minimise over w
//
//	λ/2 ‖w‖² + (1/n) Σ_i max_y H_i(y; w),  H_i(y; w) = L_i(y) − <w, ψ_i(y)>,
//
// with ψ_i(y) = φ(x_i, y_i) − φ(x_i, y) and L_i the Hamming loss divided by
// the word length; its dual is a product of n simplices (one per word). The
// joint feature map φ has K·F emission coordinates (letter t adds x_t to
// block y_t), K first-label and K last-label indicators and K² transition
// counts (pair (a, b) at index a + K·b of that part), as in the OCR README.
// A Problem is immutable and safe for concurrent use.
type Problem struct {
	Train, Test *Dataset // Test may be nil
	Lambda      float64

	K, F, D                     int
	offFirst, offLast, offTrans int
	gram                        []float64 // per word, L×L Gram matrix of its letters' features
	gramOff                     []int
	sx                          *sparseRows // the training letters' nonzero features
}

// NewProblem checks the data and λ and precomputes per-word Gram matrices.
func NewProblem(train, test *Dataset, lambda float64) (*Problem, error) {
	if !(lambda > 0) || math.IsInf(lambda, 0) {
		return nil, fmt.Errorf("lambda: must be a positive number, got %v", lambda)
	}
	if train == nil {
		return nil, fmt.Errorf("training set: missing")
	}
	if err := train.Validate(); err != nil {
		return nil, fmt.Errorf("training set: %w", err)
	}
	if test != nil && len(test.Words) == 0 {
		test = nil
	}
	if test != nil {
		if err := test.Validate(); err != nil {
			return nil, fmt.Errorf("test set: %w", err)
		}
		if test.Labels != train.Labels || test.Feat != train.Feat {
			return nil, fmt.Errorf("test set: %d labels and %d features, the training set has %d and %d", test.Labels, test.Feat, train.Labels, train.Feat)
		}
	}
	K, F := train.Labels, train.Feat
	if K > 256 {
		return nil, fmt.Errorf("training set: at most 256 labels, got %d", K)
	}
	p := &Problem{Train: train, Test: test, Lambda: lambda, K: K, F: F, D: train.Dim(),
		offFirst: K * F, offLast: K*F + K, offTrans: K*F + 2*K}
	p.gramOff = make([]int, len(train.Words)+1)
	for i, w := range train.Words {
		p.gramOff[i+1] = p.gramOff[i] + w.Len*w.Len
	}
	sx, err := newSparseRows(train)
	if err != nil {
		return nil, fmt.Errorf("training set: %w", err)
	}
	p.sx = sx
	p.gram = make([]float64, p.gramOff[len(train.Words)])
	for i, w := range train.Words {
		g := p.gram[p.gramOff[i]:p.gramOff[i+1]]
		for t := 0; t < w.Len; t++ {
			xt := train.X[(w.Start+t)*F : (w.Start+t+1)*F]
			for s := 0; s <= t; s++ {
				xs := train.X[(w.Start+s)*F : (w.Start+s+1)*F]
				v := dot(xt, xs)
				g[t*w.Len+s], g[s*w.Len+t] = v, v
			}
		}
	}
	return p, nil
}

// N returns the number of training words (the dual's blocks).
func (p *Problem) N() int { return len(p.Train.Words) }

func dot(a, b []float64) float64 {
	s := 0.0
	for i, x := range a {
		s += x * b[i]
	}
	return s
}

// wordEmissions writes E[t·K+k] = <w_k, x_t> for the letters of word wd.
func (p *Problem) wordEmissions(ds *Dataset, wd Word, w, E []float64) {
	K, F := p.K, p.F
	for t := 0; t < wd.Len; t++ {
		x := ds.X[(wd.Start+t)*F : (wd.Start+t+1)*F]
		for k := 0; k < K; k++ {
			E[t*K+k] = floats.Dot(w[k*F:(k+1)*F], x)
		}
	}
}

// AllEmissions returns the emission scores of every letter of ds for every
// label as one matrix product X·W_eᵀ (letters × K, row-major).
func (p *Problem) AllEmissions(ds *Dataset, w []float64, out []float64) []float64 {
	n := ds.Letters()
	if cap(out) < n*p.K {
		out = make([]float64, n*p.K)
	}
	out = out[:n*p.K]
	X := mat.NewDense(n, p.F, ds.X)
	W := mat.NewDense(p.K, p.F, w[:p.K*p.F])
	E := mat.NewDense(n, p.K, out)
	E.Mul(X, W.T())
	return out
}

// Loss is the Hamming distance between y and truth divided by the length,
// computed as a count over the length so that an all-wrong labelling has
// loss exactly 1.
func Loss(truth, y []int) float64 {
	c := 0
	for t := range truth {
		if truth[t] != y[t] {
			c++
		}
	}
	return float64(c) / float64(len(truth))
}

// Score returns <w, φ(x, y)> for a word with emission scores E.
func Score(E, first, last, trans []float64, K int, y []int) float64 {
	L := len(y)
	s := first[y[0]] + last[y[L-1]]
	for t, k := range y {
		s += E[t*K+k]
	}
	for t := 0; t+1 < L; t++ {
		s += trans[y[t]+K*y[t+1]]
	}
	return s
}

// parts splits w into its first, last and transition parts.
func (p *Problem) parts(w []float64) (first, last, trans []float64) {
	return w[p.offFirst:p.offLast], w[p.offLast:p.offTrans], w[p.offTrans:p.D]
}

// AddFeatures performs dst += c·φ(x_i, y) for word wd of ds.
func (p *Problem) AddFeatures(dst []float64, ds *Dataset, wd Word, y []int, c float64) {
	K, F := p.K, p.F
	for t, k := range y {
		x := ds.X[(wd.Start+t)*F : (wd.Start+t+1)*F]
		blk := dst[k*F : (k+1)*F]
		for f, v := range x {
			blk[f] += c * v
		}
	}
	L := len(y)
	dst[p.offFirst+y[0]] += c
	dst[p.offLast+y[L-1]] += c
	for t := 0; t+1 < L; t++ {
		dst[p.offTrans+y[t]+K*y[t+1]] += c
	}
}

func maxLen(ds *Dataset) int {
	m := 0
	for _, w := range ds.Words {
		if w.Len > m {
			m = w.Len
		}
	}
	return m
}
