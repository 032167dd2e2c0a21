package gflasso

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// randomComponent draws a connected graph on k tasks (a random spanning tree
// plus random extra edges) with weights in [0.7, 1] and, when mixed, random
// edge signs.
func randomComponent(rng *rand.Rand, k int, mixed bool) *component {
	c := &component{lambda: 0.5 + rng.Float64()*2, gamma: 0.5 + rng.Float64()*3}
	for a := 0; a < k; a++ {
		c.tasks = append(c.tasks, a)
	}
	has := map[[2]int]bool{}
	add := func(a, b int) {
		if a > b {
			a, b = b, a
		}
		if a == b || has[[2]int{a, b}] {
			return
		}
		has[[2]int{a, b}] = true
		s := 1.0
		if mixed && rng.IntN(2) == 0 {
			s = -1
		}
		c.edges = append(c.edges, localEdge{a: a, b: b, w: 0.7 + 0.3*rng.Float64(), s: s})
	}
	for b := 1; b < k; b++ {
		add(rng.IntN(b), b)
	}
	for extra := rng.IntN(k + 1); extra > 0; extra-- {
		add(rng.IntN(k), rng.IntN(k))
	}
	return c
}

// bruteVertices enumerates the vertices of ω_C's unit ball independently of
// the atom characterisation: ω_C is the support function of the zonotope
// Z = λ[-1,1]^k + Σ_e γw_e[-1,1](e_a − s_e e_b), so the ball is Z's polar and
// its vertices are ±n/ω(n) for the normals n of Z's facets, which are the
// hyperplanes spanned by k−1 of the generators.
func bruteVertices(c *component) [][]float64 {
	k := len(c.tasks)
	var gens [][]float64
	for a := 0; a < k; a++ {
		g := make([]float64, k)
		g[a] = 1
		gens = append(gens, g)
	}
	if c.gamma > 0 {
		for _, e := range c.edges {
			g := make([]float64, k)
			g[e.a] = 1
			g[e.b] = -e.s
			gens = append(gens, g)
		}
	}
	if k == 1 {
		return [][]float64{{1 / c.lambda}, {-1 / c.lambda}}
	}
	var out [][]float64
	seen := map[string]bool{}
	sub := make([]int, k-1)
	var rec func(pos, from int)
	rec = func(pos, from int) {
		if pos == k-1 {
			// Normal by cofactors: n_i = (−1)^i det(M without column i).
			n := make([]float64, k)
			nz := false
			for i := 0; i < k; i++ {
				m := mat.NewDense(k-1, k-1, nil)
				for r, gi := range sub {
					cc := 0
					for col := 0; col < k; col++ {
						if col == i {
							continue
						}
						m.Set(r, cc, gens[gi][col])
						cc++
					}
				}
				d := mat.Det(m)
				if i%2 == 1 {
					d = -d
				}
				if math.Abs(d) > 1e-9 {
					nz = true
				} else {
					d = 0
				}
				n[i] = d
			}
			if !nz {
				return
			}
			w := c.omega(n)
			for _, sg := range []float64{1, -1} {
				v := make([]float64, k)
				for i := range v {
					v[i] = sg * n[i] / w
				}
				key := fmt.Sprintf("%.6f", v)
				if !seen[key] {
					seen[key] = true
					out = append(out, v)
				}
			}
			return
		}
		for g := from; g < len(gens); g++ {
			sub[pos] = g
			rec(pos+1, g+1)
		}
	}
	rec(0, 0)
	return out
}

func TestAtomsContainBallVertices(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 60; trial++ {
		k := 1 + trial%5
		mixed := trial%2 == 1
		c := randomComponent(rng, k, mixed)
		t.Run(fmt.Sprintf("k%d_mixed%v_%d", k, mixed, trial), func(t *testing.T) {
			if err := c.enumerate(); err != nil {
				t.Fatal(err)
			}
			// Every atom lies on the unit sphere.
			z := make([]float64, k)
			for i := range c.inv {
				for a := range z {
					z[a] = 0
				}
				for p := c.start[i]; p < c.start[i+1]; p++ {
					z[c.idx[p]] = c.sgn[p] * c.inv[i]
				}
				if w := c.omega(z); math.Abs(w-1) > 1e-12 {
					t.Fatalf("atom %d has ω = %v, want 1", i, w)
				}
			}
			// Every vertex of the ball is ± an atom.
			verts := bruteVertices(c)
			if len(verts) == 0 {
				t.Fatal("no vertices found")
			}
			for _, v := range verts {
				found := false
				pat := make([]float64, k)
				for i := range c.inv {
					for _, sg := range []float64{1, -1} {
						c.atomPattern(i, sg, pat)
						ok := true
						for a := range v {
							if math.Abs(v[a]-pat[a]*c.inv[i]) > 1e-9 {
								ok = false
								break
							}
						}
						found = found || ok
					}
				}
				if !found {
					t.Fatalf("ball vertex %v is not among the atoms", v)
				}
			}
			// On random directions: max over vertices = enumerated = LP.
			g := make([]float64, k)
			for r := 0; r < 20; r++ {
				for a := range g {
					g[a] = rng.NormFloat64()
				}
				want := math.Inf(-1)
				for _, v := range verts {
					d := 0.0
					for a := range v {
						d += g[a] * v[a]
					}
					want = math.Max(want, d)
				}
				got, _, _ := c.bestAtom(g, make([]float64, 1<<k))
				lpv, _, err := c.lpDual(g)
				if err != nil {
					t.Fatal(err)
				}
				lps, _, err := c.lpAtom(g)
				if err != nil {
					t.Fatal(err)
				}
				for name, v := range map[string]float64{"enumerated": got, "lp value": lpv, "lp atom": lps} {
					if math.Abs(v-want) > 1e-9*math.Max(1, math.Abs(want)) {
						t.Fatalf("%s: dual norm %v, brute force %v", name, v, want)
					}
				}
			}
		})
	}
}

func TestAllPositiveAtomsAreSubsets(t *testing.T) {
	// With all-positive edges the atoms are 1_S/(λ|S| + γ w(δ(S))) for the
	// connected S: for a 10-task clique all 1023 nonempty subsets.
	c := &component{lambda: 2, gamma: 3}
	for a := 0; a < 10; a++ {
		c.tasks = append(c.tasks, a)
		for b := 0; b < a; b++ {
			c.edges = append(c.edges, localEdge{a: b, b: a, w: 0.8, s: 1})
		}
	}
	if err := c.enumerate(); err != nil {
		t.Fatal(err)
	}
	if len(c.inv) != 1023 {
		t.Fatalf("got %d atoms, want 1023", len(c.inv))
	}
	for i := range c.inv {
		s := int(c.start[i+1] - c.start[i])
		want := 1 / (2*float64(s) + 3*0.8*float64(s*(10-s)))
		if math.Abs(c.inv[i]-want) > 1e-15 {
			t.Fatalf("atom %d: 1/ω = %v, want %v", i, c.inv[i], want)
		}
		for p := c.start[i]; p < c.start[i+1]; p++ {
			if c.sgn[p] != 1 {
				t.Fatalf("atom %d has a negative sign", i)
			}
		}
	}
	// A path 0-1-2 has connected subsets {0},{1},{2},{0,1},{1,2},{0,1,2}.
	path := &component{tasks: []int{0, 1, 2}, lambda: 1, gamma: 1,
		edges: []localEdge{{a: 0, b: 1, w: 1, s: 1}, {a: 1, b: 2, w: 1, s: 1}}}
	if err := path.enumerate(); err != nil {
		t.Fatal(err)
	}
	if len(path.inv) != 6 {
		t.Fatalf("path: got %d atoms, want 6", len(path.inv))
	}
}

func TestEnumeratedOracleEqualsLP(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 12; trial++ {
		k := 5 + trial%5
		mixed := trial%3 != 0
		c := randomComponent(rng, k, mixed)
		if err := c.enumerate(); err != nil {
			t.Fatal(err)
		}
		g := make([]float64, k)
		pat := make([]float64, k)
		for r := 0; r < 15; r++ {
			for a := range g {
				g[a] = rng.NormFloat64()
			}
			s, atom, sg := c.bestAtom(g, make([]float64, 1<<k))
			c.atomPattern(atom, -sg, pat) // the maximiser's pattern
			ls, lpat, err := c.lpAtom(g)
			if err != nil {
				t.Fatal(err)
			}
			if s != ls {
				t.Fatalf("trial %d k=%d: enumerated score %v, LP %v", trial, k, s, ls)
			}
			for a := range pat {
				if pat[a] != lpat[a] {
					t.Fatalf("trial %d: enumerated pattern %v, LP %v", trial, pat, lpat)
				}
			}
		}
	}
}

// balancedComponent draws a connected graph whose edge signs come from a
// random switching τ (s_e = τ_a τ_b), so the signed graph is balanced.
func balancedComponent(rng *rand.Rand, k int) *component {
	c := randomComponent(rng, k, false)
	tau := make([]float64, k)
	for a := range tau {
		tau[a] = 1
		if rng.IntN(2) == 0 {
			tau[a] = -1
		}
	}
	for i := range c.edges {
		c.edges[i].s = tau[c.edges[i].a] * tau[c.edges[i].b]
	}
	return c
}

func TestCutOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	// Against enumeration (k ≤ 10) and the LP (k = 14, 18), bit for bit.
	for trial := 0; trial < 24; trial++ {
		k := []int{3, 6, 10, 14, 18}[trial%5]
		c := balancedComponent(rng, k)
		tau := c.switching()
		if tau == nil {
			t.Fatal("balanced graph reported unbalanced")
		}
		if k <= 10 {
			if err := c.enumerate(); err != nil {
				t.Fatal(err)
			}
		}
		g := make([]float64, k)
		pat := make([]float64, k)
		for r := 0; r < 8; r++ {
			for a := range g {
				g[a] = rng.NormFloat64()
			}
			cs, cpat := c.cutAtom(g, tau)
			var ws float64
			var wpat []float64
			if k <= 10 {
				s, atom, sg := c.bestAtom(g, make([]float64, 1<<k))
				c.atomPattern(atom, -sg, pat)
				ws, wpat = s, pat
			} else {
				var err error
				ws, wpat, err = c.lpAtom(g)
				if err != nil {
					t.Fatal(err)
				}
			}
			if cs != ws || fmt.Sprint(cpat) != fmt.Sprint(wpat) {
				t.Fatalf("k=%d: cut %v %v, reference %v %v", k, cs, cpat, ws, wpat)
			}
		}
	}
	// A triangle with one negative edge is not balanced.
	tri := &component{tasks: []int{0, 1, 2}, lambda: 1, gamma: 1,
		edges: []localEdge{{a: 0, b: 1, w: 1, s: 1}, {a: 1, b: 2, w: 1, s: 1}, {a: 0, b: 2, w: 1, s: -1}}}
	if tri.switching() != nil {
		t.Fatal("frustrated triangle reported balanced")
	}
}
