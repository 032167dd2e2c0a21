package gflasso

import (
	"math"
)

// Exact oracle for large components whose signed graph is balanced (every
// cycle has an even number of negative edges, in particular all-positive
// graphs). With a switching τ ∈ {±1}^k such that s_e = τ_a τ_b on every edge,
// ω_C(τ∘z) = λ‖z‖₁ + γ Σ_e w_e |z_a − z_b|, whose ball has its vertices at
// ±1_S/F(S), F(S) = λ|S| + γ w(δ(S)), S connected. So ω_C*(g) is the larger
// of max_S h(S)/F(S) for h = ±τ∘g, a fractional problem that Dinkelbach's
// method solves with one minimum cut per step: max_S h(S) − θF(S) is a cut
// problem because F is λ|S| plus a cut function with nonnegative weights.

// switching returns τ with s_e = τ_a τ_b on every edge, or nil when the
// signed graph is not balanced. It also records the tasks' degrees, which
// the cut oracle reads.
func (c *component) switching() []float64 {
	k := len(c.tasks)
	c.deg = make([]float64, k)
	for _, e := range c.edges {
		c.deg[e.a] += e.w
		c.deg[e.b] += e.w
	}
	tau := make([]float64, k)
	adj := make([][]localEdge, k)
	for _, e := range c.edges {
		adj[e.a] = append(adj[e.a], e)
		adj[e.b] = append(adj[e.b], e)
	}
	for r := 0; r < k; r++ {
		if tau[r] != 0 {
			continue
		}
		tau[r] = 1
		stack := []int{r}
		for len(stack) > 0 {
			u := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, e := range adj[u] {
				v := e.a + e.b - u
				want := e.s * tau[u]
				if tau[v] == 0 {
					tau[v] = want
					stack = append(stack, v)
				} else if tau[v] != want {
					return nil
				}
			}
		}
	}
	return tau
}

// cutAtom returns ω_C*(g) and a maximising sign pattern (as lpAtom does), for
// a balanced component with switching tau.
func (c *component) cutAtom(g, tau []float64) (float64, []float64) {
	k := len(g)
	h := make([]float64, k)
	best, bestPat := 0.0, []float64(nil)
	for _, sg := range []float64{1, -1} {
		for a := range h {
			h[a] = sg * tau[a] * g[a]
		}
		S := c.dinkelbach(h)
		if S == nil {
			continue
		}
		pat := make([]float64, k)
		for a, in := range S {
			if in {
				pat[a] = sg * tau[a]
			}
		}
		s := c.bestPiece(g, c.patternScore(g, pat), pat)
		if s > best {
			best, bestPat = s, pat
		}
	}
	return best, bestPat
}

// fOf returns F(S) = λ|S| + γ w(δ(S)) (in switched, all-positive form).
func (c *component) fOf(S []bool) float64 {
	f := 0.0
	for _, in := range S {
		if in {
			f += c.lambda
		}
	}
	for _, e := range c.edges {
		if S[e.a] != S[e.b] {
			f += c.gamma * e.w
		}
	}
	return f
}

// dinkelbach maximises h(S)/F(S) over nonempty S; nil when no S has
// h(S) > 0.
func (c *component) dinkelbach(h []float64) []bool {
	k := len(h)
	var S []bool
	theta := 0.0
	for a, v := range h {
		if r := v / (c.lambda + c.gamma*c.deg[a]); v > 0 && r > theta {
			theta = r
			S = make([]bool, k)
			S[a] = true
		}
	}
	if S == nil {
		return nil
	}
	scale := 0.0
	for _, v := range h {
		scale += math.Abs(v)
	}
	for iter := 0; iter < 100; iter++ {
		T := c.maxExcess(h, theta, scale)
		hs := 0.0
		empty := true
		for a, in := range T {
			if in {
				hs += h[a]
				empty = false
			}
		}
		if empty {
			break
		}
		r := hs / c.fOf(T)
		if !(r > theta*(1+1e-15)) {
			break
		}
		theta, S = r, T
	}
	return S
}

// maxExcess returns argmax_S h(S) − θ(λ|S| + γ w(δ(S))) by a minimum s-t
// cut: task a is on the source side when a ∈ S; a ∈ S costs θλ − h_a (an
// arc a→t when positive, else a gain as an arc s→a), and every edge costs
// θγw_e when cut.
func (c *component) maxExcess(h []float64, theta, scale float64) []bool {
	k := len(h)
	n := k + 2
	src, snk := k, k+1
	capm := make([]float64, n*n)
	for a, v := range h {
		cost := theta*c.lambda - v
		if cost > 0 {
			capm[a*n+snk] += cost
		} else {
			capm[src*n+a] -= cost
		}
	}
	for _, e := range c.edges {
		w := theta * c.gamma * e.w
		capm[e.a*n+e.b] += w
		capm[e.b*n+e.a] += w
	}
	tol := 1e-14 * (scale + 1)
	parent := make([]int, n)
	queue := make([]int, 0, n)
	for {
		// Breadth-first augmenting path (Edmonds–Karp).
		for i := range parent {
			parent[i] = -1
		}
		parent[src] = src
		queue = append(queue[:0], src)
		for qi := 0; qi < len(queue) && parent[snk] < 0; qi++ {
			u := queue[qi]
			for v := 0; v < n; v++ {
				if parent[v] < 0 && capm[u*n+v] > tol {
					parent[v] = u
					queue = append(queue, v)
				}
			}
		}
		if parent[snk] < 0 {
			break
		}
		f := math.Inf(1)
		for v := snk; v != src; v = parent[v] {
			f = math.Min(f, capm[parent[v]*n+v])
		}
		for v := snk; v != src; v = parent[v] {
			u := parent[v]
			capm[u*n+v] -= f
			capm[v*n+u] += f
		}
	}
	S := make([]bool, k)
	for a := 0; a < k; a++ {
		S[a] = parent[a] >= 0
	}
	return S
}
