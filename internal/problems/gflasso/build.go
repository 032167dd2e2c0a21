package gflasso

import (
	"context"
	"fmt"
	"math"

	"github.com/fwlab/fwlab/internal/solver"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
)

// maxGramEntries bounds the J×J Gram matrix that an instance keeps (32 MB).
const maxGramEntries = 1 << 22

// maxLPEntries bounds the dense constraint matrix of the LP oracle
// ((edges + 1) × (2·tasks + 2·edges + 1) numbers, 8 MB): a component that
// needs a larger one is refused rather than left to exhaust the memory.
const maxLPEntries = 1_000_000

// maxCutWork bounds J·k³ for a component whose oracle uses minimum cuts: at
// the bound (k = 100 tasks with J = 50 rows) a call takes one to a few
// seconds on one core, and the time grows about as k³.
const maxCutWork = 50_000_000

// New builds the instance from X (N×J) and Y (N×K).
func New(X, Y *mat.Dense, opt Options) (*Problem, error) {
	return NewContext(context.Background(), X, Y, opt)
}

// NewContext is New that gives up, returning ctx's error, when ctx ends
// between the steps of the build (the task graph, each component's
// vertices, the bounds T_C, λ_max).
func NewContext(ctx context.Context, X, Y *mat.Dense, opt Options) (*Problem, error) {
	cancelled := func() error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("gflasso: building the instance: %w", err)
		}
		return nil
	}
	opt, err := checkInput(X, Y, opt)
	if err != nil {
		return nil, err
	}
	g, err := BuildGraph(Y, opt.Threshold)
	if err != nil {
		return nil, err
	}
	if err := cancelled(); err != nil {
		return nil, err
	}
	n, j := X.Dims()
	_, k := Y.Dims()
	p := &Problem{N: n, J: j, K: k, opt: opt, graph: g}
	p.copyData(X, Y)
	if err := p.buildComponents(cancelled); err != nil {
		return nil, err
	}
	// Bounds T_C. Vertex coordinates are at most T_C/λ (ω_C ≥ λ‖·‖₁ and
	// the atoms have entries ±1); they must stay far from overflow.
	if err := cancelled(); err != nil {
		return nil, err
	}
	p.compT, p.hatRank = p.bounds(X)
	if err := cancelled(); err != nil {
		return nil, err
	}
	for ci, T := range p.compT {
		if r := T / opt.Lambda; math.IsInf(r, 0) || math.IsNaN(r) || r > 1e150 {
			return nil, optErr("lambda", "%v is too small for this data: the vertices of component %d reach T/λ = %v (T = %v)", opt.Lambda, ci, r, T)
		}
	}
	p.layoutBlocks()
	p.lip, p.gram = lambdaMax(p.x, p.xt, n, j)
	if p.gram != nil {
		p.xty = make([]float64, j*k)
		mat.NewDense(j, k, p.xty).Mul(mat.NewDense(j, n, p.xt), mat.NewDense(n, k, p.y))
	}
	return p, nil
}

// checkInput checks the shapes of X and Y, the options and the data's
// entries, and returns opt with its defaults filled in (bound hat, blocks
// component, enum_max 12).
func checkInput(X, Y *mat.Dense, opt Options) (Options, error) {
	n, j := X.Dims()
	ny, k := Y.Dims()
	if ny != n {
		return opt, fmt.Errorf("gflasso: X has %d rows but Y has %d (one row per sample in both)", n, ny)
	}
	if n < 2 || j < 1 || k < 1 {
		return opt, fmt.Errorf("gflasso: need N ≥ 2, J ≥ 1, K ≥ 1, got N=%d, J=%d, K=%d", n, j, k)
	}
	if !(opt.Lambda > 0) || math.IsInf(opt.Lambda, 0) {
		return opt, optErr("lambda", "must be a positive number (the feasible set is unbounded otherwise), got %v", opt.Lambda)
	}
	if !(opt.Gamma >= 0) || math.IsInf(opt.Gamma, 0) {
		return opt, optErr("gamma", "must be a number ≥ 0, got %v", opt.Gamma)
	}
	if opt.Bound == "" {
		opt.Bound = "hat"
	}
	if opt.Bound != "hat" && opt.Bound != "norm" {
		return opt, optErr("bound", "must be hat or norm, got %q", opt.Bound)
	}
	if opt.Blocks == "" {
		opt.Blocks = "component"
	}
	if opt.Blocks != "component" && opt.Blocks != "row" {
		return opt, optErr("blocks", "must be component or row, got %q", opt.Blocks)
	}
	if opt.EnumMax == 0 {
		opt.EnumMax = 12
	}
	if opt.EnumMax < 0 || opt.EnumMax > maxEnumTasks {
		return opt, optErr("enum_max", "must lie in [1, %d], got %d", maxEnumTasks, opt.EnumMax)
	}
	for _, m := range []*mat.Dense{X, Y} {
		r, c := m.Dims()
		for a := 0; a < r; a++ {
			for b := 0; b < c; b++ {
				if v := m.At(a, b); math.IsNaN(v) || math.IsInf(v, 0) {
					return opt, fmt.Errorf("gflasso: non-finite entry %v at row %d, column %d", v, a+1, b+1)
				}
			}
		}
	}
	return opt, nil
}

// copyData keeps X row-major and column-major, and Y row-major.
func (p *Problem) copyData(X, Y *mat.Dense) {
	n, j, k := p.N, p.J, p.K
	p.x = make([]float64, n*j)
	p.xt = make([]float64, n*j)
	for i := 0; i < n; i++ {
		for a := 0; a < j; a++ {
			v := X.At(i, a)
			p.x[i*j+a] = v
			p.xt[a*n+i] = v
		}
	}
	p.y = make([]float64, n*k)
	for i := 0; i < n; i++ {
		for c := 0; c < k; c++ {
			p.y[i*k+c] = Y.At(i, c)
		}
	}
}

// buildComponents makes the components of the task graph with their
// edges, norms and atoms, and chooses each one's oracle: enumeration of
// its vertices, minimum cuts after a switching of signs, or the LP. It
// refuses a component whose oracle would be too costly, and gives up with
// cancelled's error between components.
func (p *Problem) buildComponents(cancelled func() error) error {
	g, opt, j := p.graph, p.opt, p.J
	where := make([]int, p.K) // task → local index in its component
	compOf := make([]int, p.K)
	for ci, tasks := range g.Components {
		for a, t := range tasks {
			where[t], compOf[t] = a, ci
		}
	}
	p.comps = make([]*component, len(g.Components))
	for ci, tasks := range g.Components {
		p.comps[ci] = &component{tasks: tasks, lambda: opt.Lambda, gamma: opt.Gamma}
	}
	for _, e := range g.Edges {
		c := p.comps[compOf[e.M]]
		c.edges = append(c.edges, localEdge{a: where[e.M], b: where[e.L], w: e.W, s: float64(e.Sign)})
	}
	for _, c := range p.comps {
		if err := cancelled(); err != nil {
			return err
		}
		if len(c.tasks) <= opt.EnumMax {
			if err := c.enumerate(); err != nil && err != errTooMany {
				return err
			}
			if c.enumerated() {
				c.prepareBound()
			}
		}
		if !c.enumerated() && !opt.ForceLP {
			c.tau = c.switching()
		}
		if k := float64(len(c.tasks)); !c.enumerated() && c.tau != nil && float64(j)*k*k*k > maxCutWork {
			// The cut oracle: minimum cuts on the dense graph of the
			// component, for each of the J rows, about J·k³ steps a call.
			return optErr("threshold", "%v leaves a component of %d tasks; its minimum-cut oracle would take about J·k³ = %.3g steps a call, more than %.0e (raise threshold to split it, or use fewer covariates J)",
				opt.Threshold, len(c.tasks), float64(j)*k*k*k, float64(maxCutWork))
		}
		if !c.enumerated() && c.tau == nil {
			// The LP oracle: a dense simplex tableau per row of B.
			k, ne := len(c.tasks), len(c.edges)
			if e := float64(ne+1) * float64(2*k+2*ne+1); e > maxLPEntries {
				return optErr("threshold", "%v leaves a component of %d tasks and %d edges whose signs admit no switching; its oracle would solve linear programs of %.3g entries, more than %.0e (raise threshold for fewer edges, or enum_max up to %d to enumerate components that small)",
					opt.Threshold, k, ne, e, float64(maxLPEntries), maxEnumTasks)
			}
		}
	}
	return nil
}

// layoutBlocks lays out the blocks of the variable: one per component
// (blocks=component) or one per row of each component (blocks=row), each
// with its epigraph coordinate t last; and the per-block vertex e_t and
// vertex cache.
func (p *Problem) layoutBlocks() {
	j := p.J
	off := 0
	for ci, c := range p.comps {
		kc := len(c.tasks)
		if p.opt.Blocks == "component" {
			p.info = append(p.info, blockInfo{comp: ci, r0: 0, r1: j, T: p.compT[ci], off: off, size: j*kc + 1})
			off += j*kc + 1
			continue
		}
		for r := 0; r < j; r++ {
			p.info = append(p.info, blockInfo{comp: ci, r0: r, r1: r + 1, T: p.compT[ci], off: off, size: kc + 1})
			off += kc + 1
		}
	}
	p.dim = off
	for _, b := range p.info {
		p.blocks = append(p.blocks, solver.Block{Offset: b.off, Size: b.size})
		p.tvert = append(p.tvert, solver.Vertex{Key: "t", Idx: []int{b.size - 1}, Val: []float64{1}})
	}
	p.vcache = make([]vertexCache, len(p.info))
}

// bounds returns T_C for every component and whether rank X = J.
//
// T_C must be ≥ Ω_C(B*_C). Since F_C(B*_C) ≤ F_C(0) = ½‖Y_C‖², Ω_C(B*_C) ≤
// ½‖Y_C‖² − ½‖Y_C − X B*_C‖² ≤ ½‖Y_C‖² − ½‖(I − P_X)Y_C‖² = ½‖P_X Y_C‖².
// With blocks=row the same T_C bounds every row's ω_C(B*_{j,C}), since each
// is at most Ω_C(B*_C).
func (p *Problem) bounds(X *mat.Dense) ([]float64, bool) {
	T := make([]float64, len(p.comps))
	full := false
	hat := make([]float64, p.K) // ½‖P_X y_t‖² per task, when rank X = J
	if p.N >= p.J {
		// Householder QR of X; Qᵀ is applied to Y without forming Q (N×N).
		qr := mat.DenseCopyOf(X).RawMatrix()
		tau := make([]float64, p.J)
		work := []float64{0}
		lapack64.Geqrf(qr, tau, work, -1)
		work = make([]float64, max(int(work[0]), 1))
		lapack64.Geqrf(qr, tau, work, len(work))
		dmax := 0.0
		for a := 0; a < p.J; a++ {
			dmax = math.Max(dmax, math.Abs(qr.Data[a*qr.Stride+a]))
		}
		full = dmax > 0
		for a := 0; a < p.J; a++ {
			if math.Abs(qr.Data[a*qr.Stride+a]) <= 1e-10*dmax*float64(p.N) {
				full = false
			}
		}
		if full && p.opt.Bound == "hat" {
			// ‖P_X y‖² = ‖Q₁ᵀ y‖², Q₁ the first J columns of Q.
			qty := blas64.General{Rows: p.N, Cols: p.K, Stride: p.K, Data: append([]float64(nil), p.y...)}
			lapack64.Ormqr(blas.Left, blas.Trans, qr, tau, qty, work, -1)
			if need := int(work[0]); need > len(work) {
				work = make([]float64, need)
			}
			lapack64.Ormqr(blas.Left, blas.Trans, qr, tau, qty, work, len(work))
			for a := 0; a < p.J; a++ {
				for t, v := range qty.Data[a*qty.Stride : a*qty.Stride+p.K] {
					hat[t] += v * v
				}
			}
		}
	}
	for ci, c := range p.comps {
		s := 0.0
		for _, t := range c.tasks {
			if p.opt.Bound == "hat" && full {
				s += hat[t]
			} else {
				for i := 0; i < p.N; i++ {
					v := p.y[i*p.K+t]
					s += v * v
				}
			}
		}
		T[ci] = s / 2
	}
	return T, full
}

// lambdaMax returns the largest eigenvalue of XᵀX, from the smaller of the
// Gram matrices XᵀX (J×J) and XXᵀ (N×N), which share their nonzero
// eigenvalues, and XᵀX itself (J×J row-major) when J ≤ N and J² ≤
// maxGramEntries (else nil). x is X row-major, xt is Xᵀ row-major.
func lambdaMax(x, xt []float64, n, j int) (float64, []float64) {
	var g mat.SymDense
	var gram []float64
	if j <= n {
		g.SymOuterK(1, mat.NewDense(j, n, xt)) // XᵀX = (Xᵀ)(Xᵀ)ᵀ
		if j*j <= maxGramEntries {
			gram = make([]float64, j*j)
			raw := g.RawSymmetric() // upper triangle
			for a := 0; a < j; a++ {
				for b := a; b < j; b++ {
					v := raw.Data[a*raw.Stride+b]
					gram[a*j+b], gram[b*j+a] = v, v
				}
			}
		}
	} else {
		g.SymOuterK(1, mat.NewDense(n, j, x)) // XXᵀ
	}
	var eig mat.EigenSym
	if !eig.Factorize(&g, false) {
		// Fall back to the trace, a valid (loose) bound.
		tr := 0.0
		for a := 0; a < g.SymmetricDim(); a++ {
			tr += g.At(a, a)
		}
		return tr, gram
	}
	vals := eig.Values(nil)
	return vals[len(vals)-1], gram
}
