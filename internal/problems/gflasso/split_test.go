package gflasso

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
)

// splitWays are ways a solver.Parallel may hand out a range: whole, in
// uneven pieces last first, and one goroutine per piece of two.
var splitWays = map[string]solver.Parallel{
	"whole": func(n int, f func(lo, hi int)) { f(0, n) },
	"pieces": func(n int, f func(lo, hi int)) {
		cuts := []int{n}
		for c := n; c > 0; {
			c = max(0, c-1-c/3)
			cuts = append(cuts, c)
		}
		for i := 0; i+1 < len(cuts); i++ {
			f(cuts[i+1], cuts[i])
		}
	},
	"concurrent": func(n int, f func(lo, hi int)) {
		var wg sync.WaitGroup
		for lo := 0; lo < n; lo += 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				f(lo, min(lo+2, n))
			}()
		}
		wg.Wait()
	},
}

// The split oracle of a block with many rows (several parts of
// lmoPartRows) returns the plain scan's vertex, the exact best score and
// the lowest row among equal ones, however its parts are run, also with
// exact ties between rows of different parts and with gradients that let
// the bounds prune most rows.
func TestLMOSplitEqualsScan(t *testing.T) {
	X, Y := mixedData(8, 320, 300)
	p, err := New(X, Y, Options{Lambda: 1.5, Gamma: 2, Threshold: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(12, 13))
	for trial := 0; trial < 120; trial++ {
		b := rng.IntN(len(p.info))
		bi := p.info[b]
		c := p.comps[bi.comp]
		kc := len(c.tasks)
		if bi.r1-bi.r0 <= lmoPartRows {
			t.Fatal("the blocks must span several parts")
		}
		g := make([]float64, bi.size)
		for i := range g {
			g[i] = rng.NormFloat64()
			if trial%2 == 1 {
				g[i] *= 1e-3 // a few large rows: the bounds prune the rest
			}
		}
		if trial%2 == 1 {
			for range 3 {
				r := rng.IntN(p.J)
				for a := 0; a < kc; a++ {
					g[r*kc+a] = 5 * rng.NormFloat64()
				}
			}
		}
		if trial%3 == 0 { // equal rows in different parts: exact ties
			src := rng.IntN(p.J)
			for r := src % 7; r < p.J; r += 7 {
				copy(g[r*kc:(r+1)*kc], g[src*kc:(src+1)*kc])
			}
		}
		g[bi.size-1] = rng.Float64()
		sums := make([]float64, 1<<kc)
		best, bestRow, bestAtom, bestSign := 0.0, -1, -1, 0.0
		for r := 0; r < p.J; r++ {
			s, a, sg := c.bestAtom(g[r*kc:(r+1)*kc], sums)
			if a >= 0 && s > best {
				best, bestRow, bestAtom, bestSign = s, r, a, sg
			}
		}
		want := solver.Vertex{Key: "0"}
		if bestRow >= 0 && g[bi.size-1]-best < 0 {
			pat := make([]float64, kc)
			c.atomPattern(bestAtom, bestSign, pat)
			want = p.atomVertex(b, bestRow, pat)
		}
		if got := p.LMO(b, g); got.Key != want.Key {
			t.Fatalf("trial %d: oracle %s, plain scan %s", trial, got.Key, want.Key)
		}
		for name, par := range splitWays {
			if got := p.LMOSplit(b, g, par); got.Key != want.Key {
				t.Fatalf("trial %d, %s: split oracle %s, plain scan %s", trial, name, got.Key, want.Key)
			}
		}
	}
}

// The split model updates of component blocks leave z_C = X B_C and
// XᵀX B_C the same to the bit as Scale and Add, however the parts run:
// scaled and added to (FW, away steps, collapses) or added to alone
// (pairwise steps, the epigraph coordinate).
func TestSplitModelAgreesBitForBit(t *testing.T) {
	for _, n := range []int{300, 60} { // J = 150: with XᵀX kept, and without (J > N)
		splitModelAgrees(t, n)
	}
}

func splitModelAgrees(t *testing.T, n int) {
	X, Y := mixedData(9, n, 150)
	p, err := New(X, Y, Options{Lambda: 1.5, Gamma: 2, Threshold: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	for name, par := range splitWays {
		name = fmt.Sprintf("N=%d, %s", n, name)
		plain := p.NewModel(make([]float64, p.Dim())).(*model)
		split := p.NewModel(make([]float64, p.Dim())).(*model)
		if kept := split.comps[0].h != nil; kept != (n >= 150) {
			t.Fatalf("%s: XᵀX B_C kept: %v", name, kept)
		}
		rng := rand.New(rand.NewPCG(5, 6))
		for step := 0; step < 60; step++ {
			b := rng.IntN(len(p.info))
			g := make([]float64, p.info[b].size)
			for i := range g {
				g[i] = rng.NormFloat64()
			}
			g[len(g)-1] = -1
			v := p.LMO(b, g)
			s, c := 1-0.3*rng.Float64(), rng.NormFloat64()
			if step%5 == 0 {
				s = 0 // a collapse
			}
			plain.Scale(b, s)
			plain.Add(b, c, v)
			split.MoveSplit(b, s, c, v, par)
			// an add alone (pairwise steps)
			w := p.LMO(b, negate(g))
			plain.Add(b, -c, w)
			split.MoveSplit(b, 1, -c, w, par)
			// the epigraph coordinate alone
			plain.Add(b, 0.5, p.tvert[b])
			split.MoveSplit(b, 1, 0.5, p.tvert[b], par)
		}
		for ci, st := range split.comps {
			for i := range st.z {
				if st.z[i] != plain.comps[ci].z[i] {
					t.Fatalf("%s: component %d: z[%d] = %v, plainly %v", name, ci, i, st.z[i], plain.comps[ci].z[i])
				}
			}
			for i := range st.h {
				if st.h[i] != plain.comps[ci].h[i] {
					t.Fatalf("%s: component %d: XᵀX B_C[%d] = %v, plainly %v", name, ci, i, st.h[i], plain.comps[ci].h[i])
				}
			}
		}
	}
}

// On component blocks with many rows, whose oracles and model updates are
// split into parts that idle workers take, the block methods' traces are the
// same bit for bit for any number of workers.
func TestSplitTracesIndependentOfWorkers(t *testing.T) {
	sp := DefaultSim(3)
	sp.N, sp.J, sp.K = 300, 200, 30
	s, err := Simulate(sp)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(s.X, s.Y, Options{Lambda: 10, Gamma: 10, Threshold: 0.7})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.info) < 2 || p.J <= lmoPartRows {
		t.Fatalf("%d blocks of %d rows: the test needs several blocks of several parts", len(p.info), p.J)
	}
	for _, c := range []struct {
		algo  string
		sched solver.Schedule
		r     int
	}{
		{"bc-ssfw-as", solver.Schedule{Kind: "full"}, 0},
		{"bc-ssfw-as", solver.Schedule{Kind: "paper", Rho: 0.1, Alpha: 0.5}, 0},
		{"bc-ssfw-as", solver.Schedule{Kind: "full"}, 2},
		{"bcfw", solver.Schedule{Kind: "full"}, 0},
	} {
		run := func(workers int) string {
			cfg := fwConfig(c.algo, solver.Limits{MaxIters: 40, EvalEvery: 9}, 2)
			cfg.Schedule, cfg.R = c.sched, c.r
			cfg.Workers = workers
			m, err := solver.New(p, cfg)
			if err != nil {
				t.Fatal(err)
			}
			var recs []solver.Record
			if _, err := m.Run(context.Background(), solver.RecorderFunc(func(rec solver.Record) {
				rec.Time = 0
				recs = append(recs, rec)
			})); err != nil {
				t.Fatal(err)
			}
			js, _ := json.Marshal(recs)
			return string(js)
		}
		ref := run(1)
		for _, w := range []int{2, 3, 5} {
			if got := run(w); got != ref {
				t.Fatalf("%s %s r=%d: %d workers give a different trace from 1", c.algo, c.sched.Kind, c.r, w)
			}
		}
	}
}

// At λ = 1e-4 and γ = 100 on mixed-sign edges the full-component atoms ±τ
// decide the oracle, and their scores |<g, τ>|/(λ|C|) come from sums that
// cancel far below the rounding of their terms. The pruned oracle, the split
// oracle (every way of handing out its parts) and the plain scan of every
// row agree on the vertex; and a best row copied into other parts goes to
// the lowest row.
func TestLMOPrunedExactUnderCancellation(t *testing.T) {
	X, Y := mixedData(8, 320, 300)
	p, err := New(X, Y, Options{Lambda: 1e-4, Gamma: 100, Threshold: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	mixed := false
	for _, c := range p.comps {
		for _, e := range c.edges {
			mixed = mixed || e.s < 0
		}
	}
	if !mixed {
		t.Fatal("the instance must have edges of both signs")
	}
	rng := rand.New(rand.NewPCG(21, 22))
	tested := 0
	for trial := 0; trial < 200; trial++ {
		b := rng.IntN(len(p.info))
		bi := p.info[b]
		c := p.comps[bi.comp]
		kc := len(c.tasks)
		if c.bTau == nil || kc < 3 || bi.r1-bi.r0 <= lmoPartRows {
			continue
		}
		tested++
		g := make([]float64, bi.size)
		for r := 0; r < p.J; r++ {
			// τ∘v with v's entries of both signs cancelling in <g, τ> down
			// to δ = 1e-4·‖v‖∞, the same δ on every row: the full-component
			// atoms win, and the rows' scores differ only by the rounding
			// of their sums (near ties far below the rounding of the terms)
			row := g[r*kc : (r+1)*kc]
			big := math.Ldexp(1, 20)
			sum := 0.0
			for a := 0; a < kc-1; a++ {
				v := big * (rng.Float64() - 0.5)
				row[a] = c.bTau[a] * v
				sum += v
			}
			row[kc-1] = c.bTau[kc-1] * (1e-4*big - sum)
		}
		if trial%2 == 0 { // the best row copied into other parts: exact ties
			sums := make([]float64, 1<<kc)
			src, top := 0, -1.0
			for r := 0; r < p.J; r++ {
				if s, a, _ := c.bestAtom(g[r*kc:(r+1)*kc], sums); a >= 0 && s > top {
					src, top = r, s
				}
			}
			for r := (src + 1 + rng.IntN(lmoPartRows)) % p.J; r < p.J; r += lmoPartRows + rng.IntN(5) {
				copy(g[r*kc:(r+1)*kc], g[src*kc:(src+1)*kc])
			}
		}
		g[bi.size-1] = -1e300 // the epigraph coordinate never wins
		sums := make([]float64, 1<<kc)
		best, bestRow, bestAtom, bestSign := 0.0, -1, -1, 0.0
		for r := 0; r < p.J; r++ {
			s, a, sg := c.bestAtom(g[r*kc:(r+1)*kc], sums)
			if a >= 0 && s > best {
				best, bestRow, bestAtom, bestSign = s, r, a, sg
			}
		}
		if bestRow < 0 {
			t.Fatalf("trial %d: no atom scores above 0", trial)
		}
		pat := make([]float64, kc)
		c.atomPattern(bestAtom, bestSign, pat)
		want := p.atomVertex(b, bestRow, pat)
		if got := p.LMO(b, g); got.Key != want.Key {
			t.Fatalf("trial %d: pruned oracle %s, plain scan %s (row %d)", trial, got.Key, want.Key, bestRow)
		}
		for name, par := range splitWays {
			if got := p.LMOSplit(b, g, par); got.Key != want.Key {
				t.Fatalf("trial %d, %s: split oracle %s, plain scan %s (row %d)", trial, name, got.Key, want.Key, bestRow)
			}
		}
	}
	if tested < 20 {
		t.Fatalf("only %d trials on a balanced component of several parts", tested)
	}
}
