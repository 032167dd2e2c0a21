package solver

import (
	"context"
	"fmt"
	"math"
)

// Step kinds reported in Record.Step.
const (
	StepFW       = "fw"            // Frank-Wolfe step toward the oracle's vertex
	StepAway     = "away"          // away step from an active vertex
	StepDrop     = "drop"          // away step with γ = γ_max: the vertex leaves the active set
	StepCollapse = "full-collapse" // FW step with γ = 1: the active set collapses to one vertex
	StepPairwise = "pairwise"      // pairwise step (weight moved from u to p)
	StepProx     = "prox"          // proximal-gradient step
	StepBlock    = "block"         // block-coordinate iteration (several block steps)
	StepNone     = "none"          // no move (zero direction or zero step)
)

// Record is what every algorithm reports once per iteration (ARCHITECTURE.md, "Records").
// Objective, Gap and GradErr are set on evaluation iterations only. Every
// method first reports its starting point as an evaluated record with K = 0
// and Step "none"; record k ≥ 1 describes the step of iteration k and, when
// evaluated, the iterate after it. On single steps FWSteps, AwaySteps and
// Drops count that one step (1 or 0), on block iterations all block steps.
// Time is the method's own work in seconds: neither evaluations nor the
// time spent inside the Recorder (where a session may hold a paused trace)
// are counted.
type Record struct {
	K      int     `json:"k"`
	Passes float64 `json:"passes"`
	Time   float64 `json:"time_s"`
	Step   string  `json:"step"`
	Gamma  float64 `json:"gamma"`
	Batch  int     `json:"batch"`
	Active int     `json:"active"`
	// Step counts of a block iteration (Step == StepBlock); Drops is also 1 on
	// a single drop step so that charts can mark drop events uniformly.
	FWSteps   int `json:"fw_steps,omitempty"`
	AwaySteps int `json:"away_steps,omitempty"`
	Drops     int `json:"drops,omitempty"`
	// Weight clean-ups (weights below tolerance zeroed) done this iteration.
	Cleanups  int      `json:"cleanups,omitempty"`
	Objective *float64 `json:"objective"`
	Gap       *float64 `json:"gap"`
	GradErr   *float64 `json:"grad_err,omitempty"`
	// Extra holds problem-specific metrics on evaluation iterations (for the
	// structural SVM: dual objective, relative gap, train/test error, …).
	Extra map[string]float64 `json:"extra,omitempty"`
}

// Evaluated reports whether the record carries the exact objective.
func (r *Record) Evaluated() bool { return r.Objective != nil }

// F returns a pointer to v, for the optional Record fields.
func F(v float64) *float64 { return &v }

// Recorder receives the records of one run, in order, from the goroutine
// running the method. It must not block for long: the session layer copies
// records into a store and notifies subscribers asynchronously.
type Recorder interface {
	Record(Record)
}

// RecorderFunc adapts a function to the Recorder interface.
type RecorderFunc func(Record)

// Record calls f(r).
func (f RecorderFunc) Record(r Record) { f(r) }

// Run statuses reported in Summary.Status.
const (
	StatusConverged = "converged"  // the gap tolerance was reached, a certified stationary point, or a gap at the rounding floor
	StatusStalled   = "stalled"    // no step made progress although the gap is far above the rounding floor
	StatusMaxIters  = "max_iters"  // the iteration limit was reached
	StatusMaxPasses = "max_passes" // the effective-pass limit was reached
	StatusCancelled = "cancelled"  // the context was cancelled
	StatusFailed    = "failed"     // a numerical failure (message says which)
)

// RoundingFloorC is c of the rounding floor c·ε·|F| (ε = 2⁻⁵², F the last
// evaluated objective): a run that stops making progress with its certified
// gap at or below the floor is converged, not stalled, since F − F* ≤ gap
// is then as small as F itself can be told apart from F* in floating
// point (an objective summed over many terms carries a rounding error of
// many ε·|F|).
const RoundingFloorC = 1000

// AtRoundingFloor reports whether a gap certifies F to the rounding floor
// (gap ≤ RoundingFloorC·ε·|F|).
func AtRoundingFloor(gap, obj float64) bool {
	return gap <= RoundingFloorC*epsilon*math.Abs(obj)
}

// epsilon is the machine epsilon of float64, 2⁻⁵².
const epsilon = 0x1p-52

// atFloor turns a stalled summary whose gap is at the rounding floor into a
// converged one: the gap is then a certificate.
func atFloor(sum *Summary) {
	if sum.Status != StatusStalled || !AtRoundingFloor(sum.Gap, sum.Objective) {
		return
	}
	sum.Status = StatusConverged
	sum.Message = fmt.Sprintf("gap at the rounding floor (≤ %d·ε·|F| = %.3g): gap %.3g at F = %.6g", RoundingFloorC, RoundingFloorC*epsilon*math.Abs(sum.Objective), sum.Gap, sum.Objective)
}

// Summary closes a run.
type Summary struct {
	Objective float64 `json:"objective"`
	Gap       float64 `json:"gap"`
	Iters     int     `json:"iters"`
	Passes    float64 `json:"passes"`
	Time      float64 `json:"time_s"`
	Status    string  `json:"status"`
	Message   string  `json:"message"`
}

// Result is what a Method returns: the summary and the final solution in the
// problem's own coordinates.
type Result struct {
	Summary Summary
	X       []float64
}

// Method is one configured algorithm on one problem instance, ready to run.
// Run stops on the limits it was built with or when ctx is cancelled (status
// "cancelled", not an error). An error is returned only for failures that
// leave no meaningful result.
type Method interface {
	Run(ctx context.Context, rec Recorder) (Result, error)
}

// Limits are the stopping rules and evaluation cadence shared by every method.
type Limits struct {
	MaxIters  int     // ≥ 1
	MaxPasses float64 // 0: no limit
	GapTol    float64 // 0: no gap test
	EvalEvery int     // evaluate objective and gap every E iterations (≥ 1), or 0: the default cadence, decided by counted work (see Cadence); the first and last iterations are always evaluated
}

// reached reports whether a limit ends the run after iteration k with
// passes done: such an iteration's record is always evaluated.
func (l Limits) reached(k int, passes float64) bool {
	return k >= l.MaxIters || (l.MaxPasses > 0 && passes >= l.MaxPasses)
}

// stop applies the limits after iteration k's record: it sets the summary's
// status (and message) and reports true when the run must end.
func (l Limits) stop(sum *Summary, r Record, k int, passes float64) bool {
	switch {
	case r.Gap != nil && l.GapTol > 0 && *r.Gap <= l.GapTol:
		sum.Status = StatusConverged
		sum.Message = fmt.Sprintf("duality gap %.3g ≤ %g", *r.Gap, l.GapTol)
	case k >= l.MaxIters:
		sum.Status = StatusMaxIters
	case l.MaxPasses > 0 && passes >= l.MaxPasses:
		sum.Status = StatusMaxPasses
	default:
		return false
	}
	return true
}
