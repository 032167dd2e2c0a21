package ssvm

// averageInto sets dst[j] = a·dst[j] + r·w[j] with both products rounded
// before the sum (no fused multiply-add): the values of floats.Scale(a,
// dst) followed by floats.AddScaled(dst, r, w), in one sweep instead of
// two. len(w) must be at least len(dst).
func averageInto(dst, w []float64, a, r float64) {
	averageSSE2(dst, w[:len(dst)], a, r)
}

//go:noescape
func averageSSE2(dst, w []float64, a, r float64)
