package gflasso

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
)

// The slack collapse keeps B, lowers t to Ω(B), and represents the new point
// exactly by atoms of the block's polytope that the oracle itself produces.
func TestReshapeCollapsesSlack(t *testing.T) {
	X, Y := mixedData(3, 40, 7)
	for _, blocks := range []string{"component", "row"} {
		t.Run(blocks, func(t *testing.T) {
			p, err := New(X, Y, Options{Lambda: 1.5, Gamma: 2, Threshold: 0.5, Blocks: blocks})
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(8, 9))
			m := p.NewModel(make([]float64, p.Dim()))
			x := randomWalk(t, p, m, rng, 80)
			lift := make([]float64, p.Dim())
			p.Lift(lift, p.BOf(x))
			collapsed := 0
			for b, bl := range p.blocks {
				bi := p.info[b]
				xb := x[bl.Offset : bl.Offset+bl.Size]
				om := lift[bl.Offset+bl.Size-1]
				nb := append([]float64(nil), xb...)
				dst := &solver.ActiveSet{}
				ok := p.Reshape(b, nb, m, solver.NewActiveSet(solver.Vertex{Key: "0"}), dst)
				var verts []solver.Vertex
				var w []float64
				for i := 0; i < dst.Len(); i++ {
					v, wi := dst.Vertex(i)
					verts, w = append(verts, v), append(w, wi)
				}
				if !ok {
					if xb[bl.Size-1]-om > 1e-12*bi.T {
						t.Fatalf("block %d: slack %v left", b, xb[bl.Size-1]-om)
					}
					continue
				}
				collapsed++
				// The new point is (B_b, Ω_b(B_b)).
				if d := math.Abs(nb[bl.Size-1] - om); d > 1e-12*bi.T {
					t.Fatalf("block %d: t = %v after the collapse, Ω = %v", b, nb[bl.Size-1], om)
				}
				for i := range nb[:bl.Size-1] {
					if nb[i] != xb[i] {
						t.Fatalf("block %d: B moved at %d", b, i)
					}
				}
				// Weights: a distribution; vertices: the oracle's atoms.
				sum := 0.0
				pt := make([]float64, bl.Size)
				c := p.comps[bi.comp]
				kc := len(c.tasks)
				for i, v := range verts {
					if w[i] < 0 {
						t.Fatalf("negative weight %v", w[i])
					}
					sum += w[i]
					v.AddTo(pt, w[i])
					if v.Key == "0" {
						if len(v.Idx) != 0 {
							t.Fatalf("zero vertex with coordinates %v", v.Idx)
						}
						continue
					}
					// An atom: one row, t = T_b, ω_C(row) = T_b, and the
					// oracle returns it for a gradient that it minimises.
					row := v.Idx[0] / kc
					dense := make([]float64, bl.Size)
					v.AddTo(dense, 1)
					if v.Idx[len(v.Idx)-2]/kc != row || dense[bl.Size-1] != bi.T {
						t.Fatalf("atom %s is not one row with t = T", v.Key)
					}
					if o := c.omega(dense[row*kc : (row+1)*kc]); math.Abs(o-bi.T) > 1e-9*bi.T {
						t.Fatalf("atom %s: ω = %v, T = %v", v.Key, o, bi.T)
					}
					// Its sign pattern is one of the oracle's enumerated atoms
					// (and the vertex is the one the oracle builds for it).
					pat := make([]float64, kc)
					for a := range kc {
						pat[a] = math.Copysign(1, dense[row*kc+a])
						if dense[row*kc+a] == 0 {
							pat[a] = 0
						}
					}
					found := false
					cand := make([]float64, kc)
					for i := range c.inv {
						for _, sg := range []float64{1, -1} {
							c.atomPattern(i, sg, cand)
							same := true
							for a := range cand {
								same = same && cand[a] == pat[a]
							}
							found = found || same
						}
					}
					if !found {
						t.Fatalf("atom %s is not an enumerated atom", v.Key)
					}
					if o := p.atomVertex(b, bi.r0+row, pat); o.Key != v.Key {
						t.Fatalf("atom %s: the oracle would key it %s", v.Key, o.Key)
					}
				}
				if math.Abs(sum-1) > 1e-12 {
					t.Fatalf("weights sum to %v", sum)
				}
				for i := range pt {
					if d := math.Abs(pt[i] - nb[i]); d > 1e-9*(1+math.Abs(nb[i])) {
						t.Fatalf("block %d coord %d: representation %v, point %v", b, i, pt[i], nb[i])
					}
				}
			}
			if collapsed == 0 {
				t.Fatal("the random walk left no slack to collapse")
			}
		})
	}
}

// The oracle's bound-ordered row scan returns what a plain scan over every
// row returns, ties included (the lowest row wins).
func TestLMOOrderedEqualsScan(t *testing.T) {
	X, Y := mixedData(4, 40, 9)
	p, err := New(X, Y, Options{Lambda: 1.5, Gamma: 2, Threshold: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(10, 11))
	for trial := 0; trial < 300; trial++ {
		b := rng.IntN(len(p.info))
		bi := p.info[b]
		c := p.comps[bi.comp]
		kc := len(c.tasks)
		g := make([]float64, bi.size)
		for i := range g {
			g[i] = rng.NormFloat64() * 3
		}
		if trial%3 == 0 { // duplicated rows: exact ties
			src := rng.IntN(p.J)
			for r := 0; r < p.J; r += 2 {
				copy(g[r*kc:(r+1)*kc], g[src*kc:(src+1)*kc])
			}
		}
		g[bi.size-1] = rng.Float64()
		got := p.LMO(b, g)
		// Plain scan.
		sums := make([]float64, 1<<kc)
		best, bestRow, bestAtom, bestSign := 0.0, -1, -1, 0.0
		for r := 0; r < p.J; r++ {
			s, a, sg := c.bestAtom(g[r*kc:(r+1)*kc], sums)
			if a >= 0 && s > best {
				best, bestRow, bestAtom, bestSign = s, r, a, sg
			}
			if ub := c.dualBound(g[r*kc : (r+1)*kc]); s > ub {
				t.Fatalf("row %d: score %v above its bound %v", r, s, ub)
			}
		}
		want := solver.Vertex{Key: "0"}
		if bestRow >= 0 && g[bi.size-1]-best < 0 {
			pat := make([]float64, kc)
			c.atomPattern(bestAtom, bestSign, pat)
			want = p.atomVertex(b, bestRow, pat)
		}
		if got.Key != want.Key {
			t.Fatalf("trial %d: oracle %s, plain scan %s", trial, got.Key, want.Key)
		}
	}
}

// bc-ssfw-as with the slack collapse certifies F* to 1e-6·F on simulated
// instances at two sizes: the FW gap recomputed from scratch (p.Gap, no
// incremental state) bounds F − F*, SPG's objective may not fall below the
// certified lower bound, and without the collapse the same run is worse.
func TestCollapseCertifiesSimulatedOptimum(t *testing.T) {
	if testing.Short() {
		t.Skip("long run")
	}
	for _, tc := range []struct {
		name          string
		n, j, k       int
		lambda, gamma float64
		iters         int
	}{
		{"paper-size", 200, 50, 20, 10, 10, 3000},
		{"2.5x", 500, 125, 30, 20, 20, 4000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := DefaultSim(7)
			sp.N, sp.J, sp.K = tc.n, tc.j, tc.k
			s, err := Simulate(sp)
			if err != nil {
				t.Fatal(err)
			}
			run := func(keep bool, algo string, iters int) solver.Result {
				p, err := New(s.X, s.Y, Options{Lambda: tc.lambda, Gamma: tc.gamma, Threshold: 0.7, KeepSlack: keep})
				if err != nil {
					t.Fatal(err)
				}
				if algo == "spg" {
					m, err := NewSPG(p, SPGConfig{Mu: 1e-4, Limits: solver.Limits{MaxIters: iters, EvalEvery: iters}})
					if err != nil {
						t.Fatal(err)
					}
					res, _ := m.Run(context.Background(), solver.RecorderFunc(func(solver.Record) {}))
					return res
				}
				m, err := solver.New(p, fwConfig(algo, solver.Limits{MaxIters: iters, EvalEvery: 50, GapTol: 1e-7 * p.F(p.BOf(make([]float64, p.Dim())))}, 3))
				if err != nil {
					t.Fatal(err)
				}
				res, err := m.Run(context.Background(), solver.RecorderFunc(func(solver.Record) {}))
				if err != nil {
					t.Fatal(err)
				}
				if keep {
					return res
				}
				if g, err := p.Gap(res.X); err != nil || !(g <= 1e-6*res.Summary.Objective) {
					t.Fatalf("%s: gap from scratch %v, summary %+v", algo, g, res.Summary)
				}
				return res
			}
			bc := run(false, "bc-ssfw-as", tc.iters)
			lower := bc.Summary.Objective - bc.Summary.Gap
			keep := run(true, "bc-ssfw-as", bc.Summary.Iters)
			sp2 := run(false, "spg", 4000)
			t.Logf("bc-ssfw-as: F = %.12g, gap %.2g after %d iterations; without the collapse F = %.12g after as many; spg F = %.12g",
				bc.Summary.Objective, bc.Summary.Gap, bc.Summary.Iters, keep.Summary.Objective, sp2.Summary.Objective)
			if sp2.Summary.Objective < lower*(1-1e-12) {
				t.Errorf("spg's F = %v is below the certified lower bound %v", sp2.Summary.Objective, lower)
			}
			if keep.Summary.Objective < bc.Summary.Objective-bc.Summary.Gap*(1+1e-9) {
				t.Errorf("without the collapse F = %v, below the certified lower bound %v", keep.Summary.Objective, lower)
			}
		})
	}
}

// Runs side by side on one instance share its scratch pool and vertex
// cache; each run's trace is the trace it has alone, bit for bit.
func TestConcurrentRunsShareTheInstance(t *testing.T) {
	X, Y := mixedData(6, 60, 12)
	for _, c := range []struct {
		blocks  string
		enumMax int
	}{{"component", 0}, {"row", 0}, {"component", 4}} {
		blocks := c.blocks
		p, err := New(X, Y, Options{Lambda: 1.5, Gamma: 2, Threshold: 0.5, Blocks: blocks, EnumMax: c.enumMax})
		if err != nil {
			t.Fatal(err)
		}
		run := func(seed int64) string {
			cfg := fwConfig("bc-ssfw-as", solver.Limits{MaxIters: 120, EvalEvery: 5}, seed)
			cfg.Workers = 2
			m, err := solver.New(p, cfg)
			if err != nil {
				t.Error(err)
				return ""
			}
			var out []byte
			if _, err := m.Run(context.Background(), solver.RecorderFunc(func(rec solver.Record) {
				rec.Time = 0
				b, _ := json.Marshal(rec)
				out = append(out, b...)
			})); err != nil {
				t.Error(err)
			}
			return string(out)
		}
		alone := []string{run(1), run(2), run(3)}
		got := make([]string, 3)
		var wg sync.WaitGroup
		for i := range got {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[i] = run(int64(i + 1))
			}()
		}
		wg.Wait()
		for i := range got {
			if got[i] != alone[i] {
				t.Errorf("%s, seed %d: the trace side by side differs from the trace alone", blocks, i+1)
			}
		}
	}
}

// A batch of more than half the samples takes its gradient as the exact one
// less the samples outside it; it must equal the direct sum over the batch.
func TestLargeBatchGradient(t *testing.T) {
	X, Y := mixedData(2, 40, 7)
	p, err := New(X, Y, Options{Lambda: 1.5, Gamma: 2, Threshold: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	m := p.NewModel(make([]float64, p.Dim()))
	x := randomWalk(t, p, m, rng, 40)
	res := p.residual(p.BOf(x)) // XB − Y
	for _, size := range []int{5, 20, 21, 39} {
		batch := rng.Perm(p.N)[:size]
		for b, bl := range p.blocks {
			bi := p.info[b]
			c := p.comps[bi.comp]
			kc := len(c.tasks)
			g := make([]float64, bl.Size)
			m.Gradient(b, g, x, batch)
			for j := 0; j < p.J; j++ {
				for a, task := range c.tasks {
					want := 0.0
					for _, i := range batch {
						want += p.x[i*p.J+j] * res[i*p.K+task]
					}
					want *= float64(p.N) / float64(size)
					if got := g[j*kc+a]; math.Abs(got-want) > 1e-9*(1+math.Abs(want)) {
						t.Fatalf("batch of %d, block %d, row %d, task %d: %v, direct %v", size, b, j, task, got, want)
					}
				}
			}
		}
	}
}
