package ssvm

import (
	"fmt"
	"unsafe"

	"gonum.org/v1/gonum/floats"
)

// sparseRows holds the nonzero features of every letter of a data set so
// that a letter's emission score for one label, <w_k, x_t>, is a sum over
// its few nonzero features (28 or so of OCR's 129) instead of a dense dot
// product, and the update w_k += a·x_t touches only those features.
//
// The scores are bit-identical to gonum's dense dot product (floats.Dot):
// that kernel keeps four partial sums, feature f going to sum f mod 4 over
// the first 4⌊F/4⌋ features and the remaining features to sum 0 after them,
// and returns (s1+s3) + (s0+s2). The nonzero features of a letter are
// stored in that order, lane by lane, so the same partial sums are formed
// from the same terms; a zero feature only adds an exact zero, which leaves
// a partial sum unchanged (the sums start at +0, so a −0 term cannot flip a
// sign). With binary features (every stored value exactly 1, as OCR's
// pixels and constant) the product x_f·w_f is w_f itself and is not formed.
// Only a non-finite weight on a zero feature would differ (0·Inf is NaN in
// the dense product); such a run has failed already.
type sparseRows struct {
	F      int
	binary bool      // every stored value is exactly 1
	off    []int32   // letter j's lanes 0–3 and tail: idx[off[5j+r]:off[5j+r+1]], r = 0..4
	idx    []uint16  // feature indices, increasing within a lane
	val    []float64 // their values (nil when binary)
}

const sparseLanes = 5 // the dense kernel's four partial sums, then its tail

// newSparseRows indexes the nonzero features of every letter of ds.
func newSparseRows(ds *Dataset) (*sparseRows, error) {
	F := ds.Feat
	N := ds.Letters()
	nnz := 0
	binary := true
	for _, v := range ds.X {
		if v != 0 {
			nnz++
			if v != 1 {
				binary = false
			}
		}
	}
	if nnz > 1<<31-1 || len(ds.X) > 1<<31-1 {
		return nil, fmt.Errorf("data set %s: %d feature values, more than the sparse index holds", ds.Name, len(ds.X))
	}
	if F > 1<<16 {
		return nil, fmt.Errorf("data set %s: %d features per letter, at most %d", ds.Name, F, 1<<16)
	}
	s := &sparseRows{F: F, binary: binary, off: make([]int32, sparseLanes*N+1), idx: make([]uint16, 0, nnz)}
	if !binary {
		s.val = make([]float64, 0, nnz)
	}
	body := F / 4 * 4 // features summed lane by lane; the rest form the tail
	for j := 0; j < N; j++ {
		x := ds.X[j*F : (j+1)*F]
		for r := 0; r < sparseLanes; r++ {
			s.off[sparseLanes*j+r] = int32(len(s.idx))
			lo, step := r, 4
			if r == 4 {
				lo, step = body, 1
			}
			hi := body
			if r == 4 {
				hi = F
			}
			for f := lo; f < hi; f += step {
				if x[f] != 0 {
					s.idx = append(s.idx, uint16(f))
					if !binary {
						s.val = append(s.val, x[f])
					}
				}
			}
		}
	}
	s.off[sparseLanes*N] = int32(len(s.idx))
	return s, nil
}

// dot returns <w, x_j> for a weight block w of length F, bit-identical to
// floats.Dot(w, x_j).
func (s *sparseRows) dot(j int, w []float64) float64 {
	o := s.off[sparseLanes*j : sparseLanes*j+sparseLanes+1]
	w = w[:s.F]
	var a0, a1, a2, a3 float64
	if s.binary {
		for _, f := range s.idx[o[0]:o[1]] {
			a0 += w[f]
		}
		for _, f := range s.idx[o[1]:o[2]] {
			a1 += w[f]
		}
		for _, f := range s.idx[o[2]:o[3]] {
			a2 += w[f]
		}
		for _, f := range s.idx[o[3]:o[4]] {
			a3 += w[f]
		}
		for _, f := range s.idx[o[4]:o[5]] {
			a0 += w[f]
		}
		return (a1 + a3) + (a0 + a2)
	}
	v := s.val
	for q := o[0]; q < o[1]; q++ {
		a0 += v[q] * w[s.idx[q]]
	}
	for q := o[1]; q < o[2]; q++ {
		a1 += v[q] * w[s.idx[q]]
	}
	for q := o[2]; q < o[3]; q++ {
		a2 += v[q] * w[s.idx[q]]
	}
	for q := o[3]; q < o[4]; q++ {
		a3 += v[q] * w[s.idx[q]]
	}
	for q := o[4]; q < o[5]; q++ {
		a0 += v[q] * w[s.idx[q]]
	}
	return (a1 + a3) + (a0 + a2)
}

// emissions writes E[t·K+k] = <w_k, x_t> for the letters of word wd from
// the emission weights in feature-major order, wt[f·K+k] = w_k[f] (see
// transposeEmissions); acc is scratch of length 4K. Each of a letter's
// nonzero features adds its row of K weights to the K labels' partial sums
// at once, each sum receiving its terms in the order of dot, so the scores
// are the same bit for bit.
func (s *sparseRows) emissions(wd Word, K int, wt, E, acc []float64) {
	wt = wt[:K*s.F]
	acc = acc[:4*K]
	lanes := [sparseLanes][]float64{acc[:K], acc[K : 2*K], acc[2*K : 3*K], acc[3*K : 4*K], acc[:K]}
	a0, a1, a2, a3 := lanes[0], lanes[1], lanes[2], lanes[3]
	for t := 0; t < wd.Len; t++ {
		j := wd.Start + t
		o := s.off[sparseLanes*j : sparseLanes*j+sparseLanes+1]
		if hasRows26 && s.binary && K == 26 {
			// OCR's alphabet: the whole letter by the vector kernel
			// (the same sums in the same order).
			emitLetter26(E[t*K:(t+1)*K], wt, s.idx, o, acc)
			continue
		}
		zero(acc)
		for r, ar := range lanes {
			if !s.binary {
				for q := o[r]; q < o[r+1]; q++ {
					f := int(s.idx[q])
					floats.AddScaled(ar, s.val[q], wt[f*K:f*K+K]) // ar[k] += x_f·w_k[f]
				}
				continue
			}
			// Binary: ar[k] += w_k[f] for each f of the lane in turn, four
			// rows per sweep over the K sums (the same additions in the
			// same order, fewer loads and stores of the sums).
			idx := s.idx[o[r]:o[r+1]]
			for ; len(idx) >= 4; idx = idx[4:] {
				f0, f1, f2, f3 := int(idx[0])*K, int(idx[1])*K, int(idx[2])*K, int(idx[3])*K
				r0, r1, r2, r3 := wt[f0:f0+K], wt[f1:f1+K], wt[f2:f2+K], wt[f3:f3+K]
				r0, r1, r2, r3 = r0[:len(ar)], r1[:len(ar)], r2[:len(ar)], r3[:len(ar)]
				for k, v := range ar {
					ar[k] = (((v + r0[k]) + r1[k]) + r2[k]) + r3[k]
				}
			}
			for ; len(idx) >= 2; idx = idx[2:] {
				f0, f1 := int(idx[0])*K, int(idx[1])*K
				r0, r1 := wt[f0:f0+K], wt[f1:f1+K]
				r0, r1 = r0[:len(ar)], r1[:len(ar)]
				for k, v := range ar {
					ar[k] = (v + r0[k]) + r1[k]
				}
			}
			for _, f := range idx {
				r0 := wt[int(f)*K : int(f)*K+K]
				r0 = r0[:len(ar)]
				for k, v := range ar {
					ar[k] = v + r0[k]
				}
			}
		}
		e := E[t*K : (t+1)*K]
		for k := range e {
			e[k] = (a1[k] + a3[k]) + (a0[k] + a2[k])
		}
	}
}

// transposeEmissions writes the K emission blocks of w (w_k[f] at k·F+f) in
// feature-major order to wt (at f·K+k).
func transposeEmissions(w, wt []float64, K, F int) {
	for k := 0; k < K; k++ {
		for f, v := range w[k*F : (k+1)*F] {
			wt[f*K+k] = v
		}
	}
}

// untransposeEmissions writes the feature-major emission weights wt (w_k[f]
// at f·K+k) to the K emission blocks of w (at k·F+f).
func untransposeEmissions(wt, w []float64, K, F int) {
	for k := 0; k < K; k++ {
		blk := w[k*F : (k+1)*F]
		for f := range blk {
			blk[f] = wt[f*K+k]
		}
	}
}

// emissionsGather is emissions from w in its own layout (label-major), one
// sparse dot product per label; for callers that change w densely.
func (s *sparseRows) emissionsGather(wd Word, K int, w, E []float64) {
	F := s.F
	for t := 0; t < wd.Len; t++ {
		e := E[t*K : (t+1)*K]
		for k := range e {
			e[k] = s.dot(wd.Start+t, w[k*F:(k+1)*F])
		}
	}
}

// axpy performs dst += a·x_j on a block dst of length F, bit-identical to
// floats.AddScaled(dst, a, x_j) as long as dst holds no −0 (adding the
// exact zero a·0 is then a no-op).
func (s *sparseRows) axpy(j int, a float64, dst []float64) {
	lo, hi := s.off[sparseLanes*j], s.off[sparseLanes*j+sparseLanes]
	dst = dst[:s.F]
	if s.binary {
		for _, f := range s.idx[lo:hi] {
			dst[f] += a
		}
		return
	}
	for q := lo; q < hi; q++ {
		dst[s.idx[q]] += a * s.val[q]
	}
}

// addRows performs w_k += r_k·x_j for every label k on the feature-major
// emission weights wt (wt[f·K+k] += x_jf·r[k] for each nonzero feature f of
// letter j in turn), bit-identical to the label-by-label updates
// floats.AddScaled(w_k, r_k, x_j) for the labels where r_k ≠ 0 as long as
// wt holds no −0 (the other labels then add exact zeros, which are no-ops).
// r has length K; r26 is scratch for OCR's alphabet.
func (s *sparseRows) addRows(j int, r []float64, K int, wt []float64, r26 *[26]float64) {
	lo, hi := s.off[sparseLanes*j], s.off[sparseLanes*j+sparseLanes]
	idx := s.idx[lo:hi]
	if s.binary && K == 26 {
		copy(r26[:], r)
		scatterRows26(wt, idx, r26)
		return
	}
	r = r[:K]
	for q, f := range idx {
		row := wt[int(f)*K : int(f)*K+K]
		row = row[:len(r)]
		if s.binary {
			for k, v := range r {
				row[k] += v
			}
			continue
		}
		x := s.val[int(lo)+q]
		for k, v := range r {
			row[k] += v * x
		}
	}
}

// addColumn performs w_k += a·x_j for one label k on the feature-major
// emission weights wt (wt[f·K+k] += a·x_jf), as floats.AddScaled(w_k, a,
// x_j) does on w_k as long as w_k holds no −0.
func (s *sparseRows) addColumn(j int, a float64, k, K int, wt []float64) {
	lo, hi := s.off[sparseLanes*j], s.off[sparseLanes*j+sparseLanes]
	if s.binary {
		if hasColumnKernel && len(wt) >= K*s.F && k < K {
			// Every stored feature is below F (newSparseRows), so each
			// weight written lies in wt[:K·F].
			addColumnBin(unsafe.Pointer(&wt[k]), s.idx[lo:hi], uintptr(K)*8, a)
			return
		}
		for _, f := range s.idx[lo:hi] {
			wt[int(f)*K+k] += a
		}
		return
	}
	for q := lo; q < hi; q++ {
		wt[int(s.idx[q])*K+k] += a * s.val[q]
	}
}
