package solver

import "time"

// EvalShare bounds, under the adaptive cadence, the wall time a run spends
// outside its work (exact evaluations of the objective, the gap, the sampled
// gradient's error and the problem's own metrics, and the bookkeeping around
// them) relative to the work time: wall ≤ (1 + EvalShare)·work, plus one
// evaluation, and evaluations take at most EvalShare/(1 + EvalShare) ≈ 15%
// of the wall time. Time spent inside the Recorder (a paused session) does
// not count.
const EvalShare = 0.18

// Cadence decides which iterations are evaluated. With a fixed cadence
// (Limits.EvalEvery ≥ 1) every E-th iteration is; with the adaptive cadence
// (EvalEvery = 0) an iteration is evaluated as soon as the time spent outside
// the work so far is at most EvalShare of the work time so far, measured while
// the run goes: cheap evaluations come often, costly ones rarely. Either way
// the first iteration and every iteration a stopping rule needs (the last one
// a limit allows, a stationary point) are evaluated; the gap tolerance is
// then detected at the first evaluation after it holds, within one
// evaluation interval of the iteration where it first held. Which iterations
// the adaptive cadence evaluates depends on timing; the iterates do not.
type Cadence struct {
	every    int
	start    time.Time
	excluded time.Duration
}

// NewCadence returns the cadence of Limits.EvalEvery (0: adaptive), with its
// clock started: call it when the run starts.
func NewCadence(every int) *Cadence { return &Cadence{every: every, start: time.Now()} }

// Due reports whether iteration k ≥ 1 is evaluated; forced marks an
// iteration a stopping rule needs; work is the method's work time so far.
func (c *Cadence) Due(k int, forced bool, work time.Duration) bool {
	if forced || k == 1 {
		return true
	}
	if c.every > 0 {
		return k%c.every == 0
	}
	outside := time.Since(c.start) - c.excluded - work
	return float64(outside) <= EvalShare*float64(work)
}

// Exclude removes time spent elsewhere (inside the Recorder) from the
// cadence's clock.
func (c *Cadence) Exclude(d time.Duration) { c.excluded += d }
