package solver

import (
	"context"
	"fmt"
	"math"

	"github.com/fwlab/fwlab/fw"
)

// Step kinds reported in Record.Step (see package fw).
const (
	StepFW       = fw.StepFW
	StepAway     = fw.StepAway
	StepDrop     = fw.StepDrop
	StepCollapse = fw.StepCollapse
	StepPairwise = fw.StepPairwise
	StepProx     = fw.StepProx
	StepBlock    = fw.StepBlock
	StepNone     = fw.StepNone
)

// Record is what every algorithm reports once per iteration: fw.Record.
type Record = fw.Record

// F returns a pointer to v, for the optional Record fields.
func F(v float64) *float64 { return fw.F(v) }

// Recorder receives the records of one run: fw.Recorder.
type Recorder = fw.Recorder

// RecorderFunc adapts a function to the Recorder interface: fw.RecorderFunc.
type RecorderFunc = fw.RecorderFunc

// Run statuses reported in Summary.Status (see package fw).
const (
	StatusConverged = fw.StatusConverged
	StatusStalled   = fw.StatusStalled
	StatusMaxIters  = fw.StatusMaxIters
	StatusMaxPasses = fw.StatusMaxPasses
	StatusCancelled = fw.StatusCancelled
	StatusFailed    = fw.StatusFailed
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

// Summary closes a run: fw.Summary.
type Summary = fw.Summary

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
