package gflasso

import (
	"math"
	"slices"

	"github.com/fwlab/fwlab/internal/solver"
)

// Slack collapse. A block's iterate (B_b, t_b) holds slack t_b − Ω_b(B_b) ≥ 0
// whenever its atoms cancel each other, and Frank-Wolfe steps drain that
// slack only sublinearly (away steps remove one atom's weight at a time, and
// the loss, blind to t, gives them no curvature to go by). Lowering t_b to
// Ω_b(B_b) stays inside P_b and lowers the P1 objective by exactly the slack,
// the loss unchanged. Its vertex representation is read off B_b row by row,
// by the layer-cake decomposition of ω_C: for a row z, with the level sets
// S_τ = {a : |z_a| ≥ τ} and σ_τ = sign z on S_τ,
//
//	z = ∫_0^∞ σ_τ dτ  and  ω_C(z) = ∫_0^∞ ω_C(σ_τ) dτ,
//
// the second because every term of ω_C splits that way: |z_a| = ∫ |σ_τ,a|,
// and |z_a − s z_b| = ∫ |σ_τ,a − s σ_τ,b| dτ whether z_a and s z_b have the
// same sign (then it is ||z_a| − |z_b||) or not (|z_a| + |z_b|). Each σ_τ
// splits further into the pieces that its satisfied edges (σ_a = s_e σ_b)
// connect, with ω additive over them (an unsatisfied edge between two
// pieces adds 2w_e to the union and w_e to each piece); each piece is an atom
// of the oracle (a connected S with a consistent σ). So z/ω(z) is a convex
// combination of atoms, the block point is
//
//	Σ_rows Σ_levels Σ_pieces (Δτ·ω(σ_P)/T_b)·T_b(e_j ⊗ σ_P/ω(σ_P), 1)
//	  + (1 − Ω_b(B_b)/T_b)·0,
//
// and its atoms carry the oracle's keys, so later steps recognise them.

// Reshape implements solver.Reshaper.
func (p *Problem) Reshape(b int, xb []float64, m solver.Model, set, dst *solver.ActiveSet) bool {
	if p.opt.KeepSlack {
		return false
	}
	bi := p.info[b]
	c := p.comps[bi.comp]
	kc := len(c.tasks)
	t := xb[bi.size-1]
	om := 0.0
	for r := 0; r < bi.r1-bi.r0; r++ {
		// a zero row adds ω = +0, which leaves the sum as it is: skipped
		if z := xb[r*kc : (r+1)*kc]; !zeroRow(z) {
			om += c.omega(z)
		}
	}
	// Nothing to gain (or rounding only).
	if !(t-om > 1e-12*bi.T) {
		return false
	}
	sc := p.getScratch()
	defer p.putScratch(sc)
	pat, piece, comp := sc.pat[:kc], sc.piece[:kc], sc.comp[:kc]
	total := 0.0
	for r := 0; r < bi.r1-bi.r0; r++ {
		z := xb[r*kc : (r+1)*kc]
		mags := sc.mags[:0]
		for _, v := range z {
			if v != 0 {
				mags = append(mags, math.Abs(v))
			}
		}
		if len(mags) == 0 {
			continue
		}
		slices.Sort(mags)
		mags = slices.Compact(mags)
		for l := len(mags) - 1; l >= 0; l-- {
			tau := mags[l]
			next := 0.0
			if l > 0 {
				next = mags[l-1]
			}
			dt := tau - next
			for a, v := range z {
				pat[a] = 0
				if math.Abs(v) >= tau {
					pat[a] = math.Copysign(1, v)
				}
			}
			// Pieces of pat connected by satisfied edges.
			var n int
			n, sc.stack = c.pieces(pat, comp, sc.stack)
			for q := 0; q < n; q++ {
				for a := range piece {
					piece[a] = 0
					if comp[a] == q {
						piece[a] = pat[a]
					}
				}
				key := atomKey(sc.key, bi.r0+r, piece)
				sc.key = key
				v, _, ok := set.Find(key)
				if !ok {
					v = p.cachedAtom(b, bi.r0+r, piece, sc.key)
				}
				wt := dt * c.omega(piece) / bi.T
				dst.Put(v, wt)
				total += wt
			}
		}
		sc.mags = mags
	}
	if zero := 1 - total; zero > 0 {
		dst.Put(solver.Vertex{Key: "0"}, zero)
	} else if total > 0 {
		dst.Normalize()
	}
	xb[bi.size-1] = om
	m.Add(b, om-t, p.tvert[b])
	return true
}

// zeroRow reports whether every entry of z is zero.
func zeroRow(z []float64) bool {
	for _, v := range z {
		if v != 0 {
			return false
		}
	}
	return true
}

var _ solver.Reshaper = (*Problem)(nil)
