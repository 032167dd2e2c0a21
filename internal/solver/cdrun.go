package solver

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"gonum.org/v1/gonum/floats"
)

// Coordinate descent's run: start evaluates the starting point, then each
// iteration is a sweep, either a full pass (the gradient of every
// coordinate not screened out, screening, a new working set) or a sweep of
// exact coordinate steps over the working set, and its record. With a
// continuation (Config.Path, cdpath.go) the sweeps first go through the
// stages of a λ path, each stage's working set made by the strong rule.

// cdRun is the state of one Run of coordinate descent.
type cdRun struct {
	m        *cdMethod
	s        *cdState
	rec      Recorder
	ev       *liftEval
	lr       float64
	cad      *Cadence
	sum      Summary
	work     time.Duration
	lastEval int
	// scale is the size of "no move": the starting objective's (never a
	// later evaluation's: the iterates do not depend on the cadence)
	scale float64
	full  bool // the next iteration is a full pass
	fresh bool // the working set was just made by a full pass
	inner int  // sweeps over the current working set
	path  *cdPath
}

// Run executes the method.
func (m *cdMethod) Run(ctx context.Context, rec Recorder) (Result, error) {
	cr, err := m.newRun(rec)
	if err != nil {
		return Result{}, err
	}
	if cr.start() {
		return Result{Summary: cr.sum, X: cr.s.y}, nil
	}
	for k := 1; ; k++ {
		if ctx.Err() != nil {
			cr.sum.Status, cr.sum.Message = StatusCancelled, "cancelled after "+strconv.Itoa(k-1)+" iterations"
			break
		}
		if cr.iterate(k) {
			break
		}
	}
	if cr.lastEval != cr.sum.Iters || cr.sum.Status == StatusCancelled {
		cr.sum.Objective, cr.sum.Gap = cr.evaluate(nil)
	}
	return Result{Summary: cr.sum, X: cr.s.y}, nil
}

// newRun makes the state at the problem's start: the curvatures h_j and
// the residual, timed as the run's first work.
func (m *cdMethod) newRun(rec Recorder) (*cdRun, error) {
	pp, c := m.pp, m.c
	y := pp.ProxStart()
	if len(y) != c.P {
		return nil, fmt.Errorf("solver: the problem's start has length %d, want %d", len(y), c.P)
	}
	s := &cdState{c: c, y: y, z: make([]float64, c.N), h: make([]float64, c.P), grad: make([]float64, c.P),
		out: make([]bool, c.P), set: make([]int, 0, c.P), q: make([]float64, c.P),
		unit: 1 / (2 * float64(c.P))}
	if c.Loss != nil {
		s.d1, s.d2 = make([]float64, c.N), make([]float64, c.N)
	}
	t0 := Now()
	for j := range s.h {
		col := s.col(j)
		s.h[j] = c.W * floats.Dot(col, col)
	}
	s.work += 0.5
	s.refresh()
	path := newPath(s, m.cfg.Path)
	setup := Now() - t0
	return &cdRun{m: m, s: s, rec: rec, ev: newLiftEval(pp, m.lift), lr: pp.SmoothLipschitz(), work: setup, full: !path.staging(), path: path}, nil
}

// evaluate returns the objective and the FW gap of the lifted iterate.
func (cr *cdRun) evaluate(r *Record) (float64, float64) { return cr.ev.eval(cr.s.y, r, cr.lr) }

// active is the record's Active, the number of free coordinates: the
// support for λ‖·‖₁, the coordinates strictly inside the bounds for a box.
func (cr *cdRun) active() int {
	k := 0
	for j := range cr.s.y {
		if cr.s.isFree(j) {
			k++
		}
	}
	return k
}

// start reports the starting point as record k = 0, evaluated, and reports
// whether the run ends there (the gap within the tolerance).
func (cr *cdRun) start() bool {
	lim := cr.m.cfg.Limits
	r0 := Record{K: 0, Step: StepNone, Active: cr.active()}
	cr.cad = NewCadence(lim.EvalEvery, evalCostOf(cr.m.lift)+2)
	obj, gap := cr.evaluate(&r0)
	r0.Objective, r0.Gap = F(obj), F(gap)
	cr.rec.Record(r0)
	cr.sum = Summary{Objective: obj, Gap: gap}
	if lim.GapTol > 0 && gap <= lim.GapTol {
		cr.sum.Status = StatusConverged
		return true
	}
	cr.scale = math.Abs(obj)
	if !(cr.scale > 0) || math.IsInf(cr.scale, 0) {
		cr.scale = 1
	}
	cr.s.unseen = cdUnseen * cr.scale
	return false
}

// iterate runs iteration k, a full pass or a sweep, with its record, and
// reports whether the run ends after it.
func (cr *cdRun) iterate(k int) bool {
	s, lim := cr.s, cr.m.cfg.Limits
	t1 := Now()
	step, stationary := cr.sweep(k)
	r := Record{K: k, Passes: s.work, Step: step, Batch: cr.m.lift.Samples(), Active: cr.active()}
	cr.work += Now() - t1
	r.Time = cr.work.Seconds()
	if cr.cad.Due(k, lim.reached(k, s.work) || stationary || EvalRequested(cr.rec), s.work) {
		obj, gap := cr.evaluate(&r)
		r.Objective, r.Gap = F(obj), F(gap)
		cr.sum.Objective, cr.sum.Gap = obj, gap
		cr.lastEval = k
	}
	cr.rec.Record(r)
	sum := &cr.sum
	sum.Iters, sum.Passes, sum.Time = k, s.work, r.Time
	if math.IsNaN(sum.Objective) || math.IsInf(sum.Objective, 0) {
		sum.Status, sum.Message = StatusFailed, fmt.Sprintf("iteration %d: the objective is not finite", k)
		return true
	}
	if stationary && !(lim.GapTol > 0 && sum.Gap <= lim.GapTol) {
		cr.coordinateMinimum(k)
		return true
	}
	return lim.stop(sum, r, k, s.work)
}

// sweep is iteration k's work: a full pass when one is due, else a sweep
// of exact steps over the working set. It returns the step kind and
// whether the iterate is a coordinate-wise minimum: a sweep right after a
// full pass that moves nothing.
func (cr *cdRun) sweep(k int) (string, bool) {
	s := cr.s
	if cr.full {
		if k > 1 {
			s.refresh() // round-off control, and the start of the check
		}
		s.fullPass()
		if cr.path.staging() {
			cr.path.ref = s.c.L1 // the strong rule's gradient is this pass's
		}
		cr.full, cr.fresh, cr.inner = false, true, 0
		return StepFullSweep, false
	}
	most := s.sweep()
	cr.inner++
	s.prune()
	stationary := false
	tol := cdInnerTol
	if cr.path.staging() {
		tol = cdStageTol
	}
	if most <= tol*cr.scale {
		// the working set is at its optimum: a continuation stage before
		// the last ends (cdpath.go); the run ends where a full pass has
		// just made the working set
		cr.full = true
		if cr.path.staging() {
			cr.full = cr.path.advance(s)
			cr.inner = 0
		} else {
			stationary = cr.fresh
		}
	} else if cr.inner >= cdMaxInner {
		cr.full = true
	}
	cr.fresh = false
	return StepSweep, stationary
}

// coordinateMinimum ends a run where exact minimisation along every
// coordinate moves nothing: for a convex smooth part and a separable R the
// point is optimal, up to the rounding of the gradient, which the gap
// certifies (the lift's bound T amplifies that rounding: the gap of a
// coordinate-wise minimum is far above ε·|F|, far below cdCertified·|F|).
// A larger gap means a step that could not descend (a line search that
// gave up): stalled, not converged.
func (cr *cdRun) coordinateMinimum(k int) {
	sum := &cr.sum
	if sum.Gap <= cdCertified*math.Abs(sum.Objective) {
		sum.Status = StatusConverged
		sum.Message = fmt.Sprintf("coordinate-wise minimum: no coordinate moves beyond rounding (gap %.3g)", sum.Gap) + cr.path.note()
		return
	}
	sum.Status = StatusStalled
	sum.Message = fmt.Sprintf("stalled at iteration %d: no coordinate moves, but the gap %.3g is above %g·|F|", k, sum.Gap, cdCertified) + cr.path.note()
	atFloor(sum)
}
