package glm

import (
	"math"

	"github.com/fwlab/fwlab/internal/solver"
)

// Coords describes the β-space problem Σ_i f_i(x_iᵀβ) + λ‖β‖₁ to coordinate
// descent (solver.CoordProblem): the columns of X, the loss, and R = λ‖·‖₁.
func (pr *Problem) Coords() solver.Coords {
	c := solver.Coords{N: pr.n, P: pr.p, Cols: pr.xc, W: 1, L1: pr.lambda}
	if pr.loss == Squared {
		c.Target = pr.y
	} else {
		c.Loss = coordLoss{loss: pr.loss, y: pr.y}
	}
	return c
}

// coordLoss is a logistic or Poisson loss over the samples, for coordinate
// descent's Newton steps.
type coordLoss struct {
	loss Loss
	y    []float64
}

// Derivs writes f'(z_i) and f”(z_i).
func (l coordLoss) Derivs(z, d1, d2 []float64) {
	for i, zi := range z {
		d1[i] = l.loss.deriv(l.y[i], zi)
		d2[i] = l.loss.curv(zi)
	}
}

// Delta is Σ_i f_i(z_i + s·m_i) − f_i(z_i).
func (l coordLoss) Delta(z, m []float64, s float64) float64 {
	t := 0.0
	for i, mi := range m {
		if mi != 0 {
			t += l.loss.delta(l.y[i], z[i], s*mi)
		}
	}
	return t
}

// curv returns f″(z) (it does not depend on the label for these losses).
func (l Loss) curv(z float64) float64 {
	switch l {
	case Squared:
		return 1
	case Logistic:
		return sigmoid(z) * sigmoid(-z)
	default:
		return math.Exp(z)
	}
}

var _ solver.CoordProblem = (*Problem)(nil)
