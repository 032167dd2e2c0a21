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

// NewProx configures "fista" or "pgd" on pp; lift is the P1 problem used to
// report the objective and the FW gap of its iterates. The step is 1/L with
// L the user's number, else the problem's SmoothLipschitz bound; with
// stepsize "backtrack", or when no bound is known, L is found by
// backtracking on the smooth part.
func NewProx(pp ProxProblem, lift Problem, cfg Config) (Method, error) {
	m := &proxMethod{pp: pp, lift: lift, cfg: cfg}
	switch cfg.Algorithm {
	case "fista":
		m.accel = true
	case "pgd":
	default:
		return nil, fmt.Errorf("solver: unknown proximal algorithm %q", cfg.Algorithm)
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

// Run executes the method.
func (m *proxMethod) Run(ctx context.Context, rec Recorder) (Result, error) {
	pp, lim := m.pp, m.cfg.Limits
	n := pp.ProxDim()
	x := pp.ProxStart()
	if len(x) != n {
		return Result{}, fmt.Errorf("solver: the problem's start has length %d, want %d", len(x), n)
	}
	y := append([]float64(nil), x...)
	xn := make([]float64, n)
	v := make([]float64, n)
	grad := make([]float64, n)
	gtmp := make([]float64, n)
	ev := newLiftEval(pp, m.lift)
	L := m.L
	if L == 0 {
		L = m.estimateL(x)
	}
	t := 1.0
	samples := m.lift.Samples()

	evaluate := func(r *Record) (float64, float64) {
		// the KKT residual with L the problem's bound when it has one (so
		// that it does not move with the backtracking estimate)
		lr := m.lRef
		if !(lr > 0) || math.IsInf(lr, 0) {
			lr = L
		}
		return ev.eval(x, r, lr)
	}
	nnz := func(a []float64) int {
		c := 0
		for _, e := range a {
			if e != 0 {
				c++
			}
		}
		return c
	}

	// On 2-D problems the records carry the iterate and the step's points
	// for the dashboard's teaching view: the point where the gradient was
	// taken (at_), the gradient step (from_) and its projection (x). A
	// record whose three points equal those of the last record that carried
	// them leaves them out, and a reader takes that record's: once the
	// iterates reach a fixed point (FISTA on the default polygon does after
	// 14 iterations) the records stop repeating them, which would cost more
	// than an iteration's work.
	plane := n == 2 && m.lift.Dim() == 2
	var shown [6]float64
	haveShown := false
	trace2D := func(r *Record, at, from []float64) {
		if !plane {
			return
		}
		pt := [6]float64{x[0], x[1]}
		if from != nil {
			pt = [6]float64{x[0], x[1], at[0], at[1], from[0], from[1]}
		}
		if haveShown && pt == shown && from != nil {
			return
		}
		shown, haveShown = pt, from != nil
		if r.Extra == nil {
			r.Extra = make(map[string]float64, 6)
		}
		r.Extra["x0"], r.Extra["x1"] = x[0], x[1]
		if from != nil {
			r.Extra["at_x0"], r.Extra["at_x1"] = at[0], at[1]
			r.Extra["from_x0"], r.Extra["from_x1"] = from[0], from[1]
		}
	}
	r0 := Record{K: 0, Step: StepNone, Active: nnz(x)}
	// an evaluation of the lifted iterate: the lifted problem's own cost,
	// plus the model's rebuild and the KKT residual's smooth pass
	cad := NewCadence(lim.EvalEvery, evalCostOf(m.lift)+2)
	obj, gap := evaluate(&r0)
	r0.Objective, r0.Gap = F(obj), F(gap)
	trace2D(&r0, nil, nil)
	rec.Record(r0)
	sum := Summary{Objective: obj, Gap: gap}
	if lim.GapTol > 0 && gap <= lim.GapTol {
		sum.Status = StatusConverged
		return Result{Summary: sum, X: x}, nil
	}
	passes := 0.0
	var work time.Duration
	lastEval := 0
	for k := 1; ; k++ {
		if ctx.Err() != nil {
			sum.Status, sum.Message = StatusCancelled, "cancelled after "+strconv.Itoa(k-1)+" iterations"
			break
		}
		t0 := Now()
		fy := pp.Smooth(y, grad)
		passes++
		if m.backtrack && !m.accel {
			// proximal gradient may try a longer step each iteration; FISTA
			// keeps L non-decreasing, as its convergence proof requires.
			L *= 0.9
		}
		for it := 0; ; it++ {
			for i := range v {
				v[i] = y[i] - grad[i]/L
			}
			pp.Prox(xn, v, 1/L)
			if !m.backtrack {
				break
			}
			fx := pp.Smooth(xn, gtmp)
			passes++
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
			if fx <= q+0.5*L*dd+tol || it == 100 {
				break
			}
			L *= 2
		}
		var at, from [2]float64
		if plane {
			copy(at[:], y)
			copy(from[:], v)
		}
		if m.accel {
			// adaptive restart (O'Donoghue and Candès, gradient scheme):
			// when the momentum points uphill, (y − x_{k+1})ᵀ(x_{k+1} − x_k) > 0,
			// reset it. This keeps FISTA's O(1/k²) guarantee in practice and
			// gives linear convergence on strongly convex problems.
			up := 0.0
			for i := range y {
				up += (y[i] - xn[i]) * (xn[i] - x[i])
			}
			if up > 0 {
				t = 1
			}
			tn := (1 + math.Sqrt(1+4*t*t)) / 2
			beta := (t - 1) / tn
			for i := range y {
				y[i] = xn[i] + beta*(xn[i]-x[i])
			}
			t = tn
		} else {
			copy(y, xn)
		}
		copy(x, xn)
		// the record's own figures (the support's size) are part of the
		// iteration's work
		r := Record{K: k, Passes: passes, Step: StepProx, Gamma: 1 / L, Batch: samples, Active: nnz(x)}
		work += Now() - t0
		r.Time = work.Seconds()
		eval := cad.Due(k, lim.reached(k, passes) || EvalRequested(rec), passes)
		if eval {
			obj, gap := evaluate(&r)
			r.Objective, r.Gap = F(obj), F(gap)
			sum.Objective, sum.Gap = obj, gap
			lastEval = k
		}
		trace2D(&r, at[:], from[:])
		rec.Record(r)
		sum.Iters, sum.Passes, sum.Time = k, passes, r.Time
		if math.IsNaN(fy) || math.IsInf(fy, 0) {
			sum.Status, sum.Message = StatusFailed, fmt.Sprintf("iteration %d: the smooth part is not finite", k)
			break
		}
		if lim.stop(&sum, r, k, passes) {
			break
		}
	}
	if lastEval != sum.Iters || sum.Status == StatusCancelled {
		sum.Objective, sum.Gap = evaluate(nil)
	}
	return Result{Summary: sum, X: x}, nil
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
