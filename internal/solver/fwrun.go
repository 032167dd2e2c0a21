package solver

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"
)

// The Frank-Wolfe methods' run, as the paper's Algorithm 1 (and, with
// blocks, Algorithm 3) reads: Run starts from a vertex (lines 1–2) and
// repeats iterate, whose steps are named after the algorithm's lines:
//
//	sampleBatch      line 4: the batch size m_k and the sample J (and
//	                 Algorithm 3's line 5: the blocks L)
//	planSteps        lines 4–12, per block at x^k: the gradient estimate,
//	                 the FW vertex p and the away vertex u, the direction and
//	                 γ_max, the step rule, drops and collapses (plan, in
//	                 fwstep.go)
//	applySteps       lines 13–14: x^{k+1}, and the vertex representation
//	                 update of Algorithm 2 (updateRepresentation, in vru.go)
//	countSteps       the record's figures: the step kinds, drops, clean-ups
//	evaluateRecord   the objective and the FW gap on evaluated iterations
//	report, stops    the record, then the stopping rules

// fwRun is the state of one Run of a Frank-Wolfe method.
type fwRun struct {
	m     *fwMethod
	x     []float64
	model Model
	bs    []*blockState
	n, q  int
	dim   int
	// the teaching view's weight names ("w:" and a vertex's key), made once
	// per vertex
	weightKeys map[string]string
	sample     *sampler
	chosen     []int
	perm       []int     // scratch of chooseBlocks
	saved      []float64 // coupled line search: x before the moves
	// the current iteration, for the block steps
	k         int
	batch     []int
	wantErr   bool
	slopeStep func(bs *blockState)
	// the worker pool of forChosen and parallel: helpers join the open
	// dispatch (epoch odd) and run job; active counts the helpers inside a
	// dispatch, idle wakes the caller when it drops to zero
	pool    chan struct{}
	helpers int
	epoch   atomic.Uint64
	active  atomic.Int64
	idle    chan struct{}
	job     func()
	next    atomic.Int64
	chunk   int
	step    func(bs *blockState)
	// the current parallel range job
	rangeN   int
	rangeF   func(lo, hi int)
	rangeErr atomic.Pointer[string]
	// made once (no allocation per iteration): the jobs and parallel itself
	chunksJob, rangeJob func()
	parallelFn          func(n int, f func(lo, hi int))
	syncer              SyncModel
	workers             int
	work                time.Duration
	// evalErr is an oracle failure in a gap evaluation (CheckedOracle).
	evalErr error
	// the block steps' work below block granularity (split.go)
	splitState
	progressState
}

// progressState is the run's progress from iteration to iteration: the
// limits and the cadence, the work counted, the summary so far, and the
// current iteration's figures.
type progressState struct {
	rec      Recorder
	lim      Limits
	cad      *Cadence
	src      *iterSource
	passes   passCount
	sum      Summary
	lastEval int
	prog     progress
	// the per-iteration steps run on the chosen blocks, as method values
	// made once (no allocation per iteration), and the workers of phase 2
	planStep, applyStep func(bs *blockState)
	applyWorkers        int
	// the current iteration: m_k, whether it is evaluated, the work it
	// counts, the time of its evaluation work, and the blocks that moved
	mk         int
	eval       bool
	nextPasses passCount
	errTime    time.Duration
	moved      int
}

// Run executes the method.
func (m *fwMethod) Run(ctx context.Context, rec Recorder) (Result, error) {
	st := m.newRun(rec)
	defer st.closePool()
	if st.start() {
		return st.result(st.sum), nil
	}
	for k := 1; ; k++ {
		if err := ctx.Err(); err != nil {
			st.sum.Status, st.sum.Message = StatusCancelled, "cancelled after "+strconv.Itoa(k-1)+" iterations"
			break
		}
		if st.iterate(k) {
			break
		}
	}
	return st.finish(), nil
}

// newRun sets up Algorithm 1's lines 1–2 for every block: x^(1) the
// problem's starting vertex, U^(1) = {x^(1)} with weight 1, and the model
// at x^(1).
func (m *fwMethod) newRun(rec Recorder) *fwRun {
	p := m.p
	st := &fwRun{m: m, x: make([]float64, p.Dim()), n: p.Samples(), q: len(m.blocks), dim: p.Dim()}
	for i, b := range m.blocks {
		v := p.Start(i)
		v.AddTo(st.x[b.Offset:b.Offset+b.Size], 1)
		bs := &blockState{idx: i, blk: b, set: NewActiveSet(v), g: make([]float64, b.Size),
			gfull: make([]float64, b.Size), d: make([]float64, b.Size), lEst: m.cfg.L}
		if bs.lEst == 0 {
			bs.lEst = m.lAuto
		}
		if bs.lEst == 0 {
			bs.lEst = 1
		}
		st.bs = append(st.bs, bs)
	}
	st.model = p.NewModel(st.x)
	st.syncer, _ = st.model.(SyncModel)
	st.splitter, _ = p.(SplitOracle)
	st.splitMod, _ = st.model.(SplitModel)
	st.subPar = st.splitWork
	st.sample = newSampler(st.n)
	st.workers = m.cfg.Workers
	if st.workers <= 0 {
		st.workers = runtime.GOMAXPROCS(0)
	}
	st.chunksJob, st.rangeJob, st.parallelFn = st.runChunks, st.runRanges, st.parallel
	st.rec, st.lim = rec, m.cfg.Limits
	st.passes = passCount{unit: int64(st.n) * int64(st.dim)}
	st.setSteps()
	return st
}

// setSteps chooses the per-block steps of an iteration: plan on the
// workers, then apply (phase 2); for separable blocks one task per block
// (see SeparableBlocks), plan, apply and reshape, and no phase 2. Phase 2
// runs on the workers too when the blocks are separable: each block's apply
// and reshape touch its own coordinates, active set and model state only.
// Coupled blocks share model state, which their updates reach in block order.
func (st *fwRun) setSteps() {
	st.planStep, st.applyStep = st.planCurrent, st.applyBlock
	st.slopeStep = st.slopeAtMove
	if st.m.separable {
		st.planStep, st.applyStep = st.stepCurrent, nil
	}
	st.applyWorkers = st.workers
	if st.m.coupled {
		st.applyWorkers = 1
	}
}

// closePool ends the worker pool's helpers, if it was started.
func (st *fwRun) closePool() {
	if st.pool != nil {
		close(st.pool)
	}
}

// start reports the starting point as record k = 0, evaluated, and reports
// whether the run ends there (a failed evaluation, or a gap already within
// the tolerance).
func (st *fwRun) start() bool {
	m, lim := st.m, st.lim
	r0 := Record{K: 0, Step: StepNone, Batch: 0, Active: st.activeSize()}
	// a stochastic method's evaluation also takes the exact gradient behind
	// grad_err, one more pass
	evalCost := evalCostOf(m.p)
	if m.stochastic {
		evalCost++
	}
	st.cad = NewCadence(lim.EvalEvery, evalCost)
	st.src = newIterSource()
	obj, gap := st.evaluate()
	if st.evalErr != nil {
		st.rec.Record(r0)
		st.sum = Summary{Status: StatusFailed, Message: st.evalErr.Error(), Objective: obj, Gap: gap}
		return true
	}
	r0.Objective, r0.Gap = F(obj), F(gap)
	if ev, ok := m.p.(Evaluator); ok {
		r0.Extra = ev.Extra(st.x)
	}
	st.trace2D(&r0, nil)
	st.iterateHook(&r0)
	st.rec.Record(r0)
	st.sum = Summary{Objective: obj, Gap: gap}
	st.prog = progress{window: stallWindow * max(1, st.q/m.r)}
	st.prog.reset(0, obj, gap)
	if lim.GapTol > 0 && gap <= lim.GapTol {
		st.sum.Status = StatusConverged
		return true
	}
	return false
}

// iterate runs iteration k, x^k → x^{k+1}, and reports whether the run
// ends after it.
func (st *fwRun) iterate(k int) bool {
	t0 := Now()
	st.sampleBatch(k)
	if err := st.planSteps(); err != nil {
		st.sum.Status, st.sum.Message = StatusFailed, fmt.Sprintf("iteration %d: %v", k, err)
		return true
	}
	st.applySteps()
	r, failure := st.countSteps(k)
	st.passes = st.nextPasses
	st.work += Now() - t0 - st.errTime
	r.Passes = st.passes.value()
	r.Time = st.work.Seconds()
	r.Active = st.activeSize()
	st.stepOfRecord(&r)
	if failure != nil {
		st.sum.Status, st.sum.Message = StatusFailed, failure.Error()
		st.rec.Record(r)
		return true
	}
	stuck := st.moved == 0 && st.batch == nil && len(st.chosen) == st.q
	if !st.evaluateRecord(&r, stuck) {
		return true
	}
	st.report(r)
	return st.stops(r, stuck)
}

// sampleBatch is line 4 of Algorithm 1: the batch size m_k of the schedule
// and the sample J of m_k indices drawn uniformly without replacement
// (none: the full gradient, when m_k = n); and line 5 of Algorithm 3: the r
// blocks L of the iteration. Both come from the iteration's own random
// source, a function of (seed, k). It also decides, from the work the
// iteration is planned to do, whether the iteration is evaluated: a limit
// reached by extra work (backtracking, the coupled line search) is
// evaluated after the work (evaluateRecord); a session stepping through a
// paused run asks for each step.
func (st *fwRun) sampleBatch(k int) {
	m := st.m
	rng := st.src.at(m.cfg.Seed, k, 0)
	st.mk = m.cfg.Schedule.Size(k, st.n)
	var batch []int
	if st.mk < st.n {
		batch = st.sample.draw(rng, st.mk)
	}
	st.chooseBlocks(rng)
	st.nextPasses = st.passes
	for _, b := range st.chosen {
		st.nextPasses = st.nextPasses.plus(int64(st.mk) * int64(m.blocks[b].Size))
	}
	planned := st.nextPasses.value()
	st.eval = st.cad.Due(k, st.lim.reached(k, planned) || EvalRequested(st.rec), planned)
	st.k, st.batch, st.wantErr = k, batch, st.eval && batch != nil
}

// planSteps is lines 5–12 of Algorithm 1 for every chosen block, at x^k
// and read-only (phase 1; lines 7–14 of Algorithm 3, in parallel): the
// gradient estimate, the FW and away vertices, the direction, γ_max and the
// step rule. On coupled blocks the planned steps are then combined into one
// safe move (combineCoupled). The exact gradients behind grad_err are
// evaluation work: their time is kept apart (errTime).
func (st *fwRun) planSteps() error {
	if err := st.syncModel(); err != nil {
		return err
	}
	st.forChosen(st.workers, st.planStep)
	if st.m.coupled && len(st.chosen) > 1 {
		st.nextPasses = st.nextPasses.plus(st.combineCoupled(st.mk, st.workers))
	}
	st.errTime = 0
	for _, b := range st.chosen {
		if d := st.bs[b].plan.errDur; len(st.chosen) == 1 || st.workers == 1 {
			st.errTime += d
		} else if d > st.errTime {
			st.errTime = d
		}
	}
	return nil
}

// applySteps is lines 13–14 of Algorithm 1 for every chosen block (phase
// 2): x^{k+1} = x^k + γ d, and the vertex representation update of
// Algorithm 2, then the problem's reshape (applyBlock).
func (st *fwRun) applySteps() {
	st.forChosen(st.applyWorkers, st.applyStep)
}

// countSteps makes iteration k's record from the applied steps, in block
// order: the work of extra evaluations, the step counts (FW, away, drops),
// the clean-ups, and the first failure of a block. Every so many
// iterations, and after a clean-up, x and the model are recomputed from the
// active sets (refresh).
func (st *fwRun) countSteps(k int) (Record, error) {
	r := Record{K: k, Batch: st.mk}
	reset := k%st.m.cfg.RefreshEvery == 0
	var failure error
	st.moved = 0
	for _, b := range st.chosen {
		bs := st.bs[b]
		pl := &bs.plan
		if pl.err != nil && failure == nil {
			failure = pl.err
		}
		st.nextPasses = st.nextPasses.plus(int64(pl.evals) * int64(st.mk) * int64(bs.blk.Size))
		if pl.kind != StepNone {
			st.moved++
		}
		countStep(&r, pl)
		if c := bs.cleanups; c > 0 {
			r.Cleanups += c
			reset = true
		}
		// atoms a rebuild removed are clean-ups too (the rebuilt
		// representation is exact: no refresh needed)
		r.Cleanups += bs.rebuilt
	}
	if reset {
		st.refresh()
	}
	return r, failure
}

// countStep adds a block's step to the record's step counts.
func countStep(r *Record, pl *stepPlan) {
	switch pl.kind {
	case StepFW, StepCollapse:
		r.FWSteps++
	case StepAway:
		r.AwaySteps++
	case StepDrop:
		r.AwaySteps++
		r.Drops++
	case StepPairwise:
		r.FWSteps++
		if pl.drop {
			r.Drops++
		}
	}
}

// stepOfRecord sets the record's step kind and γ: the block's own on a
// single block step, else "block" and the mean γ over the blocks that moved.
func (st *fwRun) stepOfRecord(r *Record) {
	if len(st.chosen) == 1 {
		r.Step = st.bs[st.chosen[0]].plan.kind
		r.Gamma = st.bs[st.chosen[0]].plan.gamma
		return
	}
	r.Step = StepBlock
	gsum := 0.0
	for _, b := range st.chosen {
		if pl := &st.bs[b].plan; pl.kind != StepNone {
			gsum += pl.gamma
		}
	}
	if st.moved > 0 {
		r.Gamma = gsum / float64(st.moved)
	}
}

// evaluateRecord evaluates x^{k+1} when the cadence, a limit or a stuck
// deterministic run asks for it: the objective, the FW gap, the sampling
// error of the gradient (grad_err) and the problem's metrics go into the
// record. It reports false when the evaluation failed, after recording
// that the run failed.
func (st *fwRun) evaluateRecord(r *Record, stuck bool) bool {
	if !(st.eval || stuck || st.lim.reached(r.K, st.passes.value())) {
		return true
	}
	obj, gap := st.evaluate()
	if st.evalErr != nil {
		st.sum.Status, st.sum.Message = StatusFailed, st.evalErr.Error()
		st.sum.Iters, st.sum.Passes, st.sum.Time = r.K, st.passes.value(), r.Time
		st.rec.Record(*r)
		return false
	}
	r.Objective, r.Gap = F(obj), F(gap)
	st.sum.Objective, st.sum.Gap = obj, gap
	st.lastEval = r.K
	if st.wantErr {
		errSq := 0.0
		for _, b := range st.chosen {
			errSq += st.bs[b].plan.gradErr
		}
		r.GradErr = F(math.Sqrt(errSq))
	}
	if ev, ok := st.m.p.(Evaluator); ok {
		r.Extra = ev.Extra(st.x)
	}
	return true
}

// report hands the record to the Recorder, with the teaching view's points
// on a two-dimensional problem.
func (st *fwRun) report(r Record) {
	st.trace2D(&r, st.bs[0])
	if st.m.afterIter != nil {
		st.m.afterIter(st, r)
	}
	st.iterateHook(&r)
	st.rec.Record(r)
	st.sum.Iters, st.sum.Passes, st.sum.Time = r.K, st.passes.value(), r.Time
}

// iterateHook shows the iterate and its vertex representation to a
// Recorder that asks for them (fw.IterateRecorder).
func (st *fwRun) iterateHook(r *Record) {
	ir, ok := st.rec.(IterateRecorder)
	if !ok {
		return
	}
	verts, weights := make([][]Vertex, len(st.bs)), make([][]float64, len(st.bs))
	for i, bs := range st.bs {
		verts[i], weights[i] = bs.set.verts, bs.set.w
	}
	ir.Iterate(r.K, st.x, verts, weights)
}

// stops applies the stopping rules after iteration k's record and reports
// whether the run ends: a deterministic run where no block moved (stuck:
// converged if every block is stationary, else stalled), a limit or the gap
// tolerance, or no progress over the stall window.
func (st *fwRun) stops(r Record, stuck bool) bool {
	sum, lim, k := &st.sum, st.lim, r.K
	if stuck && !(r.Gap != nil && lim.GapTol > 0 && *r.Gap <= lim.GapTol) {
		st.stuck(k)
		return true
	}
	if lim.stop(sum, r, k, st.passes.value()) {
		return true
	}
	if r.Objective != nil && st.prog.stalled(k, *r.Objective, *r.Gap) {
		sum.Status = StatusStalled
		sum.Message = fmt.Sprintf("stalled: neither the objective nor the gap improved in the last %d iterations (gap %.3g)", k-st.prog.since, sum.Gap)
		atFloor(sum)
		return true
	}
	return false
}

// stuck ends a run where no block moved with exact gradients: if every
// block found no descent direction beyond rounding (its FW gap is at
// rounding level, a certified stationary point) the run converged; if some
// block had a descent direction but its step rule found no step
// (backtracking gave up), the run stalled.
func (st *fwRun) stuck(k int) {
	sum := &st.sum
	certified := true
	for _, b := range st.chosen {
		certified = certified && st.bs[b].plan.stationary
	}
	if certified {
		sum.Status = StatusConverged
		sum.Message = fmt.Sprintf("stationary: no descent direction remains beyond rounding (gap %.3g)", sum.Gap)
		return
	}
	sum.Status = StatusStalled
	sum.Message = fmt.Sprintf("stalled at iteration %d: a descent direction remains but no step decreased the objective (gap %.3g)", k, sum.Gap)
	atFloor(sum)
}

// finish closes the run: the last iterate is evaluated for the summary if
// its record was not, and a summary whose figures are not numbers fails.
func (st *fwRun) finish() Result {
	sum := st.sum
	if st.lastEval != sum.Iters || sum.Status == StatusCancelled || sum.Status == StatusFailed {
		sum.Objective, sum.Gap = st.finalEvaluate()
	}
	if math.IsNaN(sum.Objective) || math.IsNaN(sum.Gap) {
		if sum.Status != StatusFailed {
			sum.Status, sum.Message = StatusFailed, "the objective or the gap is not a number"
		}
	}
	return st.result(sum)
}

func (st *fwRun) result(s Summary) Result {
	return Result{Summary: s, X: append([]float64(nil), st.x...)}
}

func (st *fwRun) activeSize() int {
	n := 0
	for _, b := range st.bs {
		n += b.set.Len()
	}
	return n
}

// chooseBlocks samples r of the q blocks without replacement (all blocks,
// in order, when r = q), sorted so that application order is fixed.
func (st *fwRun) chooseBlocks(rng interface{ IntN(int) int }) {
	st.chosen = st.chosen[:0]
	if st.m.r >= st.q {
		for i := 0; i < st.q; i++ {
			st.chosen = append(st.chosen, i)
		}
		return
	}
	// partial Fisher–Yates over the identity permutation: O(q), in a buffer
	// kept across iterations.
	if st.perm == nil {
		st.perm = make([]int, st.q)
	}
	perm := st.perm
	for i := range perm {
		perm[i] = i
	}
	for i := 0; i < st.m.r; i++ {
		j := i + rng.IntN(st.q-i)
		perm[i], perm[j] = perm[j], perm[i]
	}
	st.chosen = append(st.chosen, perm[:st.m.r]...)
	insertionSort(st.chosen)
}

func insertionSort(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}
