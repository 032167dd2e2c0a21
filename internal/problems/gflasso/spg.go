package gflasso

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/fwlab/fwlab/internal/solver"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// SPGConfig configures the smoothing proximal gradient method.
type SPGConfig struct {
	// Mu is the smoothing parameter μ; 0 derives it from Eps.
	Mu float64
	// Eps is the target accuracy ε: μ = ε/(2D) with D = ½|E|J, the largest
	// value of ½‖A‖²_F over the dual box {A ∈ R^{|E|×J} : ‖A‖_∞ ≤ 1} (Chen et
	// al., Theorem 2: then F(B_t) − F* ≤ ε after O(√(L)/ε)-many steps). When
	// both are 0, Eps = DefaultEpsRel·F(0).
	Eps    float64
	Limits solver.Limits
}

// DefaultEpsRel is the default target accuracy of SPG relative to F(0).
const DefaultEpsRel = 1e-4

// SPG is the smoothing proximal gradient method of Chen, Lin, Kim, Carbonell
// and Xing (2012) for the GFLASSO. The fusion penalty
// γΣ_e w_e Σ_j |B_jm − s_e B_jl| = max_{‖A‖_∞≤1} <A, B Cᵀ> (C the |E|×K
// matrix with C_em = γw_e, C_el = −γs_e w_e) is replaced by its Nesterov
// smoothing f_μ(B) = max_{‖A‖_∞≤1} <A, BCᵀ> − (μ/2)‖A‖²_F, whose gradient
// A*C (A* = clip(BCᵀ/μ, −1, 1)) is Lipschitz with constant ‖C‖²/μ. FISTA
// then minimises ½‖Y − XB‖² + f_μ(B) + λ‖B‖₁ with step 1/L,
// L = λ_max(XᵀX) + γ²·2·max_k Σ_{e∋k} w_e²/μ (the bound ‖C‖² ≤ 2γ² max_k d_k
// of the paper), and soft-thresholding for λ‖B‖₁, with their momentum
// θ_t = 2/(t+2): W_{t+1} = B_{t+1} + ((1−θ_t)/θ_t)·θ_{t+1}·(B_{t+1} − B_t).
// It starts at B = 0 and reports the unsmoothed F. Record.Time counts the
// iterations' work only, not the evaluations (objective and FW gap), as the
// solver package does.
type SPG struct {
	p      *Problem
	mu, L  float64
	eps    float64
	limits solver.Limits
	xtx    []float64 // J×J when J ≤ N (nil otherwise)
	xty    []float64 // J×K when J ≤ N
	res    []float64 // N×K scratch for XW − Y when J > N
	// Scratch of the sparse product (J ≤ N): W's nonzero rows, the rows of
	// XᵀX and of W there.
	rows   []int
	gr, wr []float64
	// The edges with their entries in C: cw = γw_e, sg = s_e, cs = cw·sg
	// (none when γ = 0).
	edges []spgEdge
}

// spgEdge is an edge (m, l) of the task graph with its entries in C.
type spgEdge struct {
	m, l       int
	cw, sg, cs float64
}

// NewSPG configures SPG on p.
func NewSPG(p *Problem, cfg SPGConfig) (*SPG, error) {
	lim := cfg.Limits
	if lim.MaxIters < 1 {
		return nil, fmt.Errorf("spg: the iteration limit must be at least 1, got %d", lim.MaxIters)
	}
	if lim.EvalEvery < 0 {
		return nil, fmt.Errorf("spg: eval_every must be at least 1 (or 0 for the adaptive cadence), got %d", lim.EvalEvery)
	}
	if !(cfg.Mu >= 0) || !(cfg.Eps >= 0) || math.IsInf(cfg.Mu, 0) || math.IsInf(cfg.Eps, 0) {
		return nil, fmt.Errorf("spg: mu and eps must be numbers ≥ 0, got mu=%v, eps=%v", cfg.Mu, cfg.Eps)
	}
	s := &SPG{p: p, limits: lim}
	s.mu = cfg.Mu
	ne := len(p.graph.Edges)
	if s.mu == 0 && ne > 0 {
		s.eps = cfg.Eps
		if s.eps == 0 {
			s.eps = DefaultEpsRel * p.F(mat.NewDense(p.J, p.K, nil))
		}
		D := 0.5 * float64(ne) * float64(p.J)
		s.mu = s.eps / (2 * D)
		if !(s.mu > 0) {
			return nil, fmt.Errorf("spg: the smoothing parameter derived from eps = %v is not positive", s.eps)
		}
	}
	deg := make([]float64, p.K)
	for _, e := range p.graph.Edges {
		deg[e.M] += e.W * e.W
		deg[e.L] += e.W * e.W
	}
	dmax := 0.0
	for _, d := range deg {
		dmax = math.Max(dmax, d)
	}
	if p.opt.Gamma != 0 {
		for _, e := range p.graph.Edges {
			cw, sg := p.opt.Gamma*e.W, float64(e.Sign)
			s.edges = append(s.edges, spgEdge{m: e.M, l: e.L, cw: cw, sg: sg, cs: cw * sg})
		}
	}
	s.L = p.lip
	if ne > 0 && p.opt.Gamma > 0 {
		s.L += p.opt.Gamma * p.opt.Gamma * 2 * dmax / s.mu
	}
	n, j, k := p.N, p.J, p.K
	// The loss gradient is XᵀX W − XᵀY with the J×J Gram matrix when J ≤ N
	// (J²K a step), else Xᵀ(XW − Y) (2NJK a step, no J×J matrix).
	if j <= n {
		s.xtx = p.gram
		if s.xtx == nil {
			s.xtx = make([]float64, j*j)
			mat.NewDense(j, j, s.xtx).Mul(mat.NewDense(j, n, p.xt), mat.NewDense(n, j, p.x))
		}
		s.rows = make([]int, 0, j)
		s.gr = make([]float64, (j/2)*j)
		s.wr = make([]float64, (j/2)*k)
		s.xty = p.xty
		if s.xty == nil {
			s.xty = make([]float64, j*k)
			mat.NewDense(j, k, s.xty).Mul(mat.NewDense(j, n, p.xt), mat.NewDense(n, k, p.y))
		}
	} else {
		s.res = make([]float64, n*k)
	}
	return s, nil
}

// Mu returns the smoothing parameter in use.
func (s *SPG) Mu() float64 { return s.mu }

// Lipschitz returns the step constant L.
func (s *SPG) Lipschitz() float64 { return s.L }

// smoothGrad writes the gradient of ½‖Y − XB‖² + f_μ(B) at W (J×K
// row-major) into g.
func (s *SPG) smoothGrad(W, g []float64) {
	p := s.p
	j, k := p.J, p.K
	if s.xtx == nil {
		// r = XW − Y, then g = Xᵀr (Xᵀ is kept row-major).
		copy(s.res, p.y)
		n := p.N
		spgGemm(blas.NoTrans, blas.NoTrans, 1,
			blas64.General{Rows: n, Cols: j, Stride: j, Data: p.x},
			blas64.General{Rows: j, Cols: k, Stride: k, Data: W},
			-1, blas64.General{Rows: n, Cols: k, Stride: k, Data: s.res})
		spgGemm(blas.NoTrans, blas.NoTrans, 1,
			blas64.General{Rows: j, Cols: n, Stride: n, Data: p.xt},
			blas64.General{Rows: n, Cols: k, Stride: k, Data: s.res},
			0, blas64.General{Rows: j, Cols: k, Stride: k, Data: g})
	} else {
		// g = XᵀX W − XᵀY. W is B plus momentum, and soft-thresholding
		// leaves most rows of B zero: only the columns of XᵀX at W's
		// nonzero rows count. With few of them they are gathered (XᵀX is
		// symmetric, so its rows serve) for one J×r by r×K product, else
		// one J×J by J×K product (spgGemm).
		for i, v := range s.xty {
			g[i] = -v
		}
		rows := s.rows[:0]
		for b := 0; b < j; b++ {
			for _, w := range W[b*k : (b+1)*k] {
				if w != 0 {
					rows = append(rows, b)
					break
				}
			}
		}
		s.rows = rows
		switch r := len(rows); {
		case r == 0:
		case 2*r <= j:
			gr, wr := s.gr[:r*j], s.wr[:r*k]
			for i, b := range rows {
				copy(gr[i*j:(i+1)*j], s.xtx[b*j:(b+1)*j])
				copy(wr[i*k:(i+1)*k], W[b*k:(b+1)*k])
			}
			spgGemm(blas.Trans, blas.NoTrans, 1,
				blas64.General{Rows: r, Cols: j, Stride: j, Data: gr},
				blas64.General{Rows: r, Cols: k, Stride: k, Data: wr},
				1, blas64.General{Rows: j, Cols: k, Stride: k, Data: g})
		default:
			spgGemm(blas.NoTrans, blas.NoTrans, 1,
				blas64.General{Rows: j, Cols: j, Stride: j, Data: s.xtx},
				blas64.General{Rows: j, Cols: k, Stride: k, Data: W},
				1, blas64.General{Rows: j, Cols: k, Stride: k, Data: g})
		}
	}
	// The smoothed fusion gradient A*C, edge by edge down W's rows: A's
	// column for edge e is clip(γw_e(W_·m − s_e W_·l)/μ, −1, 1).
	mu := s.mu
	for _, e := range s.edges {
		cw, sg, cs, m, l := e.cw, e.sg, e.cs, e.m, e.l
		for a := 0; a+k <= len(W) && a+k <= len(g); a += k {
			u := cw * (W[a+m] - sg*W[a+l]) / mu
			if u > 1 {
				u = 1
			} else if u < -1 {
				u = -1
			}
			g[a+m] += cw * u
			g[a+l] -= cs * u
		}
	}
}

// spgState is the iterate of SPG: B_t, the momentum point W, the gradient
// buffer, θ_t and t.
type spgState struct {
	B, W, g []float64
	theta   float64
	it      int
}

func (s *SPG) newState() *spgState {
	n := s.p.J * s.p.K
	return &spgState{B: make([]float64, n), W: make([]float64, n), g: make([]float64, n), theta: 1}
}

// step is one SPG iteration: the gradient at W, the proximal step for
// λ‖·‖₁ (soft-thresholding) and the momentum update.
func (s *SPG) step(st *spgState) {
	st.it++
	B, W, g := st.B, st.W, st.g
	s.smoothGrad(W, g)
	// B_{t+1} = soft-threshold(W − g/L, λ/L) and W = B_{t+1} +
	// coef·(B_{t+1} − B_t) in one pass.
	thr := s.p.opt.Lambda / s.L
	thetaNext := 2 / float64(st.it+2)
	coef := (1 - st.theta) / st.theta * thetaNext
	L := s.L
	for i := 0; i < len(B) && i < len(W) && i < len(g); i++ {
		v := W[i] - g[i]/L
		b0 := B[i]
		var b float64
		switch {
		case v > thr:
			b = v - thr
		case v < -thr:
			b = v + thr
		}
		B[i] = b
		W[i] = b + coef*(b-b0)
	}
	st.theta = thetaNext
}

// Run implements solver.Method.
func (s *SPG) Run(ctx context.Context, rec solver.Recorder) (solver.Result, error) {
	p := s.p
	j, k := p.J, p.K
	st := s.newState()
	B := st.B
	x := make([]float64, p.Dim())
	sum := solver.Summary{Status: solver.StatusMaxIters}
	lastObj, lastGap := math.NaN(), math.NaN()
	passes := 0.0
	var work time.Duration // time spent in iterations, evaluations excluded
	// evaluate fills the record's objective and gap at B and returns a status
	// ("converged", "failed" or "").
	evaluate := func(r *solver.Record) string {
		Bm := mat.NewDense(j, k, B)
		feasible := p.Lift(x, Bm)
		obj := p.F(Bm)
		r.Objective = solver.F(obj)
		lastObj, lastGap = obj, math.NaN()
		if math.IsNaN(obj) || math.IsInf(obj, 0) {
			sum.Message = "the objective is not finite"
			return solver.StatusFailed
		}
		if feasible {
			gap, err := p.Gap(x)
			if err != nil {
				sum.Message = err.Error()
				return solver.StatusFailed
			}
			r.Gap = solver.F(gap)
			lastGap = gap
			if s.limits.GapTol > 0 && gap <= s.limits.GapTol {
				return solver.StatusConverged
			}
		}
		return ""
	}
	cad := solver.NewCadence(s.limits.EvalEvery, spgEvalCost)
	// k = 0: the starting point B = 0.
	r0 := solver.Record{K: 0, Step: solver.StepNone}
	if st := evaluate(&r0); st != "" {
		rec.Record(r0)
		sum.Status = st
		sum.Objective, sum.Gap = lastObj, lastGap
		return solver.Result{Summary: sum, X: x}, nil
	}
	rec.Record(r0)
	for it := 1; ; it++ {
		t0 := time.Now()
		s.step(st)
		passes++
		work += time.Since(t0)
		r := solver.Record{K: it, Passes: passes, Step: solver.StepProx, Gamma: 1 / s.L, Batch: p.N}
		status := ""
		switch {
		case ctx.Err() != nil:
			status = solver.StatusCancelled
		case it >= s.limits.MaxIters:
			status = solver.StatusMaxIters
		case s.limits.MaxPasses > 0 && passes >= s.limits.MaxPasses:
			status = solver.StatusMaxPasses
		}
		if cad.Due(it, status != "" || solver.EvalRequested(rec), passes) {
			switch st := evaluate(&r); {
			case st == solver.StatusFailed, st != "" && status == "":
				status = st
			}
		}
		r.Time = work.Seconds()
		rec.Record(r)
		if status != "" {
			sum.Status = status
			sum.Iters = it
			break
		}
	}
	sum.Objective, sum.Gap = lastObj, lastGap
	sum.Passes, sum.Time = passes, work.Seconds()
	if math.IsNaN(lastGap) && sum.Message == "" {
		sum.Message = "the lifted point is outside the P1 bound, so no FW gap is reported"
	}
	return solver.Result{Summary: sum, X: x}, nil
}
