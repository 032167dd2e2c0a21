package gflasso

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// lassoCD solves min_β ½‖y − Xβ‖² + λ‖β‖₁ for column c of Y by cyclic
// coordinate descent to a KKT residual below 1e-12, independently of the
// package's code, and returns β and the objective.
func lassoCD(X, Y *mat.Dense, c int, lambda float64) ([]float64, float64) {
	n, j := X.Dims()
	y := make([]float64, n)
	for i := range y {
		y[i] = Y.At(i, c)
	}
	beta := make([]float64, j)
	r := append([]float64(nil), y...) // y − Xβ
	norm := make([]float64, j)
	for a := 0; a < j; a++ {
		for i := 0; i < n; i++ {
			norm[a] += X.At(i, a) * X.At(i, a)
		}
	}
	for sweep := 0; sweep < 100000; sweep++ {
		maxd := 0.0
		for a := 0; a < j; a++ {
			rho := 0.0
			for i := 0; i < n; i++ {
				rho += X.At(i, a) * r[i]
			}
			rho += norm[a] * beta[a]
			nb := 0.0
			if rho > lambda {
				nb = (rho - lambda) / norm[a]
			} else if rho < -lambda {
				nb = (rho + lambda) / norm[a]
			}
			if d := nb - beta[a]; d != 0 {
				for i := 0; i < n; i++ {
					r[i] -= X.At(i, a) * d
				}
				maxd = math.Max(maxd, math.Abs(d))
				beta[a] = nb
			}
		}
		if maxd < 1e-14 {
			break
		}
	}
	f := 0.0
	for _, v := range r {
		f += v * v
	}
	f /= 2
	for _, b := range beta {
		f += lambda * math.Abs(b)
	}
	return beta, f
}
