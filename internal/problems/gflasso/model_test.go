package gflasso

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
	"gonum.org/v1/gonum/mat"
)

// mixedData builds a small data set whose tasks correlate positively and
// negatively: tasks 0–2 follow u, tasks 3–4 follow −u, task 5 is noise.
func mixedData(seed uint64, n, j int) (*mat.Dense, *mat.Dense) {
	rng := rand.New(rand.NewPCG(seed, 7))
	X := mat.NewDense(n, j, nil)
	for i := 0; i < n; i++ {
		for a := 0; a < j; a++ {
			X.Set(i, a, rng.NormFloat64())
		}
	}
	Y := mat.NewDense(n, 6, nil)
	for i := 0; i < n; i++ {
		u := 2*X.At(i, 0) - X.At(i, 1) + 0.5*rng.NormFloat64()
		for c := 0; c < 6; c++ {
			s := 1.0
			if c >= 3 {
				s = -1
			}
			v := s*u + 0.6*rng.NormFloat64()
			if c == 5 {
				v = rng.NormFloat64()
			}
			Y.Set(i, c, v)
		}
	}
	return X, Y
}

func p1obj(p *Problem, x []float64) float64 {
	loss, _, _ := p.Terms(p.BOf(x))
	for _, bi := range p.info {
		loss += x[bi.off+bi.size-1]
	}
	return loss
}

// randomFeasible walks from 0 by random convex steps toward oracle vertices,
// telling the model what happened, and returns x.
func randomWalk(t *testing.T, p *Problem, m solver.Model, rng *rand.Rand, steps int) []float64 {
	t.Helper()
	x := make([]float64, p.Dim())
	for s := 0; s < steps; s++ {
		b := rng.IntN(len(p.info))
		bl := p.blocks[b]
		g := make([]float64, bl.Size)
		for i := range g {
			g[i] = rng.NormFloat64()
		}
		g[bl.Size-1] = -math.Abs(g[bl.Size-1]) - 1
		v := p.LMO(b, g)
		gam := rng.Float64()
		xb := x[bl.Offset : bl.Offset+bl.Size]
		for i := range xb {
			xb[i] *= 1 - gam
		}
		v.AddTo(xb, gam)
		m.Scale(b, 1-gam)
		m.Add(b, gam, v)
	}
	return x
}

func TestModelAgainstScratch(t *testing.T) {
	X, Y := mixedData(1, 40, 7)
	for _, blocks := range []string{"component", "row"} {
		t.Run(blocks, func(t *testing.T) {
			p, err := New(X, Y, Options{Lambda: 1.5, Gamma: 2, Threshold: 0.5, Blocks: blocks})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(p.Graph().Components); got != 2 {
				t.Fatalf("components %v, want tasks 0–4 together and 5 alone", p.Graph().Components)
			}
			neg := false
			for _, e := range p.Graph().Edges {
				neg = neg || e.Sign < 0
			}
			if !neg {
				t.Fatal("expected negative edges")
			}
			rng := rand.New(rand.NewPCG(5, 6))
			m := p.NewModel(make([]float64, p.Dim()))
			x := randomWalk(t, p, m, rng, 60)
			// Feasibility: Ω_b ≤ t_b ≤ T_b.
			lift := make([]float64, p.Dim())
			p.Lift(lift, p.BOf(x))
			for _, bi := range p.info {
				om, tb := lift[bi.off+bi.size-1], x[bi.off+bi.size-1]
				if om > tb*(1+1e-12)+1e-12 || tb > bi.T*(1+1e-12) {
					t.Fatalf("infeasible block: Ω = %v, t = %v, T = %v", om, tb, bi.T)
				}
			}
			full := make([]float64, p.Dim())
			p.FullGradient(x, full)
			fresh := p.NewModel(x)
			for b, bl := range p.blocks {
				for _, mm := range []solver.Model{m, fresh} {
					g := make([]float64, bl.Size)
					mm.Gradient(b, g, x, nil)
					for i := range g {
						if d := math.Abs(g[i] - full[bl.Offset+i]); d > 1e-9*(1+math.Abs(g[i])) {
							t.Fatalf("block %d coord %d: model gradient %v, scratch %v", b, i, g[i], full[bl.Offset+i])
						}
					}
				}
				// The mean of the one-sample batch gradients is the exact one.
				mean := make([]float64, bl.Size)
				g := make([]float64, bl.Size)
				for i := 0; i < p.N; i++ {
					m.Gradient(b, g, x, []int{i})
					for c := range g {
						mean[c] += g[c] / float64(p.N)
					}
				}
				for c := range mean {
					if math.Abs(mean[c]-full[bl.Offset+c]) > 1e-9*(1+math.Abs(mean[c])) {
						t.Fatalf("block %d: mean batch gradient %v, exact %v", b, mean[c], full[bl.Offset+c])
					}
				}
			}
			// Finite differences of the P1 objective.
			h := 1e-6
			for trial := 0; trial < 10; trial++ {
				i := rng.IntN(p.Dim())
				xp := append([]float64(nil), x...)
				xm := append([]float64(nil), x...)
				xp[i] += h
				xm[i] -= h
				fd := (p1obj(p, xp) - p1obj(p, xm)) / (2 * h)
				if math.Abs(fd-full[i]) > 1e-4*(1+math.Abs(fd)) {
					t.Fatalf("coord %d: gradient %v, finite difference %v", i, full[i], fd)
				}
			}
			// Line: exact quadratic along FW, away and pairwise directions.
			for b, bl := range p.blocks {
				g := make([]float64, bl.Size)
				m.Gradient(b, g, x, nil)
				v := p.LMO(b, g)
				u := p.LMO(b, negate(g))
				for _, d := range []solver.Direction{
					{XCoef: -1, Terms: []solver.Term{{Coef: 1, V: v}}},
					{XCoef: 1, Terms: []solver.Term{{Coef: -1, V: u}}},
					{Terms: []solver.Term{{Coef: 1, V: v}, {Coef: -1, V: u}}},
				} {
					ln := m.Line(b, x, d, nil)
					for _, gam := range []float64{0.1, 0.5} {
						xn := append([]float64(nil), x...)
						xb := xn[bl.Offset : bl.Offset+bl.Size]
						for i := range xb {
							xb[i] += gam * d.XCoef * x[bl.Offset+i]
						}
						for _, tm := range d.Terms {
							tm.V.AddTo(xb, gam*tm.Coef)
						}
						want := p1obj(p, xn) - p1obj(p, x)
						if got := ln.Delta(gam); math.Abs(got-want) > 1e-8*(1+math.Abs(want)) {
							t.Fatalf("block %d γ=%v: Delta %v, direct %v", b, gam, got, want)
						}
					}
				}
			}
		})
	}
}

func negate(g []float64) []float64 {
	out := make([]float64, len(g))
	for i, v := range g {
		out[i] = -v
	}
	return out
}

func TestProblemLMOEnumeratedEqualsLP(t *testing.T) {
	X, Y := mixedData(2, 50, 6)
	for _, blocks := range []string{"component", "row"} {
		enum, err := New(X, Y, Options{Lambda: 1, Gamma: 3, Threshold: 0.5, Blocks: blocks})
		if err != nil {
			t.Fatal(err)
		}
		lpp, err := New(X, Y, Options{Lambda: 1, Gamma: 3, Threshold: 0.5, Blocks: blocks, EnumMax: 1, ForceLP: true})
		if err != nil {
			t.Fatal(err)
		}
		cut, err := New(X, Y, Options{Lambda: 1, Gamma: 3, Threshold: 0.5, Blocks: blocks, EnumMax: 1})
		if err != nil {
			t.Fatal(err)
		}
		ee, le, ce := enum.OracleKinds(), lpp.OracleKinds(), cut.OracleKinds()
		if ee[0] != "enumerate" || le[0] != "lp" || ce[0] != "cut" {
			t.Fatalf("oracle kinds %v / %v / %v", ee, le, ce)
		}
		rng := rand.New(rand.NewPCG(9, 9))
		for trial := 0; trial < 40; trial++ {
			b := rng.IntN(len(enum.blocks))
			g := make([]float64, enum.blocks[b].Size)
			for i := range g {
				g[i] = rng.NormFloat64() * 5
			}
			g[len(g)-1] = 1
			v1, v2, v3 := enum.LMO(b, g), lpp.LMO(b, g), cut.LMO(b, g)
			if fmt.Sprint(v1) != fmt.Sprint(v2) || fmt.Sprint(v1) != fmt.Sprint(v3) {
				t.Fatalf("%s block %d: enumerated %v, LP %v, cut %v", blocks, b, v1, v2, v3)
			}
		}
	}
}

func TestLMOMinimisesOverVertices(t *testing.T) {
	// The oracle's value is the minimum of <g, v> over 0 and every
	// T(e_j ⊗ w, 1) with w a brute-force ball vertex (zonotope facets).
	X, Y := mixedData(3, 30, 4)
	p, err := New(X, Y, Options{Lambda: 2, Gamma: 1, Threshold: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for b, bi := range p.info {
		c := p.comps[bi.comp]
		verts := bruteVertices(c)
		kc := len(c.tasks)
		for trial := 0; trial < 10; trial++ {
			g := make([]float64, bi.size)
			for i := range g {
				g[i] = rng.NormFloat64()
			}
			best := 0.0
			for j := bi.r0; j < bi.r1; j++ {
				for _, w := range verts {
					s := g[bi.size-1]
					for a := range w {
						s += g[(j-bi.r0)*kc+a] * w[a]
					}
					best = math.Min(best, bi.T*s)
				}
			}
			v := p.LMO(b, g)
			if got := v.Dot(g); math.Abs(got-best) > 1e-9*(1+math.Abs(best)) {
				t.Fatalf("block %d: oracle value %v, brute force %v", b, got, best)
			}
		}
	}
}

func TestDeterministicOracle(t *testing.T) {
	X, Y := mixedData(4, 30, 5)
	p, _ := New(X, Y, Options{Lambda: 1, Gamma: 2, Threshold: 0.5})
	g := make([]float64, p.blocks[0].Size)
	rng := rand.New(rand.NewPCG(2, 2))
	for i := range g {
		g[i] = rng.NormFloat64()
	}
	a, b := p.LMO(0, g), p.LMO(0, g)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatal("oracle not repeatable")
	}
	// A zero gradient on B with g_t = 1 gives the zero vertex.
	z := make([]float64, len(g))
	z[len(z)-1] = 1
	if v := p.LMO(0, z); v.Key != "0" || len(v.Idx) != 0 {
		t.Fatalf("zero gradient: %v", v)
	}
}

func TestIncrementalDriftStaysTiny(t *testing.T) {
	// 5000 incremental updates without a Reset: z = XB stays within 1e-10
	// (relative) of a recomputation.
	X, Y := mixedData(6, 40, 7)
	for _, blocks := range []string{"component", "row"} {
		p, err := New(X, Y, Options{Lambda: 1.5, Gamma: 2, Threshold: 0.5, Blocks: blocks})
		if err != nil {
			t.Fatal(err)
		}
		m := p.NewModel(make([]float64, p.Dim()))
		x := randomWalk(t, p, m, rand.New(rand.NewPCG(7, 7)), 5000)
		fresh := p.NewModel(x).(*model)
		mm := m.(*model)
		mm.Sync(func(n int, f func(lo, hi int)) { f(0, n) })
		for ci := range mm.comps {
			for i, v := range mm.comps[ci].z {
				w := fresh.comps[ci].z[i]
				if math.Abs(v-w) > 1e-10*(1+math.Abs(w)) {
					t.Fatalf("%s: component %d entry %d drifted: %v vs %v", blocks, ci, i, v, w)
				}
			}
		}
	}
}

// The hat bound ½‖P_X Y_C‖² on a tall X (N = 30 000): checked against the
// normal equations, and computed without an N×N matrix. A repeated column
// makes rank X < J and the bound falls back to ½‖Y_C‖².
func TestHatBoundTallX(t *testing.T) {
	const n, j, k = 30_000, 3, 4
	rng := rand.New(rand.NewPCG(8, 9))
	X, Y := mat.NewDense(n, j, nil), mat.NewDense(n, k, nil)
	for i := 0; i < n; i++ {
		for a := 0; a < j; a++ {
			X.Set(i, a, rng.NormFloat64())
		}
		base := rng.NormFloat64() + X.At(i, 0)
		for c := 0; c < k; c++ {
			Y.Set(i, c, base+0.3*rng.NormFloat64())
		}
	}
	p, err := New(X, Y, Options{Lambda: 1, Gamma: 1, Threshold: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if !p.HatBound() {
		t.Fatal("rank X = J expected")
	}
	// ‖P_X y‖² = yᵀX (XᵀX)⁻¹ Xᵀy.
	var xtx, xty, sol mat.Dense
	xtx.Mul(X.T(), X)
	xty.Mul(X.T(), Y)
	if err := sol.Solve(&xtx, &xty); err != nil {
		t.Fatal(err)
	}
	for ci, comp := range p.Graph().Components {
		want := 0.0
		for _, task := range comp {
			for a := 0; a < j; a++ {
				want += xty.At(a, task) * sol.At(a, task)
			}
		}
		want /= 2
		if got := p.Bounds()[ci]; math.Abs(got-want) > 1e-9*want {
			t.Errorf("T_%d = %.12g, normal equations %.12g", ci, got, want)
		}
	}
	// Rank-deficient: the last column repeats the first.
	Xd := mat.DenseCopyOf(X)
	for i := 0; i < n; i++ {
		Xd.Set(i, j-1, X.At(i, 0))
	}
	pd, err := New(Xd, Y, Options{Lambda: 1, Gamma: 1, Threshold: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if pd.HatBound() {
		t.Fatal("rank X < J not detected")
	}
	for ci, comp := range pd.Graph().Components {
		want := 0.0
		for _, task := range comp {
			for i := 0; i < n; i++ {
				want += Y.At(i, task) * Y.At(i, task)
			}
		}
		if got := pd.Bounds()[ci]; math.Abs(got-want/2) > 1e-9*want {
			t.Errorf("rank-deficient T_%d = %v, want ½‖Y_C‖² = %v", ci, got, want/2)
		}
	}
}

func TestNewContextStops(t *testing.T) {
	X, Y := mixedData(3, 40, 6)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewContext(ctx, X, Y, Options{Lambda: 1, Gamma: 1, Threshold: 0.5}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled build: %v", err)
	}
	if _, err := NewContext(context.Background(), X, Y, Options{Lambda: 1, Gamma: 1, Threshold: 0.5}); err != nil {
		t.Fatal(err)
	}
}

// Components too large for their oracle are refused at build, naming the
// threshold: a 40-task clique needs linear programs of 1.3·10⁶ entries when
// forced onto the LP oracle, and 101 correlated tasks with J = 50 rows a
// minimum-cut oracle of J·k³ > 5·10⁷ steps; 100 tasks pass.
func TestOracleSizeLimits(t *testing.T) {
	corr := func(n, j, k int) (*mat.Dense, *mat.Dense) {
		rng := rand.New(rand.NewPCG(uint64(k), 3))
		X, Y := mat.NewDense(n, j, nil), mat.NewDense(n, k, nil)
		for i := 0; i < n; i++ {
			for a := 0; a < j; a++ {
				X.Set(i, a, rng.NormFloat64())
			}
			base := 3 * rng.NormFloat64()
			for c := 0; c < k; c++ {
				Y.Set(i, c, base+0.1*rng.NormFloat64())
			}
		}
		return X, Y
	}
	var oe *OptionError
	X, Y := corr(60, 3, 40)
	_, err := New(X, Y, Options{Lambda: 1, Gamma: 1, Threshold: 0.5, EnumMax: 1, ForceLP: true})
	if !errors.As(err, &oe) || oe.Option != "threshold" || !strings.Contains(oe.Msg, "linear programs of 1.28e+06 entries") {
		t.Fatalf("40-task clique on the LP oracle: %v", err)
	}
	X, Y = corr(60, 50, 101)
	_, err = New(X, Y, Options{Lambda: 1, Gamma: 1, Threshold: 0.5})
	if !errors.As(err, &oe) || oe.Option != "threshold" || !strings.Contains(oe.Msg, "component of 101 tasks") {
		t.Fatalf("101 tasks on the cut oracle: %v", err)
	}
	X, Y = corr(60, 50, 100)
	p, err := New(X, Y, Options{Lambda: 1, Gamma: 1, Threshold: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if kinds := p.OracleKinds(); len(kinds) != 1 || kinds[0] != "cut" {
		t.Fatalf("oracles %v, want one cut oracle", kinds)
	}
}

// Row blocks' moves reach z_C and the residual either lazily (the first
// block to read brings them up to date) or by Sync, whose pass over the
// samples may be split any way: the state must be the same to the bit.
func TestSyncSplitsAgreeBitForBit(t *testing.T) {
	X, Y := mixedData(6, 40, 7)
	p, err := New(X, Y, Options{Lambda: 1.5, Gamma: 2, Threshold: 0.5, Blocks: "row"})
	if err != nil {
		t.Fatal(err)
	}
	walk := func() *model {
		m := p.NewModel(make([]float64, p.Dim()))
		randomWalk(t, p, m, rand.New(rand.NewPCG(3, 4)), 300)
		return m.(*model)
	}
	lazy := walk()
	for b := range p.info {
		// the first read of each component syncs it
		lazy.Gradient(b, make([]float64, p.info[b].size), nil, nil)
	}
	for name, split := range splitWays {
		m := walk()
		m.Sync(split)
		for ci, st := range m.comps {
			if st.stale.Load() {
				t.Fatalf("%s: component %d still stale after Sync", name, ci)
			}
			for i := range st.z {
				if st.z[i] != lazy.comps[ci].z[i] || st.res[i] != lazy.comps[ci].res[i] {
					t.Fatalf("%s: component %d entry %d: z %v res %v, lazily %v, %v", name, ci, i,
						st.z[i], st.res[i], lazy.comps[ci].z[i], lazy.comps[ci].res[i])
				}
			}
		}
	}
}
