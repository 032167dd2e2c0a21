package solver

import (
	"math"
)

// evaluate returns the exact objective and the FW duality gap
// Σ_b <∇_b F(x), x_b − s_b> at the current iterate.
func (st *fwRun) evaluate() (float64, float64) {
	if err := st.syncModel(); err != nil {
		st.evalErr = err
		return math.NaN(), math.NaN()
	}
	gap := 0.0
	for _, bs := range st.bs {
		xb := st.x[bs.blk.Offset : bs.blk.Offset+bs.blk.Size]
		st.model.Gradient(bs.idx, bs.gfull, st.x, nil)
		s, err := evalOracle(st.m.p, bs.idx, bs.gfull)
		if err != nil {
			st.evalErr = err
			return math.NaN(), math.NaN()
		}
		gap += dot(bs.gfull, xb) - s.Dot(bs.gfull)
	}
	return st.m.p.Objective(st.x), gap
}

// finalEvaluate evaluates the last iterate for the summary; after a failure
// the problem's code may fail again, which leaves the figures unknown (NaN)
// rather than ending the run with a panic.
func (st *fwRun) finalEvaluate() (obj, gap float64) {
	defer func() {
		if p := recover(); p != nil {
			obj, gap = math.NaN(), math.NaN()
		}
	}()
	return st.evaluate()
}

// refresh recomputes x from the active sets and the model from x, which
// bounds the drift of the incremental updates.
func (st *fwRun) refresh() {
	for _, bs := range st.bs {
		bs.set.Point(st.x[bs.blk.Offset : bs.blk.Offset+bs.blk.Size])
	}
	st.model.Reset(st.x)
}

// trace2D adds the iterate, the step's FW and away vertices and the active
// weights to the record of a two-dimensional single-block problem, for the
// dashboard's teaching view.
func (st *fwRun) trace2D(r *Record, bs *blockState) {
	if st.dim != 2 || st.q != 1 {
		return
	}
	set := st.bs[0].set
	if r.Extra == nil {
		// sized once: the iterate, the two vertices of the step and the weights
		r.Extra = make(map[string]float64, 6+len(set.verts))
	}
	r.Extra["x0"], r.Extra["x1"] = st.x[0], st.x[1]
	if st.weightKeys == nil {
		st.weightKeys = map[string]string{}
	}
	for i, v := range set.verts {
		wk, ok := st.weightKeys[v.Key]
		if !ok {
			wk = "w:" + v.Key
			st.weightKeys[v.Key] = wk
		}
		r.Extra[wk] = set.w[i]
	}
	if bs == nil {
		return
	}
	pt := func(prefix string, v Vertex) {
		c := [2]float64{}
		v.AddTo(c[:], 1)
		r.Extra[prefix+"_x0"], r.Extra[prefix+"_x1"] = c[0], c[1]
	}
	pt("fw", bs.plan.p)
	if bs.plan.hasAway {
		pt("away", bs.plan.uVertex)
	}
}

// stallWindow is the number of iterations (times q/r for block methods, and
// at least the iteration of the last progress) without progress after which
// a run ends as stalled.
const stallWindow = 1000

// progress watches the evaluated iterations for a run that no longer makes
// progress: within a window, the best objective must fall by more than
// rounding (1e-12 relative) or the best gap by 1%. (The reported objective
// need not be what the method decreases: GFLASSO reports F(B) while the
// method decreases its P1 upper bound, and F(B) may rise for long stretches
// while the gap falls.)
type progress struct {
	window         int
	since          int // iteration where the current window started
	refObj, refGap float64
	bestObj        float64
	bestGap        float64
}

func (p *progress) reset(k int, obj, gap float64) {
	p.since, p.refObj, p.refGap, p.bestObj, p.bestGap = k, obj, gap, obj, gap
}

// stalled records an evaluation at iteration k and reports whether the
// window has passed without progress.
func (p *progress) stalled(k int, obj, gap float64) bool {
	p.bestObj, p.bestGap = math.Min(p.bestObj, obj), math.Min(p.bestGap, gap)
	if p.bestObj < p.refObj-1e-12*math.Abs(p.refObj) || p.bestGap <= 0.99*p.refGap {
		p.reset(k, p.bestObj, p.bestGap)
		return false
	}
	// the window grows with the run: a long run must also have gone on for
	// as long again as it took to reach its last progress
	return k-p.since >= max(p.window, p.since)
}

// passCount counts effective passes exactly. Work is measured in
// sample·coordinate units (a batch of m samples on a block of s coordinates
// costs m·s) and one pass is n·dim of them; counting in integers keeps long
// runs free of the drift a running float sum picks up.
type passCount struct {
	unit, whole, rem int64
}

func (c passCount) plus(units int64) passCount {
	c.rem += units
	if c.rem >= c.unit {
		c.whole += c.rem / c.unit
		c.rem %= c.unit
	}
	return c
}

func (c passCount) value() float64 {
	return float64(c.whole) + float64(c.rem)/float64(c.unit)
}
