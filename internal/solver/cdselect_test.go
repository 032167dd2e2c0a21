package solver

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// selectTop keeps the k best violators that a full sort would keep, on
// scores with many ties (broken by the index) and on distinct ones.
func TestSelectTopMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 2000; trial++ {
		n := 1 + rng.IntN(300)
		k := 1 + rng.IntN(n)
		v := make([]cdViol, n)
		for i := range v {
			v[i] = cdViol{j: i, score: rng.Float64()}
			if trial%2 == 0 {
				v[i].score = float64(rng.IntN(5))
			}
		}
		rng.Shuffle(n, func(a, b int) { v[a], v[b] = v[b], v[a] })
		want := slices.Clone(v)
		slices.SortFunc(want, func(a, b cdViol) int {
			if cdBetter(a, b) {
				return -1
			}
			if cdBetter(b, a) {
				return 1
			}
			return 0
		})
		selectTop(v, k)
		got, exp := make([]int, k), make([]int, k)
		for i := range k {
			got[i], exp[i] = v[i].j, want[i].j
		}
		slices.Sort(got)
		slices.Sort(exp)
		if !slices.Equal(got, exp) {
			t.Fatalf("n=%d k=%d: selectTop keeps %v, a sort %v", n, k, got, exp)
		}
	}
}
