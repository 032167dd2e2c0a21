package ssvm

import "unsafe"

// averageInto sets dst[j] = a·dst[j] + r·w[j] with both products rounded
// before the sum (no fused multiply-add): the values of floats.Scale(a,
// dst) followed by floats.AddScaled(dst, r, w), in one sweep instead of
// two. len(w) must be at least len(dst).
func averageInto(dst, w []float64, a, r float64) {
	averageSSE2(dst, w[:len(dst)], a, r)
}

//go:noescape
func averageSSE2(dst, w []float64, a, r float64)

// hasRows26 reports whether addRows26 runs as vector code.
const hasRows26 = true

// addRows26 performs dst[k] += wt[26f+k] for k < 26, for each feature f of
// idx in turn, two labels per instruction with dst held in registers:
// every dst[k] is the sequential sum of the scalar loop. dst must have 26
// entries and every f of idx must satisfy 26f + 26 ≤ len(wt) (the callers'
// sparse rows index features below F, with len(wt) = 26F).
func addRows26(dst, wt []float64, idx []uint16) {
	rows26(dst[:26], wt, idx)
}

//go:noescape
func rows26(dst, wt []float64, idx []uint16)

// prefetchRange asks for the cache lines of the n bytes at p without
// waiting for them (the loads of a later step find them in cache).
//
//go:noescape
func prefetchRange(p unsafe.Pointer, n uintptr)

// relaxAbove lets predecessor j (score pj, transition row row) replace the
// best predecessor bk[k] of every label k when pj + row[k] > cur[k].
func relaxAbove(cur []float64, bk []int, row []float64, pj float64, j int) {
	bk, row = bk[:len(cur)], row[:len(cur)]
	relaxAboveSSE2(cur, bk, row, pj, j)
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
	relaxBelowSSE2(cur, bk, row, pj, j)
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
