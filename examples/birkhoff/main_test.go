package main

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fwlab/fwlab/fw/methods"
)

// permutations calls f with every permutation of 0..n-1.
func permutations(n int, f func([]int)) {
	pi := seq(n)
	var rec func(k int)
	rec = func(k int) {
		if k == n {
			f(pi)
			return
		}
		for i := k; i < n; i++ {
			pi[k], pi[i] = pi[i], pi[k]
			rec(k + 1)
			pi[k], pi[i] = pi[i], pi[k]
		}
	}
	rec(0)
}

// bruteMin is min over every permutation π of Σ_i c[i][π(i)].
func bruteMin(c []float64, n int) float64 {
	best := math.Inf(1)
	permutations(n, func(pi []int) {
		s := 0.0
		for i, j := range pi {
			s += c[i*n+j]
		}
		best = math.Min(best, s)
	})
	return best
}

// TestAssignIsOptimal: the Hungarian algorithm's assignment costs what the
// best of all 720 permutations of 6 costs, on real costs and on small
// integer costs full of ties, and is a permutation.
func TestAssignIsOptimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 6
	for trial := 0; trial < 40; trial++ {
		c := make([]float64, n*n)
		for i := range c {
			if trial%2 == 0 {
				c[i] = rng.NormFloat64()
			} else {
				c[i] = float64(rng.IntN(3))
			}
		}
		pi := Assign(c, n)
		seen := make([]bool, n)
		got := 0.0
		for i, j := range pi {
			if seen[j] {
				t.Fatalf("trial %d: %v is not a permutation", trial, pi)
			}
			seen[j] = true
			got += c[i*n+j]
		}
		if want := bruteMin(c, n); math.Abs(got-want) > 1e-12 {
			t.Errorf("trial %d: assignment costs %v, the best permutation %v", trial, got, want)
		}
	}
}

// TestNearestDoublyStochastic: pfw's last iterate is doubly stochastic, its
// reported gap is the gap enumerated over all permutations, and its
// objective agrees with afw's (a second method) within their gaps.
func TestNearestDoublyStochastic(t *testing.T) {
	p := NewNearest(6, 3, 0.05, 4)
	n := p.N
	objs := map[string]float64{}
	for _, algo := range []string{"pfw", "afw"} {
		res, err := methods.Run(context.Background(), p, methods.Options{Algorithm: algo, GapTol: 1e-12, MaxIters: 20000}, nil)
		if err != nil {
			t.Fatal(err)
		}
		x := res.X
		for i := 0; i < n; i++ {
			row, col := 0.0, 0.0
			for j := 0; j < n; j++ {
				if x[i*n+j] < -1e-15 || x[j*n+i] < -1e-15 {
					t.Fatalf("%s: a negative entry", algo)
				}
				row, col = row+x[i*n+j], col+x[j*n+i]
			}
			if math.Abs(row-1) > 1e-12 || math.Abs(col-1) > 1e-12 {
				t.Errorf("%s: row %d sums to %v, column %d to %v", algo, i, row, i, col)
			}
		}
		g := make([]float64, n*n)
		gx := 0.0
		for k := range g {
			g[k] = (x[k] - p.T[k]) / float64(n*n)
			gx += g[k] * x[k]
		}
		if gap := gx - bruteMin(g, n); math.Abs(gap-res.Summary.Gap) > 1e-14 {
			t.Errorf("%s: reported gap %v, enumerated %v", algo, res.Summary.Gap, gap)
		}
		if res.Summary.Gap > 1e-12 {
			t.Errorf("%s: gap %v (%s)", algo, res.Summary.Gap, res.Summary.Status)
		}
		objs[algo] = p.Objective(x)
	}
	if d := math.Abs(objs["pfw"] - objs["afw"]); d > 2e-12 {
		t.Errorf("pfw reaches F = %v, afw %v", objs["pfw"], objs["afw"])
	}
}
