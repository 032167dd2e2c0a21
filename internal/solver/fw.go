package solver

import (
	"fmt"
	"math"
	"time"
)

// mode is the kind of direction a Frank-Wolfe variant may take.
type mode int

const (
	modeVanilla  mode = iota // FW directions only
	modeAway                 // FW or away directions (Algorithms 1 and 3)
	modePairwise             // pairwise directions p − u
)

// Tolerances of the vertex representation (ARCHITECTURE.md, "Vertex representation").
const (
	// snapTol is δ: an away (or pairwise) step with γ ≥ γ_max(1−δ) is snapped
	// to γ_max, an exact drop; a FW step with γ ≥ 1−δ to an exact collapse.
	snapTol = 1e-9
	// weightTol: active weights at or below it are removed and the rest
	// renormalised (counted in Record.Cleanups).
	weightTol = 1e-13
)

// fwMethod runs every Frank-Wolfe variant: one engine, one block or many.
type fwMethod struct {
	p          Problem
	cfg        Config
	blocks     []Block
	mode       mode
	reshape    bool // collapse a Reshaper problem's slack after the steps (Variant.Reshape)
	stochastic bool // batches follow cfg.Schedule (else full gradients)
	r          int  // blocks per iteration
	blockwise  bool // r of q blocks sampled per iteration
	lAuto      float64
	coupled    bool // the problem's blocks are coupled (CoupledBlocks)
	separable  bool // a block's whole step is one task (SeparableBlocks)
	// afterIter, when set (by tests), sees the state after every iteration.
	afterIter func(st *fwRun, r Record)
	// beforeCommit and beforeCleanup, when set (by tests), see a block's
	// active set before its planned step is applied to it and after it,
	// before the clean-up; they may run on the block workers.
	beforeCommit, beforeCleanup func(bs *blockState)
}

// blockState is one block's active set, buffers and the plan of its step.
type blockState struct {
	idx   int
	blk   Block
	set   *ActiveSet
	g     []float64
	gfull []float64
	d     []float64
	g2    []float64 // coupled line search: the batch gradient at x + D
	terms [2]Term   // the planned direction's terms
	lEst  float64   // backtracking estimate of L
	plan  stepPlan
	// cleanups: the weights phase 2 cleaned up in this block; rebuilt: the
	// atoms its slack collapse's rebuild removed
	cleanups, rebuilt int
}

// stepPlan is what phase 1 decides for a block; phase 2 applies it.
type stepPlan struct {
	kind    string
	gamma   float64
	p       Vertex
	u       int // index of the away vertex in the active set (-1: none)
	uVertex Vertex
	hasAway bool
	drop    bool    // a pairwise step that empties u's weight
	slope   float64 // <g, d> of the planned direction (batch gradient)
	gmax    float64 // γ_max of the planned direction
	moved   bool    // x and the model already carry the step (coupled line search)
	d0, d1  float64 // coupled line search: <g(x), Δ_b> and <g(x + D), Δ_b>
	// stationary: no step because no direction descends beyond rounding
	stationary bool
	evals      int           // extra batch evaluations (backtracking)
	gradErr    float64       // ‖g − ∇_b F‖² on evaluation iterations
	errDur     time.Duration // time spent on that evaluation work
	err        error
}

// New configures a Frank-Wolfe-type algorithm on p, as cfg's Variant
// says it runs (its directions, batches, blocks and slack collapse): the
// built-in ones are "ssfw-as" (Algorithm 1; on a problem with several
// blocks every block steps each iteration), "afw", "pfw", "fw",
// "bc-ssfw-as" (Algorithm 3) and "bcfw".
func New(p Problem, cfg Config) (Method, error) {
	m := &fwMethod{p: p, cfg: cfg, blocks: p.Blocks()}
	v := cfg.variant()
	switch v.Method {
	case "away":
		m.mode = modeAway
	case "pairwise":
		m.mode = modePairwise
	case "fw":
		m.mode = modeVanilla
		if v.Reshape {
			return nil, fmt.Errorf("solver: %s: the slack collapse needs away or pairwise directions, not Frank-Wolfe steps only", cfg.Algorithm)
		}
	case "":
		return nil, fmt.Errorf("solver: unknown Frank-Wolfe algorithm %q (no variant given, and not a built-in one)", cfg.Algorithm)
	default:
		return nil, fmt.Errorf("solver: unknown Frank-Wolfe algorithm %q: it runs as %q, not as Frank-Wolfe directions (fw, away or pairwise)", cfg.Algorithm, v.Method)
	}
	m.stochastic, m.blockwise, m.reshape = v.Stochastic, v.Blockwise, v.Reshape
	if err := checkLimits(cfg.Limits); err != nil {
		return nil, err
	}
	if len(m.blocks) == 0 || p.Dim() < 1 {
		return nil, fmt.Errorf("solver: the problem has no variables")
	}
	if p.Samples() < 1 {
		return nil, fmt.Errorf("solver: the problem has no samples")
	}
	if err := m.configure(p, cfg); err != nil {
		return nil, err
	}
	return m, nil
}

// configure checks and sets, in this order, the batch schedule, the blocks
// per iteration, the step rule with its L, and what the problem's optional
// interfaces and the tolerances' defaults say.
func (m *fwMethod) configure(p Problem, cfg Config) error {
	if err := m.setSchedule(cfg); err != nil {
		return err
	}
	if err := m.setBlocks(cfg); err != nil {
		return err
	}
	if err := m.setStep(p, cfg); err != nil {
		return err
	}
	if c, ok := p.(CoupledBlocks); ok && c.BlocksCoupled() {
		m.coupled = true
	}
	if s, ok := p.(SeparableBlocks); ok && s.BlocksSeparable() && !m.coupled {
		m.separable = true
	}
	if m.cfg.DropTol == 0 {
		m.cfg.DropTol = snapTol
	}
	if m.cfg.RefreshEvery <= 0 {
		m.cfg.RefreshEvery = 256
	}
	return nil
}

// setSchedule takes the batch schedule m_k of a stochastic method; the
// others take full gradients.
func (m *fwMethod) setSchedule(cfg Config) error {
	if !m.stochastic {
		if cfg.Schedule.Kind != "" && cfg.Schedule.Kind != "full" {
			return fmt.Errorf("schedule: %s uses full gradients; only ssfw-as and bc-ssfw-as take a batch schedule", cfg.Algorithm)
		}
		m.cfg.Schedule = Schedule{Kind: "full"}
		return nil
	}
	return cfg.Schedule.Validate()
}

// setBlocks takes r, the blocks a block method samples per iteration (all
// q for the others).
func (m *fwMethod) setBlocks(cfg Config) error {
	q := len(m.blocks)
	m.r = q
	if m.blockwise && cfg.R > 0 {
		if cfg.R > q {
			return fmt.Errorf("r: must be at most the number of blocks q = %d, got %d", q, cfg.R)
		}
		m.r = cfg.R
	} else if cfg.R < 0 {
		return fmt.Errorf("r: must be at least 1 (or 0 for all blocks), got %d", cfg.R)
	}
	return nil
}

// setStep takes the step rule and L; the paper and short rules without a
// user's L take the problem's bound.
func (m *fwMethod) setStep(p Problem, cfg Config) error {
	switch cfg.Step {
	case "", "curvature":
		m.cfg.Step = "curvature"
	case "paper", "backtrack":
	case "open-loop", "short":
	default:
		return fmt.Errorf("stepsize: must be paper, curvature, backtrack, open-loop or short, got %q", cfg.Step)
	}
	if cfg.L < 0 || math.IsNaN(cfg.L) || math.IsInf(cfg.L, 0) {
		return fmt.Errorf("L: must be a positive number or auto, got %v", cfg.L)
	}
	if (m.cfg.Step == "paper" || m.cfg.Step == "short") && cfg.L == 0 {
		lb, ok := p.(LipschitzBounder)
		if !ok {
			return fmt.Errorf("L: this problem has no automatic bound; give a number")
		}
		m.lAuto = lb.LipschitzBound()
		if !(m.lAuto > 0) || math.IsInf(m.lAuto, 0) {
			return fmt.Errorf("L: the automatic bound is not a positive finite number (%v); give a number", m.lAuto)
		}
	}
	return nil
}

func checkLimits(l Limits) error {
	if l.MaxIters < 1 {
		return fmt.Errorf("iters: must be at least 1, got %d", l.MaxIters)
	}
	if l.EvalEvery < 0 {
		return fmt.Errorf("eval_every: must be at least 1 (or 0 for the default cadence), got %d", l.EvalEvery)
	}
	if l.MaxPasses < 0 || math.IsNaN(l.MaxPasses) {
		return fmt.Errorf("passes: must be non-negative, got %v", l.MaxPasses)
	}
	if l.GapTol < 0 || math.IsNaN(l.GapTol) {
		return fmt.Errorf("gap: must be non-negative, got %v", l.GapTol)
	}
	return nil
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i, x := range a {
		s += x * b[i]
	}
	return s
}
