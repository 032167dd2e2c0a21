package gflasso

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
)

// boundRows are rows on which the oracle's row bound is tight or nearly:
// cancelling sums along the switching τ (the full-component atoms decide,
// and bound and score are the same quantity rounded two ways), a single
// entry (a one-task atom decides), and plain random rows, at scales from
// 2⁻⁴⁰ to 2⁴⁰.
func boundRows(rng *rand.Rand, c *component, n int) [][]float64 {
	k := len(c.tasks)
	var rows [][]float64
	for i := 0; i < n; i++ {
		row := make([]float64, k)
		scale := math.Ldexp(1, rng.IntN(81)-40)
		switch i % 4 {
		case 0, 1:
			if c.bTau != nil && k > 1 {
				sum := 0.0
				for a := 0; a < k-1; a++ {
					v := scale * (rng.Float64() - 0.5)
					row[a] = c.bTau[a] * v
					sum += v
				}
				delta := scale * math.Ldexp(1, -rng.IntN(40))
				row[k-1] = c.bTau[k-1] * (delta - sum)
				break
			}
			fallthrough
		case 2:
			row[rng.IntN(k)] = scale * (rng.Float64() - 0.5)
		default:
			for a := range row {
				row[a] = scale * rng.NormFloat64()
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// boundInstances are GFLASSO instances whose components have mixed-sign
// edges (balanced: the switching atoms), and edges of one sign.
func boundInstances(t *testing.T) []*Problem {
	t.Helper()
	X, Y := mixedData(8, 320, 300)
	var ps []*Problem
	for _, o := range []Options{{Lambda: 1e-4, Gamma: 100, Threshold: 0.5}, {Lambda: 1.5, Gamma: 2, Threshold: 0.5}, {Lambda: 0.3, Gamma: 7, Threshold: 0.2}} {
		p, err := New(X, Y, o)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	return ps
}

// The pruning bound is never below the score of the row it bounds: the
// property the pruned oracle's exactness rests on, tried on rows where the
// two are equal but for rounding (a bound without its inflation against
// rounding falls below the score on some of them).
func TestDualBoundNeverBelowARowsScore(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	checked, tight := 0, 0
	for pi, p := range boundInstances(t) {
		for ci, c := range p.comps {
			if !c.enumerated() || len(c.tasks) < 2 {
				continue
			}
			sums := make([]float64, 1<<len(c.tasks))
			for _, row := range boundRows(rng, c, 4000) {
				s, a, _ := c.bestAtom(row, sums)
				if a < 0 {
					continue
				}
				b := c.dualBound(row)
				checked++
				if !(b >= s) {
					t.Fatalf("instance %d component %d: bound %v below the row's score %v (row %v)", pi, ci, b, s, row)
				}
				if b <= s*(1+1e-11) {
					tight++
				}
			}
		}
	}
	if checked < 10000 || tight < checked/10 {
		t.Fatalf("%d rows checked, %d with a tight bound: the rows do not test the bound's margin", checked, tight)
	}
}

// A block whose rows are all the same row, chosen where the bound is
// tightest, goes to its first row however the split oracle's parts are run
// and by however many workers: a bound below the score would let a part
// that finishes first prune the lower rows of the others.
func TestSplitOracleIdenticalRowsGoToTheFirst(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	tried := 0
	for pi, p := range boundInstances(t) {
		for b, bi := range p.info {
			c := p.comps[bi.comp]
			kc := len(c.tasks)
			if !c.enumerated() || kc < 2 || bi.r1-bi.r0 <= 2*lmoPartRows {
				continue
			}
			sums := make([]float64, 1<<kc)
			var row []float64
			ratio := math.Inf(1)
			for _, r := range boundRows(rng, c, 4000) {
				if s, a, _ := c.bestAtom(r, sums); a >= 0 && s > 0 {
					if q := c.dualBound(r) / s; q < ratio {
						row, ratio = r, q
					}
				}
			}
			g := make([]float64, bi.size)
			for r := 0; r < bi.r1-bi.r0; r++ {
				copy(g[r*kc:(r+1)*kc], row)
			}
			g[bi.size-1] = -1e300 // the epigraph coordinate never wins
			_, atom, sign := c.bestAtom(row, sums)
			pat := make([]float64, kc)
			c.atomPattern(atom, sign, pat)
			want := p.atomVertex(b, 0, pat)
			tried++
			ways := map[string]solver.Parallel{}
			for name, par := range splitWays {
				ways[name] = par
			}
			ways["last part first"] = func(n int, f func(lo, hi int)) {
				for i := n - 1; i >= 0; i-- {
					f(i, i+1)
				}
			}
			for w := 1; w <= 8; w++ {
				ways[string(rune('0'+w))+" workers"] = workersPool(w)
			}
			for name, par := range ways {
				for rep := 0; rep < 3; rep++ {
					if got := p.LMOSplit(b, g, par); got.Key != want.Key {
						t.Fatalf("instance %d block %d, %s: split oracle %s, want the first row's %s (bound/score = 1 %+.3g)", pi, b, name, got.Key, want.Key, ratio-1)
					}
				}
			}
			if got := p.LMO(b, g); got.Key != want.Key {
				t.Fatalf("instance %d block %d: oracle %s, want the first row's %s", pi, b, got.Key, want.Key)
			}
		}
	}
	if tried == 0 {
		t.Fatal("no block spans several parts")
	}
}

// workersPool hands out parts, last first, to w goroutines, as a pool of
// w workers would in some order.
func workersPool(w int) solver.Parallel {
	return func(n int, f func(lo, hi int)) {
		next := make(chan int, n)
		for i := n - 1; i >= 0; i-- {
			next <- i
		}
		close(next)
		var wg sync.WaitGroup
		for range w {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					f(i, i+1)
				}
			}()
		}
		wg.Wait()
	}
}
