package methods_test

import (
	"context"
	"fmt"
	"strconv"

	"github.com/fwlab/fwlab/fw"
	"github.com/fwlab/fwlab/fw/methods"
)

// leastSquares is F(x) = (1/2n) Σ_i (a_iᵀx − y_i)² over a product of q
// probability simplices of s coordinates each (q = 1: the simplex), with n
// samples (a_i, y_i). Its vertices are the unit vectors of each block,
// with the coordinate's number as their stable key.
type leastSquares struct {
	a    [][]float64 // n rows of q·s entries
	y    []float64
	q, s int
}

func (p *leastSquares) Dim() int { return p.q * p.s }

// BlocksCoupled: the blocks share the residual z (fw.CoupledBlocks), so a
// block method applies their steps one after the other.
func (p *leastSquares) BlocksCoupled() bool { return true }
func (p *leastSquares) Samples() int        { return len(p.a) }

func (p *leastSquares) Blocks() []fw.Block {
	var bs []fw.Block
	for b := 0; b < p.q; b++ {
		bs = append(bs, fw.Block{Offset: b * p.s, Size: p.s})
	}
	return bs
}

// LMO returns the unit vector e_j of the smallest g_j (ties: the lowest j).
func (p *leastSquares) LMO(b int, g []float64) fw.Vertex {
	j := 0
	for i := range g {
		if g[i] < g[j] {
			j = i
		}
	}
	return fw.Vertex{Key: "e" + strconv.Itoa(j), Idx: []int{j}, Val: []float64{1}}
}

func (p *leastSquares) Start(b int) fw.Vertex {
	return fw.Vertex{Key: "e0", Idx: []int{0}, Val: []float64{1}}
}

func (p *leastSquares) Objective(x []float64) float64 {
	s := 0.0
	for i, row := range p.a {
		r := dot(row, x) - p.y[i]
		s += r * r
	}
	return s / (2 * float64(len(p.a)))
}

func (p *leastSquares) NewModel(x []float64) fw.Model {
	m := &lsModel{p: p, z: make([]float64, len(p.a)), zb: make([][]float64, p.q), w: make([][]float64, p.q), all: make([]int, len(p.a))}
	for b := range m.zb {
		m.zb[b] = make([]float64, len(p.a))
	}
	for i := range m.all {
		m.all[i] = i
	}
	m.Reset(x)
	return m
}

// lsModel keeps z_b = A_b x_b per block and z = Σ_b z_b. Calls for
// different blocks may run at the same time: each block's Line has its own
// buffer.
type lsModel struct {
	p   *leastSquares
	z   []float64
	zb  [][]float64
	w   [][]float64 // per block: its Line's A_b d on the batch
	all []int       // the batch of every sample
}

func (m *lsModel) Reset(x []float64) {
	for i, row := range m.p.a {
		m.z[i] = 0
		for b := range m.zb {
			lo := b * m.p.s
			m.zb[b][i] = dot(row[lo:lo+m.p.s], x[lo:lo+m.p.s])
			m.z[i] += m.zb[b][i]
		}
	}
}

func (m *lsModel) Scale(b int, s float64) {
	for i := range m.z {
		m.z[i] += (s - 1) * m.zb[b][i]
		m.zb[b][i] *= s
	}
}

func (m *lsModel) Add(b int, c float64, v fw.Vertex) {
	lo := b * m.p.s
	for i, row := range m.p.a {
		d := c * v.Dot(row[lo:lo+m.p.s])
		m.zb[b][i] += d
		m.z[i] += d
	}
}

// rows returns the batch's rows (all of them for nil) and its weight 1/|J|.
func (m *lsModel) rows(batch []int) ([]int, float64) {
	if batch == nil {
		batch = m.all
	}
	return batch, 1 / float64(len(batch))
}

func (m *lsModel) Gradient(b int, g []float64, x []float64, batch []int) {
	rows, wt := m.rows(batch)
	lo := b * m.p.s
	clear(g)
	for _, i := range rows {
		r := (m.z[i] - m.p.y[i]) * wt
		for j := range g {
			g[j] += r * m.p.a[i][lo+j]
		}
	}
}

func (m *lsModel) Line(b int, x []float64, d fw.Direction, batch []int) fw.Line {
	rows, wt := m.rows(batch)
	lo := b * m.p.s
	ws := m.w[b][:0]
	for _, i := range rows {
		ai := m.p.a[i][lo : lo+m.p.s]
		w := d.XCoef * dot(ai, x[lo:lo+m.p.s])
		for _, t := range d.Terms {
			w += t.Coef * t.V.Dot(ai)
		}
		ws = append(ws, w)
	}
	m.w[b] = ws
	return &lsLine{m: m, w: ws, rows: rows, wt: wt}
}

// lsLine is φ(γ) − φ(0) = wt·Σ_i (γ r_i w_i + ½γ² w_i²), a quadratic.
type lsLine struct {
	m    *lsModel
	w    []float64
	rows []int
	wt   float64
}

func (l *lsLine) Curvature(gmax float64) float64 {
	s := 0.0
	for _, w := range l.w {
		s += w * w
	}
	return s * l.wt
}

func (l *lsLine) Delta(gamma float64) float64 {
	s := 0.0
	for k, i := range l.rows {
		w := l.w[k]
		s += gamma*(l.m.z[i]-l.m.p.y[i])*w + 0.5*gamma*gamma*w*w
	}
	return s * l.wt
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// newLeastSquares makes n samples over q simplices of s coordinates with
// y = A x* for x* with weights on the last coordinates of each block, so
// that F* = 0 and the start e0 is not in x*'s support: a method must drop
// it to converge.
func newLeastSquares(n, q, s int) (*leastSquares, []float64) {
	p := &leastSquares{q: q, s: s}
	xs := make([]float64, q*s)
	for b := 0; b < q; b++ {
		xs[b*s+s-1], xs[b*s+s-2], xs[b*s+s-3] = 0.5, 0.3, 0.2
	}
	seed := uint64(12345)
	for i := 0; i < n; i++ {
		row := make([]float64, q*s)
		for j := range row {
			seed = seed*6364136223846793005 + 1442695040888963407
			row[j] = float64(seed>>11)/float64(1<<53)*2 - 1
		}
		p.a = append(p.a, row)
		p.y = append(p.y, dot(row, xs))
	}
	return p, xs
}

// Least squares over the simplex, solved by the away-step Frank-Wolfe
// method (afw) to a duality gap of 1e-9.
func ExampleRun() {
	p, _ := newLeastSquares(50, 1, 6)
	res, err := methods.Run(context.Background(), p, methods.Options{Algorithm: "afw", GapTol: 1e-9}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Summary.Status, res.Summary.Gap <= 1e-9)
	fmt.Printf("x = %.4f\n", res.X)
	// Output:
	// converged true
	// x = [0.0000 0.0000 0.0000 0.2000 0.3000 0.5000]
}

// The semi-stochastic method of the paper (Algorithm 1): batches of the
// paper's schedule, one record per iteration with the batch size, the step
// kind and, on evaluated iterations, the objective and the gap. The starting
// vertex e0 leaves the active set by a drop step.
func ExampleCollect() {
	p, _ := newLeastSquares(200, 1, 6)
	recs, res, err := methods.Collect(context.Background(), p,
		methods.Options{Algorithm: "ssfw-as", Schedule: "paper", MaxIters: 300, EvalEvery: 10, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	drops := 0
	for _, r := range recs {
		drops += r.Drops
	}
	last := recs[len(recs)-1]
	fmt.Println(res.Summary.Status, "after", last.K, "iterations:", len(recs) == last.K+1)
	fmt.Println("first batches:", recs[1].Batch, recs[2].Batch, recs[3].Batch)
	fmt.Println("drops > 0:", drops > 0, "gap < 1e-6:", *last.Gap < 1e-6)
	// Output:
	// max_iters after 300 iterations: true
	// first batches: 2 2 2
	// drops > 0: true gap < 1e-6: true
}

// The same problem's proximal view (lsProx: the projection onto the
// simplex) with FISTA, whose records report the objective and the
// Frank-Wolfe gap of each iterate like the Frank-Wolfe methods'.
func ExampleRunProx() {
	p, _ := newLeastSquares(50, 1, 6)
	res, err := methods.RunProx(context.Background(), lsProx{p}, p, methods.Options{Algorithm: "fista", GapTol: 1e-9}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Summary.Status, res.Summary.Gap <= 1e-9)
	fmt.Printf("x = %.4f\n", res.X)
	// Output:
	// converged true
	// x = [0.0000 0.0000 0.0000 0.2000 0.3000 0.5000]
}
