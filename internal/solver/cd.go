package solver

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"
)

// Coordinate descent ("cd"), a baseline that is not a method of the paper:
// the solver practitioners pick for a plain LASSO (glmnet, scikit-learn's
// Lasso), here on every problem whose proximal view has a separable
// non-smooth part. It minimises
//
//	S(y) + Σ_j R_j(y_j),  S(y) = w·Σ_i f_i(z_i) + cᵀy,  z = M y,
//
// with R_j = λ|y_j| or the indicator of [lo, hi], one coordinate at a time,
// each exactly (closed form for squared losses; a proximal Newton step with
// a backtracking line search for the others). What makes it fast:
//   - a working set: cyclic sweeps over the coordinates that are free (off
//     zero, off the bounds) or violate their optimality condition, until the
//     sweeps stop moving; then one full pass checks every coordinate's
//     optimality at one point and brings the violators in;
//   - residual updates: z (or the residual z − t) is kept, a coordinate step
//     costs a dot product and an axpy with one column;
//   - gap-safe screening (squared loss with λ‖·‖₁): each full pass computes a
//     dual point and its duality gap and drops for good every coordinate the
//     gap's sphere proves zero at the optimum (Fercoq, Gramfort and Salmon).
// Its records carry the objective and the FW duality gap of the lifted
// iterate, evaluated on the cadence every method uses.

// CoordProblem is a ProxProblem whose smooth part is a sum of losses of
// z = M y and whose non-smooth part separates over the coordinates, the view
// coordinate descent needs.
type CoordProblem interface {
	ProxProblem
	// Coords describes S and R. The slices it returns are shared and must
	// not be changed.
	Coords() Coords
}

// Coords describes S(y) = W·Σ_i f_i((M y)_i) + Linearᵀy and R to coordinate
// descent, for y of length P.
type Coords struct {
	N, P int
	// Cols holds M column-major: column j is Cols[j*N : (j+1)*N].
	Cols []float64
	// W scales the losses (1 for a plain sum, 1/N for a mean).
	W float64
	// Linear is c (nil: 0).
	Linear []float64
	// Loss is f; nil means the squared loss f_i(z) = ½(z − Target_i)².
	Loss CoordLoss
	// Target is t of the squared loss (nil: 0).
	Target []float64
	// L1 > 0 makes R_j = L1·|y_j|; otherwise R_j is the indicator of
	// [Lo, Hi].
	L1     float64
	Lo, Hi float64
}

// CoordLoss is a smooth loss f_i of z_i, for coordinate descent's Newton
// steps.
type CoordLoss interface {
	// Derivs writes f_i'(z_i) into d1 and f_i''(z_i) into d2.
	Derivs(z, d1, d2 []float64)
	// Delta returns Σ_i f_i(z_i + s·m_i) − f_i(z_i), computed so that it
	// does not lose the difference to cancellation where the loss allows.
	Delta(z, m []float64, s float64) float64
}

// Step kinds of coordinate descent.
const (
	StepSweep     = "sweep"      // a cyclic sweep over the working set
	StepFullSweep = "full-sweep" // a pass over every coordinate not screened out: optimality check, screening, new working set
)

type cdMethod struct {
	pp   CoordProblem
	lift Problem
	cfg  Config
	c    Coords
}

// NewCD configures coordinate descent ("cd") on pp; lift is the P1 problem
// used to report the objective and the FW gap of its iterates, as for the
// proximal methods.
func NewCD(pp CoordProblem, lift Problem, cfg Config) (Method, error) {
	if cfg.variant().Method != "cd" {
		return nil, fmt.Errorf("solver: unknown coordinate descent algorithm %q", cfg.Algorithm)
	}
	if err := checkLimits(cfg.Limits); err != nil {
		return nil, err
	}
	if cfg.Schedule.Kind != "" && cfg.Schedule.Kind != "full" {
		return nil, fmt.Errorf("schedule: cd uses exact coordinate steps; only ssfw-as and bc-ssfw-as take a batch schedule")
	}
	switch cfg.Step {
	case "", "curvature":
	default:
		return nil, fmt.Errorf("stepsize: cd minimises each coordinate exactly and takes no step-size rule (leave it at curvature), got %q", cfg.Step)
	}
	if cfg.L != 0 {
		return nil, fmt.Errorf("L: cd needs no Lipschitz constant (leave it at auto), got %v", cfg.L)
	}
	c := pp.Coords()
	switch {
	case c.N < 1 || c.P < 1 || len(c.Cols) != c.N*c.P:
		return nil, fmt.Errorf("solver: the problem's coordinates are malformed (%d×%d, %d entries)", c.N, c.P, len(c.Cols))
	case c.P != pp.ProxDim():
		return nil, fmt.Errorf("solver: the problem has %d coordinates for cd but %d in its proximal view", c.P, pp.ProxDim())
	case c.Linear != nil && len(c.Linear) != c.P, c.Target != nil && len(c.Target) != c.N:
		return nil, fmt.Errorf("solver: the problem's linear term or target has the wrong length")
	case !(c.W > 0) || math.IsInf(c.W, 0):
		return nil, fmt.Errorf("solver: the problem's loss weight must be a positive number, got %v", c.W)
	case c.L1 <= 0 && !(c.Lo <= c.Hi):
		return nil, fmt.Errorf("solver: the problem's bounds [%v, %v] are empty", c.Lo, c.Hi)
	}
	if err := CheckCDPath(cfg.Path, c); err != nil {
		return nil, fmt.Errorf("path: %w", err)
	}
	return &cdMethod{pp: pp, lift: lift, cfg: cfg, c: c}, nil
}

// cdInnerTol is the relative size below which a sweep's largest move
// (h_j·δ_j², in units of the objective) counts as no move: the working set
// has converged to rounding.
const cdInnerTol = 1e-26

// cdUnseen is the relative decrease of the objective below which a
// coordinate's Newton step is taken without its line search: the change of
// the loss, a sum over the samples, is computed to about 1e-16 of the
// loss, so below this the backtracking test compares rounding and would
// refuse the step (the run then stalls short of its certificate), while
// the coordinate's quadratic model, exact up to the cube of the step, is
// far more accurate there.
const cdUnseen = 1e-12

// cdCertified is the relative gap below which a coordinate-wise minimum
// counts as converged.
const cdCertified = 1e-9

// cdMaxInner bounds the sweeps over one working set before a full pass
// checks the others (a full pass is cheap next to many sweeps).
const cdMaxInner = 1000

// cdState is coordinate descent's state at the iterate y.
type cdState struct {
	c      Coords
	y      []float64
	z      []float64 // M y, minus the target for the squared loss (the residual)
	d1, d2 []float64 // f'(z), f''(z) for other losses
	h      []float64 // W·‖m_j‖² (squared loss: the exact curvature)
	grad   []float64 // the full pass's gradient of S
	viol   []cdViol
	out    []bool // screened out for good
	set    []int  // working set, increasing
	work   float64
	unit   float64 // work of one length-N vector operation, in passes
	// covariance updates (squared loss; see cdcov.go)
	cov   bool      // this working set's sweeps use covariance updates
	q     []float64 // m_jᵀz of the working set's coordinates, kept by covariance updates
	gram  cdGram    // inner products m_jᵀm_k of the coordinates that entered a working set
	stale bool      // y moved by covariance updates since z was computed
	// unseen is a decrease of the objective its rounding hides (cdUnseen
	// of its size): a Newton step predicting no more is taken whole, as
	// the line search could not judge it (newtonStep)
	unseen float64
}

func (s *cdState) col(j int) []float64 { return s.c.Cols[j*s.c.N : (j+1)*s.c.N] }

// isFree reports whether y_j is off zero (l1) or off the bounds (box).
func (s *cdState) isFree(j int) bool {
	if s.c.L1 > 0 {
		return s.y[j] != 0
	}
	return s.y[j] > s.c.Lo && s.y[j] < s.c.Hi
}

// refresh recomputes z and the loss derivatives from y.
func (s *cdState) refresh() {
	c := s.c
	s.stale = false
	if c.Target != nil {
		for i := range s.z {
			s.z[i] = -c.Target[i]
		}
	} else {
		clear(s.z)
	}
	for j, v := range s.y {
		if v != 0 {
			floats.AddScaled(s.z, v, s.col(j))
			s.work += s.unit
		}
	}
	if c.Loss != nil {
		c.Loss.Derivs(s.z, s.d1, s.d2)
		s.work += s.unit
	}
}

// partial returns ∂S/∂y_j at the current state.
func (s *cdState) partial(j int) float64 {
	var g float64
	if s.c.Loss == nil {
		g = floats.Dot(s.col(j), s.z)
		s.q[j] = g
	} else {
		g = floats.Dot(s.col(j), s.d1)
	}
	s.work += s.unit
	g *= s.c.W
	if s.c.Linear != nil {
		g += s.c.Linear[j]
	}
	return g
}

// target returns the minimiser over v of g·(v − y_j) + ½h(v − y_j)² + R_j(v).
func (s *cdState) target(j int, g, h float64) float64 {
	v := s.y[j] - g/h
	if s.c.L1 > 0 {
		tau := s.c.L1 / h
		switch {
		case v > tau:
			return v - tau
		case v < -tau:
			return v + tau
		}
		return 0
	}
	return math.Min(math.Max(v, s.c.Lo), s.c.Hi)
}

// step minimises over coordinate j and returns h_j·δ², the size of the move
// in units of the objective.
func (s *cdState) step(j int) float64 {
	g := s.partial(j)
	if s.c.Loss == nil {
		return s.exactStep(j, g)
	}
	return s.newtonStep(j, g)
}

// exactStep is the squared loss's step: the exact minimiser along
// coordinate j, with h_j its exact curvature.
func (s *cdState) exactStep(j int, g float64) float64 {
	nv, d := s.squaredMove(j, g)
	if d == 0 {
		return 0
	}
	floats.AddScaled(s.z, d, s.col(j))
	s.work += s.unit
	s.y[j] = nv
	return s.h[j] * d * d
}

// reg is R_j(v): λ|v| for the l1 penalty, 0 inside a box.
func (s *cdState) reg(v float64) float64 {
	if s.c.L1 > 0 {
		return s.c.L1 * math.Abs(v)
	}
	return 0
}

// newtonStep is the other losses' step: proximal Newton on the coordinate
// with the loss's second derivative at the current point, then backtracking
// on the coordinate's own objective (Tseng and Yun).
func (s *cdState) newtonStep(j int, g float64) float64 {
	c, m := s.c, s.col(j)
	h := 0.0
	for i, v := range m {
		h += s.d2[i] * v * v
	}
	s.work += s.unit
	h *= c.W
	if !(h > 0) || math.IsInf(h, 0) {
		h = math.Max(s.h[j], 1e-300)
	}
	nv := s.target(j, g, h)
	d := nv - s.y[j]
	if d == 0 {
		return 0
	}
	lin := 0.0
	if c.Linear != nil {
		lin = c.Linear[j]
	}
	// predicted decrease: the linear model plus the change of R
	pred := g*d + s.reg(nv) - s.reg(s.y[j])
	a := 1.0
	for it := 0; -pred > s.unseen; it++ {
		obj := c.W*c.Loss.Delta(s.z, m, a*d) + lin*a*d + s.reg(s.y[j]+a*d) - s.reg(s.y[j])
		s.work += s.unit
		if obj <= 1e-4*a*pred || it == 50 {
			if it == 50 && obj > 0 {
				return 0
			}
			break
		}
		a /= 2
	}
	d *= a
	floats.AddScaled(s.z, d, m)
	s.y[j] += d
	c.Loss.Derivs(s.z, s.d1, s.d2)
	s.work += 2 * s.unit
	return h * d * d
}

// fullPass computes the gradient of S at y for every coordinate not screened
// out, screens (squared loss with λ‖·‖₁), and makes the working set: the
// free coordinates and the violators of their optimality condition, at
// most cdGrow(free) of them, the worst first (a working set that grows
// with the support, as in celer or blitz: a first pass at y = 0 finds
// nearly every coordinate violating, most of which never enter the
// solution). It returns the number of violators.
func (s *cdState) fullPass() int {
	if s.stale {
		s.refresh()
	}
	c := s.c
	s.set = s.set[:0]
	for j := range s.y {
		if s.out[j] {
			continue
		}
		s.grad[j] = s.partial(j)
	}
	if c.Loss == nil && c.L1 > 0 {
		s.screen()
	}
	nv := s.pick(c.L1)
	s.chooseUpdates()
	return nv
}

// pick makes the working set from the gradient s.grad: the free
// coordinates and the violators, at most cdGrow(free) of them, the worst
// first; for λ‖·‖₁ a violator is a coordinate at zero with |g_j| > thr
// (thr = λ: its optimality condition; below λ: a strong rule). It returns
// the number of violators.
func (s *cdState) pick(thr float64) int {
	c := s.c
	s.set = s.set[:0]
	s.viol = s.viol[:0]
	for j := range s.y {
		if s.out[j] {
			continue
		}
		g := s.grad[j]
		switch {
		case s.isFree(j):
			s.set = append(s.set, j)
		case c.L1 > 0:
			if a := math.Abs(g); a > thr {
				s.viol = append(s.viol, cdViol{j, a - thr})
			}
		case s.y[j] <= c.Lo && g < 0, s.y[j] >= c.Hi && g > 0:
			s.viol = append(s.viol, cdViol{j, math.Abs(g)})
		}
	}
	nv := len(s.viol)
	if k := cdGrow(len(s.set)); nv > k {
		selectTop(s.viol, k)
		s.viol = s.viol[:k]
	}
	for _, v := range s.viol {
		s.set = append(s.set, v.j)
	}
	slices.Sort(s.set)
	return nv
}

// cdViol is a coordinate that violates its optimality condition, by score.
type cdViol struct {
	j     int
	score float64
}

// cdBetter orders violators: the larger score first, then the smaller
// index (a total order: the k best are one set).
func cdBetter(a, b cdViol) bool { return a.score > b.score || a.score == b.score && a.j < b.j }

// selectTop moves the k best violators (cdBetter) to v[:k], in no
// particular order, in time linear in len(v) on average (Hoare's
// selection): a strong rule may name every coordinate, of which a working
// set takes a few.
func selectTop(v []cdViol, k int) {
	lo, hi := 0, len(v)-1
	for lo < hi {
		p := v[lo+(hi-lo)/2]
		i, j := lo, hi
		for i <= j {
			for cdBetter(v[i], p) {
				i++
			}
			for cdBetter(p, v[j]) {
				j--
			}
			if i <= j {
				v[i], v[j] = v[j], v[i]
				i++
				j--
			}
		}
		switch {
		case k-1 <= j:
			hi = j
		case k-1 >= i:
			lo = i
		default:
			return
		}
	}
}

// cdGrow is the number of violators a full pass adds to a working set with
// free coordinates.
func cdGrow(free int) int { return max(2*free, 16) }

// prune drops from the working set the coordinates a sweep left at zero or
// at a bound: the sweeps go on over the free ones, and the next full pass
// brings back any that violates.
func (s *cdState) prune() {
	k := 0
	for _, j := range s.set {
		if s.isFree(j) {
			s.set[k] = j
			k++
		}
	}
	s.set = s.set[:k]
}

// screen applies the gap-safe sphere test to the LASSO
// P(y) = W·½‖r‖² + cᵀy + λ‖y‖₁, r = M y − t, with the gradient s.grad
// = W·Mᵀr + c at y: the dual point θ = −W·r·α with α = min(1, λ/‖Mᵀ(W r)‖∞)
// (the linear term enters the constraint |m_jᵀθ − c_j| ≤ λ, here for c = 0
// only) gives the gap G = P(y) − D(θ), and every coordinate with
// |m_jᵀθ| + ‖m_j‖·√(2G/W) < λ is zero at the optimum.
func (s *cdState) screen() {
	c := s.c
	if c.Linear != nil {
		return
	}
	mx := 0.0
	for j, g := range s.grad {
		if !s.out[j] {
			mx = math.Max(mx, math.Abs(g))
		}
	}
	// the coordinates screened out are zero at the optimum: the problem
	// without them has the same solution, and θ need only be feasible for
	// its dual (sequential screening)
	alpha := 1.0
	if mx > c.L1 {
		alpha = c.L1 / mx
	}
	rr, rt, tt := 0.0, 0.0, 0.0
	for i, r := range s.z {
		rr += r * r
		if c.Target != nil {
			rt += r * c.Target[i]
			tt += c.Target[i] * c.Target[i]
		}
	}
	l1 := 0.0
	for _, v := range s.y {
		l1 += math.Abs(v)
	}
	// primal W·½‖r‖² + λ‖y‖₁; dual D(θ) with u = α·r (θ = −W·u):
	// D = W·(½‖t‖² − ½‖t + u‖²) = −W·(⟨t, u⟩ + ½‖u‖²)
	primal := 0.5*c.W*rr + c.L1*l1
	dual := -c.W * (alpha*rt + 0.5*alpha*alpha*rr)
	gap := primal - dual
	if !(gap >= 0) {
		return
	}
	rad := math.Sqrt(2 * gap / c.W)
	for j, g := range s.grad {
		if s.out[j] || s.y[j] != 0 {
			continue
		}
		// m_jᵀθ = −W·α·m_jᵀr = −α·g_j
		if alpha*math.Abs(g)+math.Sqrt(c.W*s.h[j])*rad < c.L1*(1-1e-9) {
			s.out[j] = true
		}
	}
}
