package solver

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"
)

// proxMethod runs proximal gradient (pgd) and its accelerated version FISTA
// (Beck and Teboulle) on a ProxProblem, reporting the objective and the FW
// duality gap of the lifted iterate on the P1 problem.
type proxMethod struct {
	pp        ProxProblem
	lift      Problem
	cfg       Config
	accel     bool
	backtrack bool
	L         float64
	lRef      float64 // the problem's bound, for the KKT residual (0: none)
}

// NewProx configures a proximal method on pp, run as "fista" or "pgd" (its
// Variant's Method); lift is the P1 problem used to report the objective
// and the FW gap of its iterates. The step is 1/L with
// L the user's number, else the problem's SmoothLipschitz bound; with
// stepsize "backtrack", or when no bound is known, L is found by
// backtracking on the smooth part.
func NewProx(pp ProxProblem, lift Problem, cfg Config) (Method, error) {
	m := &proxMethod{pp: pp, lift: lift, cfg: cfg}
	switch cfg.variant().Method {
	case "fista":
		m.accel = true
	case "pgd":
	default:
		return nil, fmt.Errorf("solver: unknown proximal algorithm %q (it runs as fista or pgd)", cfg.Algorithm)
	}
	if err := checkLimits(cfg.Limits); err != nil {
		return nil, err
	}
	if cfg.Schedule.Kind != "" && cfg.Schedule.Kind != "full" {
		return nil, fmt.Errorf("schedule: %s uses full gradients; only ssfw-as and bc-ssfw-as take a batch schedule", cfg.Algorithm)
	}
	if cfg.L < 0 || math.IsNaN(cfg.L) || math.IsInf(cfg.L, 0) {
		return nil, fmt.Errorf("L: must be a positive number or auto, got %v", cfg.L)
	}
	switch cfg.Step {
	case "", "curvature", "paper":
	case "backtrack":
		m.backtrack = true
	default:
		return nil, fmt.Errorf("stepsize: %s takes paper (1/L), curvature (the same) or backtrack, got %q", cfg.Algorithm, cfg.Step)
	}
	m.L = cfg.L
	m.lRef = pp.SmoothLipschitz()
	if m.L == 0 && !m.backtrack {
		m.L = m.lRef
	}
	if !(m.L > 0) || math.IsInf(m.L, 0) {
		m.backtrack, m.L = true, 0 // estimated at the start of Run
	}
	return m, nil
}

// The proximal baselines (pgd, FISTA) as short steps: Run starts from the
// problem's point (start) and repeats iterate, whose steps are
// gradientAt (∇S at the extrapolated point y), proxStep (the proximal
// gradient step x_{k+1} = prox_{R/L}(y − ∇S(y)/L), with backtracking on L),
// momentum (FISTA's extrapolation with adaptive restart, or y = x_{k+1}
// for pgd), and the record with its evaluation.

// proxRun is the state of one Run of a proximal method.
type proxRun struct {
	m           *proxMethod
	rec         Recorder
	x, y, xn, v []float64
	grad, gtmp  []float64
	ev          *liftEval
	L, t        float64
	samples     int
	cad         *Cadence
	passes      float64
	work        time.Duration
	sum         Summary
	lastEval    int
	plane       bool
	shown       [6]float64
	haveShown   bool
	at, from    [2]float64
}

// Run executes the method.
func (m *proxMethod) Run(ctx context.Context, rec Recorder) (Result, error) {
	pr, err := m.newRun(rec)
	if err != nil {
		return Result{}, err
	}
	if pr.start() {
		return Result{Summary: pr.sum, X: pr.x}, nil
	}
	for k := 1; ; k++ {
		if ctx.Err() != nil {
			pr.sum.Status, pr.sum.Message = StatusCancelled, "cancelled after "+strconv.Itoa(k-1)+" iterations"
			break
		}
		if pr.iterate(k) {
			break
		}
	}
	if pr.lastEval != pr.sum.Iters || pr.sum.Status == StatusCancelled {
		pr.sum.Objective, pr.sum.Gap = pr.evaluate(nil)
	}
	return Result{Summary: pr.sum, X: pr.x}, nil
}

// newRun makes the run's buffers at the problem's starting point, with L
// the configured constant or, for backtracking without one, an estimate.
func (m *proxMethod) newRun(rec Recorder) (*proxRun, error) {
	pp := m.pp
	n := pp.ProxDim()
	x := pp.ProxStart()
	if len(x) != n {
		return nil, fmt.Errorf("solver: the problem's start has length %d, want %d", len(x), n)
	}
	pr := &proxRun{m: m, rec: rec, x: x, y: append([]float64(nil), x...), xn: make([]float64, n),
		v: make([]float64, n), grad: make([]float64, n), gtmp: make([]float64, n),
		ev: newLiftEval(pp, m.lift), L: m.L, t: 1, samples: m.lift.Samples()}
	if pr.L == 0 {
		pr.L = m.estimateL(x)
	}
	// On 2-D problems the records carry the iterate and the step's points
	// for the dashboard's teaching view (trace2D).
	pr.plane = n == 2 && m.lift.Dim() == 2
	return pr, nil
}

// start reports the starting point as record k = 0, evaluated, and reports
// whether the run ends there (the gap within the tolerance).
func (pr *proxRun) start() bool {
	lim := pr.m.cfg.Limits
	r0 := Record{K: 0, Step: StepNone, Active: nnz(pr.x)}
	// an evaluation of the lifted iterate: the lifted problem's own cost,
	// plus the model's rebuild and the KKT residual's smooth pass
	pr.cad = NewCadence(lim.EvalEvery, evalCostOf(pr.m.lift)+2)
	obj, gap := pr.evaluate(&r0)
	r0.Objective, r0.Gap = F(obj), F(gap)
	pr.trace2D(&r0, nil, nil)
	pr.rec.Record(r0)
	pr.sum = Summary{Objective: obj, Gap: gap}
	if lim.GapTol > 0 && gap <= lim.GapTol {
		pr.sum.Status = StatusConverged
		return true
	}
	return false
}

// iterate runs iteration k and reports whether the run ends after it.
func (pr *proxRun) iterate(k int) bool {
	lim := pr.m.cfg.Limits
	t0 := Now()
	fy := pr.gradientAt()
	pr.proxStep(fy)
	if pr.plane {
		copy(pr.at[:], pr.y)
		copy(pr.from[:], pr.v)
	}
	pr.momentum()
	copy(pr.x, pr.xn)
	// the record's own figures (the support's size) are part of the
	// iteration's work
	r := Record{K: k, Passes: pr.passes, Step: StepProx, Gamma: 1 / pr.L, Batch: pr.samples, Active: nnz(pr.x)}
	pr.work += Now() - t0
	r.Time = pr.work.Seconds()
	if pr.cad.Due(k, lim.reached(k, pr.passes) || EvalRequested(pr.rec), pr.passes) {
		obj, gap := pr.evaluate(&r)
		r.Objective, r.Gap = F(obj), F(gap)
		pr.sum.Objective, pr.sum.Gap = obj, gap
		pr.lastEval = k
	}
	pr.trace2D(&r, pr.at[:], pr.from[:])
	pr.rec.Record(r)
	pr.sum.Iters, pr.sum.Passes, pr.sum.Time = k, pr.passes, r.Time
	if math.IsNaN(fy) || math.IsInf(fy, 0) {
		pr.sum.Status, pr.sum.Message = StatusFailed, fmt.Sprintf("iteration %d: the smooth part is not finite", k)
		return true
	}
	return lim.stop(&pr.sum, r, k, pr.passes)
}

// gradientAt returns S(y) and takes ∇S(y) into grad: one pass. Proximal
// gradient with backtracking may then try a longer step than the last;
// FISTA keeps L non-decreasing, as its convergence proof requires.
func (pr *proxRun) gradientAt() float64 {
	fy := pr.m.pp.Smooth(pr.y, pr.grad)
	pr.passes++
	if pr.m.backtrack && !pr.m.accel {
		pr.L *= 0.9
	}
	return fy
}

// proxStep is x_{k+1} = prox_{R/L}(v) with v = y − ∇S(y)/L, into xn. With
// backtracking L doubles until S(x_{k+1}) ≤ S(y) + <∇S(y), x_{k+1} − y> +
// ½L‖x_{k+1} − y‖² (each try one more pass).
func (pr *proxRun) proxStep(fy float64) {
	pp, y, grad, xn, v := pr.m.pp, pr.y, pr.grad, pr.xn, pr.v
	for it := 0; ; it++ {
		for i := range v {
			v[i] = y[i] - grad[i]/pr.L
		}
		pp.Prox(xn, v, 1/pr.L)
		if !pr.m.backtrack {
			return
		}
		fx := pp.Smooth(xn, pr.gtmp)
		pr.passes++
		q := fy
		dd := 0.0
		for i := range xn {
			d := xn[i] - y[i]
			q += grad[i] * d
			dd += d * d
		}
		// the test is done in floating point: near the optimum both sides
		// agree to rounding, and a difference below that says nothing
		// about L, so it is accepted.
		tol := 1e-13 * (math.Abs(fy) + math.Abs(fx))
		if fx <= q+0.5*pr.L*dd+tol || it == 100 {
			return
		}
		pr.L *= 2
	}
}

// momentum sets the next extrapolated point y: for FISTA
// y = x_{k+1} + ((t_k − 1)/t_{k+1})(x_{k+1} − x_k), with adaptive restart
// (O'Donoghue and Candès, gradient scheme): when the momentum points
// uphill, (y − x_{k+1})ᵀ(x_{k+1} − x_k) > 0, it is reset (t = 1), which
// keeps FISTA's O(1/k²) guarantee in practice and gives linear convergence
// on strongly convex problems. For pgd y = x_{k+1}.
func (pr *proxRun) momentum() {
	y, xn, x := pr.y, pr.xn, pr.x
	if !pr.m.accel {
		copy(y, xn)
		return
	}
	up := 0.0
	for i := range y {
		up += (y[i] - xn[i]) * (xn[i] - x[i])
	}
	if up > 0 {
		pr.t = 1
	}
	tn := (1 + math.Sqrt(1+4*pr.t*pr.t)) / 2
	beta := (pr.t - 1) / tn
	for i := range y {
		y[i] = xn[i] + beta*(xn[i]-x[i])
	}
	pr.t = tn
}

// evaluate returns the objective and the FW gap of the lifted iterate,
// with the KKT residual's L the problem's bound when it has one (so that it
// does not move with the backtracking estimate).
func (pr *proxRun) evaluate(r *Record) (float64, float64) {
	lr := pr.m.lRef
	if !(lr > 0) || math.IsInf(lr, 0) {
		lr = pr.L
	}
	return pr.ev.eval(pr.x, r, lr)
}

// trace2D adds the teaching view's points to a record of a 2-D problem:
// the point where the gradient was taken (at_), the gradient step (from_)
// and its projection (x). A record whose three points equal those of the
// last record that carried them leaves them out, and a reader takes that
// record's: once the iterates reach a fixed point (FISTA on the default
// polygon does after 14 iterations) the records stop repeating them, which
// would cost more than an iteration's work.
func (pr *proxRun) trace2D(r *Record, at, from []float64) {
	if !pr.plane {
		return
	}
	x := pr.x
	pt := [6]float64{x[0], x[1]}
	if from != nil {
		pt = [6]float64{x[0], x[1], at[0], at[1], from[0], from[1]}
	}
	if pr.haveShown && pt == pr.shown && from != nil {
		return
	}
	pr.shown, pr.haveShown = pt, from != nil
	if r.Extra == nil {
		r.Extra = make(map[string]float64, 6)
	}
	r.Extra["x0"], r.Extra["x1"] = x[0], x[1]
	if from != nil {
		r.Extra["at_x0"], r.Extra["at_x1"] = at[0], at[1]
		r.Extra["from_x0"], r.Extra["from_x1"] = from[0], from[1]
	}
}

// nnz is the number of nonzero entries of a.
func nnz(a []float64) int {
	c := 0
	for _, e := range a {
		if e != 0 {
			c++
		}
	}
	return c
}

// estimateL returns a first estimate of the smooth part's Lipschitz constant
// for backtracking: the gradient's change over a small step from x.
func (m *proxMethod) estimateL(x []float64) float64 {
	n := len(x)
	g0, g1, y := make([]float64, n), make([]float64, n), make([]float64, n)
	m.pp.Smooth(x, g0)
	gn := math.Sqrt(dot(g0, g0))
	if gn == 0 {
		return 1
	}
	h := 1e-4 * math.Max(1, math.Sqrt(dot(x, x))) / gn
	for i := range y {
		y[i] = x[i] - h*g0[i]
	}
	m.pp.Smooth(y, g1)
	d := 0.0
	for i := range g1 {
		d += (g1[i] - g0[i]) * (g1[i] - g0[i])
	}
	if L := math.Sqrt(d) / (h * gn); L > 0 && !math.IsInf(L, 0) {
		return L
	}
	return 1
}

// liftEval evaluates an iterate y of a ProxProblem on the same footing as the
// Frank-Wolfe methods' iterates: lifted to the P1 problem, the objective and
// the FW duality gap of the lift, and on records the KKT residual of the
// composite problem and the problem's metrics. The proximal methods and
// coordinate descent share it.
type liftEval struct {
	pp          ProxProblem
	lift        Problem
	xl          []float64
	model       Model
	blocks      []Block
	gb          [][]float64
	gtmp, v, xn []float64
}

func newLiftEval(pp ProxProblem, lift Problem) *liftEval {
	n := pp.ProxDim()
	e := &liftEval{pp: pp, lift: lift, xl: make([]float64, lift.Dim()), blocks: lift.Blocks(),
		gtmp: make([]float64, n), v: make([]float64, n), xn: make([]float64, n)}
	e.gb = make([][]float64, len(e.blocks))
	for i, b := range e.blocks {
		e.gb[i] = make([]float64, b.Size)
	}
	return e
}

// eval returns the objective and the FW gap of y's lift. With r it also
// sets r.Extra: "kkt", the norm of the gradient mapping
// lr·‖y − prox(y − ∇S(y)/lr)‖ (left out when lr is not a positive number),
// and the problem's metrics.
func (e *liftEval) eval(y []float64, r *Record, lr float64) (float64, float64) {
	pp, xl := e.pp, e.xl
	pp.Lift(xl, y)
	if e.model == nil {
		e.model = e.lift.NewModel(xl)
	} else {
		e.model.Reset(xl)
	}
	gap := 0.0
	for i, b := range e.blocks {
		e.model.Gradient(i, e.gb[i], xl, nil)
		s := e.lift.LMO(i, e.gb[i])
		gap += dot(e.gb[i], xl[b.Offset:b.Offset+b.Size]) - s.Dot(e.gb[i])
	}
	obj := e.lift.Objective(xl)
	if r != nil {
		if lr > 0 && !math.IsInf(lr, 0) {
			pp.Smooth(y, e.gtmp)
			for i := range e.v {
				e.v[i] = y[i] - e.gtmp[i]/lr
			}
			pp.Prox(e.xn, e.v, 1/lr)
			res := 0.0
			for i := range e.xn {
				d := e.xn[i] - y[i]
				res += d * d
			}
			r.Extra = map[string]float64{"kkt": lr * math.Sqrt(res)}
		}
		if ev, ok := e.lift.(Evaluator); ok {
			if r.Extra == nil {
				r.Extra = map[string]float64{}
			}
			for k, val := range ev.Extra(xl) {
				r.Extra[k] = val
			}
		}
	}
	return obj, gap
}
