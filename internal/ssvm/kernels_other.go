//go:build !amd64

package ssvm

import (
	"unsafe"

	"gonum.org/v1/gonum/floats"
)

// averageInto sets dst[j] = a·dst[j] + r·w[j] with both products rounded
// before the sum, as floats.Scale(a, dst) followed by floats.AddScaled(dst,
// r, w). len(w) must be at least len(dst).
func averageInto(dst, w []float64, a, r float64) {
	floats.Scale(a, dst)
	floats.AddScaled(dst, r, w[:len(dst)])
}

// hasRows26 reports whether emitLetter26 runs as vector code.
const hasRows26 = false

// useAVX2 is false: there are no 256-bit kernels here.
var useAVX2 = false

// addRows26 performs dst[k] += wt[26f+k] for k < 26, for each feature f of
// idx in turn.
func addRows26(dst, wt []float64, idx []uint16) {
	dst = dst[:26]
	for _, f := range idx {
		row := wt[int(f)*26 : int(f)*26+26]
		for k, v := range row {
			dst[k] += v
		}
	}
}

// prefetchRange is a no-op here (the data are loaded when first used).
func prefetchRange(p unsafe.Pointer, n uintptr) {}

// relaxAbove lets predecessor j (score pj, transition row row) replace the
// best predecessor bk[k] of every label k when pj + row[k] > cur[k].
func relaxAbove(cur []float64, bk []int, row []float64, pj float64, j int) {
	bk, row = bk[:len(cur)], row[:len(cur)]
	for k, c := range cur {
		if s := pj + row[k]; s > c {
			cur[k] = s
			bk[k] = j
		}
	}
}

// relaxBelow is relaxAbove replacing on ties too.
func relaxBelow(cur []float64, bk []int, row []float64, pj float64, j int) {
	bk, row = bk[:len(cur)], row[:len(cur)]
	for k, c := range cur {
		if s := pj + row[k]; s >= c {
			cur[k] = s
			bk[k] = j
		}
	}
}

// emitLetter26 writes to e the 26 emission scores of one letter with
// features idx[o[r]:o[r+1]] (lanes 0–3, then the tail; o has 6 entries),
// binary values and feature-major weights wt. acc is scratch of 78
// entries.
func emitLetter26(e, wt []float64, idx []uint16, o []int32, acc []float64) {
	a := [4][]float64{acc[:26], acc[26:52], acc[52:78], e[:26]}
	for r := range a {
		zero(a[r])
		addRows26(a[r], wt, idx[o[r]:o[r+1]])
	}
	addRows26(a[0], wt, idx[o[4]:o[5]])
	for k := range e[:26] {
		e[k] = (a[1][k] + a[3][k]) + (a[0][k] + a[2][k])
	}
}

// scatterRows26 performs wt[26f+k] += r[k] for k < 26, for each feature f
// of idx in turn.
func scatterRows26(wt []float64, idx []uint16, r *[26]float64) {
	for _, f := range idx {
		row := wt[int(f)*26 : int(f)*26+26]
		for k, v := range r {
			row[k] += v
		}
	}
}

// pruneCandidates is pruneCandidatesGo.
func pruneCandidates(prev, ub, lb []float64, cand []int) (js, n int) {
	return pruneCandidatesGo(prev, ub, lb, cand)
}

// fillRow sets cur[k] = pj + row[k] and bk[k] = j for every label k.
func fillRow(cur []float64, bk []int, row []float64, pj float64, j int) {
	bk, row = bk[:len(cur)], row[:len(cur)]
	for k, v := range row {
		cur[k] = pj + v
		bk[k] = j
	}
}

// addRow performs cur[k] += e[k] + a for every label k but skip, and
// cur[skip] += e[skip] (skip < 0: none; a = 0 and skip < 0: cur[k] += e[k]).
func addRow(cur, e []float64, a float64, skip int) {
	e = e[:len(cur)]
	if skip < 0 {
		for k := range cur {
			cur[k] += e[k]
		}
		return
	}
	for k := range cur {
		v := e[k]
		if k != skip {
			v += a
		}
		cur[k] += v
	}
}

// residual26 does nothing here (ok false: use the scalar loop).
func residual26(r, e, mu *[26]float64) (mask uint32, ok bool) { return 0, false }

// prune26 does nothing here (ok false: use pruneCandidates).
func prune26(prev, ub, lb *[26]float64) (js int, mask uint32, ok bool) { return 0, 0, false }

// relaxAll26 is never called here (prune26 never succeeds without AVX2).
func relaxAll26(prev, cur *[26]float64, bk *[26]int, tT *[676]float64, js int, above, below uint32) {
	panic("ssvm: relaxAll26 without its vector kernel")
}

// viterbiPos26 reports false here (no vector kernel).
func viterbiPos26(prev, cur *[26]float64, bk *[26]int, tT *[676]float64, ub, lb, e *[26]float64, a float64, skip int) bool {
	return false
}

// hasColumnKernel reports whether addColumnBin is assembly here.
const hasColumnKernel = false

// addColumnBin is never called here.
func addColumnBin(col unsafe.Pointer, idx []uint16, stride uintptr, a float64) {
	panic("ssvm: addColumnBin without its kernel")
}
