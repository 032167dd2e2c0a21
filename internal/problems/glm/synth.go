package glm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Synthetic is a generated data set with the coefficients it came from.
type Synthetic struct {
	X        *mat.Dense
	Y        []float64
	BetaTrue []float64 // k nonzeros
	Support  []int     // indices of the nonzeros of BetaTrue, increasing
}

// Generate draws a data set for the loss, deterministically from seed.
// X has independent standard normal entries; β_true has k nonzeros at random
// positions with random signs. Responses:
//   - lasso: y = Xβ + noise·ε, |β_j| uniform in [1, 2];
//   - logistic: y = sign(xᵀβ + noise·ε), ε standard logistic (noise = 1 is
//     the logistic model itself), |β_j| uniform in [0.5, 1];
//   - poisson: y ~ Poisson(exp(xᵀβ)) with |β_j| uniform in [0.5, 1]/√k, so
//     that xᵀβ has standard deviation below 1 and the counts stay moderate
//     (noise is not used).
//
// With the defaults of the scenarios (λ a fraction of λ_max) the penalised
// solution keeps most of the true support and few spurious features.
func Generate(loss Loss, n, p, k int, noise float64, seed int64) (*Synthetic, error) {
	if n < 1 || p < 1 {
		return nil, fmt.Errorf("n and p must be ≥ 1, got n = %d, p = %d", n, p)
	}
	if k < 0 || k > p {
		return nil, fmt.Errorf("k must lie in [0, p] = [0, %d], got %d", p, k)
	}
	if noise < 0 || math.IsNaN(noise) || math.IsInf(noise, 0) {
		return nil, fmt.Errorf("noise must be a finite number ≥ 0, got %v", noise)
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x676c6d))
	x := mat.NewDense(n, p, nil)
	raw := x.RawMatrix().Data
	for i := range raw {
		raw[i] = rng.NormFloat64()
	}
	perm := rng.Perm(p)[:k]
	support := append([]int(nil), perm...)
	slices.Sort(support)
	beta := make([]float64, p)
	lo, hi := 1.0, 2.0
	switch loss {
	case Logistic:
		lo, hi = 0.5, 1
	case Poisson:
		s := 1 / math.Sqrt(float64(max(k, 1)))
		lo, hi = 0.5*s, s
	}
	for _, j := range support {
		v := lo + (hi-lo)*rng.Float64()
		if rng.IntN(2) == 0 {
			v = -v
		}
		beta[j] = v
	}
	z := make([]float64, n)
	for i := 0; i < n; i++ {
		for _, j := range support {
			z[i] += x.At(i, j) * beta[j]
		}
	}
	y := make([]float64, n)
	pois := distuv.Poisson{Src: rng}
	for i := range y {
		switch loss {
		case Squared:
			y[i] = z[i] + noise*rng.NormFloat64()
		case Logistic:
			u := rng.Float64()
			for u == 0 {
				u = rng.Float64()
			}
			eps := math.Log(u / (1 - u))
			if z[i]+noise*eps >= 0 {
				y[i] = 1
			} else {
				y[i] = -1
			}
		case Poisson:
			pois.Lambda = math.Exp(z[i])
			y[i] = pois.Rand()
		default:
			return nil, fmt.Errorf("glm: unknown loss %d", int(loss))
		}
	}
	return &Synthetic{X: x, Y: y, BetaTrue: beta, Support: support}, nil
}
