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

// EvalFloor keeps the adaptive cadence from starving when the time outside
// the work is mostly per-iteration bookkeeping rather than evaluations (runs
// whose iterations take well under a microsecond): an iteration is also
// evaluated while the evaluations themselves have taken at most EvalFloor of
// the work time. (A method that asks before an iteration's work, as the
// Frank-Wolfe methods do so that the sampled gradient's error can be taken
// on the way, counts that work in with the evaluation: the floor then
// evaluates less often, never more.)
const EvalFloor = 0.05

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
	now      func() time.Duration
	start    time.Duration
	excluded time.Duration
	// evaluations: the time from each Due that said yes to the Exclude or
	// Span after it (the evaluation and its record, the Recorder left out)
	evals   time.Duration
	dueAt   time.Duration
	pending bool
}

// epoch is the origin of Now.
var epoch = time.Now()

// Now reads the monotonic clock the methods time their work with: the time
// since the package was loaded. One reading costs one monotonic clock call,
// about half of a time.Now (which reads the wall clock too): methods whose
// iterations take a fraction of a microsecond read it three times per
// iteration, and the readings are a measurable part of such an iteration.
func Now() time.Duration { return time.Since(epoch) }

// NewCadence returns the cadence of Limits.EvalEvery (0: adaptive), with its
// clock started: call it when the run starts.
func NewCadence(every int) *Cadence { return newCadenceClock(every, Now) }

func newCadenceClock(every int, now func() time.Duration) *Cadence {
	return &Cadence{every: every, now: now, start: now()}
}

// Due reports whether iteration k ≥ 1 is evaluated; forced marks an
// iteration a stopping rule needs; work is the method's work time so far.
// The caller evaluates right away when it says yes, and calls Exclude after
// the iteration's record, as on every iteration.
func (c *Cadence) Due(k int, forced bool, work time.Duration) bool {
	var at time.Duration
	if c.every == 0 {
		at = c.now()
	}
	return c.DueAt(k, forced, work, at)
}

// DueAt is Due with the clock already read (at, a reading of Now taken just
// before): methods that read the clock at the end of an iteration's work
// pass that reading rather than have the cadence read it again. A fixed
// cadence does not use at.
func (c *Cadence) DueAt(k int, forced bool, work, at time.Duration) bool {
	due := c.due(k, forced, work, at)
	if due && c.every == 0 {
		c.dueAt, c.pending = at, true
	}
	return due
}

func (c *Cadence) due(k int, forced bool, work, at time.Duration) bool {
	if forced || k == 1 {
		return true
	}
	if c.every > 0 {
		return k%c.every == 0
	}
	outside := at - c.start - c.excluded - work
	return float64(outside) <= EvalShare*float64(work) || float64(c.evals) <= EvalFloor*float64(work)
}

// Exclude removes time spent elsewhere (inside the Recorder) from the
// cadence's clock; it is called after each iteration's record.
func (c *Cadence) Exclude(d time.Duration) {
	c.excluded += d
	if c.pending {
		c.evals += c.now() - c.dueAt - d
		c.pending = false
	}
}

// Span is Exclude for methods that read the clock themselves: the time
// from `from` (read just before the Recorder was called) to `to` (read
// after it, at the latest when the next iteration's work starts) was spent
// elsewhere. It is called once per record, before the next Due.
func (c *Cadence) Span(from, to time.Duration) {
	c.excluded += to - from
	if c.pending {
		c.evals += from - c.dueAt
		c.pending = false
	}
}
