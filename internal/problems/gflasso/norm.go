package gflasso

import (
	"errors"
	"fmt"
	"math"
	"math/bits"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"
)

// localEdge is an edge of one component in the component's own task indices.
type localEdge struct {
	a, b int
	w    float64
	s    float64 // +1 or -1
}

// component is one connected component C of the task graph with its norm
//
//	ω_C(z) = λ‖z‖₁ + γ Σ_{e=(a,b)∈E_C} w_e |z_a − s_e z_b|,  z ∈ R^{|C|},
//
// and, when C is small enough, the enumerated candidate vertices of ω_C's
// unit ball (see enumerate).
type component struct {
	tasks  []int // global task indices, ascending
	edges  []localEdge
	lambda float64
	gamma  float64
	// Enumerated atoms σ_S (σ of S's first task is +1; −σ_S is the other
	// atom of the pair), stored flat: atom i has members idx[start[i]:start[i+1]]
	// (local task indices, ascending) with signs sgn[...], and inv[i] = 1/ω(σ_S).
	// Nil start means the component uses the LP oracle.
	start []int32
	idx   []int8
	sgn   []float64
	inv   []float64
	// tau is the switching of a balanced component that is not enumerated
	// (its oracle then uses minimum cuts, see cut.go); nil otherwise.
	tau []float64
	deg []float64 // total edge weight at each task (set by switching)
	// pos and neg are the masks of the atom's members with sign +1 and −1,
	// for the subset-sum evaluation of bestAtom.
	pos, neg []uint32
	// The oracle's row bound (bound.go): the switching (nil when the signed
	// graph is unbalanced), the smallest edge weight and the minimum cut;
	// bScratch > 0 once they are computed.
	bTau         []float64
	bWmin, bCmin float64
	bScratch     int
}

// omega evaluates ω_C(z).
func (c *component) omega(z []float64) float64 {
	s := 0.0
	for _, v := range z {
		s += math.Abs(v)
	}
	s *= c.lambda
	f := 0.0
	for _, e := range c.edges {
		f += e.w * math.Abs(z[e.a]-e.s*z[e.b])
	}
	return s + c.gamma*f
}

// simplex is the LP solver of the oracle (a variable so that tests can make
// it fail).
var simplex = lp.Simplex

// maxEnumAtoms bounds the candidate list of one component; beyond it the LP
// oracle is used.
const maxEnumAtoms = 1 << 18

// maxEnumTasks bounds the size of an enumerated component (the oracle keeps a
// table of 2^k subset sums per row).
const maxEnumTasks = 16

// errTooMany reports that a component has too many candidate atoms.
var errTooMany = errors.New("too many candidate atoms")

// enumerate lists the candidate vertices of ω_C's unit ball. A vertex of the
// ball {z : ω_C(z) ≤ 1} is a point where enough of the kinks of ω_C are
// active to fix z up to scale. The kinks are z_a = 0 and z_a = s_e z_b; a
// point with support S is fixed up to scale exactly when the active edge
// equalities inside S connect S (and S itself is connected in the graph,
// since an edge leaving S cannot be active). So every vertex is ±σ_S/ω(σ_S)
// with S a connected set of tasks and σ ∈ {±1}^S such that the edges e=(a,b)
// of S with σ_a = s_e σ_b connect S. The candidate list may also contain
// points on the boundary that are not vertices, which is harmless for a
// linear oracle (all candidates lie on the sphere ω = 1). With all-positive
// edges the only σ is the all-ones vector. Tests check the list against a
// vertex enumeration of the ball's H-representation and against the LP.
func (c *component) enumerate() error {
	k := len(c.tasks)
	if k > maxEnumTasks {
		return errTooMany
	}
	adj := make([]uint32, k)
	for _, e := range c.edges {
		adj[e.a] |= 1 << e.b
		adj[e.b] |= 1 << e.a
	}
	c.start = []int32{0}
	members := make([]int, 0, k)
	sigma := make([]float64, k)
	z := make([]float64, k)
	for mask := uint32(1); mask < 1<<k; mask++ {
		if !connected(mask, adj) {
			continue
		}
		members = members[:0]
		for m := mask; m != 0; m &= m - 1 {
			members = append(members, bits.TrailingZeros32(m))
		}
		ns := len(members)
		for pat := uint32(0); pat < 1<<(ns-1); pat++ {
			for i, a := range members {
				sigma[a] = 1
				if i > 0 && pat>>(i-1)&1 == 1 {
					sigma[a] = -1
				}
			}
			if !c.signsConnect(mask, members, sigma) {
				continue
			}
			if len(c.inv) >= maxEnumAtoms {
				c.start, c.idx, c.sgn, c.inv, c.pos, c.neg = nil, nil, nil, nil, nil, nil
				return errTooMany
			}
			for i := range z {
				z[i] = 0
			}
			var pm, nm uint32
			for _, a := range members {
				z[a] = sigma[a]
				c.idx = append(c.idx, int8(a))
				c.sgn = append(c.sgn, sigma[a])
				if sigma[a] > 0 {
					pm |= 1 << a
				} else {
					nm |= 1 << a
				}
			}
			c.pos = append(c.pos, pm)
			c.neg = append(c.neg, nm)
			c.start = append(c.start, int32(len(c.idx)))
			c.inv = append(c.inv, 1/c.omega(z))
		}
	}
	return nil
}

// connected reports whether the vertex set mask induces a connected subgraph.
func connected(mask uint32, adj []uint32) bool {
	first := uint32(1) << bits.TrailingZeros32(mask)
	seen, frontier := first, first
	for frontier != 0 {
		next := uint32(0)
		for f := frontier; f != 0; f &= f - 1 {
			next |= adj[bits.TrailingZeros32(f)]
		}
		next &= mask &^ seen
		seen |= next
		frontier = next
	}
	return seen == mask
}

// signsConnect reports whether the edges of S satisfied by σ (σ_a = s_e σ_b)
// connect S.
func (c *component) signsConnect(mask uint32, members []int, sigma []float64) bool {
	if len(members) == 1 {
		return true
	}
	var adj [32]uint32
	for _, e := range c.edges {
		if mask>>e.a&1 == 1 && mask>>e.b&1 == 1 && sigma[e.a] == e.s*sigma[e.b] {
			adj[e.a] |= 1 << e.b
			adj[e.b] |= 1 << e.a
		}
	}
	return connected(mask, adj[:])
}

// enumerated reports whether the component has an enumerated atom list.
func (c *component) enumerated() bool { return c.start != nil }

// bestAtom returns, over the enumerated atoms, the largest |<g, σ_S>|/ω(σ_S)
// for one row g, the atom's index and the sign (−1 or +1) that the vertex
// minimising <g, v> puts in front of σ_S. Ties keep the first atom. sums
// (length 2^k) is scratch space: it receives the subset sums of g, so that
// <g, σ_S> = sums[S⁺] − sums[S⁻] costs two look-ups per atom.
func (c *component) bestAtom(g, sums []float64) (score float64, atom int, sign float64) {
	subsetSums(g, sums)
	atom = -1
	for i, inv := range c.inv {
		d := sums[c.pos[i]] - sums[c.neg[i]]
		s := math.Abs(d) * inv
		if s > score {
			score, atom = s, i
			sign = -1
			if d < 0 {
				sign = 1
			}
		}
	}
	return score, atom, sign
}

// subsetSums fills sums[m] = Σ_{a∈m} g[a] for every mask m < 2^len(g),
// adding the members in increasing order (as signedSum does).
func subsetSums(g, sums []float64) {
	sums[0] = 0
	for b, gb := range g {
		lo := sums[:1<<b]
		hi := sums[1<<b : 2<<b]
		for m, v := range lo {
			hi[m] = v + gb
		}
	}
}

// signedSum returns <g, σ> for a sign pattern, with the same rounding as
// the subset sums: (Σ ascending over σ_a > 0 of g_a) − (Σ ascending over
// σ_a < 0 of g_a).
func signedSum(g, pat []float64) float64 {
	pos, neg := 0.0, 0.0
	for a, s := range pat {
		switch {
		case s > 0:
			pos += g[a]
		case s < 0:
			neg += g[a]
		}
	}
	return pos - neg
}

// atomPattern writes the signed pattern sign·σ of atom i into pat (entries
// −1, 0, +1).
func (c *component) atomPattern(i int, sign float64, pat []float64) {
	for j := range pat {
		pat[j] = 0
	}
	for p := c.start[i]; p < c.start[i+1]; p++ {
		pat[c.idx[p]] = sign * c.sgn[p]
	}
}

// patternScore returns <g, σ>/ω(σ) for a sign pattern σ (not all zero).
func (c *component) patternScore(g, pat []float64) float64 {
	return signedSum(g, pat) * (1 / c.omega(pat))
}

// lpDual computes ω_C*(g) = max{<g, z> : ω_C(z) ≤ 1} by the simplex method and
// returns the optimal value and an optimal point z. The LP in standard form
// has variables z⁺, z⁻ (k each), d⁺, d⁻ (one pair per edge) and a slack:
//
//	z⁺_a − z⁻_a − s_e(z⁺_b − z⁻_b) − d⁺_e + d⁻_e = 0   for every edge e,
//	λ Σ(z⁺ + z⁻) + γ Σ_e w_e (d⁺_e + d⁻_e) + slack = 1,
//
// minimising −<g, z⁺ − z⁻>. The basis {d⁻, slack} is feasible from the start.
func (c *component) lpDual(g []float64) (val float64, z []float64, err error) {
	k, ne := len(c.tasks), len(c.edges)
	nv := 2*k + 2*ne + 1
	A := mat.NewDense(ne+1, nv, nil)
	b := make([]float64, ne+1)
	for r, e := range c.edges {
		A.Set(r, e.a, 1)
		A.Set(r, k+e.a, -1)
		A.Set(r, e.b, A.At(r, e.b)-e.s)
		A.Set(r, k+e.b, A.At(r, k+e.b)+e.s)
		A.Set(r, 2*k+r, -1)
		A.Set(r, 2*k+ne+r, 1)
	}
	for a := 0; a < 2*k; a++ {
		A.Set(ne, a, c.lambda)
	}
	for r, e := range c.edges {
		A.Set(ne, 2*k+r, c.gamma*e.w)
		A.Set(ne, 2*k+ne+r, c.gamma*e.w)
	}
	A.Set(ne, nv-1, 1)
	b[ne] = 1
	cost := make([]float64, nv)
	for a := 0; a < k; a++ {
		cost[a] = -g[a]
		cost[k+a] = g[a]
	}
	basic := make([]int, 0, ne+1)
	for r := 0; r < ne; r++ {
		basic = append(basic, 2*k+ne+r)
	}
	basic = append(basic, nv-1)
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("gflasso: simplex failed: %v", r)
		}
	}()
	opt, x, err := simplex(cost, A, b, 1e-12, basic)
	if err != nil {
		return 0, nil, fmt.Errorf("gflasso: simplex: %w", err)
	}
	z = make([]float64, k)
	for a := 0; a < k; a++ {
		z[a] = x[a] - x[k+a]
	}
	return -opt, z, nil
}

// lpAtom solves the row problem by LP and turns the optimal point into an
// exact candidate vertex: every optimal point is a convex combination of
// optimal vertices, so among the sign patterns of the level sets of |z|
// (S_τ = {a : |z_a| ≥ τ}, σ = sign z on S_τ) the best one is optimal; it is
// returned with its exact score <g, σ>/ω(σ) (computed as patternScore does,
// so that it equals the enumerated oracle's score for the same pattern).
func (c *component) lpAtom(g []float64) (score float64, pat []float64, err error) {
	_, z, err := c.lpDual(g)
	if err != nil {
		return 0, nil, err
	}
	k := len(z)
	zmax := 0.0
	for _, v := range z {
		zmax = math.Max(zmax, math.Abs(v))
	}
	if zmax == 0 {
		return 0, nil, nil
	}
	tol := 1e-9 * zmax
	best := math.Inf(-1)
	cand := make([]float64, k)
	for _, tv := range z {
		tau := math.Abs(tv)
		if tau <= tol {
			continue
		}
		for a, v := range z {
			cand[a] = 0
			if math.Abs(v) >= tau-tol {
				cand[a] = math.Copysign(1, v)
			}
		}
		if s := c.patternScore(g, cand); s > best {
			best = s
			pat = append(pat[:0], cand...)
		}
	}
	return c.bestPiece(g, best, pat), pat, nil
}

// pieces labels the nonzero entries of a sign pattern by the piece that its
// satisfied edges (σ_a = s_e σ_b) connect them into: comp[a] is a's piece,
// 0 … n−1 in the order of their first entries, or −1 where pat[a] = 0. It
// returns n and the stack it used (scratch, grown as needed).
func (c *component) pieces(pat []float64, comp, stack []int) (int, []int) {
	for a := range comp {
		comp[a] = -1
	}
	n := 0
	for a := range pat {
		if pat[a] == 0 || comp[a] >= 0 {
			continue
		}
		comp[a] = n
		stack = append(stack[:0], a)
		for len(stack) > 0 {
			u := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, e := range c.edges {
				v := -1
				switch u {
				case e.a:
					v = e.b
				case e.b:
					v = e.a
				}
				if v < 0 || pat[v] == 0 || comp[v] >= 0 || pat[e.a] != e.s*pat[e.b] {
					continue
				}
				comp[v] = n
				stack = append(stack, v)
			}
		}
		n++
	}
	return n, stack
}

// bestPiece splits a sign pattern into the pieces that its satisfied edges
// (σ_a = s_e σ_b) connect and keeps the best-scoring piece in pat (the first
// on ties), returning its score. Between two pieces every edge is
// unsatisfied and adds 2w_e either way, so ω of the union is the sum of the
// pieces' ω and the union's score is a weighted mean of theirs: the best
// piece scores at least as much, and it is a candidate vertex.
func (c *component) bestPiece(g []float64, score float64, pat []float64) float64 {
	k := len(pat)
	comp := make([]int, k)
	n, _ := c.pieces(pat, comp, nil)
	if n <= 1 {
		return score
	}
	best, bestPiece := math.Inf(-1), 0
	piece := make([]float64, k)
	for p := 0; p < n; p++ {
		for a := range piece {
			piece[a] = 0
			if comp[a] == p {
				piece[a] = pat[a]
			}
		}
		if s := c.patternScore(g, piece); s > best {
			best, bestPiece = s, p
		}
	}
	for a := range pat {
		if comp[a] != bestPiece {
			pat[a] = 0
		}
	}
	return best
}
