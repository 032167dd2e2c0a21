// Package gflasso is the graph-guided fused LASSO (GFLASSO) of Kim, Sohn and
// Xing and of Chen et al., in the epigraph (P1) form that the paper's
// block-coordinate Frank-Wolfe algorithm runs on, with the simulation of Chen
// et al., CSV import, and the smoothing proximal gradient baseline (SPG).
//
// The problem is
//
//	F(B) = ½‖Y − XB‖²_F + λ‖B‖₁ + γ Σ_{e=(m,l)∈E} |r_ml| Σ_j |B_jm − sign(r_ml) B_jl|,
//
// X: N×J, Y: N×K, B: J×K, E the edges of the truncated correlation graph of
// Y's columns. F separates over the graph's connected components C, and the
// penalty of a component is a sum over rows j of one norm ω_C on R^{|C|}:
// Ω_C(B_C) = Σ_j ω_C(B_{j,C}), ω_C(z) = λ‖z‖₁ + γ Σ_{e∈E_C} |r_e||z_m − s_e z_l|.
//
// P1 form. Each block b covers one component C and a range of rows
// [r0, r1) (all rows with blocks=component, one row with blocks=row). Its
// coordinates are B_{j,C} for j in [r0, r1), row-major (coordinate
// (j−r0)·|C| + c holds B_{j, C[c]}), followed by one epigraph variable t_b.
// Its polytope is P_b = {Ω_b(B_b) ≤ t_b ≤ T_b}, the loss terms are the N rows
// f_i(z) = ½(Y_i − z)² summed (not averaged), and the linear term is 1 on
// every t_b. P_b is the convex hull of 0 and T_b·(e_j ⊗ v, 1) for the rows j
// of the block and the vertices v of ω_C's unit ball; the vertex key is
// "j:" followed by one character per task of C ('+', '-', '0'), or "0".
package gflasso

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/fwlab/fwlab/internal/solver"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Options configure a GFLASSO instance.
type Options struct {
	Lambda    float64 // λ > 0
	Gamma     float64 // γ ≥ 0
	Threshold float64 // correlations with |r| < Threshold give no edge
	// Bound chooses T: "hat" (½‖P_X Y_C‖² with P_X the hat matrix when
	// rank X = J, else ½‖Y_C‖²) or "norm" (½‖Y_C‖²). Empty means "hat".
	Bound string
	// Blocks: "component" (one block per connected component) or "row" (one
	// block per (row, component) pair). Empty means "component". Component
	// blocks are independent (the loss and the penalty separate over
	// components); row blocks of one component share its residual, so
	// simultaneous block steps, each with its own exact line search, could
	// overshoot together: the problem reports its blocks as coupled and the
	// block methods then average the simultaneous moves (solver.CoupledBlocks).
	// With row blocks every block's bound is its component's T_C (valid
	// since max_j ω_C(B*_j) ≤ Ω_C(B*_C) ≤ T_C).
	Blocks string
	// EnumMax: components with more tasks are not enumerated (0 means 12);
	// their oracle uses minimum cuts when the component's signed graph is
	// balanced, else linear programs.
	EnumMax int
	// ForceLP makes every component that is not enumerated use the LP
	// oracle (for tests and comparisons).
	ForceLP bool
	// KeepSlack turns off the slack collapse (see Reshape) that the
	// Frank-Wolfe methods with away steps apply after a block's step: t_b
	// then only moves by the methods' own steps.
	KeepSlack bool
}

// OptionError is an invalid option; Option is its name in the scenario's
// parameters (lambda, gamma, threshold, bound, blocks, enum_max).
type OptionError struct {
	Option string
	Msg    string
}

func (e *OptionError) Error() string { return "gflasso: " + e.Option + " " + e.Msg }

func optErr(opt, format string, args ...any) error {
	return &OptionError{Option: opt, Msg: fmt.Sprintf(format, args...)}
}

// blockInfo describes one block of the P1 form.
type blockInfo struct {
	comp   int
	r0, r1 int
	T      float64
	off    int
	size   int
}

// Problem is one GFLASSO instance. It implements solver.Problem,
// solver.LipschitzBounder, solver.Evaluator, solver.CheckedOracle and
// solver.Reshaper. It is immutable after New, apart from a scratch pool, a
// vertex cache and a one-entry cache of the objective's terms, all safe for
// concurrent use by several runs.
type Problem struct {
	N, J, K int
	x       []float64 // X row-major, N×J
	xt      []float64 // X column-major (Xᵀ row-major), J×N
	y       []float64 // Y row-major, N×K
	opt     Options
	graph   *Graph
	comps   []*component
	compT   []float64 // T_C per component
	blocks  []solver.Block
	info    []blockInfo
	dim     int
	lip     float64
	hatRank bool // rank X = J (T from the hat matrix available)
	// gram is XᵀX (J×J row-major, both triangles) and xty XᵀY (J×K
	// row-major), kept when J ≤ N and J² ≤ maxGramEntries: a component
	// block's exact gradient XᵀX B_C − XᵀY_C is then kept up to date at
	// O(J·|C|) per vertex coordinate a step moves, instead of O(N·J·|C|)
	// from scratch.
	gram []float64
	xty  []float64
	// pool and vcache (scratch.go): working memory and vertices, shared
	// by the runs on the instance.
	pool   sync.Pool
	splits sync.Pool // *lmoSplit (split.go)
	vcache []vertexCache
	tvert  []solver.Vertex // per block: e_t, the epigraph coordinate
	terms  struct {        // termsOf's cache
		mu               sync.Mutex
		x                []float64
		loss, l1, fusion float64
		ok               bool
	}
}

// Graph returns the task graph.
func (p *Problem) Graph() *Graph { return p.graph }

// Bounds returns T_C per component (in the order of Graph().Components).
func (p *Problem) Bounds() []float64 { return append([]float64(nil), p.compT...) }

// HatBound reports whether rank X = J, so that bound=hat uses ½‖P_X Y_C‖².
func (p *Problem) HatBound() bool { return p.hatRank }

// Options returns the options the instance was built with (defaults filled).
func (p *Problem) Options() Options { return p.opt }

// EnumeratedComponents reports, per component, whether its oracle enumerates
// the atoms.
func (p *Problem) EnumeratedComponents() []bool {
	out := make([]bool, len(p.comps))
	for i, c := range p.comps {
		out[i] = c.enumerated()
	}
	return out
}

// OracleKinds names, per component, how its oracle works: "enumerate"
// (candidate atoms listed once), "cut" (Dinkelbach's method with minimum
// cuts, for balanced signed graphs) or "lp" (the simplex method).
func (p *Problem) OracleKinds() []string {
	out := make([]string, len(p.comps))
	for i, c := range p.comps {
		switch {
		case c.enumerated():
			out[i] = "enumerate"
		case c.tau != nil:
			out[i] = "cut"
		default:
			out[i] = "lp"
		}
	}
	return out
}

// Dim implements solver.Problem.
func (p *Problem) Dim() int { return p.dim }

// Samples implements solver.Problem: the N rows of the data.
func (p *Problem) Samples() int { return p.N }

// Blocks implements solver.Problem.
func (p *Problem) Blocks() []solver.Block { return append([]solver.Block(nil), p.blocks...) }

// LipschitzBound implements solver.LipschitzBounder: λ_max(XᵀX), the
// Lipschitz constant of the gradient of the summed loss (the linear term on t
// adds nothing).
func (p *Problem) LipschitzBound() float64 { return p.lip }

// Start implements solver.Problem: every block starts at the vertex 0 (B = 0,
// t = 0), the start of SPG too.
func (p *Problem) Start(b int) solver.Vertex { return solver.Vertex{Key: "0"} }

// LMO implements solver.Problem. For the block gradient (G, g_t) the minimum
// over P_b is T_b·min(0, g_t − max_j ω_C*(G_j)), attained at 0 or at the atom
// T_b(e_j ⊗ v, 1) of the best row. Ties: the first row, then the first atom
// in enumeration order, and 0 when the atom does not strictly improve on it.
func (p *Problem) LMO(b int, g []float64) solver.Vertex {
	v, _ := p.lmo(b, g, false, inline)
	return v
}

// LMOSplit implements solver.SplitOracle: LMO with the row scan of an
// enumerated component split into parts of lmoPartRows rows that par may run
// concurrently (see enumLMO); the vertex is LMO's, bit for bit.
func (p *Problem) LMOSplit(b int, g []float64, par solver.Parallel) solver.Vertex {
	v, _ := p.lmo(b, g, false, par)
	return v
}

// inline runs the whole range at once: the oracle's parts one after another.
func inline(n int, f func(lo, hi int)) { f(0, n) }

// CheckedLMO implements solver.CheckedOracle: the oracle of LMO, except that
// a linear program that fails fails the call with its message (naming the
// block and the row) instead of leaving the row out. A gap evaluation needs
// every row: without one the gap is no certificate.
func (p *Problem) CheckedLMO(b int, g []float64) (solver.Vertex, error) {
	return p.lmo(b, g, true, inline)
}

// lmo is the oracle; with strict, a failed linear program is an error, else
// its row is left out (the zero vertex and the other rows remain feasible
// answers, which is all a step needs).
func (p *Problem) lmo(b int, g []float64, strict bool, par solver.Parallel) (solver.Vertex, error) {
	bi := p.info[b]
	c := p.comps[bi.comp]
	kc := len(c.tasks)
	sc := p.getScratch()
	defer p.putScratch(sc)
	pat := sc.pat[:kc]
	for a := range pat {
		pat[a] = 0
	}
	bestScore, bestRow := 0.0, -1
	if c.enumerated() {
		if best := p.enumLMO(b, g, par); best.row >= 0 {
			bestScore, bestRow = best.score, best.row
			c.atomPattern(best.atom, best.sign, pat)
		}
	} else {
		for r := bi.r0; r < bi.r1; r++ {
			row := g[(r-bi.r0)*kc : (r-bi.r0+1)*kc]
			if bestRow >= 0 && maxAbs(row)/c.lambda*(1+1e-12) <= bestScore {
				continue // as above
			}
			var s float64
			var maximiser []float64
			var err error
			if c.tau != nil {
				s, maximiser = c.cutAtom(row, c.tau)
			} else {
				s, maximiser, err = c.lpAtom(row)
			}
			if err != nil && strict {
				return solver.Vertex{}, fmt.Errorf("gflasso: the oracle of block %d failed on row %d: %w", b, r+1, err)
			}
			if err != nil || maximiser == nil {
				// A failed LP leaves this row out; the zero vertex and the
				// other rows remain valid (the oracle stays feasible).
				continue
			}
			if s > bestScore {
				bestScore, bestRow = s, r
				for a := range pat {
					pat[a] = -maximiser[a]
				}
			}
		}
	}
	gt := g[bi.size-1]
	if bestRow < 0 || !(gt-bestScore < 0) {
		return solver.Vertex{Key: "0"}, nil
	}
	return p.cachedAtom(b, bestRow, pat, sc.key), nil
}

func maxAbs(x []float64) float64 {
	m := 0.0
	for _, v := range x {
		m = math.Max(m, math.Abs(v))
	}
	return m
}

// atomVertex builds T_b·(e_row ⊗ σ/ω(σ), 1) for a sign pattern σ.
func (p *Problem) atomVertex(b, row int, pat []float64) solver.Vertex {
	bi := p.info[b]
	c := p.comps[bi.comp]
	kc := len(c.tasks)
	scale := bi.T / c.omega(pat)
	// sized exactly: a new vertex costs three objects (Idx, Val, Key)
	nz := 1
	for _, s := range pat {
		if s != 0 {
			nz++
		}
	}
	v := solver.Vertex{Idx: make([]int, 0, nz), Val: make([]float64, 0, nz)}
	for a, s := range pat {
		if s == 0 {
			continue
		}
		v.Idx = append(v.Idx, (row-bi.r0)*kc+a)
		v.Val = append(v.Val, s*scale)
	}
	v.Idx = append(v.Idx, bi.size-1)
	v.Val = append(v.Val, bi.T)
	var kb [64]byte
	v.Key = string(atomKey(kb[:0], row, pat))
	return v
}

// BOf extracts B (J×K) from a P1 point x.
func (p *Problem) BOf(x []float64) *mat.Dense {
	B := mat.NewDense(p.J, p.K, nil)
	for _, bi := range p.info {
		c := p.comps[bi.comp]
		kc := len(c.tasks)
		for r := bi.r0; r < bi.r1; r++ {
			for a, t := range c.tasks {
				B.Set(r, t, x[bi.off+(r-bi.r0)*kc+a])
			}
		}
	}
	return B
}

// Lift writes into x the P1 point of B with t_b = Ω_b(B_b) and reports
// whether it is feasible (every t_b ≤ T_b).
func (p *Problem) Lift(x []float64, B *mat.Dense) bool {
	feasible := true
	for b, bi := range p.info {
		c := p.comps[bi.comp]
		kc := len(c.tasks)
		row := make([]float64, kc)
		t := 0.0
		for r := bi.r0; r < bi.r1; r++ {
			for a, task := range c.tasks {
				row[a] = B.At(r, task)
				x[bi.off+(r-bi.r0)*kc+a] = row[a]
			}
			t += c.omega(row)
		}
		x[bi.off+bi.size-1] = t
		if t > p.info[b].T {
			feasible = false
		}
	}
	return feasible
}

// Terms of F at B: the loss ½‖Y − XB‖², λ‖B‖₁ and the fusion penalty.
func (p *Problem) Terms(B *mat.Dense) (loss, l1, fusion float64) {
	res := p.residual(B)
	for _, d := range res {
		loss += d * d
	}
	loss /= 2
	bd := make([]float64, p.J*p.K)
	mat.NewDense(p.J, p.K, bd).Copy(B)
	for _, v := range bd {
		l1 += math.Abs(v)
	}
	l1 *= p.opt.Lambda
	for _, e := range p.graph.Edges {
		s := 0.0
		for a := 0; a < p.J; a++ {
			s += math.Abs(bd[a*p.K+e.M] - float64(e.Sign)*bd[a*p.K+e.L])
		}
		fusion += e.W * s
	}
	fusion *= p.opt.Gamma
	return loss, l1, fusion
}

// F is the GFLASSO objective at B, in its original form.
func (p *Problem) F(B *mat.Dense) float64 {
	loss, l1, fusion := p.Terms(B)
	return loss + l1 + fusion
}

// Objective implements solver.Problem: F(B) at the B part of x (never the
// P1 upper bound loss + Σ t_b).
func (p *Problem) Objective(x []float64) float64 {
	loss, l1, fusion := p.termsOf(x)
	return loss + l1 + fusion
}

// termsOf returns Terms at the B part of x, from a one-entry cache of the
// last x (an evaluation asks for Objective and then Extra at the same
// point; the product XB is the costly part).
func (p *Problem) termsOf(x []float64) (loss, l1, fusion float64) {
	tc := &p.terms
	tc.mu.Lock()
	if tc.ok && slices.Equal(tc.x, x) {
		loss, l1, fusion = tc.loss, tc.l1, tc.fusion
		tc.mu.Unlock()
		return loss, l1, fusion
	}
	tc.mu.Unlock()
	loss, l1, fusion = p.Terms(p.BOf(x))
	tc.mu.Lock()
	tc.x = append(tc.x[:0], x...)
	tc.loss, tc.l1, tc.fusion, tc.ok = loss, l1, fusion, true
	tc.mu.Unlock()
	return loss, l1, fusion
}

// Extra implements solver.Evaluator: the loss, the two penalties, the P1
// objective (loss + Σ t_b) and the largest t_b/T_b.
func (p *Problem) Extra(x []float64) map[string]float64 {
	loss, l1, fusion := p.termsOf(x)
	st, fill := 0.0, 0.0
	for _, bi := range p.info {
		t := x[bi.off+bi.size-1]
		st += t
		fill = math.Max(fill, t/bi.T)
	}
	return map[string]float64{"loss": loss, "l1": l1, "fusion": fusion, "p1_objective": loss + st, "t_fill": fill}
}

// FullGradient writes the exact gradient of the P1 objective at x (all
// blocks) into g, computed from scratch: Xᵀ(XB − Y) by two matrix products.
func (p *Problem) FullGradient(x, g []float64) {
	B := p.BOf(x)
	res := p.residual(B) // XB − Y, N×K
	var G mat.Dense
	G.Mul(mat.NewDense(p.J, p.N, p.xt), mat.NewDense(p.N, p.K, res))
	gd := G.RawMatrix().Data
	for _, bi := range p.info {
		c := p.comps[bi.comp]
		kc := len(c.tasks)
		for r := bi.r0; r < bi.r1; r++ {
			for a, t := range c.tasks {
				g[bi.off+(r-bi.r0)*kc+a] = gd[r*p.K+t]
			}
		}
		g[bi.off+bi.size-1] = 1
	}
}

// residual returns XB − Y (N×K row-major). Only the nonzero rows of B
// count: with at most half of them nonzero (the usual case: the l1 penalty
// zeroes most rows) the product gathers those columns of X.
func (p *Problem) residual(B *mat.Dense) []float64 {
	n, j, k := p.N, p.J, p.K
	res := make([]float64, n*k)
	for i, v := range p.y {
		res[i] = -v
	}
	bd := mat.DenseCopyOf(B).RawMatrix().Data
	var rows []int
	for a := 0; a < j; a++ {
		for _, v := range bd[a*k : (a+1)*k] {
			if v != 0 {
				rows = append(rows, a)
				break
			}
		}
	}
	out := blas64.General{Rows: n, Cols: k, Stride: k, Data: res}
	switch r := len(rows); {
	case r == 0:
	case 2*r <= j:
		xr := make([]float64, r*n) // (X's columns at rows)ᵀ, r×N
		br := make([]float64, r*k)
		for q, a := range rows {
			copy(xr[q*n:(q+1)*n], p.xt[a*n:(a+1)*n])
			copy(br[q*k:(q+1)*k], bd[a*k:(a+1)*k])
		}
		blas64.Gemm(blas.Trans, blas.NoTrans, 1,
			blas64.General{Rows: r, Cols: n, Stride: n, Data: xr},
			blas64.General{Rows: r, Cols: k, Stride: k, Data: br}, 1, out)
	default:
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1,
			blas64.General{Rows: n, Cols: j, Stride: j, Data: p.x},
			blas64.General{Rows: j, Cols: k, Stride: k, Data: bd}, 1, out)
	}
	return res
}

// Gap returns the Frank-Wolfe duality gap <∇(x), x − s> of the P1 form at a
// feasible x, summed over blocks, with s the oracle's vertex per block: a
// certificate P1(x) − P1* ≤ Gap(x), and F(B) ≤ P1(x), P1* = F*. An oracle
// that fails (a linear program) fails the gap with its message.
func (p *Problem) Gap(x []float64) (float64, error) {
	g := make([]float64, p.dim)
	p.FullGradient(x, g)
	gap := 0.0
	for b, bi := range p.info {
		gb := g[bi.off : bi.off+bi.size]
		xb := x[bi.off : bi.off+bi.size]
		s, err := p.CheckedLMO(b, gb)
		if err != nil {
			return math.NaN(), fmt.Errorf("the duality gap: %w", err)
		}
		for i, v := range gb {
			gap += v * xb[i]
		}
		gap -= s.Dot(gb)
	}
	return gap, nil
}

var (
	_ solver.Problem          = (*Problem)(nil)
	_ solver.LipschitzBounder = (*Problem)(nil)
	_ solver.Evaluator        = (*Problem)(nil)
	_ solver.CheckedOracle    = (*Problem)(nil)
	_ solver.SplitOracle      = (*Problem)(nil)
)

// BlocksCoupled reports whether two blocks share a component (row blocks):
// their gradients then depend on each other through the component's
// residual, and the block methods average simultaneous block moves (see
// solver.CoupledBlocks). Component blocks are independent.
func (p *Problem) BlocksCoupled() bool {
	seen := map[int]bool{}
	for _, b := range p.info {
		if seen[b.comp] {
			return true
		}
		seen[b.comp] = true
	}
	return false
}

// BlocksSeparable implements solver.SeparableBlocks: component blocks are
// separable (each owns its component's residual, XᵀX B_C, line scratch and
// vertex cache; the reshape of a block writes only its own coordinates), so
// a block method runs each block's whole step as one task. Row blocks are
// not (they share their component's residual).
func (p *Problem) BlocksSeparable() bool { return !p.BlocksCoupled() }

// spgEvalCost is what one evaluation of spg's iterate costs, in spg's
// iterations (its passes), for the default cadence: the lift to P1 form,
// the objective and the FW gap (a gradient and every block's oracle);
// measured at eight to twenty of its iterations.
const spgEvalCost = 20

// EvalCost is what one evaluation of a Frank-Wolfe iterate costs in passes,
// for the default cadence (solver.EvalCoster): F(B) from scratch, the full
// gradient and every block's oracle; measured at about three passes on
// component blocks, less on row blocks.
func (p *Problem) EvalCost() float64 { return 3 }
