package solver

import (
	"fmt"
	"math"
)

// Continuation along λ (glmnet's pathwise coordinate descent), coordinate
// descent's setting Path = K > 0, for R = λ‖·‖₁: the run first solves the
// same problem at the K penalties
//
//	λ_k = λ_max·r^k, k = 1…K, r = (λ/λ_max)^(1/(K+1)),
//
// geometric from λ_max = ‖∇S(0)‖∞ (the smallest λ at which 0 is optimal)
// down to its own λ, each stage warm-started from the previous stage's
// solution, then its own λ to the run's stopping rule.
//   - A stage before the last opens without a full pass: its working set is
//     the previous stage's support and the coordinates the strong rule
//     keeps, |g_j| > 2λ_k − λ_ref, g the gradient of the last full pass
//     (at 0, from λ_max's computation, unless a stage needed one) and
//     λ_ref its λ (Tibshirani et al.'s strong rule), at most cdGrow(free)
//     of them, the largest |g_j| first. It ends when the sweeps over that
//     set stop moving (the largest move at most cdStageTol of the starting
//     objective): it is only a warm start, checked by no full pass.
//   - The last stage, the run's λ, opens with a full pass at the warm start,
//     the previous stage's solution: every gradient, the gap-safe sphere at
//     λ there (sequential screening, with the previous solution), a working
//     set of the previous support and the violators; it ends as a cold run
//     does, at a coordinate-wise minimum checked by a full pass.
// Coordinates screened out at one stage come back at the next: the sphere
// proves a coordinate zero at its stage's λ only.
//
// Everything depends on the problem and K alone, never on another run: a
// run stays a function of its spec and seed, and a sweep over λ whose runs
// set Path gets the warm starts in each of its runs. The records of the
// stages report what every record reports, the problem's (the run's λ's)
// objective and gap at the current iterate, so charts and certificates
// stay comparable with every other run; time and passes count the stages.

// cdStageTol is the relative size below which a sweep's largest move
// (h_j·δ_j², in units of the objective) ends a stage before the last: a
// warm start needs no more (glmnet's 1e-7 made the stages cost more on
// BenchmarkCDLassoPath).
const cdStageTol = 1e-4

// cdPath is a run's continuation: the stages' λ above the problem's,
// largest first, and the stage being solved.
type cdPath struct {
	lams   []float64
	at     int     // the stage being solved; len(lams): the problem's λ
	target float64 // the problem's λ
	lmax   float64
	ref    float64 // the λ of the stage whose gradient s.grad holds
}

// CheckCDPath checks coordinate descent's Path, k stages, against the
// problem's coordinates; the error states the rule broken (NewCD prefixes
// it with the setting's name, the scenarios name the spec's field).
func CheckCDPath(k int, c Coords) error {
	switch {
	case k < 0:
		return fmt.Errorf("must be a number of continuation stages ≥ 0 (0: none, the cold start), got %d", k)
	case k > 0 && c.L1 <= 0:
		return fmt.Errorf("continuation runs along the penalty λ of λ‖·‖₁ (lasso, logistic, poisson); this problem's coordinates lie in the box [%v, %v] and it has no λ (leave path at 0), got %d", c.Lo, c.Hi, k)
	}
	return nil
}

// newPath makes the continuation of k stages for the state at its start,
// sets the state's λ to the first stage's and makes its working set (nil
// for k = 0). Where λ is at least λ_max there is no stage: 0 is the
// solution, and the run goes as a cold one.
func newPath(s *cdState, k int) *cdPath {
	if k == 0 {
		return nil
	}
	p := &cdPath{target: s.c.L1, lmax: s.lambdaMax()}
	if !(p.lmax > p.target) {
		return p
	}
	for i := 1; i <= k; i++ {
		p.lams = append(p.lams, p.lmax*math.Pow(p.target/p.lmax, float64(i)/float64(k+1)))
	}
	s.c.L1 = p.lams[0]
	p.ref = p.lmax
	s.strongSet(2*s.c.L1 - p.ref)
	return p
}

// staging reports whether a stage before the problem's λ is being solved.
func (p *cdPath) staging() bool { return p != nil && p.at < len(p.lams) }

// advance ends a stage: the state takes the next stage's λ (the problem's
// after the last) and every coordinate is in play again. It reports
// whether the next stage opens with a full pass (the last stage);
// otherwise it has made the next stage's working set by the strong rule.
func (p *cdPath) advance(s *cdState) (full bool) {
	p.at++
	clear(s.out)
	if p.at == len(p.lams) {
		s.c.L1 = p.target
		return true
	}
	s.c.L1 = p.lams[p.at]
	s.strongSet(2*s.c.L1 - p.ref)
	return false
}

// strongSet makes the working set by the strong rule thr on the gradient
// s.grad, with m_jᵀz of its coordinates for covariance updates.
func (s *cdState) strongSet(thr float64) {
	if s.stale {
		s.refresh()
	}
	s.pick(math.Max(thr, 0))
	if s.c.Loss == nil {
		for _, j := range s.set {
			s.partial(j)
		}
	}
	s.chooseUpdates()
}

// note is what a run's final message says of its continuation ("" for
// none).
func (p *cdPath) note() string {
	if p == nil {
		return ""
	}
	if len(p.lams) == 0 {
		return fmt.Sprintf("; no continuation stage: λ = %.6g is at least λ_max = %.6g", p.target, p.lmax)
	}
	stages := "stages"
	if p.at == 1 {
		stages = "stage"
	}
	return fmt.Sprintf("; after %d continuation %s from λ_max = %.6g", p.at, stages, p.lmax)
}

// lambdaMax returns ‖∇S(0)‖∞, counted as work: the state's own gradient
// when y = 0 (the problems' start), else at a zero y, after which the
// state is restored.
func (s *cdState) lambdaMax() float64 {
	var saved []float64
	for _, v := range s.y {
		if v != 0 {
			saved = append([]float64(nil), s.y...)
			clear(s.y)
			s.refresh()
			break
		}
	}
	mx := 0.0
	for j := range s.y {
		s.grad[j] = s.partial(j)
		mx = math.Max(mx, math.Abs(s.grad[j]))
	}
	if saved != nil {
		copy(s.y, saved)
		s.refresh()
	}
	return mx
}
