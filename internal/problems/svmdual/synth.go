package svmdual

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Generate draws l examples in R^d from two Gaussian classes: y = ±1 with
// equal probability and z = y·(separation/2)·u + ε, u a random unit vector
// and ε standard normal. With separation around 2–4 the classes overlap a
// little, so some α_i sit at C (margin violators), some strictly inside
// (on the margin) and most at 0. Deterministic from seed.
func Generate(l, d int, separation float64, seed int64) (*mat.Dense, []float64, error) {
	if l < 1 || d < 1 {
		return nil, nil, fmt.Errorf("l and d must be ≥ 1, got l = %d, d = %d", l, d)
	}
	if separation < 0 || math.IsNaN(separation) || math.IsInf(separation, 0) {
		return nil, nil, fmt.Errorf("separation must be a finite number ≥ 0, got %v", separation)
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x73766d))
	u := make([]float64, d)
	nu := 0.0
	for nu == 0 {
		nu = 0
		for j := range u {
			u[j] = rng.NormFloat64()
			nu += u[j] * u[j]
		}
	}
	nu = math.Sqrt(nu)
	z := mat.NewDense(l, d, nil)
	y := make([]float64, l)
	for i := 0; i < l; i++ {
		y[i] = 1
		if rng.IntN(2) == 0 {
			y[i] = -1
		}
		for j := 0; j < d; j++ {
			z.Set(i, j, y[i]*separation/2*u[j]/nu+rng.NormFloat64())
		}
	}
	return z, y, nil
}
