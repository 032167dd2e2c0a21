//go:build !amd64

package ssvm

import "gonum.org/v1/gonum/floats"

// averageInto sets dst[j] = a·dst[j] + r·w[j] with both products rounded
// before the sum, as floats.Scale(a, dst) followed by floats.AddScaled(dst,
// r, w). len(w) must be at least len(dst).
func averageInto(dst, w []float64, a, r float64) {
	floats.Scale(a, dst)
	floats.AddScaled(dst, r, w[:len(dst)])
}
