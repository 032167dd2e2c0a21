package ssvm

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/fwlab/fwlab/internal/solver"
)

// Algorithm names.
const (
	AlgoBCFW   = "bcfw"
	AlgoBCFWAS = "bcfw-as"
	AlgoSSG    = "ssg"
)

// StepSG is the step kind of the stochastic subgradient method.
const StepSG = "sg"

// DefaultDropTol is δ: an away step with γ ≥ γ̄(1−δ) is snapped to an exact
// drop, and active weights below δ are zeroed (counted as clean-ups).
const DefaultDropTol = 1e-10

// Options configures one solver run.
type Options struct {
	Algo string
	// Average reports the weighted average w̄ ← k/(k+2)·w̄ + 2/(k+2)·w (with
	// the matching ℓ̄) as the run's objective and gap.
	Average bool
	// Schedule is bcfw-as's feature-sampling batch schedule m_k over the d
	// coordinates of w (ignored by the other algorithms).
	Schedule solver.Schedule
	Limits   solver.Limits
	Seed     int64
	DropTol  float64 // 0: DefaultDropTol
}

// atom is one active labelling of a block with its weight α_i(y).
type atom struct {
	y      []int
	loss   float64 // L_i(y)
	weight float64
}

// Method is one configured run of bcfw, bcfw-as or ssg on a Problem. It
// implements solver.Method.
type Method struct {
	p   *Problem
	o   Options
	rng *rand.Rand

	w, wavg       []float64
	lz            *lazyAvg  // bcfw and bcfw-as with averaging: w̄ kept lazily (wavg is formed on demand)
	wt            []float64 // w's emission blocks in feature-major order (F×K), kept equal to w's (see wStale)
	wStale        bool      // w's own emission blocks lag behind wt (block steps update wt only)
	rrow          []float64 // K: one letter's change of the emission weights (scratch)
	nzl           []int     // K: its nonzero labels (scratch)
	r26           [26]float64
	tT, ub, lb    []float64 // w's transitions by predecessor, bounds on their rows (ub ≥ max, lb ≤ min)
	transOK       bool      // every transition weight is finite
	tJT, ubJ, lbJ []float64 // the same for I_J w (bcfw-as)
	ell, lavg     float64
	mu            []float64 // letters × K: unary marginals Σ_y α_i(y)[y_t = k]
	mtd           []float64 // K²: the transition marginals of the block being stepped, dense (zero between steps)
	elli          []float64 // ℓ_i = Σ_y α_i(y) L_i(y)/n
	act           [][]atom  // bcfw-as active sets

	// scratch
	dec               *decoder
	E, EJ             []float64
	acc               []float64 // 4K partial sums of the emission scores
	wJ, wJt           []float64
	perm              []int
	ys, yb            []int
	du, dtr, duA, dtA []float64
	dots              []float64 // maxLen inner products (scratch)
	nzF, nzA, nzU     []int32   // the nonzero labels of each row of du, duA and the change of μ (row t: nz[off[t]:off[t+1]])
	offF, offA, offU  []int
	muOld, mtOld      []float64
	// Block i's nonzero transition marginals: supN[i] increasing indices
	// and their values at tStart[i] in the arenas tsup and tval, with room
	// for tCap[i] (a block that outgrows its room moves to the arenas' end).
	tsup                 []uint16
	tval                 []float64
	tStart, tCap, supN   []int32
	tS, tA, uFW, uA      []int     // transition index lists (scratch)
	pool                 [][][]int // labellings of atoms that left, by length, for reuse
	arena                []int     // storage for new labellings
	atoms                []atom    // storage for active sets that outgrow their room
	next                 int       // the next block, drawn ahead (−1: none)
	next2                int       // the block after it, when drawn ahead too (−1: none)
	ev                   *evaluator
	k                    int
	last                 *Eval
	lastPlain            *Eval
	statDrops, statClean int
	nAct                 int // active labellings summed over the blocks (bcfw-as)
}

var _ solver.Method = (*Method)(nil)

// NewMethod configures a run.
func (p *Problem) NewMethod(o Options) (*Method, error) {
	switch o.Algo {
	case AlgoBCFW, AlgoSSG:
	case AlgoBCFWAS:
		if err := o.Schedule.Validate(); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("algo: the structural SVM runs bcfw-as, bcfw or ssg, got %q", o.Algo)
	}
	if o.Limits.MaxIters < 1 {
		return nil, fmt.Errorf("iters: must be at least 1, got %d", o.Limits.MaxIters)
	}
	if o.Limits.EvalEvery < 0 {
		return nil, fmt.Errorf("eval every: must be at least 1 (or 0 for the default cadence), got %d", o.Limits.EvalEvery)
	}
	if o.DropTol == 0 {
		o.DropTol = DefaultDropTol
	}
	if !(o.DropTol > 0 && o.DropTol < 1e-3) {
		return nil, fmt.Errorf("drop tolerance: must lie in (0, 1e-3), got %v", o.DropTol)
	}
	m := &Method{p: p, o: o}
	m.reset()
	return m, nil
}

// reset puts every block at its true labelling (α_i = e_{y_i}, w = 0, ℓ = 0):
// Algorithm 4's lines 1–2 with w_i = 0.
func (m *Method) reset() {
	p := m.p
	K, D := p.K, p.D
	ds := p.Train
	m.rng = rand.New(rand.NewPCG(uint64(m.o.Seed), 0x55f3a11))
	m.w = make([]float64, D)
	m.wavg = make([]float64, D)
	m.wt = make([]float64, K*p.F)
	m.wStale = false
	m.rrow = make([]float64, K)
	m.nzl = make([]int, K)
	m.tT, m.ub, m.lb, m.transOK = make([]float64, K*K), make([]float64, K), make([]float64, K), true
	m.ell, m.lavg = 0, 0
	m.k = 0
	m.next, m.next2 = -1, -1
	ml := maxLen(ds)
	m.allocScratch(ml)
	m.ev = newEvaluator(p)
	if m.o.Algo == AlgoSSG {
		return
	}
	m.allocBlocks()
	for i, wd := range ds.Words {
		truth := ds.Y[wd.Start : wd.Start+wd.Len]
		m.setMarginals(i, truth, 1)
		m.storeTrans(i, transitions(truth, K, m.tS))
	}
	if m.o.Algo == AlgoBCFWAS {
		m.startActiveSets(ml)
	}
}

// allocScratch makes the per-step scratch for words of at most ml letters.
func (m *Method) allocScratch(ml int) {
	K := m.p.K
	m.dec = newDecoder(K, ml)
	m.E, m.EJ = make([]float64, ml*K), make([]float64, ml*K)
	m.dots = make([]float64, ml)
	m.nzF, m.nzA, m.nzU = make([]int32, 0, ml*K), make([]int32, 0, ml*K), make([]int32, 0, ml*K)
	m.offF, m.offA, m.offU = make([]int, 0, ml+1), make([]int, 0, ml+1), make([]int, 0, ml+1)
	m.acc = make([]float64, 4*K)
	m.ys, m.yb = make([]int, ml), make([]int, ml)
	m.du, m.duA, m.muOld = make([]float64, ml*K), make([]float64, ml*K), make([]float64, ml*K)
	m.dtr, m.dtA, m.mtOld = make([]float64, K*K), make([]float64, K*K), make([]float64, K*K)
}

// allocBlocks makes the blocks' marginals, the arenas of their transition
// marginals (room for about four labellings' transitions each), their
// losses and the lazy average (block methods).
func (m *Method) allocBlocks() {
	p := m.p
	K, n := p.K, p.N()
	ds := p.Train
	m.mu = largeFloats(ds.Letters() * K)
	m.mtd = make([]float64, K*K)
	m.tStart, m.tCap, m.supN = make([]int32, n), make([]int32, n), make([]int32, n)
	room := 0
	for i, wd := range ds.Words {
		c := min(K*K, 4*(wd.Len-1)+16)
		m.tStart[i], m.tCap[i] = int32(room), int32(c)
		room += c
	}
	m.tsup, m.tval = make([]uint16, room, 2*room), make([]float64, room, 2*room)
	m.tS, m.tA = make([]int, 0, K*K), make([]int, 0, K*K)
	m.uFW, m.uA = make([]int, 0, K*K), make([]int, 0, K*K)
	m.elli = make([]float64, n)
	m.lz = nil
	if m.o.Average {
		m.lz = newLazyAvg(p)
	}
}

// startActiveSets is "U_[i] = {y_i}, μ_{y_i} = 1" for every block, and the
// scratch of the coordinate sampling (bcfw-as).
func (m *Method) startActiveSets(ml int) {
	p := m.p
	K, D, n := p.K, p.D, p.N()
	ds := p.Train
	// Room for four atoms per block from the start; the labellings
	// come from a shared arena.
	const room = 4
	m.act = make([][]atom, n)
	m.nAct = n
	atoms := make([]atom, n*room)
	m.pool = make([][][]int, ml+1)
	for i, wd := range ds.Words {
		m.act[i] = append(atoms[i*room:i*room:(i+1)*room], atom{y: m.newLabels(ds.Y[wd.Start : wd.Start+wd.Len]), loss: 0, weight: 1})
	}
	m.wJ = make([]float64, D)
	m.wJt = make([]float64, K*p.F)
	m.tJT, m.ubJ, m.lbJ = make([]float64, K*K), make([]float64, K), make([]float64, K)
	m.perm = make([]int, D)
	for j := range m.perm {
		m.perm[j] = j
	}
}

// ssgStep performs iteration k (1-based) of the stochastic subgradient
// method: w ← (1−γ)w + γ·ψ_i(y*)/λ with γ = 1/k.
func (m *Method) ssgStep(k int) stepInfo {
	p := m.p
	K := p.K
	ds := p.Train
	i := m.rng.IntN(p.N())
	wd := ds.Words[i]
	L := wd.Len
	truth := ds.Y[wd.Start : wd.Start+L]
	E := m.E[:L*K]
	p.sx.emissionsGather(wd, K, m.w, E)
	first, last, trans := p.parts(m.w)
	s := m.ys[:L]
	m.dec.Viterbi(E, first, last, trans, truth, s)
	gamma := 1 / float64(k)
	for j := range m.w {
		m.w[j] *= 1 - gamma
	}
	p.AddFeatures(m.w, ds, wd, truth, gamma/p.Lambda)
	p.AddFeatures(m.w, ds, wd, s, -gamma/p.Lambda)
	return stepInfo{kind: StepSG, gamma: gamma, batch: p.D}
}

// iterate performs the next iteration: one block step (or subgradient
// step), the once-per-pass refresh of w and ℓ, and the weighted average.
func (m *Method) iterate() stepInfo {
	m.k++
	k := m.k
	var info stepInfo
	if m.o.Algo == AlgoSSG {
		info = m.ssgStep(k)
	} else {
		info = m.blockStep(k)
		if k%m.p.N() == 0 { // refresh w and ℓ from the blocks once per pass
			if m.lz != nil {
				m.lz.flushAllCoords(m.w[m.p.offFirst:], int64(k))
			}
			m.ell = m.recomputeW(m.w)
			m.wStale = false
			m.refreshCopies()
		}
		if k%boundsEvery == 0 {
			m.tightenBounds()
		}
		// Draw the next block now (the random numbers come in the same
		// order) and start loading its data, which arrives while the
		// average is updated. When step k+1 draws nothing else (no
		// feature sampling), the block after it is drawn too, which is
		// the same sequence of draws, and its index entries are loaded
		// a step ahead.
		n := m.p.N()
		if m.next2 >= 0 {
			m.next, m.next2 = m.next2, -1
		} else {
			m.next = m.rng.IntN(n)
		}
		if m.o.Algo == AlgoBCFW || m.o.Schedule.Size(k+1, m.p.D) >= m.p.D {
			m.next2 = m.rng.IntN(n)
			m.touchIndex(m.next2)
		}
		m.touch(m.next)
	}
	if m.o.Average {
		// ℓ̄ ← (1−ρ)ℓ̄ + ρℓ; w̄ likewise, lazily for the block methods (see
		// lazyAvg), for ssg (whose every step changes all of w) in one
		// sweep, each product rounded before the sum exactly as in the
		// elementwise expression.
		rho := 2 / float64(k+1)
		if m.lz == nil {
			averageInto(m.wavg, m.w, 1-rho, rho)
		}
		m.lavg = (1-rho)*m.lavg + rho*m.ell
	}
	return info
}

// runState is what Run keeps across its iterations: how the run ends (""
// while it goes on) and the last evaluation.
type runState struct {
	lim         solver.Limits
	status, msg string
	lastEval    *Eval
}

// Run runs the method until a limit is reached or ctx is cancelled.
func (m *Method) Run(ctx context.Context, rec solver.Recorder) (solver.Result, error) {
	st := &runState{lim: m.o.Limits}
	lim := st.lim
	n := m.p.N()
	// work is the time spent iterating; evaluations (full decoding passes)
	// are not counted, as in every other method.
	var work time.Duration
	// With EvalEvery = 0 the evaluations (each a few passes' worth of
	// decoding) follow the default cadence of the solver package, decided by
	// counted work: an evaluation is due once the passes since the last one
	// reach solver.EvalRatio times an evaluation's cost in passes
	// (evalCost). The iterates do not depend on which iterations are
	// evaluated.
	cad := solver.NewCadence(lim.EvalEvery, m.evalCost())
	// k = 0: the starting point (every block at its true labelling, w = 0).
	// Three clock readings per iteration: when its work starts (which also
	// ends the previous record's span in the Recorder), when it ends, and
	// when the record is handed to the Recorder.
	r0 := solver.Record{K: 0, Step: solver.StepNone, Active: m.activeSize()}
	m.evalInto(st, &r0)
	rec.Record(r0)
	for st.status == "" {
		if err := ctx.Err(); err != nil {
			st.status, st.msg = solver.StatusCancelled, err.Error()
			break
		}
		t0 := solver.Now()
		info := m.iterate()
		k := m.k
		passes := float64(k) / float64(n)
		last := k >= lim.MaxIters || (lim.MaxPasses > 0 && passes >= lim.MaxPasses)
		r := stepRecord(k, passes, info, m.activeSize())
		// the record's own figures are part of the iteration's work
		work += solver.Now() - t0
		if cad.Due(k, last || solver.EvalRequested(rec), passes) {
			m.evalInto(st, &r)
		}
		r.Time = work.Seconds()
		rec.Record(r)
		if st.status != "" {
			break
		}
		if k >= lim.MaxIters {
			st.status = solver.StatusMaxIters
			break
		}
		if lim.MaxPasses > 0 && passes >= lim.MaxPasses {
			st.status = solver.StatusMaxPasses
			break
		}
	}
	return m.result(st, work), nil
}

// evalInto evaluates the current iterate into r (the primal objective, the
// duality gap when there is a dual iterate, the problem's own figures) and
// ends the run failed on a non-finite objective, converged at the gap
// target.
func (m *Method) evalInto(st *runState, r *solver.Record) {
	ev := m.evaluate()
	st.lastEval = &ev
	r.Objective = solver.F(ev.Primal)
	if ev.HasDual {
		r.Gap = solver.F(ev.Gap)
	}
	r.Extra = m.extra(ev)
	if math.IsNaN(ev.Primal) || math.IsInf(ev.Primal, 0) {
		st.status, st.msg = solver.StatusFailed, fmt.Sprintf("iteration %d: the primal objective is not finite (λ = %g may be too small)", r.K, m.p.Lambda)
	} else if ev.HasDual && st.lim.GapTol > 0 && ev.Gap <= st.lim.GapTol {
		st.status, st.msg = solver.StatusConverged, fmt.Sprintf("duality gap %.3g ≤ %g", ev.Gap, st.lim.GapTol)
	}
}

// stepRecord is the record of iteration k, unevaluated.
func stepRecord(k int, passes float64, info stepInfo, active int) solver.Record {
	r := solver.Record{K: k, Passes: passes, Step: info.kind, Gamma: info.gamma,
		Batch: info.batch, Active: active, Drops: info.drops, Cleanups: info.cleanups}
	switch info.kind {
	case solver.StepFW, solver.StepCollapse:
		r.FWSteps = 1
	case solver.StepAway, solver.StepDrop:
		r.AwaySteps = 1
	}
	return r
}

// result is the run's summary, from its last evaluation, and its weights
// (averaged when the method averages).
func (m *Method) result(st *runState, work time.Duration) solver.Result {
	n := m.p.N()
	sum := solver.Summary{Iters: m.k, Passes: float64(m.k) / float64(n), Time: work.Seconds(), Status: st.status, Message: st.msg}
	// Without an evaluation (or, for ssg, without a dual iterate) the figures
	// are unknown: NaN, written as null in JSON.
	sum.Objective, sum.Gap = math.NaN(), math.NaN()
	if lastEval := st.lastEval; lastEval != nil {
		sum.Objective = lastEval.Primal
		if lastEval.HasDual {
			sum.Gap = lastEval.Gap
		} else if sum.Message == "" {
			sum.Message = "ssg keeps no dual iterate: no duality gap is reported"
		}
	}
	x := m.weights()
	if m.o.Average {
		x = m.avgWeights()
	}
	return solver.Result{Summary: sum, X: append([]float64(nil), x...)}
}

// evalCost is one evaluation's cost in passes, for the default cadence:
// every training word's emission scores and its two decodings (with the
// loss term, for the primal and the gap, and without, for the error), where
// an iteration decodes one word once, and the test set's likewise, for the
// iterate, and again for the average when the iterates are averaged.
func (m *Method) evalCost() float64 {
	c := 2.0
	if m.p.Test != nil {
		c += 2 * float64(m.p.Test.Letters()) / float64(m.p.Train.Letters())
	}
	if m.o.Average {
		c *= 2
	}
	return c
}

// activeSize is the number of active labellings summed over the blocks
// (bcfw-as; 0 for bcfw and ssg), kept up to date by updateActive.
func (m *Method) activeSize() int { return m.nAct }

// evaluate evaluates the reported iterate (and the plain iterate as well
// when averaging), keeping both for the record's Extra.
func (m *Method) evaluate() Eval {
	hasDual := m.o.Algo != AlgoSSG
	var plain Eval
	if m.k == 0 && m.p.K >= 2 { // the start: w = 0, ℓ = 0
		plain = m.ev.AtZero(hasDual)
	} else {
		plain = m.ev.Evaluate(m.weights(), m.ell, hasDual)
	}
	m.lastPlain = &plain
	// Up to k = 1 the average is the iterate itself (w̄ = w = 0 at the
	// start, and the weight of w is 2/(k+1) = 1 at k = 1): one evaluation
	// serves both.
	if !m.o.Average || m.k <= 1 {
		m.last = &plain
		return plain
	}
	avg := m.ev.Evaluate(m.avgWeights(), m.lavg, hasDual)
	m.last = &avg
	return avg
}

func (m *Method) extra(rep Eval) map[string]float64 {
	pl := m.lastPlain
	x := map[string]float64{"primal": rep.Primal, "primal_plain": pl.Primal, "train_err": pl.TrainErr}
	if rep.HasDual {
		x["dual"] = rep.Dual
		x["gap_plain"] = pl.Gap
		x["dual_plain"] = pl.Dual
		if rep.Primal > 0 {
			x["rel_gap"] = rep.Gap / rep.Primal
		}
	}
	if m.p.Test != nil {
		x["test_err"] = pl.TestErr
	}
	if m.o.Average {
		x["train_err_avg"] = rep.TrainErr
		if m.p.Test != nil {
			x["test_err_avg"] = rep.TestErr
		}
	}
	return x
}

// defaultLimits are the limits of the package's tests and benchmarks that
// compare traces: evaluations every quarter pass, pinned.
func defaultLimits(n int) solver.Limits {
	return solver.Limits{MaxIters: 1 << 30, EvalEvery: max(1, n/4)}
}
