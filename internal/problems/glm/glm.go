// Package glm implements the l1-penalised generalised linear models of the
// paper's Remark 1 (LASSO, logistic and Poisson regression) in the P1 form
// that the Frank-Wolfe methods need, and in β-space for the proximal
// baselines.
//
// The penalised problem min_β Σ_i f_i(x_iᵀβ) + λ‖β‖₁ is rewritten with the
// epigraph of the l1 norm as
//
//	min Σ_i f_i(x_iᵀβ) + λ·t  over  P = {(β, t) : ‖β‖₁ ≤ t ≤ T},
//
// a single polytope whose vertices are 0 and T·(±e_j, 1). Any T ≥ ‖β*‖₁
// leaves the solution unchanged; the default is the safe bound
// T = (F(0) − Σ_i inf_z f_i(z))/λ, which holds because
// λ‖β*‖₁ ≤ F(β*) − Σ_i inf f_i ≤ F(0) − Σ_i inf f_i.
// The samples of P1 are the rows of X, with the plain sum (not the mean).
package glm

import (
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/fwlab/fwlab/internal/solver"
)

// Config describes one model instance.
type Config struct {
	Loss   Loss
	X      *mat.Dense // n×p design, rows are samples
	Y      []float64  // n responses
	Lambda float64    // > 0
	// T bounds t (and so ‖β‖₁). 0 selects the safe bound of the package
	// comment; a smaller positive value is the caller's claim that
	// ‖β*‖₁ ≤ T (otherwise the solution is that of the constrained problem).
	T float64
	// YSource names the responses in errors (a file name), "" for "y".
	YSource string
	// KeepSlack turns off the slack collapse (see Reshape) that methods
	// with away or pairwise steps apply after each step.
	KeepSlack bool
}

// Problem is an l1-penalised GLM in P1 form. It implements solver.Problem,
// solver.LipschitzBounder, solver.Evaluator, solver.ProxProblem and
// solver.Reshaper, and is immutable after New (safe for concurrent runs).
type Problem struct {
	loss      Loss
	n, p      int
	x         []float64 // row-major n×p
	xc        []float64 // column-major: column j is xc[j*n:(j+1)*n]
	y         []float64
	lambda, t float64
	safeT     float64
	keepSlack bool
	xmax      float64 // max |x_ij|

	lipOnce sync.Once
	sqNorm  float64 // ‖X‖₂² (an estimate, see SqSpectralBound)

	verts []atomic.Pointer[solver.Vertex] // "+j" at 2j, "-j" at 2j+1, built on first use
}

// New validates the configuration and builds the problem. Responses are
// checked per loss: logistic labels must be −1/+1 or 0/1 (0 is mapped to
// −1), Poisson responses non-negative; every error names the source and the
// 1-based row.
func New(c Config) (*Problem, error) {
	if c.X == nil {
		return nil, fmt.Errorf("glm: no design matrix")
	}
	n, p := c.X.Dims()
	src := c.YSource
	if src == "" {
		src = "y"
	}
	if len(c.Y) != n {
		return nil, fmt.Errorf("%s: has %d responses, but X has %d rows", src, len(c.Y), n)
	}
	if !(c.Lambda > 0) || math.IsInf(c.Lambda, 0) {
		return nil, fmt.Errorf("lambda: must be a finite number > 0, got %v", c.Lambda)
	}
	if c.T < 0 || math.IsNaN(c.T) || math.IsInf(c.T, 0) {
		return nil, fmt.Errorf("T: must be a finite number ≥ 0 (0: the safe bound), got %v", c.T)
	}
	pr := &Problem{loss: c.Loss, n: n, p: p, lambda: c.Lambda, keepSlack: c.KeepSlack, verts: make([]atomic.Pointer[solver.Vertex], 2*p)}
	pr.y = make([]float64, n)
	for i, yi := range c.Y {
		if math.IsNaN(yi) || math.IsInf(yi, 0) {
			return nil, fmt.Errorf("%s: row %d: response %v is not a finite number", src, i+1, yi)
		}
		switch c.Loss {
		case Logistic:
			switch yi {
			case 1, -1:
			case 0:
				yi = -1
			default:
				return nil, fmt.Errorf("%s: row %d: label %v must be -1 or +1 (or 0/1, with 0 read as -1)", src, i+1, yi)
			}
		case Poisson:
			if yi < 0 {
				return nil, fmt.Errorf("%s: row %d: count %v must be ≥ 0", src, i+1, yi)
			}
		case Squared:
		default:
			return nil, fmt.Errorf("glm: unknown loss %d", int(c.Loss))
		}
		pr.y[i] = yi
	}
	pr.x = make([]float64, n*p)
	pr.xc = make([]float64, n*p)
	for i := 0; i < n; i++ {
		for j := 0; j < p; j++ {
			v := c.X.At(i, j)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("X: row %d column %d: %v is not a finite number", i+1, j+1, v)
			}
			pr.x[i*p+j] = v
			pr.xc[j*n+i] = v
		}
	}
	f0, inf := 0.0, 0.0
	for i := 0; i < n; i++ {
		f0 += c.Loss.value(pr.y[i], 0)
		inf += c.Loss.infimum(pr.y[i])
	}
	pr.safeT = (f0 - inf) / c.Lambda
	if !(pr.safeT > 0) {
		// F(0) = Σ inf f_i: β* = 0 and any T > 0 is valid.
		pr.safeT = 1
	}
	pr.t = c.T
	if pr.t == 0 {
		pr.t = pr.safeT
	}
	for _, v := range pr.x {
		pr.xmax = math.Max(pr.xmax, math.Abs(v))
	}
	if err := pr.checkT(); err != nil {
		return nil, err
	}
	return pr, nil
}

// WithLambda returns a problem on the same data (shared, not copied) with
// another λ and T (0: the safe bound for the new λ), and the same KeepSlack.
func (pr *Problem) WithLambda(lambda, t float64) (*Problem, error) {
	if !(lambda > 0) || math.IsInf(lambda, 0) {
		return nil, fmt.Errorf("lambda: must be a finite number > 0, got %v", lambda)
	}
	if t < 0 || math.IsNaN(t) || math.IsInf(t, 0) {
		return nil, fmt.Errorf("T: must be a finite number ≥ 0 (0: the safe bound), got %v", t)
	}
	q := &Problem{loss: pr.loss, n: pr.n, p: pr.p, x: pr.x, xc: pr.xc, y: pr.y, lambda: lambda, xmax: pr.xmax, keepSlack: pr.keepSlack,
		verts: make([]atomic.Pointer[solver.Vertex], 2*pr.p)} // vertices scale with T: not shared
	q.safeT = pr.safeT * pr.lambda / lambda
	q.t = t
	if q.t == 0 {
		q.t = q.safeT
	}
	if err := q.checkT(); err != nil {
		return nil, err
	}
	return q, nil
}

// checkT rejects a bound T for which the oracle's vertices T·(±e_j, 1), or
// their images X·T·e_j, are not finite: it happens when λ is so small that
// the safe bound (F(0) − Σ inf f_i)/λ overflows.
func (pr *Problem) checkT() error {
	if math.IsInf(pr.t, 0) || math.IsInf(pr.t*pr.xmax, 0) || math.IsNaN(pr.t) {
		return fmt.Errorf("lambda: %v is too small for this data: the bound T = (F(0) − Σ inf f_i)/λ is not a finite number; use a larger λ or give T", pr.lambda)
	}
	return nil
}

// N is the number of samples (rows of X), P the number of features.
func (pr *Problem) N() int { return pr.n }

// P is the number of features.
func (pr *Problem) P() int { return pr.p }

// T is the bound on t in use.
func (pr *Problem) T() float64 { return pr.t }

// SafeT is the default bound (F(0) − Σ inf f_i)/λ.
func (pr *Problem) SafeT() float64 { return pr.safeT }

// Lambda is the penalty weight.
func (pr *Problem) Lambda() float64 { return pr.lambda }

// Loss is the model's loss.
func (pr *Problem) Loss() Loss { return pr.loss }

// Y returns the responses as used (logistic 0 labels mapped to −1).
func (pr *Problem) Y() []float64 { return append([]float64(nil), pr.y...) }

// LambdaMax is ‖Xᵀ f'(0)‖_∞: for λ ≥ LambdaMax the solution is β* = 0.
func (pr *Problem) LambdaMax() float64 {
	r := make([]float64, pr.n)
	for i := range r {
		r[i] = pr.loss.deriv(pr.y[i], 0)
	}
	g := make([]float64, pr.p)
	pr.mulT(g, r)
	m := 0.0
	for _, v := range g {
		m = math.Max(m, math.Abs(v))
	}
	return m
}

func (pr *Problem) dense() blas64.General {
	return blas64.General{Rows: pr.n, Cols: pr.p, Stride: pr.p, Data: pr.x}
}

// mul writes z = Xβ.
func (pr *Problem) mul(z, beta []float64) {
	if pr.n == 0 || pr.p == 0 {
		clear(z)
		return
	}
	blas64.Gemv(blas.NoTrans, 1, pr.dense(), blas64.Vector{N: pr.p, Data: beta, Inc: 1}, 0, blas64.Vector{N: pr.n, Data: z, Inc: 1})
}

// mulT writes g = Xᵀr.
func (pr *Problem) mulT(g, r []float64) {
	if pr.n == 0 || pr.p == 0 {
		clear(g)
		return
	}
	blas64.Gemv(blas.Trans, 1, pr.dense(), blas64.Vector{N: pr.n, Data: r, Inc: 1}, 0, blas64.Vector{N: pr.p, Data: g, Inc: 1})
}

// Dim is p + 1: β and the epigraph variable t.
func (pr *Problem) Dim() int { return pr.p + 1 }

// Samples is n.
func (pr *Problem) Samples() int { return pr.n }

// Blocks is a single block.
func (pr *Problem) Blocks() []solver.Block { return []solver.Block{{Offset: 0, Size: pr.p + 1}} }

func (pr *Problem) zeroVertex() solver.Vertex { return solver.Vertex{Key: "0"} }

// vertex returns T·(s·e_j, 1), key "+j" or "-j" (j 0-based).
// Vertices are built once, on first use, and shared by every run (they are
// immutable), so that the oracle does not allocate.
func (pr *Problem) vertex(j int, neg bool) solver.Vertex {
	i := 2 * j
	if neg {
		i++
	}
	if v := pr.verts[i].Load(); v != nil {
		return *v
	}
	s, key := pr.t, "+"
	if neg {
		s, key = -pr.t, "-"
	}
	v := &solver.Vertex{Key: key + strconv.Itoa(j), Idx: []int{j, pr.p}, Val: []float64{s, pr.t}}
	if !pr.verts[i].CompareAndSwap(nil, v) {
		v = pr.verts[i].Load()
	}
	return *v
}

// LMO minimises <g, v> over the vertices: T·(g_t − max_j |g_j|) against 0.
// Ties: the vertex 0 wins over a vertex of equal value, the smallest j wins
// among equal |g_j|, and "+j" is taken when g_j = 0.
func (pr *Problem) LMO(b int, g []float64) solver.Vertex {
	best, m := 0, math.Abs(g[0])
	for j := 1; j < pr.p; j++ {
		if a := math.Abs(g[j]); a > m {
			best, m = j, a
		}
	}
	if pr.p == 0 || pr.t*(g[pr.p]-m) >= 0 {
		return pr.zeroVertex()
	}
	return pr.vertex(best, g[best] > 0)
}

// Vertices enumerates every vertex in the order "0", "+0", "-0", "+1", …
// (for tests and small displays).
func (pr *Problem) Vertices() []solver.Vertex {
	out := []solver.Vertex{pr.zeroVertex()}
	for j := 0; j < pr.p; j++ {
		out = append(out, pr.vertex(j, false), pr.vertex(j, true))
	}
	return out
}

// Start is the vertex 0.
func (pr *Problem) Start(b int) solver.Vertex { return pr.zeroVertex() }

// Objective is the original penalised objective Σ f_i(x_iᵀβ) + λ‖β‖₁ at β =
// x[:p] (not the P1 value, which uses t ≥ ‖β‖₁).
func (pr *Problem) Objective(x []float64) float64 {
	beta := x[:pr.p]
	return pr.lossSum(beta) + pr.lambda*l1(beta)
}

// P1Value is the P1 objective Σ f_i(x_iᵀβ) + λ·t.
func (pr *Problem) P1Value(x []float64) float64 {
	return pr.lossSum(x[:pr.p]) + pr.lambda*x[pr.p]
}

func (pr *Problem) lossSum(beta []float64) float64 {
	z := make([]float64, pr.n)
	pr.mul(z, beta)
	s := 0.0
	for i, zi := range z {
		s += pr.loss.value(pr.y[i], zi)
	}
	return s
}

func l1(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += math.Abs(x)
	}
	return s
}

// LipschitzBound is an estimate of an upper bound on the Lipschitz constant of
// ∇F, not a certified one: ‖X‖₂² estimated by power iteration with a 5%
// margin (see SqSpectralBound) times sup f″. For Poisson f″ = e^z
// is unbounded, and the bound holds over the feasible set, where
// |x_iᵀβ| ≤ T·max|x_ij|: exp(T·max|x_ij|)·‖X‖₂², capped at the largest float.
func (pr *Problem) LipschitzBound() float64 {
	sq := pr.sqSpectral()
	if c := pr.loss.maxCurv(); c > 0 {
		return c * sq
	}
	mx := 0.0
	for _, v := range pr.x {
		mx = math.Max(mx, math.Abs(v))
	}
	b := math.Exp(pr.t*mx) * sq
	if math.IsInf(b, 0) || math.IsNaN(b) {
		return math.MaxFloat64
	}
	return b
}

func (pr *Problem) sqSpectral() float64 {
	pr.lipOnce.Do(func() {
		pr.sqNorm = SqSpectralBound(mat.NewDense(max(pr.n, 1), max(pr.p, 1), padded(pr.x, pr.n, pr.p)))
	})
	return pr.sqNorm
}

func padded(x []float64, n, p int) []float64 {
	if n > 0 && p > 0 {
		return x
	}
	return make([]float64, max(n, 1)*max(p, 1))
}

// Extra reports the support size of β ("nnz": entries with |β_j| above
// 1e-10·‖β‖∞, so that the round-off residue an away step leaves in a dropped
// coordinate is not counted) and the slack t − ‖β‖₁ of the epigraph
// ("t_slack") on evaluation iterations.
func (pr *Problem) Extra(x []float64) map[string]float64 {
	beta := x[:pr.p]
	mx := 0.0
	for _, v := range beta {
		mx = math.Max(mx, math.Abs(v))
	}
	nnz := 0
	for _, v := range beta {
		if math.Abs(v) > 1e-10*mx {
			nnz++
		}
	}
	return map[string]float64{"nnz": float64(nnz), "t_slack": x[pr.p] - l1(beta)}
}

// EvalCost is what one evaluation costs in passes, for the default cadence
// (solver.EvalCoster): the objective (Xβ from scratch and the losses), the
// gradient and the metrics; measured at about three passes of work.
func (pr *Problem) EvalCost() float64 { return 3 }

// NewModel returns a model positioned at x.
func (pr *Problem) NewModel(x []float64) solver.Model {
	m := &model{pr: pr, z: make([]float64, pr.n), r: make([]float64, pr.n)}
	m.Reset(x)
	return m
}

// model keeps z = Xβ for the current iterate.
type model struct {
	pr *Problem
	z  []float64
	r  []float64 // scratch: f'(z)
	ln line      // the last Line, reused (solver.Model allows it)
}

func (m *model) Reset(x []float64) { m.pr.mul(m.z, x[:m.pr.p]) }

func (m *model) Scale(b int, s float64) {
	for i := range m.z {
		m.z[i] *= s
	}
}

// Add updates z += c·X·v_β: one column of X per nonzero β-coordinate of v.
func (m *model) Add(b int, c float64, v solver.Vertex) {
	n := m.pr.n
	for k, j := range v.Idx {
		if j >= m.pr.p {
			continue
		}
		a := c * v.Val[k]
		col := m.pr.xc[j*n : (j+1)*n]
		for i, xv := range col {
			m.z[i] += a * xv
		}
	}
}

// Gradient writes the batch estimate (n/|J|)·X_Jᵀ f'(z_J) and λ for t.
func (m *model) Gradient(b int, g []float64, x []float64, batch []int) {
	pr := m.pr
	p := pr.p
	if batch == nil {
		for i, zi := range m.z {
			m.r[i] = pr.loss.deriv(pr.y[i], zi)
		}
		pr.mulT(g[:p], m.r)
	} else {
		clear(g[:p])
		scale := float64(pr.n) / float64(len(batch))
		for _, i := range batch {
			a := scale * pr.loss.deriv(pr.y[i], m.z[i])
			row := pr.x[i*p : (i+1)*p]
			for j, xv := range row {
				g[j] += a * xv
			}
		}
	}
	g[p] = pr.lambda
}

// Line restricts F to x + γd on the batch: it stores z_J and w_J = (X d_β)_J.
func (m *model) Line(b int, x []float64, d solver.Direction, batch []int) solver.Line {
	pr := m.pr
	p := pr.p
	rows := batch
	scale := 1.0
	if batch == nil {
		rows = nil
	} else if len(batch) > 0 {
		scale = float64(pr.n) / float64(len(batch))
	}
	cnt := pr.n
	if rows != nil {
		cnt = len(rows)
	}
	l := &m.ln
	l.loss, l.scale = pr.loss, scale
	l.z, l.w, l.y = grow(l.z, cnt, pr.n), grow(l.w, cnt, pr.n), grow(l.y, cnt, pr.n)
	dt := d.XCoef * x[p]
	for _, tm := range d.Terms {
		for k, j := range tm.V.Idx {
			if j == p {
				dt += tm.Coef * tm.V.Val[k]
			}
		}
	}
	l.lin = pr.lambda * dt
	for k := 0; k < cnt; k++ {
		i := k
		if rows != nil {
			i = rows[k]
		}
		l.z[k] = m.z[i]
		l.y[k] = pr.y[i]
		w := d.XCoef * m.z[i]
		for _, tm := range d.Terms {
			s := 0.0
			for kk, j := range tm.V.Idx {
				if j < p {
					s += tm.V.Val[kk] * pr.x[i*p+j]
				}
			}
			w += tm.Coef * s
		}
		l.w[k] = w
	}
	return l
}

// grow returns a slice of length n, reusing b's storage when it is large
// enough, else allocating room for most (batches grow up to the sample
// count: one allocation, not one per size).
func grow(b []float64, n, most int) []float64 {
	if cap(b) < n {
		return make([]float64, n, max(n, most))
	}
	return b[:n]
}

type line struct {
	loss    Loss
	scale   float64
	z, w, y []float64
	lin     float64 // λ·d_t
}

// Curvature: Σ w² (squared), ¼Σ w² (logistic), and for Poisson the bound
// Σ exp(max(z, z + gmax·w))·w² of f″ over the whole segment; all scaled to
// the full sum. It may be +Inf (Poisson overflow), which tells the caller to
// shorten the segment.
func (l *line) Curvature(gmax float64) float64 {
	s := 0.0
	switch l.loss {
	case Squared, Logistic:
		for _, w := range l.w {
			s += w * w
		}
		s *= l.loss.maxCurv()
	default:
		for k, w := range l.w {
			if w == 0 {
				continue
			}
			s += math.Exp(math.Max(l.z[k], l.z[k]+gmax*w)) * w * w
		}
	}
	return l.scale * s
}

// Delta is φ(γ) − φ(0) on the batch, scaled to the full sum.
func (l *line) Delta(gamma float64) float64 {
	s := 0.0
	for k, w := range l.w {
		if w == 0 {
			continue
		}
		s += l.loss.delta(l.y[k], l.z[k], gamma*w)
	}
	return l.scale*s + gamma*l.lin
}

// Magnitude is Σ f(z) over the batch, scaled to the full sum: φ(0)'s loss
// part, the scale of Delta's rounding (a logistic Delta is a difference of
// softplus values).
func (l *line) Magnitude() float64 {
	s := 0.0
	for k, z := range l.z {
		s += math.Abs(l.loss.value(l.y[k], z))
	}
	return l.scale * s
}

var (
	_ solver.LineMagnitude    = (*line)(nil)
	_ solver.Problem          = (*Problem)(nil)
	_ solver.LipschitzBounder = (*Problem)(nil)
	_ solver.Evaluator        = (*Problem)(nil)
	_ solver.ProxProblem      = (*Problem)(nil)
)
