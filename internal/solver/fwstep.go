package solver

import (
	"fmt"
	"math"
)

// One block's step of the paper's Algorithm 1 (lines 4–12; Algorithm 3's
// lines 7–13 for block l_i), planned at x^k without changing it: plan runs
// gradientEstimate (line 4), the oracle for the FW vertex p (line 5), the
// direction with the away vertex u and γ_max (lines 6–11, or the vanilla
// and pairwise variants), the descent test, the step rule (line 12) and
// snap (exact drops and collapses). Phase 2 (vru.go) applies the plan.

// planCurrent plans block bs's step of the current iteration.
func (st *fwRun) planCurrent(bs *blockState) { st.plan(bs, st.k, st.batch, st.wantErr) }

// stepCurrent plans and applies block bs's step of the current iteration
// (separable blocks: phases 1 and 2 in one task).
func (st *fwRun) stepCurrent(bs *blockState) {
	st.plan(bs, st.k, st.batch, st.wantErr)
	st.applyBlock(bs)
}

// plan decides block bs's step at the current x (phase 1; read-only on x,
// the model and the other blocks).
func (st *fwRun) plan(bs *blockState, k int, batch []int, wantErr bool) {
	pl := &bs.plan
	*pl = stepPlan{kind: StepNone, u: -1}
	xb := st.x[bs.blk.Offset : bs.blk.Offset+bs.blk.Size]
	g := st.gradientEstimate(bs, batch, wantErr) // line 4: g^(k) on the batch
	p := st.lmo(bs.idx, g)                       // line 5: the FW vertex p = O(g)
	pl.p = p
	gx, gp := dot(g, xb), p.Dot(g)
	// lines 6–11: the away vertex u, the direction and γ_max
	d, kind, slope, gmax, ok := st.direction(bs, gx, gp)
	if !ok {
		return
	}
	if !descends(pl, k, slope, gx, gp) {
		return
	}
	// line 12: the step rule
	gamma, evals, err := st.stepSize(bs, k, xb, d, slope, gmax, batch)
	pl.evals = evals
	if err != nil {
		pl.err = err
		return
	}
	if !(gamma > 0) {
		return
	}
	pl.slope, pl.gmax = slope, gmax
	// drops and collapses: a step that reaches γ_max is made exact
	pl.kind, pl.gamma, pl.drop = snap(kind, gamma, gmax, st.m.cfg.DropTol)
}

// gradientEstimate is line 4: g^(k), the gradient of block bs estimated on
// the batch J (nil: the exact gradient), into bs.g. On an evaluated
// iteration of a stochastic method it also takes the exact gradient and
// keeps ‖g − ∇_b F‖² for the record's grad_err, timed apart as evaluation
// work.
func (st *fwRun) gradientEstimate(bs *blockState, batch []int, wantErr bool) []float64 {
	pl := &bs.plan
	st.model.Gradient(bs.idx, bs.g, st.x, batch)
	g := bs.g
	if wantErr {
		te := Now()
		st.model.Gradient(bs.idx, bs.gfull, st.x, nil)
		e := 0.0
		for i, v := range g {
			d := v - bs.gfull[i]
			e += d * d
		}
		pl.gradErr = e
		pl.errDur = Now() - te
	}
	return g
}

// direction is lines 6–11: the direction d of the method's kind, its
// slope <g, d>, γ_max and the step's kind, given gx = <g, x_b> and
// gp = <g, p>. It reports false when there is no direction to take (the
// pairwise direction p − u is zero).
func (st *fwRun) direction(bs *blockState, gx, gp float64) (d Direction, kind string, slope, gmax float64, ok bool) {
	switch st.m.mode {
	case modeAway:
		d, kind, slope, gmax = st.awayOrFW(bs, gx, gp)
	case modePairwise:
		return st.pairwise(bs, gp)
	default:
		d, kind, slope, gmax = fwDirection(bs), StepFW, gp-gx, 1
	}
	return d, kind, slope, gmax, true
}

// fwDirection is line 8: d = p − x_b, with γ_max = 1.
func fwDirection(bs *blockState) Direction {
	bs.terms[0] = Term{Coef: 1, V: bs.plan.p}
	return Direction{XCoef: -1, Terms: bs.terms[:1]}
}

// awayOrFW is lines 6–11 of Algorithm 1: the away vertex u maximising
// <g, v> over the active set (line 6), and the away direction x_b − u with
// γ_max = μ_u/(1 − μ_u) when it descends more steeply than the FW
// direction, <g, p + u − 2x_b> > 0 (lines 7–11); else the FW direction.
// With one active vertex the away direction is zero: FW.
func (st *fwRun) awayOrFW(bs *blockState, gx, gp float64) (Direction, string, float64, float64) {
	pl := &bs.plan
	fwSlope := gp - gx
	d := fwDirection(bs)
	if bs.set.Len() <= 1 {
		return d, StepFW, fwSlope, 1
	}
	ui, gu := bs.set.Away(bs.g)
	pl.u, pl.uVertex, pl.hasAway = ui, bs.set.verts[ui], true
	awaySlope := gx - gu
	if !(fwSlope > awaySlope) {
		return d, StepFW, fwSlope, 1
	}
	mu := bs.set.w[ui]
	bs.terms[0] = Term{Coef: -1, V: pl.uVertex}
	return Direction{XCoef: 1, Terms: bs.terms[:1]}, StepAway, awaySlope, mu / (1 - mu)
}

// pairwise is the pairwise variant of lines 6–11: d = p − u with
// γ_max = μ_u; when p is the away vertex there is no pairwise direction
// (<g, x> = <g, p>) and the block is stationary.
func (st *fwRun) pairwise(bs *blockState, gp float64) (Direction, string, float64, float64, bool) {
	pl := &bs.plan
	ui, gu := bs.set.Away(bs.g)
	pl.u, pl.uVertex, pl.hasAway = ui, bs.set.verts[ui], true
	if pl.p.Key == pl.uVertex.Key {
		pl.stationary = true
		return Direction{}, StepPairwise, 0, 0, false
	}
	bs.terms[0], bs.terms[1] = Term{Coef: 1, V: pl.p}, Term{Coef: -1, V: pl.uVertex}
	return Direction{XCoef: 0, Terms: bs.terms[:2]}, StepPairwise, gp - gu, bs.set.w[ui], true
}

// descends reports whether the direction's slope is a descent beyond
// rounding. A slope at rounding level is no descent direction: the block
// stops there (stationary) rather than take steps of size 1e-16 forever; its
// FW gap is at most the chosen direction's −slope (away: the FW slope is
// the larger; pairwise: <g, x> ≤ <g, u>). A slope that is not finite fails
// the block.
func descends(pl *stepPlan, k int, slope, gx, gp float64) bool {
	if math.IsNaN(slope) || math.IsInf(slope, 0) {
		pl.err = fmt.Errorf("iteration %d: the gradient is not finite", k)
		return false
	}
	if !(slope < -1e-14*(math.Abs(gx)+math.Abs(gp))) {
		pl.stationary = true
		return false
	}
	return true
}

// snap makes a step that (nearly) reaches γ_max exact
// (ARCHITECTURE.md, "Vertex representation"): a FW step with γ ≥ 1 − δ is a
// collapse onto p (γ = 1), an away step with γ ≥ γ_max(1 − δ) a drop of u
// (γ = γ_max), and a pairwise step that empties u's weight a drop.
func snap(kind string, gamma, gmax, tol float64) (string, float64, bool) {
	switch kind {
	case StepFW:
		if gamma >= 1-tol {
			return StepCollapse, 1, false
		}
	case StepAway:
		if gamma >= gmax*(1-tol) {
			return StepDrop, gmax, false
		}
	case StepPairwise:
		if gamma >= gmax*(1-tol) {
			return StepPairwise, gmax, true
		}
	}
	return kind, gamma, false
}

// backtrackRound is the relative rounding allowance of the backtracking
// test, applied to the magnitude of the line's own values.
const backtrackRound = 1e-13

// dirSqNorm returns ‖d‖² for a block direction.
func dirSqNorm(buf, xb []float64, d Direction) float64 {
	for i := range buf {
		buf[i] = d.XCoef * xb[i]
	}
	for _, t := range d.Terms {
		t.V.AddTo(buf, t.Coef)
	}
	return dot(buf, buf)
}

// stepSize is line 12, the configured step rule: it returns γ ∈ [0, gmax]
// and the number of extra batch evaluations it made.
func (st *fwRun) stepSize(bs *blockState, k int, xb []float64, d Direction, slope, gmax float64, batch []int) (float64, int, error) {
	switch st.m.cfg.Step {
	case "open-loop":
		return math.Min(2/float64(k+1), gmax), 0, nil
	case "paper", "short":
		return st.paperStep(bs, xb, d, slope, gmax), 0, nil
	case "curvature":
		g, err := st.curvatureStep(bs, k, d, slope, gmax, batch)
		return g, 0, err
	case "backtrack":
		g, evals := st.backtrackStep(bs, xb, d, slope, gmax, batch)
		return g, evals, nil
	}
	return 0, 0, fmt.Errorf("unknown step-size rule %q", st.m.cfg.Step)
}

// paperStep is the paper's rule, γ = min(−<g, d>/(L‖d‖²), γ_max), with the
// user's L or the problem's bound.
func (st *fwRun) paperStep(bs *blockState, xb []float64, d Direction, slope, gmax float64) float64 {
	L := st.m.cfg.L
	if L == 0 {
		L = st.m.lAuto
	}
	dn2 := dirSqNorm(bs.d, xb, d)
	if dn2 == 0 {
		return 0
	}
	return math.Min(-slope/(L*dn2), gmax)
}

// curvatureStep minimises the quadratic upper bound with the directional
// curvature M of the problem's Line on [0, γ_cap], γ = min(−<g, d>/M, γ_cap),
// shrinking γ_cap while the step is under half of it (a smaller segment may
// have a smaller M).
func (st *fwRun) curvatureStep(bs *blockState, k int, d Direction, slope, gmax float64, batch []int) (float64, error) {
	line := st.model.Line(bs.idx, st.x, d, batch)
	gcap := gmax
	M := line.Curvature(gcap)
	for it := 0; ; it++ {
		var gam float64
		if M <= 0 {
			gam = gcap
		} else {
			gam = math.Min(-slope/M, gcap)
		}
		if math.IsNaN(gam) {
			return 0, fmt.Errorf("iteration %d: the curvature along the direction is not a number", k)
		}
		if gam >= 0.5*gcap || it == 60 {
			return gam, nil
		}
		gcap = math.Max(2*gam, gcap/64)
		M = line.Curvature(gcap)
	}
}

// backtrackStep is the paper's rule with an adaptive L: starting from 0.9
// times the block's last estimate, L doubles until the sufficient-decrease
// test φ(γ) − φ(0) ≤ γ<g, d> + ½Lγ²‖d‖² holds on the Line. It returns γ and
// the number of Line evaluations.
func (st *fwRun) backtrackStep(bs *blockState, xb []float64, d Direction, slope, gmax float64, batch []int) (float64, int) {
	line := st.model.Line(bs.idx, st.x, d, batch)
	dn2 := dirSqNorm(bs.d, xb, d)
	if dn2 == 0 {
		return 0, 0
	}
	L := bs.lEst * 0.9
	// φ is known to rounding only: a difference φ(γ) − φ(0) within
	// backtrackRound of the line's own magnitude says nothing about L,
	// so the test allows for it, as the proximal methods' backtracking
	// does. The allowance comes from this line's values alone (never
	// from the last evaluation, which would make the iterates depend on
	// the cadence).
	mag := 0.0
	if lm, ok := line.(LineMagnitude); ok {
		mag = math.Abs(lm.Magnitude())
	}
	for it := 1; it <= 60; it++ {
		gam := math.Min(-slope/(L*dn2), gmax)
		delta, quad := line.Delta(gam), gam*slope+0.5*L*gam*gam*dn2
		if delta <= quad {
			bs.lEst = L
			return gam, it
		}
		tol := backtrackRound * (mag + math.Abs(delta) + math.Abs(gam*slope) + 0.5*L*gam*gam*dn2)
		if delta <= quad+tol {
			// accepted within rounding: the test said nothing about L,
			// so the estimate is not lowered
			return gam, it
		}
		L *= 2
	}
	// No decrease even for a step 2⁶⁰ times shorter: take no step. If
	// no block moves, the run ends as stalled (the gap says how far from
	// stationary it is).
	return 0, 60
}
