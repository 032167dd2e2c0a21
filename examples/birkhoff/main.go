// Command birkhoff finds the doubly stochastic matrix nearest to a target
// with fwlab's pairwise Frank-Wolfe method (pfw), written only against the
// public packages fw and fw/methods. The Birkhoff polytope's vertices are
// the permutation matrices; the oracle is a minimum-cost assignment, by the
// Hungarian algorithm; a vertex's identity is its permutation.
//
//	go run ./examples/birkhoff
package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"

	"github.com/fwlab/fwlab/fw"
	"github.com/fwlab/fwlab/fw/methods"
)

// Nearest is F(X) = (1/n²) Σ_ij ½(X_ij − T_ij)² over the n×n doubly
// stochastic matrices (row-major); each entry is a sample.
type Nearest struct {
	N int
	T []float64
}

// Dim is n².
func (p *Nearest) Dim() int { return p.N * p.N }

// Samples is n²: one per entry.
func (p *Nearest) Samples() int { return p.N * p.N }

// Blocks is one block: the whole matrix.
func (p *Nearest) Blocks() []fw.Block { return []fw.Block{{Offset: 0, Size: p.N * p.N}} }

// LMO returns the permutation matrix P minimising <G, P>: the assignment
// of least cost G_{i,π(i)}.
func (p *Nearest) LMO(b int, g []float64) fw.Vertex { return p.perm(Assign(g, p.N)) }

// Start is the identity permutation.
func (p *Nearest) Start(b int) fw.Vertex {
	id := make([]int, p.N)
	for i := range id {
		id[i] = i
	}
	return p.perm(id)
}

// perm is the permutation matrix of π, with π written out as its key.
func (p *Nearest) perm(pi []int) fw.Vertex {
	v := fw.Vertex{}
	parts := make([]string, p.N)
	for i, j := range pi {
		v.Idx = append(v.Idx, i*p.N+j)
		v.Val = append(v.Val, 1)
		parts[i] = strconv.Itoa(j)
	}
	v.Key = "perm:" + strings.Join(parts, ",")
	return v
}

// Objective is F(X).
func (p *Nearest) Objective(x []float64) float64 {
	s := 0.0
	for i, t := range p.T {
		s += (x[i] - t) * (x[i] - t)
	}
	return s / (2 * float64(len(p.T)))
}

// NewModel: F's gradient is (X − T)/n² entrywise, so the model needs no
// state of its own and reads x.
func (p *Nearest) NewModel(x []float64) fw.Model { return &model{p: p, all: seq(len(p.T))} }

type model struct {
	p   *Nearest
	all []int
}

func (m *model) Reset([]float64)             {}
func (m *model) Scale(int, float64)          {}
func (m *model) Add(int, float64, fw.Vertex) {}
func (m *model) batch(b []int) ([]int, float64) {
	if b == nil {
		b = m.all
	}
	return b, 1 / float64(len(b))
}

func (m *model) Gradient(b int, g []float64, x []float64, batch []int) {
	ks, wt := m.batch(batch)
	clear(g)
	for _, k := range ks {
		g[k] += (x[k] - m.p.T[k]) * wt
	}
}

func (m *model) Line(b int, x []float64, d fw.Direction, batch []int) fw.Line {
	ks, wt := m.batch(batch)
	dense := make([]float64, len(x))
	for i, xi := range x {
		dense[i] = d.XCoef * xi
	}
	for _, t := range d.Terms {
		t.V.AddTo(dense, t.Coef)
	}
	l := &line{wt: wt}
	for _, k := range ks {
		l.r = append(l.r, x[k]-m.p.T[k])
		l.w = append(l.w, dense[k])
	}
	return l
}

// line is φ(γ) − φ(0) = wt·Σ_k (γ r_k w_k + ½γ² w_k²).
type line struct {
	r, w []float64
	wt   float64
}

func (l *line) Curvature(float64) float64 {
	s := 0.0
	for _, w := range l.w {
		s += w * w
	}
	return s * l.wt
}

func (l *line) Delta(gamma float64) float64 {
	s := 0.0
	for i, w := range l.w {
		s += gamma*l.r[i]*w + 0.5*gamma*gamma*w*w
	}
	return s * l.wt
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// Assign solves the n×n assignment problem of cost c (row-major) by the
// Hungarian algorithm with potentials, O(n³): it returns π minimising
// Σ_i c[i][π(i)]. Ties are broken by a fixed rule (the lowest column in
// each scan), so the same c gives the same π.
func Assign(c []float64, n int) []int {
	inf := math.Inf(1)
	u, v := make([]float64, n+1), make([]float64, n+1)
	match, way := make([]int, n+1), make([]int, n+1) // match[j]: the row of column j (1-based; 0: none)
	minv, used := make([]float64, n+1), make([]bool, n+1)
	for i := 1; i <= n; i++ {
		match[0] = i
		j0 := 0
		for j := range minv {
			minv[j], used[j] = inf, false
		}
		for match[j0] != 0 {
			used[j0] = true
			i0, delta, j1 := match[j0], inf, 0
			for j := 1; j <= n; j++ {
				if used[j] {
					continue
				}
				if cur := c[(i0-1)*n+j-1] - u[i0] - v[j]; cur < minv[j] {
					minv[j], way[j] = cur, j0
				}
				if minv[j] < delta {
					delta, j1 = minv[j], j
				}
			}
			for j := 0; j <= n; j++ {
				if used[j] {
					u[match[j]] += delta
					v[j] -= delta
				} else {
					minv[j] -= delta
				}
			}
			j0 = j1
		}
		for j0 != 0 {
			j1 := way[j0]
			match[j0] = match[j1]
			j0 = j1
		}
	}
	pi := make([]int, n)
	for j := 1; j <= n; j++ {
		pi[match[j]-1] = j - 1
	}
	return pi
}

// NewNearest makes a target T = D + noise, D a mixture of k random
// permutation matrices; the nearest doubly stochastic matrix to T is not
// D, and the method must find it.
func NewNearest(n, k int, noise float64, seed uint64) *Nearest {
	rng := rand.New(rand.NewPCG(seed, 2))
	t := make([]float64, n*n)
	for m := 0; m < k; m++ {
		for i, j := range rng.Perm(n) {
			t[i*n+j] += 1 / float64(k)
		}
	}
	for i := range t {
		t[i] += noise * rng.NormFloat64()
	}
	return &Nearest{N: n, T: t}
}

func main() {
	p := NewNearest(8, 3, 0.05, 1)
	recs, res, err := methods.Collect(context.Background(), p, methods.Options{Algorithm: "pfw", GapTol: 1e-10, MaxIters: 5000})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	drops := 0
	for _, r := range recs {
		drops += r.Drops
	}
	s := res.Summary
	fmt.Printf("pfw on the 8×8 Birkhoff polytope: %s after %d iterations, F %.6e, gap %.2e\n", s.Status, s.Iters, s.Objective, s.Gap)
	fmt.Printf("%d drop steps; %d permutation matrices in the final representation\n", drops, recs[len(recs)-1].Active)
}
