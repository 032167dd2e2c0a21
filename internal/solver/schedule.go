package solver

import (
	"fmt"
	"math"
)

// Schedule is a batch-size schedule m_k over n samples.
type Schedule struct {
	// Kind: "paper" (Theorem 1: m_k = ceil(n/(1 + n(1−ρ)^{2αk}))), "constant"
	// (m_k = M0), "geometric" (m_k = ceil(M0·Growth^k)), "full" (m_k = n).
	Kind   string
	Rho    float64
	Alpha  float64
	M0     int
	Growth float64
}

// Validate checks the schedule's parameters.
func (s Schedule) Validate() error {
	switch s.Kind {
	case "full":
		return nil
	case "paper":
		if !(s.Rho > 0 && s.Rho < 1) {
			return fmt.Errorf("schedule paper: rho must lie strictly between 0 and 1, got %v", s.Rho)
		}
		if !(s.Alpha > 0 && s.Alpha < 1) {
			return fmt.Errorf("schedule paper: alpha must lie strictly between 0 and 1, got %v", s.Alpha)
		}
	case "constant":
		if s.M0 < 1 {
			return fmt.Errorf("schedule constant: m0 must be at least 1, got %d", s.M0)
		}
	case "geometric":
		if s.M0 < 1 {
			return fmt.Errorf("schedule geometric: m0 must be at least 1, got %d", s.M0)
		}
		if !(s.Growth > 1) || math.IsInf(s.Growth, 0) {
			return fmt.Errorf("schedule geometric: growth must be a number greater than 1, got %v", s.Growth)
		}
	default:
		return fmt.Errorf("schedule: unknown kind %q (paper, constant, geometric or full)", s.Kind)
	}
	return nil
}

// Size returns m_k for iteration k (k = 1, 2, …) over n samples, always in [1, n].
func (s Schedule) Size(k, n int) int {
	if n <= 1 {
		return n
	}
	var m float64
	switch s.Kind {
	case "paper":
		// (1−ρ)^{2αk} computed in log space: it underflows to 0 for large k,
		// which gives m = n, as it should.
		q := math.Exp(2 * s.Alpha * float64(k) * math.Log1p(-s.Rho))
		m = math.Ceil(float64(n) / (1 + float64(n)*q))
	case "constant":
		m = float64(s.M0)
	case "geometric":
		m = math.Ceil(float64(s.M0) * math.Pow(s.Growth, float64(k-1)))
	default:
		m = float64(n)
	}
	if !(m >= 1) {
		m = 1
	}
	if m > float64(n) {
		m = float64(n)
	}
	return int(m)
}
