package gflasso

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// SimParams are the parameters of the simulation.
type SimParams struct {
	N, J, K int
	Group   int     // tasks per group (10)
	Frac1   float64 // fraction of rows shared by one group (0.1)
	Frac2   float64 // fraction of rows shared by two adjacent groups (0.05)
	Frac3   float64 // fraction of rows shared by three adjacent groups (0.01)
	Noise   float64 // noise standard deviation (1)
	Seed    int64
}

// DefaultSim returns the paper's setup: N=200, J=50, K=20, groups of 10,
// row fractions 0.1, 0.05, 0.01, noise sd 1.
func DefaultSim(seed int64) SimParams {
	return SimParams{N: 200, J: 50, K: 20, Group: 10, Frac1: 0.1, Frac2: 0.05, Frac3: 0.01, Noise: 1, Seed: seed}
}

// Simulated is a simulated data set with the coefficients it came from.
type Simulated struct {
	X, Y, B *mat.Dense
}

// Simulate draws a data set by the procedure of Chen et al.'s simulation
// code for genetic association mapping, which the paper follows:
//
//  1. X is N×J standard normal; each column is then standardised to mean 0
//     and standard deviation 1 (with the N−1 normaliser).
//  2. If K ≥ Group: the tasks form NG = round(K/Group) groups of Group
//     consecutive columns (group g is columns [g·Group, (g+1)·Group) cut at
//     K; columns from NG·Group on belong to no group and keep B = 0). For
//     each group, round(Frac1·J) rows drawn without replacement get B = 1 on
//     the group's columns; for each pair of adjacent groups, round(Frac2·J)
//     rows get 1 on both groups' columns; for each triple of adjacent
//     groups, round(Frac3·J) rows get 1 on all three. Rounding is half away
//     from zero: for J = 50 that is 5, 3 and 1 rows.
//  3. If K < Group: B is J×K standard normal with the entries below the
//     median of all entries set to 0.
//  4. Y = XB + Noise·E with E standard normal.
//
// Random draws come, in this order (X, groups, pairs, triples, B when
// K < Group, noise), from one PCG stream seeded by Seed.
func Simulate(sp SimParams) (*Simulated, error) {
	if sp.N < 2 || sp.J < 1 || sp.K < 1 {
		return nil, fmt.Errorf("gflasso: simulation needs n ≥ 2, j ≥ 1, k ≥ 1, got n=%d, j=%d, k=%d", sp.N, sp.J, sp.K)
	}
	if sp.Group < 1 {
		return nil, fmt.Errorf("gflasso: group must be at least 1, got %d", sp.Group)
	}
	for _, f := range []float64{sp.Frac1, sp.Frac2, sp.Frac3} {
		if !(f >= 0 && f <= 1) {
			return nil, fmt.Errorf("gflasso: row fractions must lie in [0, 1], got %v", f)
		}
	}
	if !(sp.Noise >= 0) || math.IsInf(sp.Noise, 0) {
		return nil, fmt.Errorf("gflasso: noise must be a number ≥ 0, got %v", sp.Noise)
	}
	rng := rand.New(rand.NewPCG(uint64(sp.Seed), 0x5eed6f1a550))
	n, j, k := sp.N, sp.J, sp.K
	X := mat.NewDense(n, j, nil)
	for i := 0; i < n; i++ {
		for a := 0; a < j; a++ {
			X.Set(i, a, rng.NormFloat64())
		}
	}
	for a := 0; a < j; a++ {
		mean := 0.0
		for i := 0; i < n; i++ {
			mean += X.At(i, a)
		}
		mean /= float64(n)
		ss := 0.0
		for i := 0; i < n; i++ {
			d := X.At(i, a) - mean
			ss += d * d
		}
		sd := math.Sqrt(ss / float64(n-1))
		for i := 0; i < n; i++ {
			v := X.At(i, a) - mean
			if sd > 0 {
				v /= sd
			}
			X.Set(i, a, v)
		}
	}
	B := mat.NewDense(j, k, nil)
	if k >= sp.Group {
		ng := int(math.Round(float64(k) / float64(sp.Group)))
		cols := func(g int) (int, int) {
			lo, hi := g*sp.Group, (g+1)*sp.Group
			return min(lo, k), min(hi, k)
		}
		set := func(count int, frac float64) {
			for g := 0; g+count <= ng; g++ {
				rows := rng.Perm(j)[:int(math.Round(frac*float64(j)))]
				for _, r := range rows {
					for h := g; h < g+count; h++ {
						lo, hi := cols(h)
						for c := lo; c < hi; c++ {
							B.Set(r, c, 1)
						}
					}
				}
			}
		}
		set(1, sp.Frac1)
		set(2, sp.Frac2)
		set(3, sp.Frac3)
	} else {
		vals := make([]float64, 0, j*k)
		for a := 0; a < j; a++ {
			for c := 0; c < k; c++ {
				v := rng.NormFloat64()
				B.Set(a, c, v)
				vals = append(vals, v)
			}
		}
		sort.Float64s(vals)
		var med float64
		if m := len(vals); m%2 == 1 {
			med = vals[m/2]
		} else {
			med = (vals[m/2-1] + vals[m/2]) / 2
		}
		for a := 0; a < j; a++ {
			for c := 0; c < k; c++ {
				if B.At(a, c) < med {
					B.Set(a, c, 0)
				}
			}
		}
	}
	Y := mat.NewDense(n, k, nil)
	Y.Mul(X, B)
	for i := 0; i < n; i++ {
		for c := 0; c < k; c++ {
			Y.Set(i, c, Y.At(i, c)+sp.Noise*rng.NormFloat64())
		}
	}
	return &Simulated{X: X, Y: Y, B: B}, nil
}
