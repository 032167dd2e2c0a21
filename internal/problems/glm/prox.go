package glm

import "math"

// The proximal view works in β-space: S(β) = Σ_i f_i(x_iᵀβ), R = λ‖·‖₁.

// ProxDim is p.
func (pr *Problem) ProxDim() int { return pr.p }

// ProxStart is β = 0.
func (pr *Problem) ProxStart() []float64 { return make([]float64, pr.p) }

// Smooth returns Σ f_i(x_iᵀβ) and writes Xᵀ f'(Xβ) into grad.
func (pr *Problem) Smooth(beta, grad []float64) float64 {
	z := make([]float64, pr.n)
	pr.mul(z, beta)
	s := 0.0
	for i, zi := range z {
		s += pr.loss.value(pr.y[i], zi)
		z[i] = pr.loss.deriv(pr.y[i], zi)
	}
	pr.mulT(grad, z)
	return s
}

// Prox is soft-thresholding at λ·step.
func (pr *Problem) Prox(dst, v []float64, step float64) {
	SoftThreshold(dst, v, pr.lambda*step)
}

// SoftThreshold writes sign(v)·max(|v| − tau, 0) into dst.
func SoftThreshold(dst, v []float64, tau float64) {
	for i, x := range v {
		switch {
		case x > tau:
			dst[i] = x - tau
		case x < -tau:
			dst[i] = x + tau
		default:
			dst[i] = 0
		}
	}
}

// SmoothLipschitz is LipschitzBound for the squared and logistic losses and 0
// for Poisson (whose bound over the feasible set is usually astronomically
// loose, so the proximal method backtracks instead).
func (pr *Problem) SmoothLipschitz() float64 {
	if pr.loss == Poisson {
		return 0
	}
	return pr.LipschitzBound()
}

// Lift writes (β, ‖β‖₁) into x. A proximal iterate is not constrained by T;
// if ‖β‖₁ ever exceeds T it is scaled back onto ‖β‖₁ = T so that x stays in
// P (with the default safe T this happens only far from the solution, since
// the objective at such β exceeds F(0)).
func (pr *Problem) Lift(x, beta []float64) {
	n1 := l1(beta)
	s := 1.0
	if n1 > pr.t {
		s = pr.t / n1
		n1 = pr.t
	}
	for j, b := range beta {
		x[j] = s * b
	}
	x[pr.p] = math.Min(n1, pr.t)
}
