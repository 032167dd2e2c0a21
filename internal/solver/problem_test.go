package solver

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// lsqProblem is F(x) = (1/n) Σ_i ½(a_iᵀx − y_i)² + <b, x> over a product of
// polytopes, each given by an explicit list of dense vertices (the LMO is
// brute force over the list). It is the engine's test bed: small, exact,
// coupled across blocks.
type lsqProblem struct {
	n, dim int
	A      [][]float64 // n × dim
	y      []float64
	blocks []Block
	verts  [][][]float64 // per block: vertices (block-local)
	lin    []float64     // linear term (may be nil)
}

// lsqModel keeps z_b = A_b x_b per block; z = Σ_b z_b.
type lsqModel struct {
	p  *lsqProblem
	zb [][]float64
}

func (p *lsqProblem) Dim() int        { return p.dim }
func (p *lsqProblem) Samples() int    { return p.n }
func (p *lsqProblem) Blocks() []Block { return p.blocks }
func (p *lsqProblem) vertex(b, i int) Vertex {
	return DenseVertex(fmt.Sprintf("v%d", i), p.verts[b][i])
}
func (p *lsqProblem) LMO(b int, g []float64) Vertex {
	best, bv := 0, math.Inf(1)
	for i, v := range p.verts[b] {
		if d := dot(v, g); d < bv {
			best, bv = i, d
		}
	}
	return p.vertex(b, best)
}
func (p *lsqProblem) Start(b int) Vertex { return p.vertex(b, 0) }
func (p *lsqProblem) Objective(x []float64) float64 {
	s := 0.0
	for i := 0; i < p.n; i++ {
		r := dot(p.A[i], x) - p.y[i]
		s += 0.5 * r * r
	}
	s /= float64(p.n)
	if p.lin != nil {
		s += dot(p.lin, x)
	}
	return s
}
func (p *lsqProblem) LipschitzBound() float64 {
	s := 0.0 // ‖A‖_F²/n ≥ λ_max(AᵀA)/n
	for _, row := range p.A {
		s += dot(row, row)
	}
	return s / float64(p.n)
}
func (p *lsqProblem) NewModel(x []float64) Model {
	m := &lsqModel{p: p, zb: make([][]float64, len(p.blocks))}
	for b := range m.zb {
		m.zb[b] = make([]float64, p.n)
	}
	m.Reset(x)
	return m
}
func (m *lsqModel) row(i, b int) []float64 {
	blk := m.p.blocks[b]
	return m.p.A[i][blk.Offset : blk.Offset+blk.Size]
}
func (m *lsqModel) Reset(x []float64) {
	for b, blk := range m.p.blocks {
		for i := range m.zb[b] {
			m.zb[b][i] = dot(m.row(i, b), x[blk.Offset:blk.Offset+blk.Size])
		}
	}
}
func (m *lsqModel) Scale(b int, s float64) {
	for i := range m.zb[b] {
		m.zb[b][i] *= s
	}
}
func (m *lsqModel) Add(b int, c float64, v Vertex) {
	for i := range m.zb[b] {
		m.zb[b][i] += c * v.Dot(m.row(i, b))
	}
}
func (m *lsqModel) z(i int) float64 {
	s := 0.0
	for b := range m.zb {
		s += m.zb[b][i]
	}
	return s
}
func (m *lsqModel) Gradient(b int, g []float64, x []float64, batch []int) {
	for j := range g {
		g[j] = 0
	}
	each := func(i int) {
		r := m.z(i) - m.p.y[i]
		for j, a := range m.row(i, b) {
			g[j] += r * a
		}
	}
	cnt := m.p.n
	if batch == nil {
		for i := 0; i < m.p.n; i++ {
			each(i)
		}
	} else {
		cnt = len(batch)
		for _, i := range batch {
			each(i)
		}
	}
	blk := m.p.blocks[b]
	for j := range g {
		g[j] /= float64(cnt)
		if m.p.lin != nil {
			g[j] += m.p.lin[blk.Offset+j]
		}
	}
}

type lsqLine struct {
	z, y, ad []float64
	lin      float64
	scale    float64
}

func (m *lsqModel) Line(b int, x []float64, d Direction, batch []int) Line {
	blk := m.p.blocks[b]
	xb := x[blk.Offset : blk.Offset+blk.Size]
	dd := make([]float64, blk.Size)
	for j := range dd {
		dd[j] = d.XCoef * xb[j]
	}
	for _, t := range d.Terms {
		t.V.AddTo(dd, t.Coef)
	}
	rows := batch
	if rows == nil {
		rows = make([]int, m.p.n)
		for i := range rows {
			rows[i] = i
		}
	}
	l := &lsqLine{scale: 1 / float64(len(rows))}
	for _, i := range rows {
		l.z = append(l.z, m.z(i))
		l.y = append(l.y, m.p.y[i])
		l.ad = append(l.ad, dot(m.row(i, b), dd))
	}
	if m.p.lin != nil {
		l.lin = dot(m.p.lin[blk.Offset:blk.Offset+blk.Size], dd)
	}
	return l
}
func (l *lsqLine) Curvature(float64) float64 { return l.scale * dot(l.ad, l.ad) }

// Magnitude is φ(0)'s loss part: Delta is a sum of differences of squared
// residuals, each rounded at the scale of the squares (LineMagnitude).
func (l *lsqLine) Magnitude() float64 {
	s := 0.0
	for i := range l.z {
		r := l.z[i] - l.y[i]
		s += 0.5 * r * r
	}
	return s * l.scale
}

func (l *lsqLine) Delta(g float64) float64 {
	s := 0.0
	for i := range l.z {
		r0 := l.z[i] - l.y[i]
		r1 := r0 + g*l.ad[i]
		s += 0.5 * (r1*r1 - r0*r0)
	}
	return s*l.scale + g*l.lin
}

// simplexVerts returns the unit vectors of R^d.
func simplexVerts(d int) [][]float64 {
	v := make([][]float64, d)
	for i := range v {
		v[i] = make([]float64, d)
		v[i][i] = 1
	}
	return v
}

// lsqProx is the proximal view: the smooth part is F, the prox the projection
// onto the product of simplices.
type lsqProx struct{ p *lsqProblem }

func (q lsqProx) ProxDim() int { return q.p.dim }
func (q lsqProx) ProxStart() []float64 {
	x := make([]float64, q.p.dim)
	for b := range q.p.blocks {
		q.p.Start(b).AddTo(x[q.p.blocks[b].Offset:], 1)
	}
	return x
}
func (q lsqProx) Smooth(y, grad []float64) float64 {
	m := q.p.NewModel(y)
	for b, blk := range q.p.blocks {
		m.Gradient(b, grad[blk.Offset:blk.Offset+blk.Size], y, nil)
	}
	return q.p.Objective(y)
}
func (q lsqProx) Prox(dst, v []float64, step float64) {
	for _, blk := range q.p.blocks {
		projectSimplex(dst[blk.Offset:blk.Offset+blk.Size], v[blk.Offset:blk.Offset+blk.Size])
	}
}
func (q lsqProx) SmoothLipschitz() float64 { return q.p.LipschitzBound() }
func (q lsqProx) Lift(x, y []float64)      { copy(x, y) }

// projectSimplex is the Euclidean projection onto the probability simplex
// (the O(d²) textbook version: clear beats fast in a test).
func projectSimplex(dst, v []float64) {
	d := len(v)
	u := append([]float64(nil), v...)
	for i := 1; i < d; i++ { // sort descending
		for j := i; j > 0 && u[j] > u[j-1]; j-- {
			u[j], u[j-1] = u[j-1], u[j]
		}
	}
	css, theta := 0.0, 0.0
	for i := 0; i < d; i++ {
		css += u[i]
		if t := (css - 1) / float64(i+1); u[i]-t > 0 {
			theta = t
		}
	}
	for i := range v {
		dst[i] = math.Max(v[i]-theta, 0)
	}
}

// newLSQInterior builds a one-block problem whose optimum lies in the
// interior of the simplex (so that line-search steps are rarely clipped).
func newLSQInterior(seed uint64, n, d int) *lsqProblem {
	r := rand.New(rand.NewPCG(seed, 9))
	p := &lsqProblem{n: n, dim: d, blocks: []Block{{Offset: 0, Size: d}}, verts: [][][]float64{simplexVerts(d)}}
	xt := make([]float64, d)
	for j := range xt {
		xt[j] = (1 + 0.2*r.Float64()) / float64(d)
	}
	s := sumOf(xt)
	for j := range xt {
		xt[j] /= s
	}
	for i := 0; i < n; i++ {
		row := make([]float64, d)
		for j := range row {
			row[j] = r.NormFloat64()
		}
		p.A = append(p.A, row)
		p.y = append(p.y, dot(row, xt))
	}
	return p
}

// newLSQFace builds a problem over q simplices whose optimum lies on a face
// of moderate dimension in every block: the target has half of its
// coordinates negative.
func newLSQFace(seed uint64, n, d, q int) *lsqProblem {
	r := rand.New(rand.NewPCG(seed, 13))
	p := &lsqProblem{n: n, dim: d * q}
	for b := 0; b < q; b++ {
		p.blocks = append(p.blocks, Block{Offset: b * d, Size: d})
		p.verts = append(p.verts, simplexVerts(d))
	}
	xt := make([]float64, p.dim)
	for j := range xt {
		xt[j] = (1 + 0.5*r.Float64()) / float64(d)
		if j%2 == 1 {
			xt[j] = -xt[j]
		}
	}
	for i := 0; i < n; i++ {
		row := make([]float64, p.dim)
		for j := range row {
			row[j] = r.NormFloat64()
		}
		p.A = append(p.A, row)
		p.y = append(p.y, dot(row, xt)+0.05*r.NormFloat64())
	}
	return p
}
