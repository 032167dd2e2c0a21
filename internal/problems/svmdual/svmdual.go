// Package svmdual implements the dual of the l1-loss (hinge) support vector
// machine of the paper's Remark 1 (iv):
//
//	min_α ½‖Aα‖² − 1ᵀα  subject to 0 ≤ α_i ≤ C,
//
// with A = [y_1 z_1, …, y_l z_l] ∈ R^{d×l}. In P1 form x = α ∈ R^l, the
// samples are the d feature rows a_j of A (z = Aα, f_j(z_j) = ½z_j², plain
// sum), the linear term is b = −1 and the polytope is the box [0, C]^l, whose
// vertices are its corners (dense; the key is the 0/C pattern). The primal
// weight vector is w = Aα.
package svmdual

import (
	"fmt"
	"math"
	"strings"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/fwlab/fwlab/internal/problems/glm"
	"github.com/fwlab/fwlab/internal/solver"
)

// Problem is an SVM dual instance. It implements solver.Problem,
// solver.LipschitzBounder, solver.Evaluator and solver.ProxProblem and is
// immutable after New.
type Problem struct {
	l, d int
	c    float64
	a    []float64 // row-major d×l: row j is feature j over the examples
	ac   []float64 // column-major: column i (= y_i z_i) is ac[i*d:(i+1)*d]
	y    []float64

	lipOnce sync.Once
	sqNorm  float64
}

// New builds the dual from examples Z (l×d, one example per row), labels y
// (−1/+1, or 0/1 with 0 read as −1; anything else is an error naming ySource
// and the row) and C > 0.
func New(z *mat.Dense, y []float64, c float64, ySource string) (*Problem, error) {
	if z == nil {
		return nil, fmt.Errorf("svmdual: no examples")
	}
	l, d := z.Dims()
	if ySource == "" {
		ySource = "labels"
	}
	if len(y) != l {
		return nil, fmt.Errorf("%s: has %d labels, but there are %d examples", ySource, len(y), l)
	}
	if !(c > 0) || math.IsInf(c, 0) {
		return nil, fmt.Errorf("C: must be a finite number > 0, got %v", c)
	}
	pr := &Problem{l: l, d: d, c: c, a: make([]float64, d*l), ac: make([]float64, d*l), y: make([]float64, l)}
	for i := 0; i < l; i++ {
		yi := y[i]
		switch yi {
		case 1, -1:
		case 0:
			yi = -1
		default:
			return nil, fmt.Errorf("%s: row %d: label %v must be -1 or +1 (or 0/1, with 0 read as -1)", ySource, i+1, yi)
		}
		pr.y[i] = yi
		for j := 0; j < d; j++ {
			v := z.At(i, j)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("examples: row %d feature %d: %v is not a finite number", i+1, j+1, v)
			}
			pr.a[j*l+i] = yi * v
			pr.ac[i*d+j] = yi * v
		}
	}
	return pr, nil
}

// Examples is l, Features is d, C the box bound.
func (pr *Problem) Examples() int { return pr.l }

// Features is d.
func (pr *Problem) Features() int { return pr.d }

// C is the box bound.
func (pr *Problem) C() float64 { return pr.c }

func (pr *Problem) gen() blas64.General {
	return blas64.General{Rows: pr.d, Cols: pr.l, Stride: pr.l, Data: pr.a}
}

// W writes the primal weights w = Aα into w (length d).
func (pr *Problem) W(w, alpha []float64) {
	if pr.l == 0 || pr.d == 0 {
		clear(w)
		return
	}
	blas64.Gemv(blas.NoTrans, 1, pr.gen(), blas64.Vector{N: pr.l, Data: alpha, Inc: 1}, 0, blas64.Vector{N: pr.d, Data: w, Inc: 1})
}

func (pr *Problem) mulT(g, w []float64) {
	if pr.l == 0 || pr.d == 0 {
		clear(g)
		return
	}
	blas64.Gemv(blas.Trans, 1, pr.gen(), blas64.Vector{N: pr.d, Data: w, Inc: 1}, 0, blas64.Vector{N: pr.l, Data: g, Inc: 1})
}

// Dim is l.
func (pr *Problem) Dim() int { return pr.l }

// Samples is d: batches are drawn from the feature rows of A.
func (pr *Problem) Samples() int { return pr.d }

// Blocks is one block.
func (pr *Problem) Blocks() []solver.Block { return []solver.Block{{Offset: 0, Size: pr.l}} }

// corner returns the box corner with α_i = C where on[i], key the pattern of
// '0' and 'C' characters.
func (pr *Problem) corner(on func(i int) bool) solver.Vertex {
	var key strings.Builder
	key.Grow(pr.l)
	v := solver.Vertex{}
	for i := 0; i < pr.l; i++ {
		if on(i) {
			key.WriteByte('C')
			v.Idx = append(v.Idx, i)
			v.Val = append(v.Val, pr.c)
		} else {
			key.WriteByte('0')
		}
	}
	v.Key = key.String()
	return v
}

// LMO sets α_i = C where g_i < 0 and 0 elsewhere (ties g_i = 0 go to 0).
func (pr *Problem) LMO(b int, g []float64) solver.Vertex {
	return pr.corner(func(i int) bool { return g[i] < 0 })
}

// Start is α = 0.
func (pr *Problem) Start(b int) solver.Vertex { return pr.corner(func(int) bool { return false }) }

// Corner returns the corner with α_i = C for the set bits of mask (tests
// and small displays; l ≤ 63).
func (pr *Problem) Corner(mask uint64) solver.Vertex {
	return pr.corner(func(i int) bool { return mask>>uint(i)&1 == 1 })
}

// Objective is ½‖Aα‖² − Σ α_i.
func (pr *Problem) Objective(x []float64) float64 {
	w := make([]float64, pr.d)
	pr.W(w, x)
	s := 0.0
	for _, v := range w {
		s += v * v
	}
	t := 0.0
	for _, v := range x {
		t += v
	}
	return 0.5*s - t
}

// LipschitzBound is ‖A‖₂² (an upper bound, see glm.SqSpectralBound).
func (pr *Problem) LipschitzBound() float64 {
	pr.lipOnce.Do(func() {
		if pr.l == 0 || pr.d == 0 {
			return
		}
		pr.sqNorm = glm.SqSpectralBound(mat.NewDense(pr.d, pr.l, pr.a))
	})
	return pr.sqNorm
}

// TrainAccuracy is the fraction of training examples that the primal
// w = Aα classifies correctly, predicting +1 when wᵀz ≥ 0.
func (pr *Problem) TrainAccuracy(alpha []float64) float64 {
	if pr.l == 0 {
		return 0
	}
	w := make([]float64, pr.d)
	pr.W(w, alpha)
	ok := 0
	for i := 0; i < pr.l; i++ {
		// y_i·wᵀz_i = wᵀ(column i of A) since y_i² = 1
		m := 0.0
		for j, v := range pr.ac[i*pr.d : (i+1)*pr.d] {
			m += w[j] * v
		}
		pred := 1.0
		if pr.y[i]*m < 0 {
			pred = -1
		}
		if pred == pr.y[i] {
			ok++
		}
	}
	return float64(ok) / float64(pr.l)
}

// Extra reports the training accuracy of w = Aα ("train_acc") and the
// number of support vectors ("support": α_i > 0).
func (pr *Problem) Extra(x []float64) map[string]float64 {
	sv := 0
	for _, v := range x {
		if v > 0 {
			sv++
		}
	}
	return map[string]float64{"train_acc": pr.TrainAccuracy(x), "support": float64(sv)}
}

// NewModel returns a model positioned at x.
func (pr *Problem) NewModel(x []float64) solver.Model {
	m := &model{pr: pr, z: make([]float64, pr.d)}
	m.Reset(x)
	return m
}

type model struct {
	pr *Problem
	z  []float64 // Aα
}

func (m *model) Reset(x []float64) { m.pr.W(m.z, x) }

func (m *model) Scale(b int, s float64) {
	for i := range m.z {
		m.z[i] *= s
	}
}

func (m *model) Add(b int, c float64, v solver.Vertex) {
	d := m.pr.d
	for k, i := range v.Idx {
		a := c * v.Val[k]
		for j, av := range m.pr.ac[i*d : (i+1)*d] {
			m.z[j] += a * av
		}
	}
}

// Gradient writes (d/|J|)·Σ_{j∈J} a_j z_j − 1.
func (m *model) Gradient(b int, g []float64, x []float64, batch []int) {
	pr := m.pr
	if batch == nil {
		pr.mulT(g, m.z)
	} else {
		clear(g)
		s := float64(pr.d) / float64(len(batch))
		for _, j := range batch {
			a := s * m.z[j]
			for i, v := range pr.a[j*pr.l : (j+1)*pr.l] {
				g[i] += a * v
			}
		}
	}
	for i := range g {
		g[i]--
	}
}

func (m *model) Line(b int, x []float64, d solver.Direction, batch []int) solver.Line {
	pr := m.pr
	rows := batch
	cnt := pr.d
	scale := 1.0
	if batch != nil {
		cnt = len(batch)
		if cnt > 0 {
			scale = float64(pr.d) / float64(cnt)
		}
	}
	sumD := 0.0
	if d.XCoef != 0 {
		for _, v := range x {
			sumD += d.XCoef * v
		}
	}
	for _, tm := range d.Terms {
		for _, v := range tm.V.Val {
			sumD += tm.Coef * v
		}
	}
	l := &line{scale: scale, lin: -sumD, z: make([]float64, cnt), w: make([]float64, cnt)}
	for k := 0; k < cnt; k++ {
		j := k
		if rows != nil {
			j = rows[k]
		}
		row := pr.a[j*pr.l : (j+1)*pr.l]
		w := d.XCoef * m.z[j]
		for _, tm := range d.Terms {
			s := 0.0
			for kk, i := range tm.V.Idx {
				s += tm.V.Val[kk] * row[i]
			}
			w += tm.Coef * s
		}
		l.z[k], l.w[k] = m.z[j], w
	}
	return l
}

type line struct {
	scale, lin float64
	z, w       []float64
}

// Curvature is Σ w_j² scaled to the full sum: exact, whatever gmax.
func (l *line) Curvature(gmax float64) float64 {
	s := 0.0
	for _, w := range l.w {
		s += w * w
	}
	return l.scale * s
}

// Magnitude is ½Σ z² on the batch, scaled to the full sum: φ(0)'s quadratic
// part, the scale of Delta's rounding.
func (l *line) Magnitude() float64 {
	s := 0.0
	for _, z := range l.z {
		s += z * z
	}
	return 0.5 * l.scale * s
}

func (l *line) Delta(gamma float64) float64 {
	s := 0.0
	for k, w := range l.w {
		s += gamma * w * (l.z[k] + 0.5*gamma*w)
	}
	return l.scale*s + gamma*l.lin
}

// The proximal view: S(α) = ½‖Aα‖² − Σα, R = indicator of the box.

// ProxDim is l.
func (pr *Problem) ProxDim() int { return pr.l }

// ProxStart is α = 0.
func (pr *Problem) ProxStart() []float64 { return make([]float64, pr.l) }

// Smooth returns the dual objective and its gradient Aᵀ(Aα) − 1.
func (pr *Problem) Smooth(alpha, grad []float64) float64 {
	w := make([]float64, pr.d)
	pr.W(w, alpha)
	pr.mulT(grad, w)
	s, t := 0.0, 0.0
	for _, v := range w {
		s += v * v
	}
	for i, v := range alpha {
		t += v
		grad[i]--
	}
	return 0.5*s - t
}

// Prox clips to the box [0, C].
func (pr *Problem) Prox(dst, v []float64, step float64) {
	for i, x := range v {
		dst[i] = math.Min(math.Max(x, 0), pr.c)
	}
}

// SmoothLipschitz is ‖A‖₂².
func (pr *Problem) SmoothLipschitz() float64 { return pr.LipschitzBound() }

// Lift is the identity: α is already the P1 variable.
func (pr *Problem) Lift(x, y []float64) { copy(x, y) }

var (
	_ solver.Problem          = (*Problem)(nil)
	_ solver.LipschitzBounder = (*Problem)(nil)
	_ solver.Evaluator        = (*Problem)(nil)
	_ solver.ProxProblem      = (*Problem)(nil)
)

// Coords describes the dual to coordinate descent (solver.CoordProblem):
// S(α) = ½‖Aα‖² − 1ᵀα over the columns y_i z_i of A, R the indicator of
// the box [0, C]; a coordinate step is the dual coordinate descent of Hsieh
// et al. (liblinear).
func (pr *Problem) Coords() solver.Coords {
	lin := make([]float64, pr.l)
	for i := range lin {
		lin[i] = -1
	}
	return solver.Coords{N: pr.d, P: pr.l, Cols: pr.ac, W: 1, Linear: lin, Lo: 0, Hi: pr.c}
}

var _ solver.CoordProblem = (*Problem)(nil)
