package glm

import (
	"math"

	"github.com/fwlab/fwlab/internal/solver"
)

// Slack collapse. The iterate (β, t) of P1 holds slack t − ‖β‖₁ ≥ 0 whenever
// its atoms cancel each other (+j and −j both active), and Frank-Wolfe steps
// drain it only sublinearly: the loss is blind to t, so nothing gives the
// away steps curvature to go by. Lowering t to ‖β‖₁ stays inside P, leaves
// β (and so the model's z = Xβ) unchanged and lowers the P1 objective by
// exactly λ·slack. The new point's representation is read off β:
//
//	(β, ‖β‖₁) = Σ_j (|β_j|/T)·T(sign(β_j)·e_j, 1) + (1 − ‖β‖₁/T)·0,
//
// with the oracle's own vertices (keys "+j", "−j", "0"), so later steps
// recognise them. A coordinate with |β_j| ≤ residue·T is the round-off that
// a drop step leaves where its atom was; it gets no atom (the solver's own
// set does not carry one either), so the representation reproduces the
// point within that rounding and the active set stays as sparse as β.
const residue = 1e-13

// Reshape implements solver.Reshaper.
func (pr *Problem) Reshape(b int, xb []float64, m solver.Model, set, dst *solver.ActiveSet) bool {
	if pr.keepSlack {
		return false
	}
	p := pr.p
	beta, t := xb[:p], xb[p]
	om := l1(beta)
	// Nothing to gain (or rounding only).
	if !(t-om > 1e-12*pr.t) {
		return false
	}
	total := 0.0
	for j, v := range beta {
		if math.Abs(v) <= residue*pr.t {
			continue
		}
		w := math.Abs(v) / pr.t
		dst.Put(pr.vertex(j, v < 0), w)
		total += w
	}
	if zero := 1 - total; zero > 0 {
		dst.Put(pr.zeroVertex(), zero)
	} else if total > 0 {
		dst.Normalize()
	}
	// Only t moves: z = Xβ, all the model holds, is unchanged.
	xb[p] = om
	return true
}

var _ solver.Reshaper = (*Problem)(nil)
