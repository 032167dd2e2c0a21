package toy

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

// Size limits of the generated least-squares problems (building one costs
// O(n·p² + p³)); the user's data may have up to MaxDataP coordinates and
// MaxDataSamples samples, and as many entries as the memory budget of the
// server allows (16 bytes per entry: A is kept by rows and by columns).
const (
	MaxP           = 2000
	MaxSamples     = 10000
	MaxDataP       = 100000
	MaxDataSamples = 10000000
	// MaxFastEntries bounds n·p of the instances of NewL1BallFast (16
	// bytes an entry: 1.6 GB at the bound).
	MaxFastEntries = 100_000_000
)

// lsq is the least-squares part shared by Simplex, L1Ball and Box:
// F(x) = (1/n) Σ_i ½(a_iᵀx − y_i)², with no linear term.
type lsq struct {
	n, p int
	rows []float64 // A, n×p, row-major
	cols []float64 // A again, column-major (for z += c·A v)
	y    []float64
	lip  float64 // λ_max(AᵀA)/n, with a relative safety margin
	// lazy, when set, estimates lip on first use instead (the instances of
	// NewL1BallFast, too large for an eigendecomposition).
	lazy  *lazyLip
	xstar []float64
	fstar float64
}

func (d *lsq) row(i int) []float64 { return d.rows[i*d.p : (i+1)*d.p] }

func (d *lsq) col(j int) []float64 { return d.cols[j*d.n : (j+1)*d.n] }

// Dim is p.
func (d *lsq) Dim() int { return d.p }

// Samples is n.
func (d *lsq) Samples() int { return d.n }

// Blocks is the single block [0, p).
func (d *lsq) Blocks() []solver.Block { return []solver.Block{{Offset: 0, Size: d.p}} }

// Objective is (1/n) Σ_i ½(a_iᵀx − y_i)², computed from scratch.
func (d *lsq) Objective(x []float64) float64 {
	s := 0.0
	for i := 0; i < d.n; i++ {
		r := dot(d.row(i), x) - d.y[i]
		s += r * r
	}
	return s / (2 * float64(d.n))
}

// LipschitzBound is λ_max(AᵀA)/n (Euclidean Lipschitz constant of ∇F):
// from an eigendecomposition for the generated instances of NewSimplex,
// NewL1Ball and NewBox, a power-iteration estimate otherwise (see
// powerLambda), made on first use for NewL1BallFast's.
func (d *lsq) LipschitzBound() float64 {
	if d.lazy != nil {
		d.lazy.once.Do(func() {
			lam, _ := powerLambda(context.Background(), d) // no context: it cannot fail
			d.lazy.lip = lam / float64(d.n)
		})
		return d.lazy.lip
	}
	return d.lip
}

// SmoothLipschitz is the same bound, for the proximal view.
func (d *lsq) SmoothLipschitz() float64 { return d.LipschitzBound() }

// lazyLip is a Lipschitz estimate made once, on first use.
type lazyLip struct {
	once sync.Once
	lip  float64
}

// ProxDim is p: the proximal view uses the same coordinates.
func (d *lsq) ProxDim() int { return d.p }

// Smooth returns F(y) and writes the exact gradient into grad.
func (d *lsq) Smooth(y, grad []float64) float64 {
	clear(grad)
	s := 0.0
	for i := 0; i < d.n; i++ {
		a := d.row(i)
		r := dot(a, y) - d.y[i]
		s += r * r
		axpy(grad, r, a)
	}
	inv := 1 / float64(d.n)
	for j := range grad {
		grad[j] *= inv
	}
	return s * inv / 2
}

// Lift copies y into x: the proximal and P1 coordinates coincide.
func (d *lsq) Lift(x, y []float64) { copy(x, y) }

// FStar is the exact optimal value (known by construction; NaN for the
// user's data, where it is not known).
func (d *lsq) FStar() float64 {
	if d.xstar == nil {
		return math.NaN()
	}
	return d.fstar
}

// KnownOptimum reports whether FStar and XStar are known (generated data).
func (d *lsq) KnownOptimum() bool { return d.xstar != nil }

// XStar returns a copy of the exact minimiser (known by construction; nil
// for the user's data).
func (d *lsq) XStar() []float64 { return append([]float64(nil), d.xstar...) }

// Extra reports the distance of x to the exact minimiser (nothing for the
// user's data).
func (d *lsq) Extra(x []float64) map[string]float64 {
	if d.xstar == nil {
		return nil
	}
	s := 0.0
	for j, xj := range x {
		s += (xj - d.xstar[j]) * (xj - d.xstar[j])
	}
	return map[string]float64{"dist_xstar": math.Sqrt(s)}
}

// NewModel returns a model maintaining z = A x.
func (d *lsq) NewModel(x []float64) solver.Model {
	m := &lsqModel{d: d, z: make([]float64, d.n), r: make([]float64, d.n), w: make([]float64, d.n), v: make([]float64, d.p)}
	m.Reset(x)
	return m
}

// lsqModel maintains z = A x incrementally, so that a full-batch iteration
// reads A once: the gradient Aᵀ(z − y) is one pass over A's rows, the line
// search and the updates of z read only the columns of the step's one or
// two vertices (sparse vertices: simplex, l1 ball) and vectors of length n.
// A dense vertex (a corner of the box) costs one more pass per vertex.
type lsqModel struct {
	d       *lsq
	z       []float64
	r, w, v []float64 // scratch: residual z − y, A d, a dense vertex
}

// rowsMat is A as a gonum matrix (row-major, n×p).
func (d *lsq) rowsMat() blas64.General {
	return blas64.General{Rows: d.n, Cols: d.p, Stride: d.p, Data: d.rows}
}

func (m *lsqModel) Reset(x []float64) {
	blas64.Gemv(blas.NoTrans, 1, m.d.rowsMat(), vec(x), 0, vec(m.z))
}

func (m *lsqModel) Scale(_ int, s float64) { floats.Scale(s, m.z) }

// Add updates z += c·A v: in O(n·nnz(v)) for a sparse vertex.
func (m *lsqModel) Add(_ int, c float64, v solver.Vertex) { m.addAv(m.z, c, v) }

// Gradient is the mean of (z_i − y_i)·a_i over the batch (all samples when
// batch is nil: Aᵀ(z − y)/n, one pass over A); an empty non-nil batch gives
// the zero vector. A batch reads only its own rows.
func (m *lsqModel) Gradient(_ int, g []float64, _ []float64, batch []int) {
	if batch == nil {
		floats.SubTo(m.r, m.z, m.d.y)
		blas64.Gemv(blas.Trans, 1/float64(m.d.n), m.d.rowsMat(), vec(m.r), 0, vec(g))
		return
	}
	clear(g)
	if len(batch) == 0 {
		return
	}
	for _, i := range batch {
		floats.AddScaled(g, m.z[i]-m.d.y[i], m.d.row(i))
	}
	floats.Scale(1/float64(len(batch)), g)
}

// Line returns the exact quadratic restriction of the batch objective along
// d: with r = z − y and w = A d on the batch, φ(γ) − φ(0) = γ·mean(r·w) +
// ½γ²·mean(w²), and the curvature is mean(w²). A d = XCoef·z + Σ Coef·A v
// comes from the columns of the vertices (or, for a dense vertex over the
// full batch, one product with A).
func (m *lsqModel) Line(_ int, _ []float64, d solver.Direction, batch []int) solver.Line {
	var rw, ww float64
	if batch == nil {
		w, terms := m.w, d.Terms
		if t := terms; d.XCoef == 0 && len(t) > 0 && len(t[0].V.Idx) == 1 && 8 <= m.d.p {
			// A pairwise direction: w starts as the first vertex's column.
			floats.ScaleTo(w, t[0].Coef*t[0].V.Val[0], m.d.col(t[0].V.Idx[0]))
			terms = t[1:]
		} else {
			floats.ScaleTo(w, d.XCoef, m.z)
		}
		for _, t := range terms {
			m.addAv(w, t.Coef, t.V)
		}
		for i, wi := range w {
			rw += (m.z[i] - m.d.y[i]) * wi
			ww += wi * wi
		}
		n := float64(m.d.n)
		return quadLine{slope: rw / n, curv: ww / n}
	}
	for _, i := range batch {
		w := d.XCoef * m.z[i]
		for _, t := range d.Terms {
			for k, j := range t.V.Idx {
				w += t.Coef * t.V.Val[k] * m.d.cols[j*m.d.n+i]
			}
		}
		rw += (m.z[i] - m.d.y[i]) * w
		ww += w * w
	}
	if cnt := len(batch); cnt > 0 {
		rw /= float64(cnt)
		ww /= float64(cnt)
	}
	return quadLine{slope: rw, curv: ww}
}

// addAv adds c·A v to w: column by column for a sparse vertex, one product
// with A for a dense one (more than an eighth of p nonzero).
func (m *lsqModel) addAv(w []float64, c float64, v solver.Vertex) {
	if 8*len(v.Idx) <= m.d.p {
		for k, j := range v.Idx {
			floats.AddScaled(w, c*v.Val[k], m.d.col(j))
		}
		return
	}
	clear(m.v)
	v.AddTo(m.v, 1)
	blas64.Gemv(blas.NoTrans, c, m.d.rowsMat(), vec(m.v), 1, vec(w))
}

// vec is x as a gonum vector.
func vec(x []float64) blas64.Vector { return blas64.Vector{N: len(x), Inc: 1, Data: x} }

// quadLine is φ(γ) − φ(0) = slope·γ + ½·curv·γ².
type quadLine struct{ slope, curv float64 }

func (l quadLine) Curvature(float64) float64 { return l.curv }
func (l quadLine) Delta(g float64) float64   { return g*l.slope + 0.5*g*g*l.curv }

// each calls f for every sample index of batch, or for 0..n−1 when batch is nil.
func each(n int, batch []int, f func(int)) {
	if batch == nil {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	for _, i := range batch {
		f(i)
	}
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i, ai := range a {
		s += ai * b[i]
	}
	return s
}

func axpy(dst []float64, c float64, x []float64) {
	for i, xi := range x {
		dst[i] += c * xi
	}
}

// newRand returns the deterministic generator of an instance seed.
func newRand(seed int64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))
}

// checkFastSizes validates p and n of NewL1BallFast's instances.
func checkFastSizes(p, n int) error {
	if p < 2 || p > MaxFastEntries {
		return spec.Errorf("p", "must be a whole number between 2 and %d, got %d", MaxFastEntries, p)
	}
	if n < p || n > MaxFastEntries {
		return spec.Errorf("samples", "must be a whole number between p = %d (so that the optimum is unique) and %d, got %d", p, MaxFastEntries, n)
	}
	if n*p > MaxFastEntries {
		return spec.Errorf("samples", "× p must be at most %d entries (16 bytes each), got %d × %d", MaxFastEntries, n, p)
	}
	return nil
}

// checkSizes validates p and n of a least-squares problem.
func checkSizes(p, n int) error {
	if p < 2 || p > MaxP {
		return spec.Errorf("p", "must be a whole number between 2 and %d, got %d", MaxP, p)
	}
	if n < 1 || n > MaxSamples {
		return spec.Errorf("samples", "must be a whole number between 1 and %d, got %d", MaxSamples, n)
	}
	if n < p {
		return spec.Errorf("samples", "must be at least p = %d so that the objective is strongly convex and its optimum unique, got %d", p, n)
	}
	return nil
}

// newLSQ generates a least-squares instance whose minimiser over the
// polytope is xstar: A has standard normal entries and y = A·xstar − e with
// e = n·A(AᵀA)⁻¹g + η⊥, η⊥ Gaussian noise orthogonal to the range of A, so
// that ∇F(xstar) = Aᵀe/n = g exactly. The caller chooses g in the interior of
// the normal cone's negative at xstar (strict complementarity), which makes
// xstar the unique minimiser (AᵀA is positive definite as n ≥ p).
func newLSQ(ctx context.Context, rng *rand.Rand, n int, xstar, g []float64) (*lsq, error) {
	p := len(xstar)
	d := &lsq{n: n, p: p, rows: make([]float64, n*p), y: make([]float64, n), xstar: xstar}
	for i := range d.rows {
		d.rows[i] = rng.NormFloat64()
	}
	d.cols = make([]float64, n*p)
	for i := 0; i < n; i++ {
		for j := 0; j < p; j++ {
			d.cols[j*n+i] = d.rows[i*p+j]
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	A := mat.NewDense(n, p, d.rows)
	var G mat.SymDense
	G.SymOuterK(1, A.T())
	var ch mat.Cholesky
	if !ch.Factorize(&G) {
		return nil, fmt.Errorf("the generated data matrix is rank deficient; try another seed or more samples")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// e = A·(G⁻¹(n·g − Aᵀη)) + η.
	eta := make([]float64, n)
	for i := range eta {
		eta[i] = 0.5 * rng.NormFloat64()
	}
	rhs := mat.NewVecDense(p, nil)
	rhs.MulVec(A.T(), mat.NewVecDense(n, eta))
	for j := 0; j < p; j++ {
		rhs.SetVec(j, float64(n)*g[j]-rhs.AtVec(j))
	}
	var u mat.VecDense
	if err := ch.SolveVecTo(&u, rhs); err != nil {
		return nil, fmt.Errorf("solving the normal equations of the generated data: %w", err)
	}
	var e mat.VecDense
	e.MulVec(A, &u)
	for i := 0; i < n; i++ {
		d.y[i] = dot(d.row(i), xstar) - (e.AtVec(i) + eta[i])
	}
	var es mat.EigenSym
	if !es.Factorize(&G, false) {
		return nil, fmt.Errorf("the eigenvalue decomposition of AᵀA did not converge")
	}
	lmax := 0.0
	for _, l := range es.Values(nil) {
		lmax = math.Max(lmax, l)
	}
	d.lip = lmax / float64(n) * (1 + 1e-10)
	d.fstar = d.Objective(xstar)
	return d, nil
}

// newLSQFast generates, in O(n·p) time, a least-squares instance whose
// minimiser over the polytope is xstar, like newLSQ but without solving
// the normal equations: with G standard normal (n×p) and η Gaussian noise
// (n), A = G + η·cᵀ/‖η‖² with c = n·g − Gᵀη, so that Aᵀη = n·g, and
// y = A·xstar − η. Then ∇F(xstar) = Aᵀ(A·xstar − y)/n = g exactly, which
// with the caller's g (−g in the interior of the normal cone's face at
// xstar) is the KKT certificate that xstar minimises F over the polytope:
// F* = F(xstar). A has rank p when n ≥ p (almost surely), so xstar is the
// unique minimiser. The Lipschitz constant is estimated on first use.
func newLSQFast(ctx context.Context, rng *rand.Rand, n int, xstar, g []float64) (*lsq, error) {
	p := len(xstar)
	d := &lsq{n: n, p: p, rows: make([]float64, n*p), y: make([]float64, n), xstar: xstar, lazy: &lazyLip{}}
	for i := range d.rows {
		if i%(1<<20) == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		d.rows[i] = rng.NormFloat64()
	}
	eta := make([]float64, n)
	for i := range eta {
		eta[i] = 0.5 * rng.NormFloat64()
	}
	A := d.rowsMat()
	c := make([]float64, p)
	blas64.Gemv(blas.Trans, -1, A, vec(eta), 0, vec(c)) // c = −Gᵀη
	floats.AddScaled(c, float64(n), g)                  // c += n·g
	ee := floats.Dot(eta, eta)
	if !(ee > 0) {
		return nil, fmt.Errorf("the generated noise is zero; try another seed")
	}
	blas64.Ger(1/ee, vec(eta), vec(c), A) // A = G + η cᵀ/‖η‖²
	blas64.Gemv(blas.NoTrans, 1, A, vec(xstar), 0, vec(d.y))
	floats.Sub(d.y, eta) // y = A·xstar − η
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d.cols = transpose(d.rows, n, p)
	d.fstar = d.Objective(xstar)
	return d, nil
}

// transpose returns the p×n transpose of the n×p row-major matrix a,
// by tiles that fit in cache.
func transpose(a []float64, n, p int) []float64 {
	const tile = 64
	t := make([]float64, n*p)
	for i0 := 0; i0 < n; i0 += tile {
		i1 := min(i0+tile, n)
		for j0 := 0; j0 < p; j0 += tile {
			j1 := min(j0+tile, p)
			for i := i0; i < i1; i++ {
				row := a[i*p : (i+1)*p]
				for j := j0; j < j1; j++ {
					t[j*n+i] = row[j]
				}
			}
		}
	}
	return t
}

// newLSQData builds the least-squares part from the user's data: A is
// n×p row-major (rows), y has n entries. The optimum is not known. The
// Lipschitz constant λ_max(AᵀA)/n is estimated by power iteration (see
// powerLambda).
func newLSQData(ctx context.Context, rows []float64, n, p int, y []float64) (*lsq, error) {
	if p < 1 || p > MaxDataP {
		return nil, errField("x", "must have between 1 and %d columns (coordinates), got %d", MaxDataP, p)
	}
	if n < 1 || n > MaxDataSamples {
		return nil, errField("x", "must have between 1 and %d rows (samples), got %d", MaxDataSamples, n)
	}
	if len(rows) != n*p {
		return nil, fmt.Errorf("toy: %d entries for a %d×%d matrix", len(rows), n, p)
	}
	if len(y) != n {
		return nil, errField("y", "has %d responses, but X has %d rows", len(y), n)
	}
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, errField("y", "response %d is not a finite number: %v", i+1, v)
		}
	}
	d := &lsq{n: n, p: p, rows: rows, y: y, cols: make([]float64, n*p)}
	for i := 0; i < n; i++ {
		for j := 0; j < p; j++ {
			d.cols[j*n+i] = rows[i*p+j]
		}
	}
	lam, err := powerLambda(ctx, d)
	if err != nil {
		return nil, err
	}
	d.lip = lam / float64(n)
	return d, nil
}

// powerLambda estimates λ_max(AᵀA) by power iteration from the all-ones
// vector (a fixed start: the same data give the same estimate), stopping
// when the estimate changes by less than 1e-10 relative or after 1000
// steps, and returns it with a 1% margin: an estimate, not a certified
// bound, as solver.LipschitzBounder allows. A zero matrix gives 0.
func powerLambda(ctx context.Context, d *lsq) (float64, error) {
	v := make([]float64, d.p)
	for j := range v {
		v[j] = 1 / math.Sqrt(float64(d.p))
	}
	av := make([]float64, d.n)
	A := d.rowsMat()
	lam := 0.0
	for it := 0; it < 1000; it++ {
		if it%16 == 0 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		blas64.Gemv(blas.NoTrans, 1, A, vec(v), 0, vec(av))
		blas64.Gemv(blas.Trans, 1, A, vec(av), 0, vec(v))
		nv := floats.Norm(v, 2)
		if nv == 0 {
			return 0, nil
		}
		floats.Scale(1/nv, v)
		done := math.Abs(nv-lam) <= 1e-10*nv
		lam = nv
		if done {
			break
		}
	}
	return lam * 1.01, nil
}

// Data returns the data of a least-squares problem (Simplex, L1Ball, Box):
// A row-major (n×p) and y, shared, not copied; nil for other problems.
func Data(pr solver.Problem) (rows, y []float64) {
	var d *lsq
	switch q := pr.(type) {
	case *Simplex:
		d = &q.lsq
	case *L1Ball:
		d = &q.lsq
	case *Box:
		d = &q.lsq
	default:
		return nil, nil
	}
	return d.rows, d.y
}
