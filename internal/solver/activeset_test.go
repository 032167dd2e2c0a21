package solver

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func unit(d, i int, s float64) Vertex {
	x := make([]float64, d)
	x[i] = s
	return DenseVertex(fmt.Sprintf("e%d", i), x)
}

func TestActiveSetUpdates(t *testing.T) {
	a := NewActiveSet(unit(3, 0, 1))
	a.FWUpdate(unit(3, 1, 1), 0.25)
	a.FWUpdate(unit(3, 2, 1), 0.2)
	want := map[string]float64{"e0": 0.6, "e1": 0.2, "e2": 0.2}
	for k, w := range want {
		if math.Abs(a.Weight(k)-w) > 1e-15 {
			t.Fatalf("after FW steps μ_%s = %v, want %v", k, a.Weight(k), w)
		}
	}
	// FW toward an active vertex adds to its weight, no duplicate.
	a.FWUpdate(unit(3, 1, 1), 0.5)
	if a.Len() != 3 || math.Abs(a.Weight("e1")-0.6) > 1e-15 {
		t.Fatalf("re-adding an active vertex: len %d μ %v", a.Len(), a.Weight("e1"))
	}
	// away from e2 with γ_max = μ/(1−μ) drops it exactly.
	i := a.index["e2"]
	mu := a.w[i]
	a.AwayUpdate(i, mu/(1-mu), true)
	if a.Len() != 2 || a.Weight("e2") != 0 || math.Abs(a.Sum()-1) > 1e-15 {
		t.Fatalf("drop: len %d, μ_e2 %v, sum %v", a.Len(), a.Weight("e2"), a.Sum())
	}
	if _, ok := a.index["e2"]; ok {
		t.Fatal("a dropped vertex stays in the index (ghost atom)")
	}
	// pairwise: move all of e0's weight to e2.
	w0 := a.Weight("e0")
	a.PairwiseUpdate(unit(3, 2, 1), a.index["e0"], w0, true)
	if a.Weight("e0") != 0 || math.Abs(a.Weight("e2")-w0) > 1e-15 || a.Len() != 2 {
		t.Fatalf("pairwise drop: %v", a.w)
	}
	// collapse.
	a.FWUpdate(unit(3, 0, 1), 1)
	if a.Len() != 1 || a.Weight("e0") != 1 {
		t.Fatalf("collapse: %v", a.w)
	}
}

func TestCleanupRenormalises(t *testing.T) {
	a := NewActiveSet(unit(4, 0, 1))
	a.FWUpdate(unit(4, 1, 1), 1e-15)
	a.FWUpdate(unit(4, 2, 1), 0.5)
	if n := a.Cleanup(1e-13); n != 1 {
		t.Fatalf("cleaned %d, want 1", n)
	}
	if a.Weight("e1") != 0 || math.Abs(a.Sum()-1) > 1e-15 {
		t.Fatalf("after cleanup: %v", a.w)
	}
}

// TestCaratheodoryKeepsThePoint: a point written with many vertices of a
// d-dimensional polytope is rewritten with at most d+1 of them, same point.
func TestCaratheodoryKeepsThePoint(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const d = 3
	var verts []Vertex
	for i := 0; i < 12; i++ {
		x := make([]float64, d)
		for j := range x {
			x[j] = r.NormFloat64()
		}
		verts = append(verts, DenseVertex(fmt.Sprintf("v%d", i), x))
	}
	a := NewActiveSet(verts[0])
	for i := 1; i < len(verts); i++ {
		a.FWUpdate(verts[i], 1/float64(i+1))
	}
	before := make([]float64, d)
	a.Point(before)
	removed := a.Caratheodory(d)
	after := make([]float64, d)
	a.Point(after)
	if a.Len() > d+1 || removed != 12-a.Len() {
		t.Fatalf("|U| = %d after removing %d", a.Len(), removed)
	}
	for j := range before {
		if math.Abs(before[j]-after[j]) > 1e-12 {
			t.Fatalf("point moved: %v → %v", before, after)
		}
	}
	for i := 0; i < a.Len(); i++ {
		if _, w := a.Vertex(i); w < 0 {
			t.Fatalf("negative weight %v", w)
		}
	}
	if math.Abs(a.Sum()-1) > 1e-12 {
		t.Fatalf("sum %v", a.Sum())
	}
}

func TestScheduleSizes(t *testing.T) {
	n := 1000
	paper := Schedule{Kind: "paper", Rho: 0.1, Alpha: 0.5}
	for _, k := range []int{1, 5, 20, 50, 100, 400} {
		want := math.Ceil(float64(n) / (1 + float64(n)*math.Pow(0.9, float64(k))))
		if got := paper.Size(k, n); got != int(want) {
			t.Errorf("paper m_%d = %d, want %v", k, got, want)
		}
	}
	prev := 0
	for k := 1; k < 2000; k++ {
		m := paper.Size(k, n)
		if m < prev || m < 1 || m > n {
			t.Fatalf("paper schedule not monotone in [1, n] at k=%d: %d after %d", k, m, prev)
		}
		prev = m
	}
	if paper.Size(100000, n) != n {
		t.Error("the paper schedule must reach the full batch")
	}
	for _, c := range []struct {
		s    Schedule
		k, m int
	}{
		{Schedule{Kind: "constant", M0: 7}, 50, 7},
		{Schedule{Kind: "constant", M0: 7}, 1, 7},
		{Schedule{Kind: "geometric", M0: 2, Growth: 2}, 1, 2},
		{Schedule{Kind: "geometric", M0: 2, Growth: 2}, 4, 16},
		{Schedule{Kind: "geometric", M0: 2, Growth: 2}, 40, n},
		{Schedule{Kind: "full"}, 3, n},
	} {
		if got := c.s.Size(c.k, n); got != c.m {
			t.Errorf("%+v: m_%d = %d, want %d", c.s, c.k, got, c.m)
		}
	}
	for _, bad := range []Schedule{{Kind: "paper", Rho: 0, Alpha: .5}, {Kind: "paper", Rho: .5, Alpha: 1}, {Kind: "constant"}, {Kind: "geometric", M0: 1, Growth: 1}, {Kind: "weird"}} {
		if bad.Validate() == nil {
			t.Errorf("%+v validated", bad)
		}
	}
}

func TestSamplerDrawsDistinct(t *testing.T) {
	s := newSampler(50)
	r := iterRNG(1, 1, 0)
	counts := make([]int, 50)
	for it := 0; it < 2000; it++ {
		seen := map[int]bool{}
		for _, i := range s.draw(r, 10) {
			if seen[i] || i < 0 || i >= 50 {
				t.Fatalf("draw repeated or out of range: %d", i)
			}
			seen[i] = true
			counts[i]++
		}
	}
	// each index is drawn with probability 1/5: 400 expected of 2000 draws.
	for i, c := range counts {
		if c < 300 || c > 500 {
			t.Errorf("index %d drawn %d times, expected about 400", i, c)
		}
	}
}

// TestPaperScheduleAlpha checks the paper's schedule m_k =
// ceil(n/(1 + n(1−ρ)^{2αk})) at α ≠ 0.5 against values worked out by hand:
// with ρ = 0.5, α = 0.25 the factor is 2^{−k/2}; with ρ = 0.75, α = 0.75 it
// is 4^{−3k/2} = 8^{−k}.
func TestPaperScheduleAlpha(t *testing.T) {
	for _, c := range []struct {
		n           int
		rho, alpha  float64
		k, want     int
		explanation string
	}{
		{10, 0.5, 0.25, 2, 2, "10/(1 + 10/2) = 1.67"},
		{10, 0.5, 0.25, 4, 3, "10/(1 + 10/4) = 2.86"},
		{10, 0.5, 0.25, 8, 7, "10/(1 + 10/16) = 6.15"},
		{10, 0.5, 0.25, 12, 9, "10/(1 + 10/64) = 8.65"},
		{10, 0.5, 0.25, 20, 10, "10/(1 + 10/1024) = 9.90"},
		{100, 0.75, 0.75, 1, 8, "100/(1 + 100/8) = 7.41"},
		{100, 0.75, 0.75, 2, 40, "100/(1 + 100/64) = 39.02"},
		{100, 0.75, 0.75, 3, 84, "100/(1 + 100/512) = 83.66"},
		{100, 0.75, 0.75, 5, 100, "100/(1 + 100/32768) = 99.70"},
	} {
		s := Schedule{Kind: "paper", Rho: c.rho, Alpha: c.alpha}
		if got := s.Size(c.k, c.n); got != c.want {
			t.Errorf("ρ=%v α=%v n=%d: m_%d = %d, want %d (%s)", c.rho, c.alpha, c.n, c.k, got, c.want, c.explanation)
		}
	}
}
