package solver

import "time"

// EvalRatio sets the default cadence (Limits.EvalEvery = 0): an iteration is
// evaluated once the work done since the last evaluation reaches EvalRatio
// times the cost of one evaluation, both counted in the same units (a
// method's effective passes; the record's own figures are timed as part of
// an iteration's work). Evaluations
// then cost about 1/EvalRatio of the work, which keeps a default run's wall
// time within 1.25× its work time (BenchmarkDefaultCadence) whatever the
// machine, while the evaluated iterations, and with them the stop point, the
// status, the summary and every record, are a function of the spec alone.
const EvalRatio = 8

// Cadence decides which iterations are evaluated, from counted work only,
// never from the clock. With a fixed cadence (Limits.EvalEvery ≥ 1) every
// E-th iteration is; with the default cadence (EvalEvery = 0) an iteration is
// evaluated when the work since the last evaluation is at least EvalRatio
// times an evaluation's cost. Either way the first iteration and every
// iteration a stopping rule needs (the last one a limit allows, a stationary
// point) are evaluated; the gap tolerance is then detected at the first
// evaluation after it holds, within one evaluation interval of the iteration
// where it first held. The iterates never depend on the cadence.
type Cadence struct {
	every int
	cost  float64 // one evaluation's cost, in the method's work units
	last  float64 // the work at the last evaluation
}

// NewCadence returns the cadence of Limits.EvalEvery (0: the default
// cadence) for a method whose evaluation costs evalCost of its work units
// (values ≤ 0 are taken as 1).
func NewCadence(every int, evalCost float64) *Cadence {
	if !(evalCost > 0) {
		evalCost = 1
	}
	return &Cadence{every: every, cost: evalCost}
}

// Due reports whether iteration k ≥ 1 is evaluated; forced marks an
// iteration a stopping rule needs; work is the method's counted work up to
// the end of iteration k (in the units of the evaluation cost). A yes is
// taken as an evaluation: the caller evaluates.
//
// A forced evaluation leaves the cadence as it was: the iterations the
// cadence evaluates are the same whether or not others were forced (a
// session stepping through a paused run asks for every step it takes).
func (c *Cadence) Due(k int, forced bool, work float64) bool {
	var due bool
	switch {
	case k == 1:
		due = true
	case c.every > 0:
		due = k%c.every == 0
	default:
		due = work-c.last >= EvalRatio*c.cost
	}
	if due {
		c.last = work
	}
	return due || forced
}

// epoch is the origin of Now.
var epoch = time.Now()

// Now reads the monotonic clock the methods time their work with: the time
// since the package was loaded. One reading costs one monotonic clock call,
// about half of a time.Now (which reads the wall clock too). The clock only
// measures (Record.Time); it never decides anything.
func Now() time.Duration { return clock() }

// clock is Now's reading; benchmarks that must not count the time other
// jobs on a loaded machine take may swap in a CPU clock (export_test.go).
var clock = func() time.Duration { return time.Since(epoch) }

// EvalCoster is implemented by problems that declare what one evaluation
// (the exact objective, the FW gap's full gradient and oracle calls, and the
// problem's own metrics) costs, in effective passes, for the default
// cadence. Without it an evaluation counts as DefaultEvalCost passes.
type EvalCoster interface {
	EvalCost() float64
}

// DefaultEvalCost is an evaluation's cost in passes when the problem does not
// declare it: one full gradient and one objective, each a pass over the data.
const DefaultEvalCost = 2

// evalCostOf returns p's declared evaluation cost, or the default.
func evalCostOf(p any) float64 {
	if c, ok := p.(EvalCoster); ok {
		if v := c.EvalCost(); v > 0 {
			return v
		}
	}
	return DefaultEvalCost
}
