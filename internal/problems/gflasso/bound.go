package gflasso

import "math"

// A cheap upper bound on ω_C*(g) = max over atoms σ_S of |<g, σ_S>|/ω_C(σ_S),
// so that the enumerated oracle can visit the rows of a block in decreasing
// order of their bounds and stop at the first row whose bound cannot beat
// the best score found (exact ties go to the lowest row, as in a plain scan,
// so the oracle's answer is the same bit for bit).
//
// For an atom on S, every edge leaving S adds w_e to ω(σ_S) and every edge
// inside S that σ does not satisfy (σ_a ≠ s_e σ_b) adds 2w_e, so
//
//   - S a proper subset: ω(σ_S) ≥ λ|S| + γ·c_min, c_min the weight of the
//     component's minimum cut, and |<g, σ_S>| ≤ the sum of the |S| largest
//     |g_a| ≤ min(|S|·‖g‖∞, ‖g‖₁);
//   - S = C: with a switching τ (s_e = τ_a τ_b, a balanced component) the
//     patterns ±τ satisfy every edge, |<g, ±τ>|/(λ|C|); any other σ leaves
//     an edge unsatisfied: ‖g‖₁/(λ|C| + 2γ·w_min).

// prepareBound computes c_min, w_min and the switching of an enumerated
// component.
func (c *component) prepareBound() {
	k := len(c.tasks)
	c.bTau = c.switching()
	c.bWmin = math.Inf(1)
	for _, e := range c.edges {
		c.bWmin = math.Min(c.bWmin, e.w)
	}
	c.bCmin = math.Inf(1)
	if k > 1 {
		w := make([]float64, k*k)
		for _, e := range c.edges {
			w[e.a*k+e.b] += e.w
			w[e.b*k+e.a] += e.w
		}
		// Every proper S and its complement cut the same edges: masks
		// without the last task cover them all.
		for mask := uint32(1); mask < 1<<(k-1); mask++ {
			cut := 0.0
			for a := 0; a < k; a++ {
				if mask>>a&1 == 0 {
					continue
				}
				for b := 0; b < k; b++ {
					if mask>>b&1 == 0 {
						cut += w[a*k+b]
					}
				}
			}
			c.bCmin = math.Min(c.bCmin, cut)
		}
	}
	c.bScratch = k
}

// dualBound returns an upper bound on ω_C*(g), inflated against rounding
// (NaN when g holds a NaN). The inflation covers the rounding of the
// divisions and of sums of absolute values, which do not cancel; the
// switching term, which may cancel, is the atom's own signed sum. The maxima are plain comparisons: the values
// are never negative, and a NaN is caught up front.
func (c *component) dualBound(g []float64) float64 {
	k := len(g)
	l1, linf := 0.0, 0.0
	for _, v := range g {
		w := math.Abs(v)
		l1 += w
		if w > linf {
			linf = w
		}
	}
	if l1 != l1 {
		return math.NaN()
	}
	lk := c.lambda * float64(k)
	var best float64
	if c.bTau != nil {
		// <g, τ> summed as the atom's score sums it (signedSum, the subset
		// sums' order): with mixed signs the sum may cancel far below the
		// rounding of its terms, and a bound computed in another order
		// could then fall below the score it bounds by more than any
		// relative margin
		best = math.Abs(signedSum(g, c.bTau)) / lk
		if len(c.edges) > 0 {
			if x := l1 / (lk + 2*c.gamma*c.bWmin); x > best {
				best = x
			}
		}
	} else {
		best = l1 / (lk + 2*c.gamma*c.bWmin)
	}
	if k > 1 && l1 > 0 {
		// The m largest |g_a| sum to at most min(m‖g‖∞, ‖g‖₁); over real
		// m ∈ [1, k−1] the largest min(m‖g‖∞, ‖g‖₁)/(λm + γc_min) is at
		// m* = ‖g‖₁/‖g‖∞ (the first term grows, the second falls), or at
		// k−1 when m* lies beyond.
		gc := c.gamma * c.bCmin
		var x float64
		if m := l1 / linf; m < float64(k-1) {
			x = l1 / (c.lambda*m + gc)
		} else {
			m := float64(k - 1)
			x = m * linf / (c.lambda*m + gc)
		}
		if x > best || x != x {
			best = x
		}
	}
	return best * (1 + 1e-12)
}
