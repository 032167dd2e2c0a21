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

// mode is the kind of direction a Frank-Wolfe variant may take.
type mode int

const (
	modeVanilla  mode = iota // FW directions only
	modeAway                 // FW or away directions (Algorithms 1 and 3)
	modePairwise             // pairwise directions p − u
)

// Tolerances of the vertex representation (ARCHITECTURE.md, "Vertex representation").
const (
	// snapTol is δ: an away (or pairwise) step with γ ≥ γ_max(1−δ) is snapped
	// to γ_max, an exact drop; a FW step with γ ≥ 1−δ to an exact collapse.
	snapTol = 1e-9
	// weightTol: active weights at or below it are removed and the rest
	// renormalised (counted in Record.Cleanups).
	weightTol = 1e-13
)

// fwMethod runs every Frank-Wolfe variant: one engine, one block or many.
type fwMethod struct {
	p          Problem
	cfg        Config
	blocks     []Block
	mode       mode
	stochastic bool // batches follow cfg.Schedule (else full gradients)
	r          int  // blocks per iteration
	blockwise  bool // r of q blocks sampled per iteration
	lAuto      float64
	coupled    bool // the problem's blocks are coupled (CoupledBlocks)
	separable  bool // a block's whole step is one task (SeparableBlocks)
	// afterIter, when set (by tests), sees the state after every iteration.
	afterIter func(st *fwRun, r Record)
	// beforeCommit and beforeCleanup, when set (by tests), see a block's
	// active set before its planned step is applied to it and after it,
	// before the clean-up; they may run on the block workers.
	beforeCommit, beforeCleanup func(bs *blockState)
}

// blockState is one block's active set, buffers and the plan of its step.
type blockState struct {
	idx   int
	blk   Block
	set   *ActiveSet
	g     []float64
	gfull []float64
	d     []float64
	g2    []float64 // coupled line search: the batch gradient at x + D
	terms [2]Term   // the planned direction's terms
	lEst  float64   // backtracking estimate of L
	plan  stepPlan
	// cleanups: the weights phase 2 cleaned up in this block; rebuilt: the
	// atoms its slack collapse's rebuild removed
	cleanups, rebuilt int
}

// stepPlan is what phase 1 decides for a block; phase 2 applies it.
type stepPlan struct {
	kind    string
	gamma   float64
	p       Vertex
	u       int // index of the away vertex in the active set (-1: none)
	uVertex Vertex
	hasAway bool
	drop    bool    // a pairwise step that empties u's weight
	slope   float64 // <g, d> of the planned direction (batch gradient)
	gmax    float64 // γ_max of the planned direction
	moved   bool    // x and the model already carry the step (coupled line search)
	d0, d1  float64 // coupled line search: <g(x), Δ_b> and <g(x + D), Δ_b>
	// stationary: no step because no direction descends beyond rounding
	stationary bool
	evals      int           // extra batch evaluations (backtracking)
	gradErr    float64       // ‖g − ∇_b F‖² on evaluation iterations
	errDur     time.Duration // time spent on that evaluation work
	err        error
}

// New configures a Frank-Wolfe-type algorithm on p: "ssfw-as" (Algorithm 1;
// on a problem with several blocks every block steps each iteration),
// "afw", "pfw", "fw", "bc-ssfw-as" (Algorithm 3), "bcfw".
func New(p Problem, cfg Config) (Method, error) {
	m := &fwMethod{p: p, cfg: cfg, blocks: p.Blocks()}
	switch cfg.Algorithm {
	case "ssfw-as":
		m.mode, m.stochastic = modeAway, true
	case "afw":
		m.mode = modeAway
	case "pfw":
		m.mode = modePairwise
	case "fw":
		m.mode = modeVanilla
	case "bc-ssfw-as":
		m.mode, m.stochastic, m.blockwise = modeAway, true, true
	case "bcfw":
		m.mode, m.blockwise = modeVanilla, true
	default:
		return nil, fmt.Errorf("solver: unknown Frank-Wolfe algorithm %q", cfg.Algorithm)
	}
	if err := checkLimits(cfg.Limits); err != nil {
		return nil, err
	}
	if len(m.blocks) == 0 || p.Dim() < 1 {
		return nil, fmt.Errorf("solver: the problem has no variables")
	}
	if p.Samples() < 1 {
		return nil, fmt.Errorf("solver: the problem has no samples")
	}
	if !m.stochastic {
		if cfg.Schedule.Kind != "" && cfg.Schedule.Kind != "full" {
			return nil, fmt.Errorf("schedule: %s uses full gradients; only ssfw-as and bc-ssfw-as take a batch schedule", cfg.Algorithm)
		}
		m.cfg.Schedule = Schedule{Kind: "full"}
	} else if err := cfg.Schedule.Validate(); err != nil {
		return nil, err
	}
	q := len(m.blocks)
	m.r = q
	if m.blockwise && cfg.R > 0 {
		if cfg.R > q {
			return nil, fmt.Errorf("r: must be at most the number of blocks q = %d, got %d", q, cfg.R)
		}
		m.r = cfg.R
	} else if cfg.R < 0 {
		return nil, fmt.Errorf("r: must be at least 1 (or 0 for all blocks), got %d", cfg.R)
	}
	switch cfg.Step {
	case "", "curvature":
		m.cfg.Step = "curvature"
	case "paper", "backtrack":
	case "open-loop", "short":
		if cfg.Algorithm != "fw" {
			return nil, fmt.Errorf("stepsize: %q is a rule of fw only", cfg.Step)
		}
	default:
		return nil, fmt.Errorf("stepsize: must be paper, curvature or backtrack (fw also open-loop, short), got %q", cfg.Step)
	}
	if cfg.L < 0 || math.IsNaN(cfg.L) || math.IsInf(cfg.L, 0) {
		return nil, fmt.Errorf("L: must be a positive number or auto, got %v", cfg.L)
	}
	if (m.cfg.Step == "paper" || m.cfg.Step == "short") && cfg.L == 0 {
		lb, ok := p.(LipschitzBounder)
		if !ok {
			return nil, fmt.Errorf("L: this problem has no automatic bound; give a number")
		}
		m.lAuto = lb.LipschitzBound()
		if !(m.lAuto > 0) || math.IsInf(m.lAuto, 0) {
			return nil, fmt.Errorf("L: the automatic bound is not a positive finite number (%v); give a number", m.lAuto)
		}
	}
	if c, ok := p.(CoupledBlocks); ok && c.BlocksCoupled() {
		m.coupled = true
	}
	if s, ok := p.(SeparableBlocks); ok && s.BlocksSeparable() && !m.coupled {
		m.separable = true
	}
	if m.cfg.DropTol == 0 {
		m.cfg.DropTol = snapTol
	}
	if m.cfg.RefreshEvery <= 0 {
		m.cfg.RefreshEvery = 256
	}
	return m, nil
}

func checkLimits(l Limits) error {
	if l.MaxIters < 1 {
		return fmt.Errorf("iters: must be at least 1, got %d", l.MaxIters)
	}
	if l.EvalEvery < 0 {
		return fmt.Errorf("eval_every: must be at least 1 (or 0 for the default cadence), got %d", l.EvalEvery)
	}
	if l.MaxPasses < 0 || math.IsNaN(l.MaxPasses) {
		return fmt.Errorf("passes: must be non-negative, got %v", l.MaxPasses)
	}
	if l.GapTol < 0 || math.IsNaN(l.GapTol) {
		return fmt.Errorf("gap: must be non-negative, got %v", l.GapTol)
	}
	return nil
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i, x := range a {
		s += x * b[i]
	}
	return s
}

// run state shared by the iterations of one Run.
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
}

// Run executes the method.
func (m *fwMethod) Run(ctx context.Context, rec Recorder) (Result, error) {
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
	defer func() {
		if st.pool != nil {
			close(st.pool)
		}
	}()
	lim := m.cfg.Limits
	passes := passCount{unit: int64(st.n) * int64(st.dim)}

	// k = 0: the starting point.
	r0 := Record{K: 0, Step: StepNone, Batch: 0, Active: st.activeSize()}
	// a stochastic method's evaluation also takes the exact gradient behind
	// grad_err, one more pass
	evalCost := evalCostOf(p)
	if m.stochastic {
		evalCost++
	}
	cad := NewCadence(lim.EvalEvery, evalCost)
	src := newIterSource()
	obj, gap := st.evaluate()
	if st.evalErr != nil {
		rec.Record(r0)
		return st.result(Summary{Status: StatusFailed, Message: st.evalErr.Error(), Objective: obj, Gap: gap}), nil
	}
	r0.Objective, r0.Gap = F(obj), F(gap)
	if ev, ok := m.p.(Evaluator); ok {
		r0.Extra = ev.Extra(st.x)
	}
	st.trace2D(&r0, nil)
	rec.Record(r0)
	sum := Summary{Objective: obj, Gap: gap}
	if lim.GapTol > 0 && gap <= lim.GapTol {
		sum.Status = StatusConverged
		return st.result(sum), nil
	}

	workers := st.workers
	// the per-iteration steps run on the chosen blocks, as method values
	// made once (no allocation per iteration)
	planStep := st.planCurrent
	st.slopeStep = st.slopeAtMove
	applyStep := st.applyBlock
	if m.separable {
		// one task per block: plan, apply and reshape (see SeparableBlocks),
		// and no phase 2
		planStep, applyStep = st.stepCurrent, nil
	}
	// Phase 2 runs on the workers too when the blocks are separable: each
	// block's apply and reshape touch its own coordinates, active set and
	// model state only. Coupled blocks share model state, which their
	// updates reach in block order.
	applyWorkers := workers
	if m.coupled {
		applyWorkers = 1
	}
	lastEval := 0
	prog := progress{window: stallWindow * max(1, st.q/m.r)}
	prog.reset(0, obj, gap)
	for k := 1; ; k++ {
		if err := ctx.Err(); err != nil {
			sum.Status, sum.Message = StatusCancelled, "cancelled after "+strconv.Itoa(k-1)+" iterations"
			break
		}
		t0 := Now()
		rng := src.at(m.cfg.Seed, k, 0)
		mk := m.cfg.Schedule.Size(k, st.n)
		var batch []int
		if mk < st.n {
			batch = st.sample.draw(rng, mk)
		}
		st.chooseBlocks(rng)
		nextPasses := passes
		for _, b := range st.chosen {
			nextPasses = nextPasses.plus(int64(mk) * int64(m.blocks[b].Size))
		}
		// the cadence counts the work the iteration is planned to do; a
		// limit reached by extra work (backtracking, the coupled line
		// search) is evaluated after the work (below); a session stepping
		// through a paused run asks for each step
		eval := cad.Due(k, lim.reached(k, nextPasses.value()) || EvalRequested(rec), nextPasses.value())
		wantErr := eval && batch != nil

		// Phase 1: every chosen block plans its step at x^k (read-only).
		st.k, st.batch, st.wantErr = k, batch, wantErr
		if err := st.syncModel(); err != nil {
			sum.Status, sum.Message = StatusFailed, fmt.Sprintf("iteration %d: %v", k, err)
			break
		}
		st.forChosen(workers, planStep)
		if m.coupled && len(st.chosen) > 1 {
			nextPasses = nextPasses.plus(st.combineCoupled(mk, workers))
		}
		// the exact gradients behind grad_err are evaluation work, not counted
		errTime := time.Duration(0)
		for _, b := range st.chosen {
			if d := st.bs[b].plan.errDur; len(st.chosen) == 1 || workers == 1 {
				errTime += d
			} else if d > errTime {
				errTime = d
			}
		}

		// Phase 2: apply the planned steps, then count them in block order.
		st.forChosen(applyWorkers, applyStep)
		r := Record{K: k, Batch: mk}
		reset := k%m.cfg.RefreshEvery == 0
		gsum, errSq, moved := 0.0, 0.0, 0
		var failure error
		for _, b := range st.chosen {
			bs := st.bs[b]
			pl := &bs.plan
			if pl.err != nil && failure == nil {
				failure = pl.err
			}
			errSq += pl.gradErr
			nextPasses = nextPasses.plus(int64(pl.evals) * int64(mk) * int64(bs.blk.Size))
			if pl.kind != StepNone {
				moved++
				gsum += pl.gamma
			}
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
		passes = nextPasses
		st.work += Now() - t0 - errTime
		r.Passes = passes.value()
		r.Time = st.work.Seconds()
		r.Active = st.activeSize()
		if len(st.chosen) == 1 {
			r.Step = st.bs[st.chosen[0]].plan.kind
			r.Gamma = st.bs[st.chosen[0]].plan.gamma
		} else {
			r.Step = StepBlock
			if moved > 0 {
				r.Gamma = gsum / float64(moved)
			}
		}
		if failure != nil {
			sum.Status, sum.Message = StatusFailed, failure.Error()
			rec.Record(r)
			break
		}
		deterministic := batch == nil && len(st.chosen) == st.q
		stuck := moved == 0 && deterministic
		if eval || stuck || lim.reached(k, passes.value()) {
			obj, gap := st.evaluate()
			if st.evalErr != nil {
				sum.Status, sum.Message = StatusFailed, st.evalErr.Error()
				sum.Iters, sum.Passes, sum.Time = k, passes.value(), r.Time
				rec.Record(r)
				break
			}
			r.Objective, r.Gap = F(obj), F(gap)
			sum.Objective, sum.Gap = obj, gap
			lastEval = k
			if wantErr {
				r.GradErr = F(math.Sqrt(errSq))
			}
			if ev, ok := m.p.(Evaluator); ok {
				r.Extra = ev.Extra(st.x)
			}
		}
		st.trace2D(&r, st.bs[0])
		if m.afterIter != nil {
			m.afterIter(st, r)
		}
		rec.Record(r)
		sum.Iters, sum.Passes, sum.Time = k, passes.value(), r.Time
		if stuck && !(r.Gap != nil && lim.GapTol > 0 && *r.Gap <= lim.GapTol) {
			// No block moved with exact gradients: if every block found no
			// descent direction beyond rounding (its FW gap is at rounding
			// level, a certified stationary point) the run converged; if some
			// block had a descent direction but its step rule found no step
			// (backtracking gave up), the run stalled.
			certified := true
			for _, b := range st.chosen {
				certified = certified && st.bs[b].plan.stationary
			}
			if certified {
				sum.Status = StatusConverged
				sum.Message = fmt.Sprintf("stationary: no descent direction remains beyond rounding (gap %.3g)", sum.Gap)
			} else {
				sum.Status = StatusStalled
				sum.Message = fmt.Sprintf("stalled at iteration %d: a descent direction remains but no step decreased the objective (gap %.3g)", k, sum.Gap)
				atFloor(&sum)
			}
			break
		}
		if lim.stop(&sum, r, k, passes.value()) {
			break
		}
		if r.Objective != nil && prog.stalled(k, *r.Objective, *r.Gap) {
			sum.Status = StatusStalled
			sum.Message = fmt.Sprintf("stalled: neither the objective nor the gap improved in the last %d iterations (gap %.3g)", k-prog.since, sum.Gap)
			atFloor(&sum)
			break
		}
	}
	if lastEval != sum.Iters || sum.Status == StatusCancelled || sum.Status == StatusFailed {
		sum.Objective, sum.Gap = st.finalEvaluate()
	}
	if math.IsNaN(sum.Objective) || math.IsNaN(sum.Gap) {
		if sum.Status != StatusFailed {
			sum.Status, sum.Message = StatusFailed, "the objective or the gap is not a number"
		}
	}
	return st.result(sum), nil
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

// evaluate returns the exact objective and the FW duality gap
// Σ_b <∇_b F(x), x_b − s_b> at the current iterate.
func (st *fwRun) evaluate() (float64, float64) {
	if err := st.syncModel(); err != nil {
		st.evalErr = err
		return math.NaN(), math.NaN()
	}
	gap := 0.0
	for _, bs := range st.bs {
		xb := st.x[bs.blk.Offset : bs.blk.Offset+bs.blk.Size]
		st.model.Gradient(bs.idx, bs.gfull, st.x, nil)
		s, err := evalOracle(st.m.p, bs.idx, bs.gfull)
		if err != nil {
			st.evalErr = err
			return math.NaN(), math.NaN()
		}
		gap += dot(bs.gfull, xb) - s.Dot(bs.gfull)
	}
	return st.m.p.Objective(st.x), gap
}

// finalEvaluate evaluates the last iterate for the summary; after a failure
// the problem's code may fail again, which leaves the figures unknown (NaN)
// rather than ending the run with a panic.
func (st *fwRun) finalEvaluate() (obj, gap float64) {
	defer func() {
		if p := recover(); p != nil {
			obj, gap = math.NaN(), math.NaN()
		}
	}()
	return st.evaluate()
}

// refresh recomputes x from the active sets and the model from x, which
// bounds the drift of the incremental updates.
func (st *fwRun) refresh() {
	for _, bs := range st.bs {
		bs.set.Point(st.x[bs.blk.Offset : bs.blk.Offset+bs.blk.Size])
	}
	st.model.Reset(st.x)
}

// planCurrent plans block bs's step of the current iteration.
func (st *fwRun) planCurrent(bs *blockState) { st.plan(bs, st.k, st.batch, st.wantErr) }

// stepCurrent plans and applies block bs's step of the current iteration
// (separable blocks: phases 1 and 2 in one task).
func (st *fwRun) stepCurrent(bs *blockState) {
	st.plan(bs, st.k, st.batch, st.wantErr)
	st.applyBlock(bs)
}

// plan decides block bs's step at the current x (phase 1; read-only on x,
// the model and the other blocks).
func (st *fwRun) plan(bs *blockState, k int, batch []int, wantErr bool) {
	m := st.m
	pl := &bs.plan
	*pl = stepPlan{kind: StepNone, u: -1}
	xb := st.x[bs.blk.Offset : bs.blk.Offset+bs.blk.Size]
	st.model.Gradient(bs.idx, bs.g, st.x, batch)
	g := bs.g
	if wantErr {
		te := Now()
		st.model.Gradient(bs.idx, bs.gfull, st.x, nil)
		e := 0.0
		for i, v := range g {
			d := v - bs.gfull[i]
			e += d * d
		}
		pl.gradErr = e
		pl.errDur = Now() - te
	}
	p := st.lmo(bs.idx, g)
	pl.p = p
	gx := dot(g, xb)
	gp := p.Dot(g)
	fwSlope := gp - gx
	var d Direction
	var slope, gmax float64
	kind := StepFW
	switch m.mode {
	case modeVanilla:
		bs.terms[0] = Term{Coef: 1, V: p}
		d = Direction{XCoef: -1, Terms: bs.terms[:1]}
		slope, gmax = fwSlope, 1
	case modeAway:
		bs.terms[0] = Term{Coef: 1, V: p}
		d = Direction{XCoef: -1, Terms: bs.terms[:1]}
		slope, gmax = fwSlope, 1
		if bs.set.Len() > 1 {
			ui, gu := bs.set.Away(g)
			pl.u, pl.uVertex, pl.hasAway = ui, bs.set.verts[ui], true
			if awaySlope := gx - gu; fwSlope > awaySlope {
				mu := bs.set.w[ui]
				kind = StepAway
				bs.terms[0] = Term{Coef: -1, V: pl.uVertex}
				d = Direction{XCoef: 1, Terms: bs.terms[:1]}
				slope, gmax = awaySlope, mu/(1-mu)
			}
		}
	case modePairwise:
		ui, gu := bs.set.Away(g)
		pl.u, pl.uVertex, pl.hasAway = ui, bs.set.verts[ui], true
		kind = StepPairwise
		if p.Key == pl.uVertex.Key {
			pl.stationary = true // p is the away vertex: <g, x> = <g, p>, no pairwise direction
			return
		}
		bs.terms[0], bs.terms[1] = Term{Coef: 1, V: p}, Term{Coef: -1, V: pl.uVertex}
		d = Direction{XCoef: 0, Terms: bs.terms[:2]}
		slope, gmax = gp-gu, bs.set.w[ui]
	}
	if math.IsNaN(slope) || math.IsInf(slope, 0) {
		pl.err = fmt.Errorf("iteration %d: the gradient is not finite", k)
		return
	}
	// A slope at rounding level is no descent direction: stop there rather
	// than take steps of size 1e-16 forever.
	if !(slope < -1e-14*(math.Abs(gx)+math.Abs(gp))) {
		// the FW gap of the block is at most the chosen direction's −slope
		// (away: the FW slope is the larger; pairwise: <g, x> ≤ <g, u>)
		pl.stationary = true
		return
	}
	gamma, evals, err := st.stepSize(bs, k, xb, d, slope, gmax, batch)
	pl.evals = evals
	if err != nil {
		pl.err = err
		return
	}
	if !(gamma > 0) {
		return
	}
	pl.slope, pl.gmax = slope, gmax
	switch kind {
	case StepFW:
		if gamma >= 1-m.cfg.DropTol {
			gamma, kind = 1, StepCollapse
		}
	case StepAway:
		if gamma >= gmax*(1-m.cfg.DropTol) {
			gamma, kind = gmax, StepDrop
		}
	case StepPairwise:
		if gamma >= gmax*(1-m.cfg.DropTol) {
			gamma, pl.drop = gmax, true
		}
	}
	pl.kind, pl.gamma = kind, gamma
}

// backtrackRound is the relative rounding allowance of the backtracking
// test, applied to the magnitude of the line's own values.
const backtrackRound = 1e-13

// dirSqNorm returns ‖d‖² for a block direction.
func dirSqNorm(buf, xb []float64, d Direction) float64 {
	for i := range buf {
		buf[i] = d.XCoef * xb[i]
	}
	for _, t := range d.Terms {
		t.V.AddTo(buf, t.Coef)
	}
	return dot(buf, buf)
}

// stepSize applies the configured rule; it returns γ ∈ [0, gmax] and the
// number of extra batch evaluations it made.
func (st *fwRun) stepSize(bs *blockState, k int, xb []float64, d Direction, slope, gmax float64, batch []int) (float64, int, error) {
	m := st.m
	switch m.cfg.Step {
	case "open-loop":
		return math.Min(2/float64(k+1), gmax), 0, nil
	case "paper", "short":
		L := m.cfg.L
		if L == 0 {
			L = m.lAuto
		}
		dn2 := dirSqNorm(bs.d, xb, d)
		if dn2 == 0 {
			return 0, 0, nil
		}
		return math.Min(-slope/(L*dn2), gmax), 0, nil
	case "curvature":
		line := st.model.Line(bs.idx, st.x, d, batch)
		gcap := gmax
		M := line.Curvature(gcap)
		for it := 0; ; it++ {
			var gam float64
			if M <= 0 {
				gam = gcap
			} else {
				gam = math.Min(-slope/M, gcap)
			}
			if math.IsNaN(gam) {
				return 0, 0, fmt.Errorf("iteration %d: the curvature along the direction is not a number", k)
			}
			if gam >= 0.5*gcap || it == 60 {
				return gam, 0, nil
			}
			gcap = math.Max(2*gam, gcap/64)
			M = line.Curvature(gcap)
		}
	case "backtrack":
		line := st.model.Line(bs.idx, st.x, d, batch)
		dn2 := dirSqNorm(bs.d, xb, d)
		if dn2 == 0 {
			return 0, 0, nil
		}
		L := bs.lEst * 0.9
		// φ is known to rounding only: a difference φ(γ) − φ(0) within
		// backtrackRound of the line's own magnitude says nothing about L,
		// so the test allows for it, as the proximal methods' backtracking
		// does. The allowance comes from this line's values alone (never
		// from the last evaluation, which would make the iterates depend on
		// the cadence).
		mag := 0.0
		if lm, ok := line.(LineMagnitude); ok {
			mag = math.Abs(lm.Magnitude())
		}
		for it := 1; it <= 60; it++ {
			gam := math.Min(-slope/(L*dn2), gmax)
			delta, quad := line.Delta(gam), gam*slope+0.5*L*gam*gam*dn2
			if delta <= quad {
				bs.lEst = L
				return gam, it, nil
			}
			tol := backtrackRound * (mag + math.Abs(delta) + math.Abs(gam*slope) + 0.5*L*gam*gam*dn2)
			if delta <= quad+tol {
				// accepted within rounding: the test said nothing about L,
				// so the estimate is not lowered
				return gam, it, nil
			}
			L *= 2
		}
		// No decrease even for a step 2⁶⁰ times shorter: take no step. If
		// no block moves, the run ends as stalled (the gap says how far from
		// stationary it is).
		return 0, 60, nil
	}
	return 0, 0, fmt.Errorf("unknown step-size rule %q", m.cfg.Step)
}

// applyBlock applies block bs's planned step and lets the problem reshape
// the block (phase 2).
func (st *fwRun) applyBlock(bs *blockState) {
	bs.cleanups = st.apply(bs)
	bs.rebuilt = st.reshape(bs)
}

// apply performs block bs's planned step on x, the model and the active set
// (phase 2). It returns the number of weights cleaned up.
func (st *fwRun) apply(bs *blockState) int {
	pl := &bs.plan
	if pl.kind == StepNone {
		return 0
	}
	if !pl.moved {
		st.move(bs)
	}
	return st.commit(bs)
}

// move performs block bs's planned step on x and the model (not on the
// active set).
func (st *fwRun) move(bs *blockState) {
	pl := &bs.plan
	b := bs.idx
	xb := st.x[bs.blk.Offset : bs.blk.Offset+bs.blk.Size]
	g := pl.gamma
	switch pl.kind {
	case StepCollapse:
		for i := range xb {
			xb[i] = 0
		}
		pl.p.AddTo(xb, 1)
		st.scaleAdd(b, 0, 1, pl.p)
	case StepFW:
		s := 1 - g
		for i := range xb {
			xb[i] *= s
		}
		pl.p.AddTo(xb, g)
		st.scaleAdd(b, s, g, pl.p)
	case StepAway, StepDrop:
		s := 1 + g
		for i := range xb {
			xb[i] *= s
		}
		pl.uVertex.AddTo(xb, -g)
		st.scaleAdd(b, s, -g, pl.uVertex)
	case StepPairwise:
		pl.p.AddTo(xb, g)
		st.add(b, g, pl.p)
		pl.uVertex.AddTo(xb, -g)
		st.add(b, -g, pl.uVertex)
	}
}

// unmove takes back a move of block bs: x_b is restored from saved (the
// whole x before the moves) and the model is told the inverse operations;
// after a collapse, whose scaling by 0 has no inverse, the model's block is
// rebuilt from the (not yet updated) active set.
func (st *fwRun) unmove(bs *blockState, saved []float64) {
	pl := &bs.plan
	b := bs.idx
	lo, hi := bs.blk.Offset, bs.blk.Offset+bs.blk.Size
	copy(st.x[lo:hi], saved[lo:hi])
	g := pl.gamma
	switch pl.kind {
	case StepCollapse:
		st.rebuild(bs)
	case StepFW:
		if g > 0.5 {
			// dividing by 1 − γ would magnify the rounding
			st.rebuild(bs)
			return
		}
		st.model.Add(b, -g, pl.p)
		st.model.Scale(b, 1/(1-g))
	case StepAway, StepDrop:
		st.model.Add(b, g, pl.uVertex)
		st.model.Scale(b, 1/(1+g))
	case StepPairwise:
		st.model.Add(b, g, pl.uVertex)
		st.model.Add(b, -g, pl.p)
	}
}

// rebuild tells the model that x_b is Σ μ_v v over block bs's active set.
func (st *fwRun) rebuild(bs *blockState) {
	st.model.Scale(bs.idx, 0)
	for i := 0; i < bs.set.Len(); i++ {
		v, w := bs.set.Vertex(i)
		st.model.Add(bs.idx, w, v)
	}
}

// commit performs block bs's planned step on its active set (Algorithm 2)
// and cleans up; it returns the number of weights cleaned up.
func (st *fwRun) commit(bs *blockState) int {
	pl := &bs.plan
	g := pl.gamma
	if h := st.m.beforeCommit; h != nil {
		h(bs)
	}
	switch pl.kind {
	case StepCollapse:
		bs.set.FWUpdate(pl.p, 1)
		return 0
	case StepFW:
		bs.set.FWUpdate(pl.p, g)
	case StepAway, StepDrop:
		bs.set.AwayUpdate(pl.u, g, pl.kind == StepDrop)
	case StepPairwise:
		bs.set.PairwiseUpdate(pl.p, pl.u, g, pl.drop)
	}
	if h := st.m.beforeCleanup; h != nil {
		h(bs)
	}
	c := bs.set.Cleanup(weightTol)
	if st.m.cfg.Caratheodory {
		c += bs.set.Caratheodory(bs.blk.Size)
	}
	return c
}

// trace2D adds the iterate, the step's FW and away vertices and the active
// weights to the record of a two-dimensional single-block problem, for the
// dashboard's teaching view.
func (st *fwRun) trace2D(r *Record, bs *blockState) {
	if st.dim != 2 || st.q != 1 {
		return
	}
	set := st.bs[0].set
	if r.Extra == nil {
		// sized once: the iterate, the two vertices of the step and the weights
		r.Extra = make(map[string]float64, 6+len(set.verts))
	}
	r.Extra["x0"], r.Extra["x1"] = st.x[0], st.x[1]
	if st.weightKeys == nil {
		st.weightKeys = map[string]string{}
	}
	for i, v := range set.verts {
		wk, ok := st.weightKeys[v.Key]
		if !ok {
			wk = "w:" + v.Key
			st.weightKeys[v.Key] = wk
		}
		r.Extra[wk] = set.w[i]
	}
	if bs == nil {
		return
	}
	pt := func(prefix string, v Vertex) {
		c := [2]float64{}
		v.AddTo(c[:], 1)
		r.Extra[prefix+"_x0"], r.Extra[prefix+"_x1"] = c[0], c[1]
	}
	pt("fw", bs.plan.p)
	if bs.plan.hasAway {
		pt("away", bs.plan.uVertex)
	}
}

// forChosen runs f on every chosen block, on up to workers goroutines that
// take the blocks in contiguous chunks (no synchronisation per block, so many
// small blocks pay too). f only writes its own block's state, so the result
// does not depend on the scheduling. With few blocks per worker and a problem
// that splits its work (split.go), a worker that finds no block left takes
// parts of the blocks still running, so that 5 blocks on 2 workers take
// about 2.5 blocks' time, not 3. A panic in a problem's code on a worker
// goroutine would end the process: it is reported as that block's failure
// (plan.err), which fails the run with its message.
func (st *fwRun) forChosen(workers int, f func(bs *blockState)) {
	if f == nil {
		return // nothing to run (phase 2 of separable blocks)
	}
	n := len(st.chosen)
	if workers > n {
		workers = n
	}
	if workers <= 1 {
		for i := 0; i < n; i++ {
			f(st.bs[st.chosen[i]])
		}
		return
	}
	st.chunk = max(1, n/(4*workers))
	st.next.Store(0)
	st.step = f
	st.helping = st.splitHelps(n, workers)
	st.left.Store(int64(n))
	st.dispatch(workers-1, st.chunksJob)
	st.helping = false
}

// dispatch runs job on the calling goroutine and on up to helpers helpers of
// the pool (started on first use, they live as long as the run: Run closes
// the pool), and returns when the work is done. job takes its work from
// shared counters, so it does not matter which goroutine, or how many, run
// it. A helper that has not started by the time the caller's job runs out
// of work is not waited for: on a loaded machine its thread may not get a
// CPU for milliseconds, and it then finds the dispatch closed and skips it.
func (st *fwRun) dispatch(helpers int, job func()) {
	if st.pool == nil {
		st.helpers = st.workers - 1
		st.pool = make(chan struct{}, st.helpers)
		st.idle = make(chan struct{}, 1)
		st.subs = make([]subJob, st.workers)
		for i := range st.subs {
			st.subs[i].wake = make(chan struct{}, 1)
		}
		for w := 0; w < st.helpers; w++ {
			go st.helper()
		}
	}
	st.job = job
	st.epoch.Add(1) // open (odd)
	for w := 0; w < min(helpers, st.helpers); w++ {
		select {
		case st.pool <- struct{}{}:
		default: // a helper has a wake-up pending already
		}
	}
	job()
	st.epoch.Add(1) // closed (even): no helper starts job any more
	for st.active.Load() != 0 {
		<-st.idle
	}
}

// helper is a pool goroutine: it joins every dispatch it finds open. Between
// dispatches it watches for the next one for a short while (helperSpin)
// before it parks until woken: the phases of an iteration follow each other
// within microseconds, and waking a parked goroutine's thread can take
// longer than a small block step. While it is active the caller does not
// return from dispatch, so job stays the open dispatch's.
func (st *fwRun) helper() {
	var joined uint64
	for {
		e := st.epoch.Load()
		if e&1 == 1 && e != joined {
			joined = e
			st.active.Add(1)
			if st.epoch.Load() == e {
				st.job()
			}
			if st.active.Add(-1) == 0 {
				select {
				case st.idle <- struct{}{}:
				default:
				}
			}
			continue
		}
		t0 := time.Now()
		for st.epoch.Load() == e && time.Since(t0) < helperSpin {
			runtime.Gosched()
		}
		if st.epoch.Load() != e {
			continue
		}
		if _, ok := <-st.pool; !ok {
			return
		}
	}
}

// helperSpin is how long a pool helper watches for the next dispatch before
// it parks.
const helperSpin = 50 * time.Microsecond

// parallel runs f on ranges that cover [0, n), on the run's workers (see
// SyncModel).
func (st *fwRun) parallel(n int, f func(lo, hi int)) {
	if n <= 0 {
		return
	}
	workers := min(st.workers, n)
	st.rangeN, st.rangeF = n, f
	st.chunk = max(1, n/(4*workers))
	st.next.Store(0)
	if workers <= 1 {
		st.chunk = max(1, n)
		st.runRanges()
	} else {
		st.dispatch(workers-1, st.rangeJob)
	}
	st.rangeF = nil
}

// runRanges runs the current range job on chunks until none is left; a
// panic in the problem's code on a helper would end the process, so it is
// kept (the first one) and reported by syncModel.
func (st *fwRun) runRanges() {
	defer func() {
		if p := recover(); p != nil {
			msg := fmt.Sprintf("panic: %v", p)
			st.rangeErr.CompareAndSwap(nil, &msg)
		}
	}()
	n, chunk := st.rangeN, st.chunk
	for {
		lo := int(st.next.Add(int64(chunk))) - chunk
		if lo >= n {
			return
		}
		st.rangeF(lo, min(lo+chunk, n))
	}
}

// syncModel lets a SyncModel apply its deferred updates before the blocks
// read it concurrently.
func (st *fwRun) syncModel() (err error) {
	if st.syncer == nil {
		return nil
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("model update: panic: %v", p)
		}
	}()
	st.syncer.Sync(st.parallelFn)
	if msg := st.rangeErr.Swap(nil); msg != nil {
		return fmt.Errorf("model update: %s", *msg)
	}
	return nil
}

// runChunks runs f on chunks of the chosen blocks until none is left; in a
// helping pass it then takes parts of the blocks still running until all
// are done (see splitWork).
func (st *fwRun) runChunks() {
	n, chunk, f := len(st.chosen), st.chunk, st.step
	for {
		lo := int(st.next.Add(int64(chunk))) - chunk
		if lo >= n {
			break
		}
		for i := lo; i < min(lo+chunk, n); i++ {
			st.guarded(st.bs[st.chosen[i]], f)
			st.left.Add(-1)
		}
	}
	if st.helping {
		st.helpUntilDone()
	}
}

// guarded runs f on bs on a worker goroutine, where a panic in a problem's
// code would end the process: it becomes the block's failure instead.
func (st *fwRun) guarded(bs *blockState, f func(bs *blockState)) {
	defer func() {
		if p := recover(); p != nil {
			bs.plan = stepPlan{kind: StepNone, u: -1, err: fmt.Errorf("iteration %d, block %d: panic: %v", st.k, bs.idx, p)}
		}
	}()
	f(bs)
}

// slopeAtMove computes, for block bs, <g(x), Δ_b> and <g(x + D), Δ_b> with
// Δ_b its part of the summed move (the batch gradient at x + D into bs.g2).
func (st *fwRun) slopeAtMove(bs *blockState) {
	pl := &bs.plan
	if pl.kind == StepNone {
		return
	}
	if bs.g2 == nil {
		bs.g2 = make([]float64, bs.blk.Size)
	}
	st.model.Gradient(bs.idx, bs.g2, st.x, st.batch)
	lo := bs.blk.Offset
	d0, d1 := 0.0, 0.0
	for i, xi := range st.x[lo : lo+bs.blk.Size] {
		d := xi - st.saved[lo+i]
		d0 += bs.g[i] * d
		d1 += bs.g2[i] * d
	}
	pl.d0, pl.d1 = d0, d1
}

// combineCoupled combines the planned steps of the chosen blocks of a
// problem with coupled blocks (see CoupledBlocks) into one safe move, and
// returns the extra batch work it did (in sample·coordinate units).
//
// Under the rules with a global constant (paper, short) and the open-loop
// rule the plain sum is safe: the blocks' coordinates are disjoint, so
// ‖Σ_b γ_b d_b‖² = Σ_b γ_b²‖d_b‖² and the descent lemma with the global L
// splits into one inequality per block, each of which the block's own γ_b
// satisfies. The steps are left as planned.
//
// Under the directional rules (curvature, backtrack) each γ_b is safe for its
// block alone. Vanilla Frank-Wolfe averages the moves (see averageCoupled);
// the away-step and pairwise methods search along their sum. The engine then searches along the summed direction
// D = Σ_b γ_b d_b: it moves x to x + D, takes the batch gradient there, and
// with φ(τ) = F(x + τD) sets τ = 1 when φ'(1) ≤ 0 and else the root of the
// secant of φ' between 0 and 1, τ = φ'(0)/(φ'(0) − φ'(1)). For squared losses
// φ is quadratic and this is the exact line search on [0, 1], so F does not
// increase (on the batch, and on the full sum with a full batch). With τ = 1
// the planned drops and collapses stand; with τ < 1 every step is scaled by τ
// (and so becomes a plain FW or away step). The extra gradient is batch work
// and is counted in the effective passes.
func (st *fwRun) combineCoupled(mk, workers int) int64 {
	switch st.m.cfg.Step {
	case "paper", "short", "open-loop":
		return 0
	}
	if st.m.mode == modeVanilla {
		st.averageCoupled()
		return 0
	}
	moved := 0
	for _, b := range st.chosen {
		pl := &st.bs[b].plan
		if pl.err != nil {
			return 0 // the run fails in phase 2
		}
		if pl.kind != StepNone {
			moved++
		}
	}
	if moved < 2 {
		return 0
	}
	if st.saved == nil {
		st.saved = make([]float64, st.dim)
	}
	copy(st.saved, st.x)
	for _, b := range st.chosen {
		if bs := st.bs[b]; bs.plan.kind != StepNone {
			st.move(bs)
			bs.plan.moved = true
		}
	}
	// φ'(0) and φ'(1) along D, block by block.
	if err := st.syncModel(); err != nil {
		st.bs[st.chosen[0]].plan.err = fmt.Errorf("iteration %d: %w", st.k, err)
		return 0
	}
	st.forChosen(workers, st.slopeStep)
	var units int64
	d0, d1 := 0.0, 0.0
	for _, b := range st.chosen {
		bs := st.bs[b]
		if bs.plan.kind == StepNone {
			continue
		}
		if bs.plan.err != nil {
			return units
		}
		units += int64(mk) * int64(bs.blk.Size)
		d0 += bs.plan.d0
		d1 += bs.plan.d1
	}
	if !(d1 > 0) || !(d0 < 0) {
		return units // τ = 1 (or no descent to refine: keep the planned steps)
	}
	tau := d0 / (d0 - d1)
	for _, b := range st.chosen {
		bs := st.bs[b]
		pl := &bs.plan
		if pl.kind == StepNone {
			continue
		}
		st.unmove(bs, st.saved)
		pl.gamma *= tau
		pl.drop = false
		switch pl.kind {
		case StepCollapse:
			pl.kind = StepFW
		case StepDrop:
			pl.kind = StepAway
		}
		st.move(bs)
	}
	return units
}

// averageCoupled replaces the planned block moves by their average,
// x + (1/r)·Σ_b γ_b d_b, a convex combination of the r single-block moves,
// which does not increase F when none of them does (Jensen). Vanilla
// Frank-Wolfe (bcfw) on coupled blocks keeps this combination: with the line
// search along the sum it went much faster on some GFLASSO instances (a gap
// of 1e-11 in 50 iterations instead of about 3000) but stalled on others,
// with a gap still above 1e-3·F after 8000 iterations, where the average
// certifies 1e-6·F within about 3000 on every seed tried. A damped step is
// strictly shorter than its γ_max, so it is never a collapse.
func (st *fwRun) averageCoupled() {
	r := float64(len(st.chosen))
	for _, b := range st.chosen {
		pl := &st.bs[b].plan
		if pl.kind == StepNone {
			continue
		}
		pl.gamma /= r
		if pl.kind == StepCollapse {
			pl.kind = StepFW
		}
	}
}

// stallWindow is the number of iterations (times q/r for block methods, and
// at least the iteration of the last progress) without progress after which
// a run ends as stalled.
const stallWindow = 1000

// progress watches the evaluated iterations for a run that no longer makes
// progress: within a window, the best objective must fall by more than
// rounding (1e-12 relative) or the best gap by 1%. (The reported objective
// need not be what the method decreases: GFLASSO reports F(B) while the
// method decreases its P1 upper bound, and F(B) may rise for long stretches
// while the gap falls.)
type progress struct {
	window         int
	since          int // iteration where the current window started
	refObj, refGap float64
	bestObj        float64
	bestGap        float64
}

func (p *progress) reset(k int, obj, gap float64) {
	p.since, p.refObj, p.refGap, p.bestObj, p.bestGap = k, obj, gap, obj, gap
}

// stalled records an evaluation at iteration k and reports whether the
// window has passed without progress.
func (p *progress) stalled(k int, obj, gap float64) bool {
	p.bestObj, p.bestGap = math.Min(p.bestObj, obj), math.Min(p.bestGap, gap)
	if p.bestObj < p.refObj-1e-12*math.Abs(p.refObj) || p.bestGap <= 0.99*p.refGap {
		p.reset(k, p.bestObj, p.bestGap)
		return false
	}
	// the window grows with the run: a long run must also have gone on for
	// as long again as it took to reach its last progress
	return k-p.since >= max(p.window, p.since)
}

// passCount counts effective passes exactly. Work is measured in
// sample·coordinate units (a batch of m samples on a block of s coordinates
// costs m·s) and one pass is n·dim of them; counting in integers keeps long
// runs free of the drift a running float sum picks up.
type passCount struct {
	unit, whole, rem int64
}

func (c passCount) plus(units int64) passCount {
	c.rem += units
	if c.rem >= c.unit {
		c.whole += c.rem / c.unit
		c.rem %= c.unit
	}
	return c
}

func (c passCount) value() float64 {
	return float64(c.whole) + float64(c.rem)/float64(c.unit)
}
