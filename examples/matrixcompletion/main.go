// Command matrixcompletion fills in a low-rank matrix from a few of its
// entries with fwlab's methods, written only against the public packages
// fw and fw/methods: least squares on the observed entries over the
// nuclear-norm ball {X : ‖X‖_* ≤ δ}, whose vertices are the rank-one atoms
// δ·u vᵀ. The oracle is the top singular vector pair of the gradient, by
// power iterations; an atom's identity is a hash of its exact bits, so the
// active set of the away-step method recognises an atom it holds.
//
//	go run ./examples/matrixcompletion
package main

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"github.com/fwlab/fwlab/fw/live"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"

	"github.com/fwlab/fwlab/fw"
	"github.com/fwlab/fwlab/fw/methods"
)

// Completion is F(X) = (1/|Ω|) Σ_{(i,j) ∈ Ω} ½(X_ij − M_ij)² over
// ‖X‖_* ≤ Delta, X an R×C matrix stored row-major; each observed entry is
// a sample.
type Completion struct {
	R, C  int
	Delta float64
	Rows  []int // the observed entries' rows,
	Cols  []int // columns
	Vals  []float64
	// PowerIters is the number of power iterations of the oracle.
	PowerIters int
}

// Dim is R·C.
func (p *Completion) Dim() int { return p.R * p.C }

// Samples is the number of observed entries.
func (p *Completion) Samples() int { return len(p.Vals) }

// Blocks is one block: the whole matrix.
func (p *Completion) Blocks() []fw.Block { return []fw.Block{{Offset: 0, Size: p.R * p.C}} }

// LMO returns −Delta·u vᵀ for the top singular pair (u, v) of G: the atom
// minimising <G, X> over the ball, to the accuracy of the power iterations.
func (p *Completion) LMO(b int, g []float64) fw.Vertex {
	u, v := p.topPair(g)
	return p.atom(u, v, -p.Delta)
}

// Start is the atom Delta·e_1 e_1ᵀ.
func (p *Completion) Start(b int) fw.Vertex {
	u, v := make([]float64, p.R), make([]float64, p.C)
	u[0], v[0] = 1, 1
	return p.atom(u, v, p.Delta)
}

// atom is s·u vᵀ, with the hash of its bits as its key.
func (p *Completion) atom(u, v []float64, s float64) fw.Vertex {
	x := make([]float64, p.R*p.C)
	h := fnv.New64a()
	var buf [8]byte
	for i := range u {
		for j := range v {
			x[i*p.C+j] = s * u[i] * v[j]
			binary.LittleEndian.PutUint64(buf[:], math.Float64bits(x[i*p.C+j]))
			h.Write(buf[:])
		}
	}
	return fw.DenseVertex(fmt.Sprintf("atom-%016x", h.Sum64()), x)
}

// topPair returns the top singular vector pair of the R×C matrix g by power
// iterations on gᵀg from a fixed start (deterministic: the same g gives the
// same pair bit for bit).
func (p *Completion) topPair(g []float64) (u, v []float64) {
	v = make([]float64, p.C)
	for j := range v {
		v[j] = 1 / math.Sqrt(float64(p.C)+float64(j))
	}
	u = make([]float64, p.R)
	for it := 0; it < p.PowerIters; it++ {
		mulVec(u, g, v, p.R, p.C)
		normalize(u)
		mulTVec(v, g, u, p.R, p.C)
		normalize(v)
	}
	mulVec(u, g, v, p.R, p.C)
	normalize(u)
	return u, v
}

// Objective is F(X).
func (p *Completion) Objective(x []float64) float64 {
	s := 0.0
	for k, v := range p.Vals {
		r := x[p.Rows[k]*p.C+p.Cols[k]] - v
		s += r * r
	}
	return s / (2 * float64(len(p.Vals)))
}

// NewModel keeps the residuals on the observed entries.
func (p *Completion) NewModel(x []float64) fw.Model {
	m := &model{p: p, z: make([]float64, len(p.Vals)), all: make([]int, len(p.Vals))}
	for k := range m.all {
		m.all[k] = k
	}
	m.Reset(x)
	return m
}

type model struct {
	p   *Completion
	z   []float64 // X at the observed entries
	w   []float64 // a Line's direction at the batch's entries
	all []int
}

func (m *model) Reset(x []float64) {
	for k := range m.z {
		m.z[k] = x[m.p.Rows[k]*m.p.C+m.p.Cols[k]]
	}
}

func (m *model) Scale(b int, s float64) {
	for k := range m.z {
		m.z[k] *= s
	}
}

func (m *model) Add(b int, c float64, v fw.Vertex) {
	dense := make([]float64, m.p.R*m.p.C)
	v.AddTo(dense, c)
	for k := range m.z {
		m.z[k] += dense[m.p.Rows[k]*m.p.C+m.p.Cols[k]]
	}
}

func (m *model) batch(batch []int) ([]int, float64) {
	if batch == nil {
		batch = m.all
	}
	return batch, 1 / float64(len(batch))
}

func (m *model) Gradient(b int, g []float64, x []float64, batch []int) {
	ks, wt := m.batch(batch)
	clear(g)
	for _, k := range ks {
		g[m.p.Rows[k]*m.p.C+m.p.Cols[k]] += (m.z[k] - m.p.Vals[k]) * wt
	}
}

func (m *model) Line(b int, x []float64, d fw.Direction, batch []int) fw.Line {
	ks, wt := m.batch(batch)
	dense := make([]float64, m.p.R*m.p.C)
	for i, xi := range x {
		dense[i] = d.XCoef * xi
	}
	for _, t := range d.Terms {
		t.V.AddTo(dense, t.Coef)
	}
	m.w = m.w[:0]
	for _, k := range ks {
		m.w = append(m.w, dense[m.p.Rows[k]*m.p.C+m.p.Cols[k]])
	}
	return &line{m: m, ks: ks, wt: wt}
}

// line is φ(γ) − φ(0) = wt·Σ_k (γ r_k w_k + ½γ² w_k²).
type line struct {
	m  *model
	ks []int
	wt float64
}

func (l *line) Curvature(float64) float64 {
	s := 0.0
	for _, w := range l.m.w {
		s += w * w
	}
	return s * l.wt
}

func (l *line) Delta(gamma float64) float64 {
	s := 0.0
	for i, k := range l.ks {
		w := l.m.w[i]
		s += gamma*(l.m.z[k]-l.m.p.Vals[k])*w + 0.5*gamma*gamma*w*w
	}
	return s * l.wt
}

func mulVec(dst, g, v []float64, r, c int) {
	for i := 0; i < r; i++ {
		s := 0.0
		for j := 0; j < c; j++ {
			s += g[i*c+j] * v[j]
		}
		dst[i] = s
	}
}

func mulTVec(dst, g, u []float64, r, c int) {
	clear(dst)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			dst[j] += g[i*c+j] * u[i]
		}
	}
}

func normalize(a []float64) {
	s := 0.0
	for _, x := range a {
		s += x * x
	}
	if s = math.Sqrt(s); s > 0 {
		for i := range a {
			a[i] /= s
		}
	}
}

// NewCompletion makes an R×C matrix M = Σ_t σ_t a_t b_tᵀ of the given rank
// and observes a fraction of its entries; Delta is M's nuclear norm (Σ σ_t
// with orthonormal a_t, b_t), so M lies on the ball and F* = 0.
func NewCompletion(r, c, rank int, frac float64, seed uint64) (*Completion, []float64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	a, bv := orthonormal(rng, r, rank), orthonormal(rng, c, rank)
	full := make([]float64, r*c)
	delta := 0.0
	for t := 0; t < rank; t++ {
		sigma := float64(rank - t)
		delta += sigma
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				full[i*c+j] += sigma * a[t][i] * bv[t][j]
			}
		}
	}
	p := &Completion{R: r, C: c, Delta: delta, PowerIters: 100}
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			if rng.Float64() < frac {
				p.Rows, p.Cols, p.Vals = append(p.Rows, i), append(p.Cols, j), append(p.Vals, full[i*c+j])
			}
		}
	}
	return p, full
}

// orthonormal returns k orthonormal vectors of length n (Gram–Schmidt on
// Gaussian vectors).
func orthonormal(rng *rand.Rand, n, k int) [][]float64 {
	var out [][]float64
	for len(out) < k {
		v := make([]float64, n)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		for _, q := range out {
			d := 0.0
			for i := range v {
				d += v[i] * q[i]
			}
			for i := range v {
				v[i] -= d * q[i]
			}
		}
		normalize(v)
		out = append(out, v)
	}
	return out
}

// RelErr is ‖X − M‖_F / ‖M‖_F over every entry, observed or not.
func RelErr(x, full []float64) float64 {
	num, den := 0.0, 0.0
	for i := range x {
		num += (x[i] - full[i]) * (x[i] - full[i])
		den += full[i] * full[i]
	}
	return math.Sqrt(num / den)
}

func main() {
	dashboard := flag.String("dashboard", "", "a running fwlab dashboard (http://localhost:8080) to log both methods' records to, live")
	flag.Parse()
	p, full := NewCompletion(20, 20, 2, 0.6, 1)
	fmt.Printf("a 20×20 matrix of rank 2, %d of its 400 entries observed, δ = %g\n", len(p.Vals), p.Delta)
	if err := solve(context.Background(), p, full, *dashboard); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// solve runs afw and fw on p and prints their results; with a dashboard's
// address, it logs their records there as one run of two traces, live.
func solve(ctx context.Context, p *Completion, full []float64, dashboard string) error {
	algos := []string{"afw", "fw"}
	var run *live.Run
	if dashboard != "" {
		var err error
		run, err = live.Open(ctx, dashboard, live.RunInfo{Problem: "matrix completion (nuclear-norm ball)", Traces: algos, Iters: 1000})
		if err != nil {
			return err
		}
		fmt.Println("logging to", run.Page)
	}
	status := fw.StatusConverged
	for _, algo := range algos {
		var rec fw.Recorder
		if run != nil {
			rec = run.Recorder(algo)
		}
		res, err := methods.Run(ctx, p, methods.Options{Algorithm: algo, MaxIters: 1000}, rec)
		if err != nil {
			if run != nil {
				_ = run.EndWith(ctx, fw.StatusFailed, err.Error())
			}
			return err
		}
		s := res.Summary
		if s.Status != fw.StatusConverged {
			status = s.Status
		}
		fmt.Printf("%-4s %-10s iterations %4d  F %.3e  gap %.3e  relative error on every entry %.3e\n",
			algo, s.Status, s.Iters, s.Objective, s.Gap, RelErr(res.X, full))
	}
	if run != nil {
		return run.End(status)
	}
	return nil
}
