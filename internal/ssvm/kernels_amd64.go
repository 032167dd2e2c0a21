package ssvm

import (
	"slices"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// useAVX2 selects the 256-bit kernels (checked once at start; the SSE2
// ones, which every amd64 CPU has, otherwise). Both compute the same sums
// in the same order, so the results are the same bit for bit.
var useAVX2 = cpu.X86.HasAVX2

// averageInto sets dst[j] = a·dst[j] + r·w[j] with both products rounded
// before the sum (no fused multiply-add): the values of floats.Scale(a,
// dst) followed by floats.AddScaled(dst, r, w), in one sweep instead of
// two. len(w) must be at least len(dst).
func averageInto(dst, w []float64, a, r float64) {
	averageSSE2(dst, w[:len(dst)], a, r)
}

//go:noescape
func averageSSE2(dst, w []float64, a, r float64)

// hasRows26 reports whether emitLetter26 runs as vector code.
const hasRows26 = true

// hasColumnKernel reports whether addColumnBin is assembly here.
const hasColumnKernel = true

// prefetchRange asks for the cache lines of the n bytes at p without
// waiting for them (the loads of a later step find them in cache).
//
//go:noescape
func prefetchRange(p unsafe.Pointer, n uintptr)

// relaxAbove lets predecessor j (score pj, transition row row) replace the
// best predecessor bk[k] of every label k when pj + row[k] > cur[k].
func relaxAbove(cur []float64, bk []int, row []float64, pj float64, j int) {
	bk, row = bk[:len(cur)], row[:len(cur)]
	if useAVX2 {
		relaxAboveAVX2(cur, bk, row, pj, j)
	} else {
		relaxAboveSSE2(cur, bk, row, pj, j)
	}
	if n := len(cur); n%2 == 1 {
		if s := pj + row[n-1]; s > cur[n-1] {
			cur[n-1] = s
			bk[n-1] = j
		}
	}
}

// relaxBelow is relaxAbove replacing on ties too.
func relaxBelow(cur []float64, bk []int, row []float64, pj float64, j int) {
	bk, row = bk[:len(cur)], row[:len(cur)]
	if useAVX2 {
		relaxBelowAVX2(cur, bk, row, pj, j)
	} else {
		relaxBelowSSE2(cur, bk, row, pj, j)
	}
	if n := len(cur); n%2 == 1 {
		if s := pj + row[n-1]; s >= cur[n-1] {
			cur[n-1] = s
			bk[n-1] = j
		}
	}
}

//go:noescape
func relaxAboveSSE2(cur []float64, bk []int, row []float64, pj float64, j int)

//go:noescape
func relaxBelowSSE2(cur []float64, bk []int, row []float64, pj float64, j int)

// emitLetter26 writes to e the 26 emission scores of one letter with
// features idx[o[r]:o[r+1]] (lanes 0–3, then the tail, as stored by
// sparseRows; o has 6 entries), binary values and feature-major weights wt
// (every feature f below len(wt)/26): the sums of sparseRows.emissions'
// scalar path, in the same order. acc is scratch of 78 entries.
func emitLetter26(e, wt []float64, idx []uint16, o []int32, acc []float64) {
	_ = o[5]
	_ = idx[:o[5]] // idx holds every lane
	if useAVX2 {
		letter26AVX2(e[:26], wt, idx, o, acc[:78])
		return
	}
	letter26(e[:26], wt, idx, o, acc[:78])
}

//go:noescape
func letter26AVX2(e, wt []float64, idx []uint16, o []int32, acc []float64)

//go:noescape
func letter26(e, wt []float64, idx []uint16, o []int32, acc []float64)

// scatterRows26 performs wt[26f+k] += r[k] for k < 26, for each feature f of
// idx in turn (every f below len(wt)/26): the update of a letter's rows
// of feature-major emission weights, one vector sweep per row.
func scatterRows26(wt []float64, idx []uint16, r *[26]float64) {
	if len(idx) == 0 {
		return
	}
	_ = wt[26*int(slices.Max(idx))+25]
	if useAVX2 {
		addRowsTo26AVX2(wt, idx, r)
		return
	}
	addRowsTo26(wt, idx, r)
}

//go:noescape
func addRowsTo26AVX2(wt []float64, idx []uint16, r *[26]float64)

//go:noescape
func addRowsTo26(wt []float64, idx []uint16, r *[26]float64)

// pruneCandidates is pruneCandidatesGo by vector code (the same
// candidates, j* and count).
func pruneCandidates(prev, ub, lb []float64, cand []int) (js, n int) {
	if len(prev) == 0 {
		return 0, 0
	}
	_, _, _ = ub[len(prev)-1], lb[len(prev)-1], cand[len(prev)-1]
	return pruneSSE2(prev, ub, lb, cand)
}

//go:noescape
func pruneSSE2(prev, ub, lb []float64, cand []int) (js, n int)

//go:noescape
func relaxAboveAVX2(cur []float64, bk []int, row []float64, pj float64, j int)

//go:noescape
func relaxBelowAVX2(cur []float64, bk []int, row []float64, pj float64, j int)

// fillRow sets cur[k] = pj + row[k] and bk[k] = j for every label k.
func fillRow(cur []float64, bk []int, row []float64, pj float64, j int) {
	bk, row = bk[:len(cur)], row[:len(cur)]
	q := 0
	if useAVX2 {
		fillRowAVX2(cur, bk, row, pj, j)
		q = len(cur) &^ 3
	}
	for k := q; k < len(cur); k++ {
		cur[k] = pj + row[k]
		bk[k] = j
	}
}

// addRow performs cur[k] += e[k] + a for every label k but skip, and
// cur[skip] += e[skip] (skip < 0: none; a = 0 and skip < 0: cur[k] += e[k]).
func addRow(cur, e []float64, a float64, skip int) {
	e = e[:len(cur)]
	aug := skip >= 0
	var keep float64
	if aug {
		keep = cur[skip]
	}
	q := 0
	if useAVX2 {
		addRowAVX2(cur, e, a, aug)
		q = len(cur) &^ 3
	}
	if aug {
		for k := q; k < len(cur); k++ {
			cur[k] += e[k] + a
		}
		cur[skip] = keep + e[skip]
		return
	}
	for k := q; k < len(cur); k++ {
		cur[k] += e[k]
	}
}

//go:noescape
func fillRowAVX2(cur []float64, bk []int, row []float64, pj float64, j int)

//go:noescape
func addRowAVX2(cur, e []float64, a float64, aug bool)

// residual26 sets r[k] = e[k] − mu[k] for k < 26 and returns the mask of
// the labels where r[k] ≠ 0 (with AVX2; ok is false without, and nothing
// is done).
func residual26(r, e, mu *[26]float64) (mask uint32, ok bool) {
	if !useAVX2 {
		return 0, false
	}
	return residual26AVX2(r, e, mu), true
}

//go:noescape
func residual26AVX2(r, e, mu *[26]float64) (mask uint32)

// prune26 is pruneCandidates for 26 labels by one AVX2 kernel, with the
// candidates as a bit mask: j* and the mask of the candidates (ok false
// when an entry of prev is not finite, or without AVX2: use
// pruneCandidates).
func prune26(prev, ub, lb *[26]float64) (js int, mask uint32, ok bool) {
	if !useAVX2 {
		return 0, 0, false
	}
	return prune26AVX2(prev, ub, lb)
}

//go:noescape
func prune26AVX2(prev, ub, lb *[26]float64) (js int, mask uint32, ok bool)

// relaxAll26 performs fillRow from predecessor js, then relaxAbove for
// each j of the mask above in increasing order and relaxBelow for each j
// of below in decreasing order, for 26 labels (every j below 26) in one
// AVX2 call: the same comparisons and sums.
func relaxAll26(prev, cur *[26]float64, bk *[26]int, tT *[676]float64, js int, above, below uint32) {
	relaxAll26AVX2(prev, cur, bk, tT, js, above&(1<<26-1), below&(1<<26-1))
}

//go:noescape
func relaxAll26AVX2(prev *[26]float64, cur *[26]float64, bk *[26]int, tT *[676]float64, js int, above, below uint32)

// viterbiPos26 is one middle position of Viterbi for 26 labels in one AVX2
// call: prune26, relaxAll26 from j* with the candidates above and below it,
// then addRow(cur, e, a, skip). It reports false, having written nothing,
// when prev is not finite or without AVX2.
func viterbiPos26(prev, cur *[26]float64, bk *[26]int, tT *[676]float64, ub, lb, e *[26]float64, a float64, skip int) bool {
	if !useAVX2 || skip >= 26 {
		return false
	}
	return viterbiPos26AVX2(prev, cur, bk, tT, ub, lb, e, a, skip)
}

//go:noescape
func viterbiPos26AVX2(prev, cur *[26]float64, bk *[26]int, tT *[676]float64, ub, lb, e *[26]float64, a float64, skip int) (ok bool)

//go:noescape
func addColumnBin(col unsafe.Pointer, idx []uint16, stride uintptr, a float64)
