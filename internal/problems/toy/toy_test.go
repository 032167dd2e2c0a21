package toy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

// tcase is one problem instance with what the generic tests need.
type tcase struct {
	name string
	prob interface {
		solver.Problem
		solver.ProxProblem
		solver.LipschitzBounder
	}
	verts    []solver.Vertex // every vertex, in tie-rule order
	feasible func(x []float64) bool
	// batchObjective is the objective restricted to a batch (nil: all).
	batchObjective func(x []float64, batch []int) float64
}

func dense(v solver.Vertex, p int) []float64 {
	x := make([]float64, p)
	v.AddTo(x, 1)
	return x
}

func polygonCase(t testing.TB, name string, cfg PolygonConfig, seed int64) tcase {
	pg, err := NewPolygon(cfg, seed)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var vs []solver.Vertex
	for k := range pg.Vertices() {
		vs = append(vs, pg.Vertex(k))
	}
	return tcase{
		name: name, prob: pg, verts: vs,
		feasible: func(x []float64) bool {
			// inside up to round-off relative to the polygon's size
			for k, a := range pg.verts {
				b := pg.verts[(k+1)%len(pg.verts)]
				e := math.Hypot(b[0]-a[0], b[1]-a[1])
				if cross(b[0]-a[0], b[1]-a[1], x[0]-a[0], x[1]-a[1]) < -1e-12*e*(1+math.Hypot(x[0], x[1])) {
					return false
				}
			}
			return true
		},
		batchObjective: func(x []float64, batch []int) float64 {
			s, cnt := 0.0, 0
			each(pg.Samples(), batch, func(i int) {
				c := pg.cs[i]
				s += pg.quad(x[0]-c[0], x[1]-c[1])
				cnt++
			})
			return s / float64(cnt)
		},
	}
}

func lsqObjective(d *lsq) func([]float64, []int) float64 {
	return func(x []float64, batch []int) float64 {
		s, cnt := 0.0, 0
		each(d.n, batch, func(i int) {
			r := dot(d.row(i), x) - d.y[i]
			s += r * r / 2
			cnt++
		})
		return s / float64(cnt)
	}
}

func simplexCase(t testing.TB, p, n int, seed int64) tcase {
	s, err := NewSimplex(context.Background(), p, n, seed)
	if err != nil {
		t.Fatal(err)
	}
	var vs []solver.Vertex
	for j := 0; j < p; j++ {
		vs = append(vs, SimplexVertex(j))
	}
	return tcase{
		name: fmt.Sprintf("simplex p=%d n=%d", p, n), prob: s, verts: vs,
		feasible: func(x []float64) bool {
			sum := 0.0
			for _, xi := range x {
				if xi < 0 {
					return false
				}
				sum += xi
			}
			return math.Abs(sum-1) <= 1e-12
		},
		batchObjective: lsqObjective(&s.lsq),
	}
}

func l1Case(t testing.TB, p, n int, r float64, seed int64) tcase {
	b, err := NewL1Ball(context.Background(), p, n, r, seed)
	if err != nil {
		t.Fatal(err)
	}
	var vs []solver.Vertex
	for j := 0; j < p; j++ {
		vs = append(vs, b.Vertex(j, false), b.Vertex(j, true))
	}
	return tcase{
		name: fmt.Sprintf("l1ball p=%d n=%d r=%g", p, n, r), prob: b, verts: vs,
		feasible: func(x []float64) bool {
			s := 0.0
			for _, xi := range x {
				s += math.Abs(xi)
			}
			return s <= r*(1+1e-12)
		},
		batchObjective: lsqObjective(&b.lsq),
	}
}

func boxCase(t testing.TB, p, n int, lo, hi float64, seed int64) tcase {
	b, err := NewBox(context.Background(), p, n, lo, hi, seed)
	if err != nil {
		t.Fatal(err)
	}
	var vs []solver.Vertex
	if p <= 10 {
		for mask := 0; mask < 1<<p; mask++ {
			high := make([]bool, p)
			for j := range high {
				high[j] = mask>>j&1 == 1
			}
			vs = append(vs, b.Corner(high))
		}
	}
	return tcase{
		name: fmt.Sprintf("box p=%d n=%d [%g,%g]", p, n, lo, hi), prob: b, verts: vs,
		feasible: func(x []float64) bool {
			for _, xi := range x {
				if xi < lo || xi > hi {
					return false
				}
			}
			return true
		},
		batchObjective: lsqObjective(&b.lsq),
	}
}

// cases are small instances of every problem (box small enough to enumerate).
func cases(t testing.TB) []tcase {
	return []tcase{
		polygonCase(t, "hexagon edge", PolygonConfig{Vertices: 6, Target: TargetEdge, Cond: 4, Samples: 7, Noise: 0.3}, 1),
		polygonCase(t, "triangle outside", PolygonConfig{Vertices: 3, Target: TargetOutside, Cond: 20, Samples: 5, Noise: 0.5}, 2),
		polygonCase(t, "points inside", PolygonConfig{Points: "0,0; 3,0; 3,1; 1,2; 0,1.5; 1,1; 2,0", Target: TargetInside, Cond: 1, Samples: 6, Noise: 1}, 3),
		simplexCase(t, 5, 7, 4),
		l1Case(t, 4, 7, 2.5, 5),
		boxCase(t, 5, 7, -1, 2, 6),
		boxCase(t, 3, 6, 0, 1, 7),
	}
}

// randomPoint is a random convex combination of up to 4 random vertices.
func randomPoint(tc tcase, rng *rand.Rand) []float64 {
	p := tc.prob.Dim()
	x := make([]float64, p)
	k := 1 + rng.IntN(4)
	w := make([]float64, k)
	sum := 0.0
	for i := range w {
		w[i] = rng.Float64() + 0.01
		sum += w[i]
	}
	for i := range w {
		var v solver.Vertex
		if len(tc.verts) > 0 {
			v = tc.verts[rng.IntN(len(tc.verts))]
		} else {
			g := make([]float64, p)
			for j := range g {
				g[j] = rng.NormFloat64()
			}
			v = tc.prob.LMO(0, g)
		}
		v.AddTo(x, w[i]/sum)
	}
	return x
}

func randomDirection(p int, rng *rand.Rand) []float64 {
	g := make([]float64, p)
	ties := rng.IntN(2) == 0
	for j := range g {
		if ties { // small integers: many exact ties
			g[j] = float64(rng.IntN(3) - 1)
		} else {
			g[j] = rng.NormFloat64()
		}
	}
	return g
}

func TestLMOMatchesBruteForce(t *testing.T) {
	all := append(cases(t), boxCase(t, 10, 12, -0.5, 0.25, 8))
	for _, tc := range all {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			for it := 0; it < 400; it++ {
				g := randomDirection(tc.prob.Dim(), rng)
				got := tc.prob.LMO(0, g)
				best, bi := math.Inf(1), -1
				for i, v := range tc.verts {
					if s := v.Dot(g); s < best {
						best, bi = s, i
					}
				}
				want := tc.verts[bi]
				if got.Key != want.Key || got.Dot(g) != best {
					t.Fatalf("g=%v: LMO gave %s (<g,v>=%v), brute force %s (%v)", g, got.Key, got.Dot(g), want.Key, best)
				}
				again := tc.prob.LMO(0, g)
				if fmt.Sprint(again) != fmt.Sprint(got) {
					t.Fatalf("LMO not repeatable: %v then %v", got, again)
				}
				if !tc.feasible(dense(got, tc.prob.Dim())) {
					t.Fatalf("LMO vertex %v is not feasible", got)
				}
			}
		})
	}
}

func TestGradientMatchesFiniteDifferences(t *testing.T) {
	for _, tc := range cases(t) {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			p := tc.prob.Dim()
			for it := 0; it < 20; it++ {
				x := randomPoint(tc, rng)
				g := make([]float64, p)
				tc.prob.NewModel(x).Gradient(0, g, x, nil)
				gs := make([]float64, p)
				f := tc.prob.Smooth(x, gs)
				if f != tc.prob.Objective(x) && math.Abs(f-tc.prob.Objective(x)) > 1e-13*math.Abs(f) {
					t.Fatalf("Smooth value %v != Objective %v", f, tc.prob.Objective(x))
				}
				const h = 1e-5
				for j := 0; j < p; j++ {
					xp := append([]float64(nil), x...)
					xm := append([]float64(nil), x...)
					xp[j] += h
					xm[j] -= h
					fd := (tc.prob.Objective(xp) - tc.prob.Objective(xm)) / (2 * h)
					if math.Abs(fd-g[j]) > 1e-7*(1+math.Abs(g[j])) {
						t.Fatalf("coordinate %d: model gradient %v, central difference %v", j, g[j], fd)
					}
					if math.Abs(gs[j]-g[j]) > 1e-12*(1+math.Abs(g[j])) {
						t.Fatalf("coordinate %d: Smooth gradient %v, model gradient %v", j, gs[j], g[j])
					}
				}
			}
		})
	}
}

// subsets calls f with every subset of {0..n−1} of size m.
func subsets(n, m int, f func([]int)) {
	idx := make([]int, m)
	var rec func(pos, from int)
	rec = func(pos, from int) {
		if pos == m {
			f(append([]int(nil), idx...))
			return
		}
		for i := from; i <= n-(m-pos); i++ {
			idx[pos] = i
			rec(pos+1, i+1)
		}
	}
	rec(0, 0)
}

func TestBatchGradientIsUnbiased(t *testing.T) {
	for _, tc := range cases(t) {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, 6))
			p, n := tc.prob.Dim(), tc.prob.Samples()
			x := randomPoint(tc, rng)
			mod := tc.prob.NewModel(x)
			full := make([]float64, p)
			mod.Gradient(0, full, x, nil)
			for m := 1; m <= n; m++ {
				avg := make([]float64, p)
				cnt := 0
				g := make([]float64, p)
				subsets(n, m, func(b []int) {
					mod.Gradient(0, g, x, b)
					axpy(avg, 1, g)
					cnt++
				})
				for j := range avg {
					avg[j] /= float64(cnt)
					if math.Abs(avg[j]-full[j]) > 1e-12*(1+math.Abs(full[j])) {
						t.Fatalf("m=%d (%d batches), coordinate %d: batch average %v, full %v", m, cnt, j, avg[j], full[j])
					}
				}
			}
		})
	}
}

// modelState exposes the incremental state of a model.
func modelState(m solver.Model) []float64 {
	switch m := m.(type) {
	case *lsqModel:
		return m.z
	case *polyModel:
		return m.u[:]
	}
	panic(fmt.Sprintf("unknown model %T", m))
}

func TestModelIncrementalMatchesReset(t *testing.T) {
	all := append(cases(t), simplexCase(t, 30, 200, 9), l1Case(t, 30, 200, 1, 10), boxCase(t, 30, 200, -1, 1, 11), l1FastCase(t, 30, 200, 1, 10))
	for _, tc := range all {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 8))
			p := tc.prob.Dim()
			start := tc.prob.Start(0)
			x := dense(start, p)
			mod := tc.prob.NewModel(x)
			// A vertex representation so that away steps stay feasible.
			weights := map[string]float64{start.Key: 1}
			byKey := map[string]solver.Vertex{start.Key: start}
			for it := 0; it < 600; it++ {
				if rng.IntN(3) > 0 || len(weights) == 1 { // FW step
					v := tc.prob.LMO(0, randomDirection(p, rng))
					gamma := rng.Float64()
					for j := range x {
						x[j] *= 1 - gamma
					}
					v.AddTo(x, gamma)
					mod.Scale(0, 1-gamma)
					mod.Add(0, gamma, v)
					for k := range weights {
						weights[k] *= 1 - gamma
					}
					weights[v.Key] += gamma
					byKey[v.Key] = v
				} else { // away step from a random active vertex, up to a drop
					var keys []string
					for k := range weights {
						keys = append(keys, k)
					}
					k := keys[rng.IntN(len(keys))]
					mu := weights[k]
					gamma := rng.Float64() * mu / (1 - mu)
					u := byKey[k]
					for j := range x {
						x[j] *= 1 + gamma
					}
					u.AddTo(x, -gamma)
					mod.Scale(0, 1+gamma)
					mod.Add(0, -gamma, u)
					for kk := range weights {
						weights[kk] *= 1 + gamma
					}
					weights[k] -= gamma
				}
				for k, w := range weights {
					if w < 1e-9 {
						delete(weights, k)
					}
				}
			}
			if !tc.feasible(x) {
				t.Fatalf("tracked x left the polytope: %v", x)
			}
			got := append([]float64(nil), modelState(mod)...)
			want := modelState(tc.prob.NewModel(x))
			var diff, norm float64
			for i := range got {
				diff = math.Max(diff, math.Abs(got[i]-want[i]))
				norm = math.Max(norm, math.Abs(want[i]))
			}
			t.Logf("max |incremental − reset| = %.3g (state norm %.3g)", diff, norm)
			if diff > 1e-12*norm {
				t.Fatalf("incremental state drifted: max diff %v relative to %v", diff, norm)
			}
			mod.Reset(x)
			for i, w := range modelState(mod) {
				if w != want[i] {
					t.Fatalf("Reset is not a recomputation from scratch at %d: %v vs %v", i, w, want[i])
				}
			}
		})
	}
}

func TestLineIsExact(t *testing.T) {
	for _, tc := range cases(t) {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(9, 10))
			p, n := tc.prob.Dim(), tc.prob.Samples()
			for it := 0; it < 50; it++ {
				x := randomPoint(tc, rng)
				mod := tc.prob.NewModel(x)
				v := tc.prob.LMO(0, randomDirection(p, rng))
				u := tc.prob.LMO(0, randomDirection(p, rng))
				dirs := []solver.Direction{
					{XCoef: -1, Terms: []solver.Term{{Coef: 1, V: v}}},
					{XCoef: 1, Terms: []solver.Term{{Coef: -1, V: u}}},
					{XCoef: 0, Terms: []solver.Term{{Coef: 1, V: v}, {Coef: -1, V: u}}},
				}
				var batch []int
				if it%2 == 1 {
					batch = rng.Perm(n)[:1+rng.IntN(n)]
				}
				g := make([]float64, p)
				mod.Gradient(0, g, x, batch)
				for _, d := range dirs {
					dv := make([]float64, p)
					for j := range dv {
						dv[j] = d.XCoef * x[j]
					}
					for _, tm := range d.Terms {
						tm.V.AddTo(dv, tm.Coef)
					}
					line := mod.Line(0, x, d, batch)
					M := line.Curvature(1)
					if M < 0 || M != line.Curvature(1e-3) || M != line.Curvature(100) {
						t.Fatalf("curvature %v must be ≥ 0 and independent of gmax", M)
					}
					f0 := tc.batchObjective(x, batch)
					slope := dot(g, dv)
					for _, gamma := range []float64{0, 1e-3, 0.1, 0.5, 1} {
						xg := append([]float64(nil), x...)
						axpy(xg, gamma, dv)
						want := tc.batchObjective(xg, batch) - f0
						got := line.Delta(gamma)
						tol := 1e-12 * (1 + math.Abs(f0))
						if math.Abs(got-want) > tol {
							t.Fatalf("batch=%v γ=%v: Delta %v, objective difference %v", batch != nil, gamma, got, want)
						}
						if bound := gamma*slope + 0.5*M*gamma*gamma; want > bound+tol {
							t.Fatalf("γ=%v: descent inequality fails: φ(γ)−φ(0)=%v > γφ'(0)+½Mγ²=%v", gamma, want, bound)
						}
					}
					// The curvature is the second derivative: compare with a
					// second difference of the batch objective.
					if nd := math.Sqrt(dot(dv, dv)); nd > 1e-3 {
						h := 0.5
						xp := append([]float64(nil), x...)
						xm := append([]float64(nil), x...)
						axpy(xp, h, dv)
						axpy(xm, -h, dv)
						sd := (tc.batchObjective(xp, batch) - 2*f0 + tc.batchObjective(xm, batch)) / (h * h)
						if math.Abs(sd-M) > 1e-9*(1+M) {
							t.Fatalf("curvature %v, second difference %v", M, sd)
						}
					}
				}
			}
		})
	}
}

func TestLipschitzBound(t *testing.T) {
	for _, tc := range append(cases(t), simplexCase(t, 30, 200, 12)) {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.prob.Dim()
			L := tc.prob.LipschitzBound()
			if L != tc.prob.SmoothLipschitz() {
				t.Fatalf("LipschitzBound %v != SmoothLipschitz %v", L, tc.prob.SmoothLipschitz())
			}
			// Power iteration on the Hessian through the exact Line curvature
			// (directions as pairwise differences of points).
			x0 := make([]float64, p)
			mod := tc.prob.NewModel(x0)
			hess := func(d []float64) float64 {
				v := solver.DenseVertex("d", d)
				return mod.Line(0, x0, solver.Direction{Terms: []solver.Term{{Coef: 1, V: v}}}, nil).Curvature(1)
			}
			rng := rand.New(rand.NewPCG(11, 12))
			best := 0.0
			for it := 0; it < 200; it++ {
				d := make([]float64, p)
				for j := range d {
					d[j] = rng.NormFloat64()
				}
				if r := hess(d) / dot(d, d); r > best {
					best = r
				}
			}
			// Power iteration with the gradient of F(x) − F(0)'s linear part:
			// H d = ∇F(d) − ∇F(0).
			g0 := make([]float64, p)
			tc.prob.Smooth(x0, g0)
			d := make([]float64, p)
			for j := range d {
				d[j] = 1 + float64(j)
			}
			for it := 0; it < 3000; it++ {
				gd := make([]float64, p)
				tc.prob.Smooth(d, gd)
				axpy(gd, -1, g0)
				nrm := math.Sqrt(dot(gd, gd))
				for j := range d {
					d[j] = gd[j] / nrm
				}
			}
			best = math.Max(best, hess(d)/dot(d, d))
			if best > L {
				t.Fatalf("Rayleigh quotient %v exceeds the bound %v", best, L)
			}
			if best < L*(1-1e-6) {
				t.Fatalf("bound %v is not tight: power iteration found %v", L, best)
			}
		})
	}
}

func TestProjection(t *testing.T) {
	all := append(cases(t), simplexCase(t, 30, 30, 13), l1Case(t, 30, 30, 0.7, 14))
	for _, tc := range all {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(13, 14))
			p := tc.prob.Dim()
			for it := 0; it < 300; it++ {
				v := make([]float64, p)
				scale := []float64{0.01, 0.3, 1, 5}[it%4]
				for j := range v {
					v[j] = scale * rng.NormFloat64()
				}
				if it%7 == 0 { // already feasible points must stay put
					v = randomPoint(tc, rng)
				}
				pv := make([]float64, p)
				tc.prob.Prox(pv, v, 1+rng.Float64())
				if !tc.feasible(pv) {
					t.Fatalf("projection %v of %v is not feasible", pv, v)
				}
				r := make([]float64, p)
				for j := range r {
					r[j] = v[j] - pv[j]
				}
				// The variational inequality for every vertex certifies P(v).
				for _, y := range tc.verts {
					yd := dense(y, p)
					axpy(yd, -1, pv)
					if vi := dot(r, yd); vi > 1e-12 {
						t.Fatalf("v=%v P(v)=%v: <v−P(v), %s−P(v)> = %v > 1e-12", v, pv, y.Key, vi)
					}
				}
				ppv := make([]float64, p)
				tc.prob.Prox(ppv, pv, 1)
				for j := range ppv {
					if math.Abs(ppv[j]-pv[j]) > 1e-14*(1+math.Abs(pv[j])) {
						t.Fatalf("not idempotent: P(v)=%v, P(P(v))=%v", pv, ppv)
					}
				}
				if it%7 == 0 {
					for j := range v {
						if math.Abs(v[j]-pv[j]) > 1e-14*(1+math.Abs(v[j])) {
							t.Fatalf("a feasible point moved: %v → %v", v, pv)
						}
					}
				}
				// In place (dst aliasing v) gives the same result.
				w := append([]float64(nil), v...)
				tc.prob.Prox(w, w, 1)
				for j := range w {
					if w[j] != pv[j] {
						t.Fatalf("in-place projection differs: %v vs %v", w, pv)
					}
				}
			}
		})
	}
}

// TestKnownOptimum checks the minimiser each instance reports with the FW gap
// (a certificate: F(x) − F* ≤ gap) and the projected-gradient fixed point.
func TestKnownOptimum(t *testing.T) {
	all := append(cases(t), simplexCase(t, 30, 200, 15), l1Case(t, 30, 200, 1, 16), boxCase(t, 30, 200, -1, 1, 17), simplexCase(t, 12, 12, 18),
		l1FastCase(t, 30, 200, 1, 16), l1FastCase(t, 12, 12, 2, 18))
	for _, tc := range all {
		t.Run(tc.name, func(t *testing.T) {
			type known interface {
				XStar() []float64
				FStar() float64
			}
			k := tc.prob.(known)
			xs := k.XStar()
			p := tc.prob.Dim()
			if !tc.feasible(xs) {
				t.Fatalf("x* = %v is infeasible", xs)
			}
			if f := tc.prob.Objective(xs); math.Abs(f-k.FStar()) > 1e-12*(1+math.Abs(f)) {
				t.Fatalf("F(x*) = %v but FStar = %v", f, k.FStar())
			}
			g := make([]float64, p)
			tc.prob.NewModel(xs).Gradient(0, g, xs, nil)
			s := dense(tc.prob.LMO(0, g), p)
			gap := dot(g, xs) - dot(g, s)
			if gap > 1e-12 || gap < -1e-12 {
				t.Fatalf("FW gap at x* = %v, want 0 to 1e-12", gap)
			}
			step := 1 / tc.prob.LipschitzBound()
			y := append([]float64(nil), xs...)
			axpy(y, -step, g)
			tc.prob.Prox(y, y, step)
			for j := range y {
				if math.Abs(y[j]-xs[j]) > 1e-10 {
					t.Fatalf("x* is not a fixed point of the projected gradient step: %v vs %v", y, xs)
				}
			}
			rng := rand.New(rand.NewPCG(15, 16))
			for it := 0; it < 200; it++ {
				if x := randomPoint(tc, rng); tc.prob.Objective(x) < k.FStar()-1e-12 {
					t.Fatalf("F(%v) = %v below F* = %v", x, tc.prob.Objective(x), k.FStar())
				}
			}
		})
	}
}

// TestLeastSquaresOptimumOnFace checks the generated minimisers sit on a
// proper face with strict complementarity.
func TestLeastSquaresOptimumOnFace(t *testing.T) {
	ctx := context.Background()
	s, err := NewSimplex(ctx, 30, 200, 1)
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewL1Ball(ctx, 30, 200, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBox(ctx, 30, 200, -1, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	count := func(x []float64, pred func(float64) bool) int {
		c := 0
		for _, xi := range x {
			if pred(xi) {
				c++
			}
		}
		return c
	}
	if nz := count(s.XStar(), func(v float64) bool { return v != 0 }); nz != 6 {
		t.Errorf("simplex x* has %d nonzeros, want 6", nz)
	}
	n1 := 0.0
	for _, v := range l.XStar() {
		n1 += math.Abs(v)
	}
	if nz := count(l.XStar(), func(v float64) bool { return v != 0 }); nz != 6 || math.Abs(n1-2) > 1e-12 {
		t.Errorf("l1 x* has %d nonzeros and norm %v, want 6 and 2", nz, n1)
	}
	atLo := count(b.XStar(), func(v float64) bool { return v == -1 })
	atHi := count(b.XStar(), func(v float64) bool { return v == 1 })
	if atLo == 0 || atHi == 0 || atLo+atHi == 30 {
		t.Errorf("box x* has %d coordinates at lo and %d at hi: want some of each and some inside", atLo, atHi)
	}
}

func TestPolygonOptimumMatchesGrid(t *testing.T) {
	tests := []struct {
		name string
		cfg  PolygonConfig
		// where the optimum must sit: "vertex", "edge" or "interior"
		where string
	}{
		{"hexagon edge", PolygonConfig{Vertices: 6, Target: TargetEdge, Cond: 4, Samples: 50, Noise: 0.3}, "edge"},
		{"hexagon outside", PolygonConfig{Vertices: 6, Target: TargetOutside, Cond: 4, Samples: 50, Noise: 0.3}, "vertex"},
		{"pentagon inside", PolygonConfig{Vertices: 5, Target: TargetInside, Cond: 9, Samples: 20, Noise: 0.2}, "interior"},
		{"triangle edge ill-conditioned", PolygonConfig{Vertices: 3, Target: TargetEdge, Cond: 100, Samples: 10, Noise: 0.1}, "edge"},
		{"hull custom far", PolygonConfig{Points: "0,0;4,1;3,3;1,2.5;-1,1", Target: TargetCustom, CX: 6, CY: -2, Cond: 30, Samples: 3, Noise: 1}, ""},
		{"hull custom near", PolygonConfig{Points: "0,0;4,1;3,3;1,2.5;-1,1", Target: TargetCustom, CX: 1.5, CY: 3.2, Cond: 2, Samples: 3, Noise: 0}, ""},
		{"square custom inside", PolygonConfig{Points: "0,0;1,0;1,1;0,1", Target: TargetCustom, CX: 0.25, CY: 0.5, Cond: 1, Samples: 1, Noise: 5}, "interior"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pg, err := NewPolygon(tt.cfg, 21)
			if err != nil {
				t.Fatal(err)
			}
			vs := pg.Vertices()
			lo := [2]float64{math.Inf(1), math.Inf(1)}
			hi := [2]float64{math.Inf(-1), math.Inf(-1)}
			for _, v := range vs {
				for c := 0; c < 2; c++ {
					lo[c], hi[c] = math.Min(lo[c], v[c]), math.Max(hi[c], v[c])
				}
			}
			const N = 600
			best := math.Inf(1)
			var bx [2]float64
			try := func(x [2]float64) {
				if !pg.inside(x) {
					return
				}
				if f := pg.Objective(x[:]); f < best {
					best, bx = f, x
				}
			}
			for i := 0; i <= N; i++ {
				for j := 0; j <= N; j++ {
					try([2]float64{lo[0] + (hi[0]-lo[0])*float64(i)/N, lo[1] + (hi[1]-lo[1])*float64(j)/N})
				}
			}
			// The boundary too, finely (the optimum often lies on it).
			for k := range vs {
				a, b := vs[k], vs[(k+1)%len(vs)]
				for i := 0; i <= 20*N; i++ {
					s := float64(i) / (20 * N)
					x := [2]float64{a[0] + s*(b[0]-a[0]), a[1] + s*(b[1]-a[1])}
					if f := pg.Objective(x[:]); f < best {
						best, bx = f, x
					}
				}
			}
			fs := pg.FStar()
			// The grid cannot beat F*; and it gets within what its spacing allows.
			if best < fs-1e-12*(1+math.Abs(fs)) {
				t.Fatalf("grid found F = %v at %v below F* = %v", best, bx, fs)
			}
			h := math.Hypot(hi[0]-lo[0], hi[1]-lo[1]) / N
			g := make([]float64, 2)
			xs := pg.XStar()
			pg.Smooth(xs, g)
			tol := math.Hypot(g[0], g[1])*h + pg.LipschitzBound()*h*h
			if best-fs > tol {
				t.Fatalf("grid minimum %v exceeds F* = %v by more than %v", best, fs, tol)
			}
			t.Logf("F* = %.12g at %v; grid %.12g at %v (spacing %.3g)", fs, xs, best, bx, h)
			onVertex, onEdge := false, false
			for k, v := range vs {
				if xs[0] == v[0] && xs[1] == v[1] {
					onVertex = true
				}
				b := vs[(k+1)%len(vs)]
				if c := cross(b[0]-v[0], b[1]-v[1], xs[0]-v[0], xs[1]-v[1]); math.Abs(c) < 1e-12 {
					onEdge = true
				}
			}
			switch tt.where {
			case "vertex":
				if !onVertex {
					t.Errorf("x* = %v is not a vertex", xs)
				}
			case "edge":
				if onVertex || !onEdge {
					t.Errorf("x* = %v is not inside an edge (vertex %v, edge %v)", xs, onVertex, onEdge)
				}
			case "interior":
				if onEdge || xs[0] != pg.cbar[0] || xs[1] != pg.cbar[1] {
					t.Errorf("x* = %v is not the interior centre %v", xs, pg.cbar)
				}
			}
			// The closed form F = ½(x − c̄)ᵀQ(x − c̄) + offset of the panel.
			geo := pg.Geometry()
			c := geo["center"].([]float64)
			if f := pg.quad(xs[0]-c[0], xs[1]-c[1]) + geo["offset"].(float64); math.Abs(f-fs) > 1e-12*(1+fs) {
				t.Errorf("panel closed form gives %v at x*, F* = %v", f, fs)
			}
		})
	}
}

func TestConvexHull(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"0,0;1,0;1,1;0,1", "[[0 0] [1 0] [1 1] [0 1]]"},
		{"1,1; 0,0 ;0.5,0.5;1,0;0,1;0.5,0;1,1;", "[[0 0] [1 0] [1 1] [0 1]]"}, // interior, collinear, duplicate, trailing ;
		{"2,0;0,0;1,3", "[[0 0] [2 0] [1 3]]"},
		{"-1e6,-1e6;1e6,-1e6;0,1e6", "[[-1e+06 -1e+06] [1e+06 -1e+06] [0 1e+06]]"},
	}
	for _, tt := range tests {
		pts, err := ParsePoints(tt.in)
		if err != nil {
			t.Fatalf("%q: %v", tt.in, err)
		}
		h, err := ConvexHull(pts)
		if err != nil {
			t.Fatalf("%q: %v", tt.in, err)
		}
		if got := fmt.Sprint(h); got != tt.want {
			t.Errorf("%q: hull %s, want %s", tt.in, got, tt.want)
		}
		if polygonArea(h) <= 0 {
			t.Errorf("%q: hull is not counter-clockwise", tt.in)
		}
	}
}

func TestBadInput(t *testing.T) {
	ctx := context.Background()
	good := PolygonConfig{Vertices: 6, Target: TargetEdge, Cond: 4, Samples: 50, Noise: 0.3}
	with := func(f func(*PolygonConfig)) PolygonConfig { c := good; f(&c); return c }
	tests := []struct {
		name  string
		build func() error
		field string
		rule  string
	}{
		{"points empty entry", func() error { _, err := ParsePoints("0,0;;1,1;2,0"); return err }, "points", "point 2"},
		{"points two", func() error {
			_, err := NewPolygon(with(func(c *PolygonConfig) { c.Points = "0,0;1,1" }), 1)
			return err
		}, "points", "at least 3"},
		{"points not a number", func() error {
			_, err := NewPolygon(with(func(c *PolygonConfig) { c.Points = "0,0;1,x;2,0" }), 1)
			return err
		}, "points", "finite"},
		{"points NaN", func() error {
			_, err := NewPolygon(with(func(c *PolygonConfig) { c.Points = "0,0;1,NaN;2,0" }), 1)
			return err
		}, "points", "finite"},
		{"points Inf", func() error {
			_, err := NewPolygon(with(func(c *PolygonConfig) { c.Points = "0,0;1,+Inf;2,0" }), 1)
			return err
		}, "points", "finite"},
		{"points three numbers", func() error {
			_, err := NewPolygon(with(func(c *PolygonConfig) { c.Points = "0,0,1;1,1;2,0" }), 1)
			return err
		}, "points", "two numbers"},
		{"points too large", func() error {
			_, err := NewPolygon(with(func(c *PolygonConfig) { c.Points = "0,0;1e7,1;2,0" }), 1)
			return err
		}, "points", "between"},
		{"points collinear", func() error {
			_, err := NewPolygon(with(func(c *PolygonConfig) { c.Points = "0,0;1,1;2,2;-3,-3" }), 1)
			return err
		}, "points", "collinear"},
		{"points coincide", func() error {
			_, err := NewPolygon(with(func(c *PolygonConfig) { c.Points = "1,1;1,1;1,1" }), 1)
			return err
		}, "points", "collinear"},
		{"vertices", func() error { _, err := NewPolygon(with(func(c *PolygonConfig) { c.Vertices = 2 }), 1); return err }, "vertices", "between 3"},
		{"cond", func() error { _, err := NewPolygon(with(func(c *PolygonConfig) { c.Cond = 0.5 }), 1); return err }, "cond", "≥ 1"},
		{"cond NaN", func() error {
			_, err := NewPolygon(with(func(c *PolygonConfig) { c.Cond = math.NaN() }), 1)
			return err
		}, "cond", "≥ 1"},
		{"samples", func() error { _, err := NewPolygon(with(func(c *PolygonConfig) { c.Samples = 0 }), 1); return err }, "samples", "between 1"},
		{"noise", func() error { _, err := NewPolygon(with(func(c *PolygonConfig) { c.Noise = -1 }), 1); return err }, "noise", "≥ 0"},
		{"target", func() error {
			_, err := NewPolygon(with(func(c *PolygonConfig) { c.Target = "middle" }), 1)
			return err
		}, "target", "one of"},
		{"cx", func() error {
			_, err := NewPolygon(with(func(c *PolygonConfig) { c.Target = TargetCustom; c.CX = math.Inf(1) }), 1)
			return err
		}, "cx", "between"},
		{"simplex p", func() error { _, err := NewSimplex(ctx, 1, 10, 1); return err }, "p", "between 2"},
		{"simplex samples < p", func() error { _, err := NewSimplex(ctx, 30, 20, 1); return err }, "samples", "at least p"},
		{"simplex samples huge", func() error { _, err := NewSimplex(ctx, 30, MaxSamples+1, 1); return err }, "samples", "between 1"},
		{"l1 radius", func() error { _, err := NewL1Ball(ctx, 5, 10, 0, 1); return err }, "radius", "> 0"},
		{"l1 radius NaN", func() error { _, err := NewL1Ball(ctx, 5, 10, math.NaN(), 1); return err }, "radius", "> 0"},
		{"box hi", func() error { _, err := NewBox(ctx, 5, 10, 1, 1, 1); return err }, "hi", "greater than lo"},
		{"box lo NaN", func() error { _, err := NewBox(ctx, 5, 10, math.NaN(), 1, 1); return err }, "lo", "between"},
		{"box p", func() error { _, err := NewBox(ctx, MaxP+1, MaxSamples, 0, 1, 1); return err }, "p", "between 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.build()
			var fe *spec.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("want a field error, got %v", err)
			}
			if fe.Field != tt.field || !strings.Contains(fe.Msg, tt.rule) {
				t.Fatalf("got %q, want field %q with %q", err, tt.field, tt.rule)
			}
		})
	}
}

func TestCancelledBuild(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewSimplex(ctx, 30, 200, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
}

func TestDeterministic(t *testing.T) {
	ctx := context.Background()
	for seed := int64(0); seed < 3; seed++ {
		a, _ := NewBox(ctx, 8, 20, -1, 1, seed)
		b, _ := NewBox(ctx, 8, 20, -1, 1, seed)
		c, _ := NewBox(ctx, 8, 20, -1, 1, seed+10)
		x := a.ProxStart()
		if a.Objective(x) != b.Objective(x) || fmt.Sprint(a.XStar()) != fmt.Sprint(b.XStar()) {
			t.Fatal("the same seed gave different instances")
		}
		if a.Objective(x) == c.Objective(x) {
			t.Fatal("different seeds gave the same instance")
		}
		cfg := PolygonConfig{Vertices: 7, Target: TargetEdge, Cond: 3, Samples: 9, Noise: 0.4}
		p1, _ := NewPolygon(cfg, seed)
		p2, _ := NewPolygon(cfg, seed)
		if fmt.Sprint(p1.Geometry()) != fmt.Sprint(p2.Geometry()) {
			t.Fatal("the same seed gave different polygons")
		}
	}
}

func FuzzParsePoints(f *testing.F) {
	for _, s := range []string{"0,0;1,0;0,1", "1,1; 0,0 ;0.5,0.5;1,0;0,1;", "", ";", "0,0;1,1;2,2", "1e308,1;2,3;4,5", "a,b", "0,0;1e-300,0;0,1e-300", " 3 , 4 ;5,6;7,-8;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		pts, err := ParsePoints(s)
		if err != nil {
			var fe *spec.FieldError
			if !errors.As(err, &fe) || fe.Field != "points" {
				t.Fatalf("error without the field name: %v", err)
			}
			return
		}
		h, err := ConvexHull(pts)
		if err != nil {
			var fe *spec.FieldError
			if !errors.As(err, &fe) || fe.Field != "points" {
				t.Fatalf("error without the field name: %v", err)
			}
			return
		}
		if len(h) < 3 || len(h) > len(pts) || polygonArea(h) <= 0 {
			t.Fatalf("bad hull %v of %v", h, pts)
		}
		ext := 0.0
		for _, p := range pts {
			ext = math.Max(ext, math.Max(math.Abs(p[0]), math.Abs(p[1])))
		}
		for k := range h { // strictly convex, counter-clockwise
			a, b, c := h[k], h[(k+1)%len(h)], h[(k+2)%len(h)]
			if cross(b[0]-a[0], b[1]-a[1], c[0]-b[0], c[1]-b[1]) <= 0 {
				t.Fatalf("hull %v is not strictly convex at %v", h, b)
			}
		}
		for _, p := range pts { // every point inside (up to round-off)
			for k := range h {
				a, b := h[k], h[(k+1)%len(h)]
				if cross(b[0]-a[0], b[1]-a[1], p[0]-a[0], p[1]-a[1]) < -1e-9*ext*ext {
					t.Fatalf("point %v outside hull %v", p, h)
				}
			}
		}
		// A polygon builds from any accepted point set.
		if _, err := NewPolygon(PolygonConfig{Points: s, Target: TargetEdge, Cond: 2, Samples: 3, Noise: 0.1}, 1); err != nil {
			t.Fatalf("NewPolygon rejected accepted points %q: %v", s, err)
		}
	})
}

func TestExtraDistance(t *testing.T) {
	for _, tc := range cases(t) {
		ev := tc.prob.(solver.Evaluator)
		xs := tc.prob.(interface{ XStar() []float64 }).XStar()
		if d := ev.Extra(xs)["dist_xstar"]; d != 0 {
			t.Errorf("%s: distance of x* to itself %v", tc.name, d)
		}
		x := append([]float64(nil), xs...)
		x[0] += 3
		x[1] -= 4
		if d := ev.Extra(x)["dist_xstar"]; math.Abs(d-5) > 1e-12 {
			t.Errorf("%s: distance %v, want 5", tc.name, d)
		}
	}
}

// The oracle's vertices are the caller's: changing one must not change the
// problem (several runs share one instance).
func TestVerticesAreFresh(t *testing.T) {
	for _, tc := range cases(t) {
		g := make([]float64, tc.prob.Dim())
		g[0] = 1
		v := tc.prob.LMO(0, g)
		before := fmt.Sprint(tc.prob.LMO(0, g))
		for i := range v.Val {
			v.Val[i] = 99
		}
		s := tc.prob.Start(0)
		for i := range s.Val {
			s.Val[i] = 99
		}
		if got := fmt.Sprint(tc.prob.LMO(0, g)); got != before {
			t.Errorf("%s: modifying an oracle vertex changed the problem: %s → %s", tc.name, before, got)
		}
		if len(s.Val) > 0 && fmt.Sprint(tc.prob.Start(0)) == fmt.Sprint(s) {
			t.Errorf("%s: modifying the start vertex changed the problem", tc.name)
		}
	}
}
