package glm

import (
	"fmt"
	"math"
)

// Loss is the per-sample loss f_i of a generalised linear model.
type Loss int

// The three losses of the paper's Remark 1.
const (
	Squared  Loss = iota // ½(z − y)²: the LASSO
	Logistic             // log(1 + exp(−y z)), y ∈ {−1, +1}
	Poisson              // exp(z) − y z, y ≥ 0
)

func (l Loss) String() string {
	switch l {
	case Squared:
		return "lasso"
	case Logistic:
		return "logistic"
	case Poisson:
		return "poisson"
	}
	return fmt.Sprintf("Loss(%d)", int(l))
}

// softplus returns log(1 + e^u) without overflow or loss of precision.
func softplus(u float64) float64 {
	if u > 0 {
		return u + math.Log1p(math.Exp(-u))
	}
	return math.Log1p(math.Exp(u))
}

// sigmoid returns 1/(1 + e^{−u}) without overflow.
func sigmoid(u float64) float64 {
	if u >= 0 {
		return 1 / (1 + math.Exp(-u))
	}
	e := math.Exp(u)
	return e / (1 + e)
}

// value returns f(z) for label y.
func (l Loss) value(y, z float64) float64 {
	switch l {
	case Squared:
		r := z - y
		return 0.5 * r * r
	case Logistic:
		return softplus(-y * z)
	default:
		return math.Exp(z) - y*z
	}
}

// deriv returns f'(z).
func (l Loss) deriv(y, z float64) float64 {
	switch l {
	case Squared:
		return z - y
	case Logistic:
		return -y * sigmoid(-y*z)
	default:
		return math.Exp(z) - y
	}
}

// delta returns f(z + s) − f(z), arranged to avoid cancellation where the
// loss allows it.
func (l Loss) delta(y, z, s float64) float64 {
	switch l {
	case Squared:
		return s*(z-y) + 0.5*s*s
	case Logistic:
		return softplus(-y*(z+s)) - softplus(-y*z)
	default:
		return math.Exp(z)*math.Expm1(s) - y*s
	}
}

// infimum returns inf_z f(z) for label y (the loss is bounded below).
func (l Loss) infimum(y float64) float64 {
	if l == Poisson && y > 0 {
		return y - y*math.Log(y)
	}
	return 0
}

// maxCurv is sup f″ for the losses with a global bound (0 for Poisson, which
// has none).
func (l Loss) maxCurv() float64 {
	switch l {
	case Squared:
		return 1
	case Logistic:
		return 0.25
	}
	return 0
}
