package solver

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
)

func limits(iters int) Limits { return Limits{MaxIters: iters, EvalEvery: 1} }

type collect struct{ recs []Record }

func (c *collect) Record(r Record) { c.recs = append(c.recs, r) }

func mustNew(t *testing.T, p Problem, cfg Config) *fwMethod {
	t.Helper()
	m, err := New(p, cfg)
	if err != nil {
		t.Fatalf("New(%s): %v", cfg.Algorithm, err)
	}
	return m.(*fwMethod)
}

// checkInvariants verifies, after an iteration, everything the paper's
// analysis relies on: feasibility, weights ≥ 0 summing to one, x = Σ μ_v v,
// z = A x (no drift), and that a drop step really dropped its vertex.
func checkInvariants(t *testing.T, st *fwRun, r Record, added map[int]int) {
	t.Helper()
	checkInvariantsOf(t, st, r, added, st.m.p.(*lsqProblem))
}

func checkInvariantsOf(t *testing.T, st *fwRun, r Record, added map[int]int, p *lsqProblem) {
	t.Helper()
	for _, b := range st.chosen {
		bs := st.bs[b]
		xb := st.x[bs.blk.Offset : bs.blk.Offset+bs.blk.Size]
		sum := 0.0
		for j := 0; j < bs.set.Len(); j++ {
			_, w := bs.set.Vertex(j)
			if !(w > 0) {
				t.Fatalf("k=%d block %d: active weight %v is not positive", r.K, bs.idx, w)
			}
			sum += w
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Fatalf("k=%d block %d: weights sum to %v", r.K, bs.idx, sum)
		}
		pt := make([]float64, len(xb))
		bs.set.Point(pt)
		nx := math.Sqrt(dot(xb, xb))
		for j := range xb {
			if math.Abs(pt[j]-xb[j]) > 1e-12*math.Max(1, nx) {
				t.Fatalf("k=%d block %d: x[%d] = %v but Σ μ v = %v", r.K, bs.idx, j, xb[j], pt[j])
			}
			if xb[j] < -1e-12 {
				t.Fatalf("k=%d: infeasible x[%d] = %v", r.K, j, xb[j])
			}
		}
		if s := sumOf(xb); math.Abs(s-1) > 1e-12 {
			t.Fatalf("k=%d block %d: x leaves the simplex (sum %v)", r.K, bs.idx, s)
		}
		pl := bs.plan
		if (pl.kind == StepDrop || pl.drop) && bs.set.Weight(pl.uVertex.Key) != 0 {
			t.Fatalf("k=%d: drop step kept vertex %s", r.K, pl.uVertex.Key)
		}
		if pl.kind == StepFW || pl.kind == StepCollapse || pl.kind == StepPairwise {
			added[bs.idx]++
		}
		if bs.set.Len() > added[bs.idx]+1 {
			t.Fatalf("k=%d block %d: |U| = %d exceeds the %d vertices added", r.K, bs.idx, bs.set.Len(), added[bs.idx]+1)
		}
		if pl.gamma < 0 {
			t.Fatalf("k=%d: negative step %v", r.K, pl.gamma)
		}
	}
	fresh := p.NewModel(st.x).(*lsqModel)
	got := st.model.(*lsqModel)
	for i := 0; i < p.n; i++ {
		if math.Abs(fresh.z(i)-got.z(i)) > 1e-11*(1+math.Abs(fresh.z(i))) {
			t.Fatalf("k=%d: z[%d] drifted: incremental %v, recomputed %v", r.K, i, got.z(i), fresh.z(i))
		}
	}
}

func sumOf(a []float64) float64 {
	s := 0.0
	for _, v := range a {
		s += v
	}
	return s
}

func TestInvariantsEveryMethod(t *testing.T) {
	cases := []struct {
		algo string
		step string
		q, r int
		sch  Schedule
		cara bool
	}{
		{"ssfw-as", "curvature", 1, 0, Schedule{Kind: "paper", Rho: 0.1, Alpha: 0.5}, false},
		{"ssfw-as", "paper", 1, 0, Schedule{Kind: "constant", M0: 5}, false},
		{"ssfw-as", "backtrack", 1, 0, Schedule{Kind: "geometric", M0: 2, Growth: 1.2}, false},
		{"afw", "curvature", 1, 0, Schedule{}, false},
		{"afw", "curvature", 1, 0, Schedule{}, true},
		{"pfw", "curvature", 1, 0, Schedule{}, false},
		{"fw", "open-loop", 1, 0, Schedule{}, false},
		{"fw", "short", 1, 0, Schedule{}, false},
		{"bc-ssfw-as", "curvature", 4, 2, Schedule{Kind: "paper", Rho: 0.1, Alpha: 0.5}, false},
		{"bcfw", "curvature", 4, 1, Schedule{}, false},
	}
	for _, c := range cases {
		t.Run(c.algo+"/"+c.step, func(t *testing.T) {
			p := newLSQFace(3, 60, 10, c.q)
			m := mustNew(t, p, Config{Algorithm: c.algo, Step: c.step, Schedule: c.sch, R: c.r, Caratheodory: c.cara, Limits: limits(400), Seed: 5})
			added := map[int]int{}
			kinds := map[string]int{}
			m.afterIter = func(st *fwRun, r Record) {
				checkInvariants(t, st, r, added)
				for _, b := range st.chosen {
					kinds[st.bs[b].plan.kind]++
				}
				if c.cara {
					for _, bs := range st.bs {
						if bs.set.Len() > bs.blk.Size+1 {
							t.Fatalf("Carathéodory: |U| = %d > p+1", bs.set.Len())
						}
					}
				}
			}
			var rec collect
			res, err := m.Run(context.Background(), &rec)
			if err != nil || res.Summary.Status == StatusFailed {
				t.Fatalf("run: %v %+v", err, res.Summary)
			}
			if len(rec.recs) < 2 || rec.recs[0].K != 0 {
				t.Fatalf("records: %d", len(rec.recs))
			}
			t.Logf("%s: final gap %.3g, step kinds %v", c.algo, res.Summary.Gap, kinds)
			if c.algo == "afw" || c.algo == "ssfw-as" {
				if kinds[StepAway]+kinds[StepDrop] == 0 {
					t.Errorf("no away step was ever taken")
				}
			}
		})
	}
}

// fitSlope returns the least-squares slope of ys against xs.
func fitSlope(xs, ys []float64) float64 {
	n := float64(len(xs))
	mx, my := sumOf(xs)/n, sumOf(ys)/n
	num, den := 0.0, 0.0
	for i := range xs {
		num += (xs[i] - mx) * (ys[i] - my)
		den += (xs[i] - mx) * (xs[i] - mx)
	}
	return num / den
}

// TestLinearConvergenceOnAFace: a strongly convex quadratic over the simplex
// with the optimum on a face. The away-step methods converge linearly
// (log gap falls along a straight line in k); vanilla FW with the open-loop
// step stays sublinear (log gap falls along a line in log k with slope ≈ −1).
func TestLinearConvergenceOnAFace(t *testing.T) {
	// n > p: AᵀA/n is positive definite. The run starts at vertex e_1, a
	// coordinate with a negative target, which the optimum does not use
	// (checked below): the methods must remove it from the active set.
	p := startAt{newLSQFace(11, 200, 12, 1), 1}
	type res struct {
		iters int
		gaps  []float64
		drops int
		aways int
		x     []float64
	}
	run := func(algo, step string, sch Schedule, iters int) res {
		m := mustNew(t, p, Config{Algorithm: algo, Step: step, Schedule: sch, Limits: Limits{MaxIters: iters, EvalEvery: 1, GapTol: 1e-10}, Seed: 1})
		var rec collect
		out, err := m.Run(context.Background(), &rec)
		if err != nil {
			t.Fatal(err)
		}
		var gaps []float64
		drops, aways := 0, 0
		for _, r := range rec.recs {
			if r.Gap != nil {
				gaps = append(gaps, *r.Gap)
			}
			drops += r.Drops
			if r.Step == StepAway || r.Step == StepDrop {
				aways++
			}
		}
		return res{out.Summary.Iters, gaps, drops, aways, out.X}
	}
	paper := Schedule{Kind: "paper", Rho: 0.1, Alpha: 0.5}
	for _, c := range []struct {
		algo string
		sch  Schedule
	}{{"afw", Schedule{}}, {"pfw", Schedule{}}, {"ssfw-as", paper}} {
		r := run(c.algo, "curvature", c.sch, 20000)
		final := r.gaps[len(r.gaps)-1]
		if math.Abs(r.x[p.v]) > 1e-12 {
			t.Fatalf("%s: the optimum uses the start vertex (x = %v): the test problem does not force a drop", c.algo, r.x)
		}
		if final > 1e-10 {
			t.Fatalf("%s: gap %.3g after %d iterations, want ≤ 1e-10", c.algo, final, r.iters)
		}
		// fit log(gap) against k over the second half of the run (the
		// linear regime, after the batch has grown for ssfw-as).
		var ks, ls []float64
		for k := len(r.gaps) / 2; k < len(r.gaps); k++ {
			if r.gaps[k] > 0 {
				ks = append(ks, float64(k))
				ls = append(ls, math.Log(r.gaps[k]))
			}
		}
		rate := math.Exp(fitSlope(ks, ls))
		t.Logf("%s: gap ≤ 1e-10 after %d iterations; fitted linear rate gap_{k+1}/gap_k ≈ %.4f; %d away steps, %d drops", c.algo, r.iters, rate, r.aways, r.drops)
		// the optimum lies on a face: the start vertex and others picked up
		// on the way must leave the active set, by drop steps (an away or
		// pairwise step that empties a weight, snapped to an exact drop)
		if r.drops == 0 {
			t.Errorf("%s: no drop step on the way to a face", c.algo)
		}
		if c.algo != "pfw" && r.aways == 0 {
			t.Errorf("%s: no away step", c.algo)
		}
		if !(rate < 0.999) {
			t.Errorf("%s: no linear rate (fitted ratio %.5f)", c.algo, rate)
		}
	}
	r := run("fw", "open-loop", Schedule{}, 2000)
	final := r.gaps[len(r.gaps)-1]
	var lk, lg []float64
	for k := 100; k < len(r.gaps); k++ {
		lk = append(lk, math.Log(float64(k)))
		lg = append(lg, math.Log(r.gaps[k]))
	}
	// vanilla FW's gap oscillates; fit the running minimum.
	for i := 1; i < len(lg); i++ {
		lg[i] = math.Min(lg[i], lg[i-1])
	}
	slope := fitSlope(lk, lg)
	t.Logf("fw (open-loop): gap %.3g after %d iterations; log gap ~ %.2f·log k (sublinear)", final, r.iters, slope)
	if final < 1e-8 {
		t.Errorf("fw reached gap %.3g: the test problem does not separate the methods", final)
	}
	if slope < -2.5 {
		t.Errorf("fw's gap falls faster than any power law (slope %.2f)", slope)
	}
}

// startAt starts every block at vertex v instead of vertex 0.
type startAt struct {
	*lsqProblem
	v int
}

func (p startAt) Start(b int) Vertex { return p.vertex(b, p.v) }

// stripTime zeroes wall-clock fields, the only ones allowed to differ
// between runs with the same seed.
func stripTime(rs []Record) []Record {
	out := append([]Record(nil), rs...)
	for i := range out {
		out[i].Time = 0
	}
	return out
}

func TestReproducibleFromSeed(t *testing.T) {
	p := newLSQFace(5, 80, 5, 6)
	run := func(algo string, workers int, seed int64) []Record {
		cfg := Config{Algorithm: algo, Schedule: Schedule{Kind: "paper", Rho: 0.2, Alpha: 0.5}, R: 3, Workers: workers, Limits: limits(300), Seed: seed}
		if algo == "afw" {
			cfg.Schedule, cfg.R = Schedule{}, 0
		}
		var rec collect
		if _, err := mustNew(t, p, cfg).Run(context.Background(), &rec); err != nil {
			t.Fatal(err)
		}
		return stripTime(rec.recs)
	}
	a, b := run("bc-ssfw-as", 1, 9), run("bc-ssfw-as", 4, 9)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("bc-ssfw-as: 1 and 4 workers give different traces")
	}
	if c := run("bc-ssfw-as", 4, 9); !reflect.DeepEqual(a, c) {
		t.Fatal("bc-ssfw-as: the same seed gives different traces")
	}
	if d := run("bc-ssfw-as", 4, 10); reflect.DeepEqual(a, d) {
		t.Fatal("bc-ssfw-as: different seeds give the same trace")
	}
	if x, y := run("ssfw-as", 1, 3), run("ssfw-as", 2, 3); !reflect.DeepEqual(x, y) {
		t.Fatal("ssfw-as: the same seed gives different traces")
	}
	// coupled blocks: the line search along the summed move takes its
	// slopes on the workers too
	coupled := func(workers int) []Record {
		cfg := Config{Algorithm: "bc-ssfw-as", Schedule: Schedule{Kind: "paper", Rho: 0.2, Alpha: 0.5}, Workers: workers, Limits: limits(200), Seed: 4}
		var rec collect
		if _, err := mustNew(t, coupledLSQ{p}, cfg).Run(context.Background(), &rec); err != nil {
			t.Fatal(err)
		}
		return stripTime(rec.recs)
	}
	if a, b := coupled(1), coupled(4); !reflect.DeepEqual(a, b) {
		t.Fatal("coupled bc-ssfw-as: 1 and 4 workers give different traces")
	}
	// many small blocks, taken in chunks by the workers
	many := newLSQFace(6, 40, 3, 64)
	for _, algo := range []string{"bc-ssfw-as", "bcfw"} {
		runMany := func(workers int) []Record {
			cfg := Config{Algorithm: algo, Workers: workers, Limits: limits(100), Seed: 2}
			if algo == "bc-ssfw-as" {
				cfg.Schedule = Schedule{Kind: "paper", Rho: 0.2, Alpha: 0.5}
			}
			var rec collect
			if _, err := mustNew(t, many, cfg).Run(context.Background(), &rec); err != nil {
				t.Fatal(err)
			}
			return stripTime(rec.recs)
		}
		a := runMany(1)
		for _, w := range []int{2, 3, 7} {
			if b := runMany(w); !reflect.DeepEqual(a, b) {
				t.Fatalf("%s on 64 blocks: 1 and %d workers give different traces", algo, w)
			}
		}
	}
}

// TestCurvatureIsExactLineSearch: on a quadratic the curvature rule's step
// minimises F along the direction (when not clipped).
func TestCurvatureIsExactLineSearch(t *testing.T) {
	p := newLSQInterior(2, 50, 8)
	m := mustNew(t, p, Config{Algorithm: "afw", Limits: limits(60), Seed: 1})
	checked := 0
	var prev []float64
	m.afterIter = func(st *fwRun, r Record) {
		defer func() { prev = append(prev[:0], st.x...) }()
		pl := st.bs[0].plan
		if prev == nil || pl.kind != StepFW && pl.kind != StepAway {
			return
		}
		// x = prev + γ d; F(prev + (γ±ε) d) ≥ F(x).
		d := make([]float64, len(prev))
		for i := range d {
			d[i] = (st.x[i] - prev[i]) / pl.gamma
		}
		at := func(g float64) float64 {
			y := make([]float64, len(prev))
			for i := range y {
				y[i] = prev[i] + g*d[i]
			}
			return p.Objective(y)
		}
		f0 := at(pl.gamma)
		for _, e := range []float64{-1e-4, 1e-4} {
			if g := pl.gamma * (1 + e); at(g) < f0-1e-15 {
				t.Fatalf("k=%d: γ=%v is not the exact minimiser along d", r.K, pl.gamma)
			}
		}
		checked++
	}
	if _, err := m.Run(context.Background(), &collect{}); err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no unclipped step checked")
	}
}

func TestProxMethodsAgreeWithAFW(t *testing.T) {
	p := newLSQFace(4, 100, 10, 2)
	am := mustNew(t, p, Config{Algorithm: "afw", Limits: Limits{MaxIters: 20000, EvalEvery: 10, GapTol: 1e-12}})
	ares, err := am.Run(context.Background(), &collect{})
	if err != nil {
		t.Fatal(err)
	}
	for _, algo := range []string{"fista", "pgd"} {
		for _, step := range []string{"paper", "backtrack"} {
			pm, err := NewProx(lsqProx{p}, p, Config{Algorithm: algo, Step: step, Limits: Limits{MaxIters: 20000, EvalEvery: 10, GapTol: 1e-11}})
			if err != nil {
				t.Fatal(err)
			}
			var rec collect
			res, err := pm.Run(context.Background(), &rec)
			if err != nil {
				t.Fatal(err)
			}
			if d := math.Abs(res.Summary.Objective - ares.Summary.Objective); d > 1e-9*math.Abs(ares.Summary.Objective) {
				t.Errorf("%s/%s: objective %.12g, afw %.12g", algo, step, res.Summary.Objective, ares.Summary.Objective)
			}
			last := rec.recs[len(rec.recs)-1]
			t.Logf("%s/%s: %d iterations, gap %.3g, kkt %.3g", algo, step, res.Summary.Iters, res.Summary.Gap, last.Extra["kkt"])
		}
	}
}

func TestStopsOnLimitsAndCancel(t *testing.T) {
	p := newLSQFace(1, 40, 6, 1)
	m := mustNew(t, p, Config{Algorithm: "ssfw-as", Schedule: Schedule{Kind: "constant", M0: 4}, Limits: Limits{MaxIters: 1000, MaxPasses: 2, EvalEvery: 7}})
	var rec collect
	res, _ := m.Run(context.Background(), &rec)
	if res.Summary.Status != StatusMaxPasses || res.Summary.Passes < 2 || res.Summary.Passes > 2+4.0/40 {
		t.Fatalf("passes limit: %+v", res.Summary)
	}
	if last := rec.recs[len(rec.recs)-1]; last.Objective == nil || last.GradErr == nil {
		t.Fatalf("the last record must be evaluated: %+v", last)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	res, err := mustNew(t, p, Config{Algorithm: "fw", Step: "open-loop", Limits: limits(1 << 30)}).Run(ctx, RecorderFunc(func(Record) {
		if n++; n == 50 {
			cancel()
		}
	}))
	if err != nil || res.Summary.Status != StatusCancelled || res.Summary.Iters != 49 {
		t.Fatalf("cancel: %v %+v", err, res.Summary)
	}
}

func TestConfigErrorsNameTheField(t *testing.T) {
	p := newLSQFace(1, 10, 3, 2)
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Algorithm: "nope", Limits: limits(1)}, "unknown"},
		{Config{Algorithm: "afw", Limits: Limits{}}, "iters"},
		{Config{Algorithm: "afw", Limits: Limits{MaxIters: 1, EvalEvery: -1}}, "eval_every"},
		{Config{Algorithm: "afw", Schedule: Schedule{Kind: "paper", Rho: .1, Alpha: .5}, Limits: limits(1)}, "schedule"},
		{Config{Algorithm: "ssfw-as", Schedule: Schedule{Kind: "paper", Rho: 1, Alpha: .5}, Limits: limits(1)}, "rho"},
		{Config{Algorithm: "bc-ssfw-as", R: 3, Schedule: Schedule{Kind: "full"}, Limits: limits(1)}, "r:"},
		{Config{Algorithm: "afw", Step: "exact", Limits: limits(1)}, "stepsize"},
		{Config{Algorithm: "x", Variant: Variant{Method: "sideways"}, Limits: limits(1)}, `unknown Frank-Wolfe algorithm "x": it runs as "sideways"`},
		{Config{Algorithm: "x", Variant: Variant{Method: "fw", Reshape: true}, Limits: limits(1)}, "slack collapse needs away or pairwise"},
		{Config{Algorithm: "afw", L: math.NaN(), Limits: limits(1)}, "L:"},
	} {
		_, err := New(p, c.cfg)
		if err == nil || !contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one naming %q", c.cfg, err, c.want)
		}
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || (len(s) >= len(sub) && indexOf(s, sub) >= 0)
}
func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func TestRecordJSONNonFinite(t *testing.T) {
	r := Record{K: 3, Step: StepFW, Objective: F(math.Inf(1)), Gap: F(1e-3), Extra: map[string]float64{"a": math.NaN(), "b": 2}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"k":3,"passes":0,"time_s":0,"step":"fw","gamma":0,"batch":0,"active":0,"objective":null,"gap":0.001,"extra":{"b":2}}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	s, err := json.Marshal(Summary{Objective: math.NaN(), Gap: 2, Status: StatusFailed})
	if err != nil || string(s) != `{"objective":null,"gap":2,"iters":0,"passes":0,"time_s":0,"status":"failed","message":""}` {
		t.Fatalf("summary: %s %v", s, err)
	}
}

// coupledLSQ declares the test bed's blocks coupled (they share z = Ax).
type coupledLSQ struct{ *lsqProblem }

func (coupledLSQ) BlocksCoupled() bool { return true }

// TestCoupledBlocksLineSearch: with coupled blocks and the curvature rule,
// the block steps are combined by a line search along their sum. On the
// least-squares test bed (a quadratic) it is exact: F never increases, an
// unclipped τ minimises F along the summed move (checked against F itself),
// drops happen again, and the run reaches a tiny gap.
func TestCoupledBlocksLineSearch(t *testing.T) {
	for _, c := range []struct {
		name   string
		r      int
		sched  Schedule
		shared float64
	}{
		{"all-blocks-full", 0, Schedule{Kind: "full"}, 0},
		{"r3-full", 3, Schedule{Kind: "full"}, 0},
		{"all-blocks-paper", 0, Schedule{Kind: "paper", Rho: 0.2, Alpha: 0.5}, 0},
		{"correlated-full", 0, Schedule{Kind: "full"}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := newLSQFace(8, 40, 6, 5)
			if c.shared != 0 {
				// the blocks share a common column (weighted by the position
				// within the block, so that moves on the simplices see it):
				// their moves add up along it and their plain sum overshoots
				r := rand.New(rand.NewPCG(3, 3))
				for _, row := range base.A {
					ci := c.shared * r.NormFloat64()
					for j := range row {
						row[j] += ci * float64(j%6)
					}
				}
			}
			p := coupledLSQ{base}
			m := mustNew(t, p, Config{Algorithm: "bc-ssfw-as", Schedule: c.sched, R: c.r, Workers: 2,
				Limits: Limits{MaxIters: 3000, EvalEvery: 1, GapTol: 1e-10}, Seed: 2})
			added := map[int]int{}
			prev := startPoint(p)
			drops, scaled, checked := 0, 0, 0
			m.afterIter = func(st *fwRun, r Record) {
				defer func() { prev = append(prev[:0], st.x...) }()
				checkInvariantsOf(t, st, r, added, base)
				drops += r.Drops
				moved := 0
				for _, b := range st.chosen {
					if st.bs[b].plan.kind != StepNone {
						moved++
					}
				}
				if c.sched.Kind != "full" || moved < 2 {
					return
				}
				// F along the segment prev + s·(x − prev): the step taken
				// must be no worse than its neighbours when it was scaled,
				// and no worse than prev in any case.
				at := func(s float64) float64 {
					y := make([]float64, len(prev))
					for i := range y {
						y[i] = prev[i] + s*(st.x[i]-prev[i])
					}
					return p.Objective(y)
				}
				f1, f0 := at(1), at(0)
				if f1 > f0+1e-13*math.Abs(f0) {
					t.Fatalf("k=%d: the combined move raised F from %.15g to %.15g", r.K, f0, f1)
				}
				if scaledMove(st) {
					scaled++
					for _, e := range []float64{-1e-3, 1e-3} {
						if fe := at(1 + e); fe < f1-1e-13*math.Abs(f1) {
							t.Fatalf("k=%d: F(%v·D) = %.15g < F(D) = %.15g: not the line minimum", r.K, 1+e, fe, f1)
						}
					}
				}
				checked++
			}
			var rec collect
			res, err := m.Run(context.Background(), &rec)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %s after %d iterations, gap %.3g, %d drops, %d scaled moves of %d checked", c.name, res.Summary.Status, res.Summary.Iters, res.Summary.Gap, drops, scaled, checked)
			if res.Summary.Status != StatusConverged {
				t.Errorf("did not converge: %+v", res.Summary)
			}
			if drops == 0 {
				t.Errorf("no drop step: the combined move must keep drops")
			}
			if c.sched.Kind == "full" && c.r == 0 && scaled == 0 {
				t.Errorf("no scaled move was checked")
			}
		})
	}
}

// startPoint is x⁰: every block at its Start vertex.
func startPoint(p Problem) []float64 {
	x := make([]float64, p.Dim())
	for b, blk := range p.Blocks() {
		p.Start(b).AddTo(x[blk.Offset:blk.Offset+blk.Size], 1)
	}
	return x
}

// scaledMove reports whether the line search scaled this iteration's steps
// (the summed move overshot: φ'(1) > 0).
func scaledMove(st *fwRun) bool {
	d0, d1 := 0.0, 0.0
	for _, b := range st.chosen {
		if pl := st.bs[b].plan; pl.moved {
			d0 += pl.d0
			d1 += pl.d1
		}
	}
	return d1 > 0 && d0 < 0
}

// TestCoupledBlocksPaperRuleIsThePlainSum: under the paper rule (global L)
// the coupled combination is the plain sum of the block moves, the same
// trace bit for bit as the problem run without the coupling declared, and F
// never increases (the descent lemma with the global L splits by block).
func TestCoupledBlocksPaperRuleIsThePlainSum(t *testing.T) {
	base := newLSQFace(8, 40, 6, 5)
	run := func(p Problem) []Record {
		m := mustNew(t, p, Config{Algorithm: "bc-ssfw-as", Step: "paper", Schedule: Schedule{Kind: "full"}, Limits: limits(300), Seed: 2})
		var rec collect
		if _, err := m.Run(context.Background(), &rec); err != nil {
			t.Fatal(err)
		}
		return stripTime(rec.recs)
	}
	plain, coupled := run(base), run(coupledLSQ{base})
	if !reflect.DeepEqual(plain, coupled) {
		t.Fatal("the paper rule on coupled blocks is not the plain sum")
	}
	drops := 0
	for i, r := range coupled {
		drops += r.Drops
		if i > 0 && *r.Objective > *coupled[i-1].Objective*(1+1e-13) {
			t.Fatalf("k=%d: objective rose from %.15g to %.15g", r.K, *coupled[i-1].Objective, *r.Objective)
		}
	}
	t.Logf("paper rule, coupled: gap %.3g after %d iterations, %d drops", *coupled[len(coupled)-1].Gap, len(coupled)-1, drops)
}

// panicky panics in the oracle of block 2 from iteration 3 on.
type panicky struct {
	*lsqProblem
	calls *int
}

func (p panicky) LMO(b int, g []float64) Vertex {
	if b == 2 {
		if *p.calls++; *p.calls > 3 {
			panic("oracle broke")
		}
	}
	return p.lsqProblem.LMO(b, g)
}

// A panic in a problem's code on a block worker fails the run with its
// message instead of ending the process.
func TestBlockWorkerPanicFailsTheRun(t *testing.T) {
	calls := 0
	p := panicky{newLSQFace(3, 30, 4, 4), &calls}
	m := mustNew(t, p, Config{Algorithm: "bcfw", Workers: 4, Limits: Limits{MaxIters: 50, EvalEvery: 100}})
	res, err := m.Run(context.Background(), &collect{})
	if err != nil || res.Summary.Status != StatusFailed || !contains(res.Summary.Message, "oracle broke") {
		t.Fatalf("err %v, summary %+v", err, res.Summary)
	}
}

func TestPassCountIsExact(t *testing.T) {
	// 2900 iterations of a 100-block method with 1002 coordinates and
	// blocks of 11 (minus the t coordinates): a float running sum of
	// 11/1002·… drifts; the count does not.
	c := passCount{unit: 200 * 1100}
	for k := 0; k < 2900; k++ {
		for b := 0; b < 100; b++ {
			c = c.plus(200 * 11)
		}
	}
	if got := c.value(); got != 2900 {
		t.Fatalf("passes %v, want 2900", got)
	}
	c = passCount{unit: 3}
	if got := c.plus(1).plus(1).plus(5).value(); got != 7.0/3 {
		t.Fatalf("passes %v, want 7/3", got)
	}
}

// bruteForceGap is the FW duality gap of the lsq test bed at x computed
// without the engine: the exact gradient ∇F(x) = (1/n)Aᵀ(Ax − y) + b from the
// data, and the minimum of <∇F, v> over every vertex of the product polytope
// (all combinations of one vertex per block), so gap = <∇F, x − s>.
func bruteForceGap(p *lsqProblem, x []float64) float64 {
	g := make([]float64, p.dim)
	for i := 0; i < p.n; i++ {
		r := dot(p.A[i], x) - p.y[i]
		for j, a := range p.A[i] {
			g[j] += r * a / float64(p.n)
		}
	}
	if p.lin != nil {
		for j := range g {
			g[j] += p.lin[j]
		}
	}
	best := math.Inf(1)
	choice := make([]int, len(p.blocks))
	for {
		v := 0.0
		for b, blk := range p.blocks {
			v += dot(g[blk.Offset:blk.Offset+blk.Size], p.verts[b][choice[b]])
		}
		best = math.Min(best, v)
		b := 0
		for ; b < len(choice); b++ {
			if choice[b]++; choice[b] < len(p.verts[b]) {
				break
			}
			choice[b] = 0
		}
		if b == len(choice) {
			break
		}
	}
	return dot(g, x) - best
}

// TestGapIsTheCertificateAtX: the reported gap of a multi-block run is the
// sum over all blocks of <∇_b F(x), x_b − s_b> at the current iterate, with
// exact gradients: checked against a brute-force computation over every
// vertex of the product polytope, for block methods that update only some
// blocks per iteration with batch gradients (where stale per-block figures
// would differ), and checked to certify F(x) − F* ≤ gap.
func TestGapIsTheCertificateAtX(t *testing.T) {
	base := newLSQFace(21, 30, 4, 3)
	base.lin = make([]float64, base.dim)
	r := rand.New(rand.NewPCG(4, 4))
	for j := range base.lin {
		base.lin[j] = 0.1 * r.NormFloat64()
	}
	// F* from a long away-step run, certified by its own gap
	ref := mustNew(t, base, Config{Algorithm: "afw", Limits: Limits{MaxIters: 100000, EvalEvery: 1, GapTol: 1e-13}})
	rr, err := ref.Run(context.Background(), &collect{})
	if err != nil || rr.Summary.Status != StatusConverged {
		t.Fatalf("reference: %v %+v", err, rr.Summary)
	}
	fstar := rr.Summary.Objective - rr.Summary.Gap
	for _, c := range []Config{
		{Algorithm: "bc-ssfw-as", R: 1, Schedule: Schedule{Kind: "constant", M0: 5}},
		{Algorithm: "bc-ssfw-as", R: 2, Schedule: Schedule{Kind: "paper", Rho: 0.2, Alpha: 0.3}},
		{Algorithm: "bcfw", R: 1},
		{Algorithm: "ssfw-as", Schedule: Schedule{Kind: "constant", M0: 3}},
		{Algorithm: "afw"},
	} {
		t.Run(c.Algorithm, func(t *testing.T) {
			c.Limits, c.Seed = Limits{MaxIters: 150, EvalEvery: 1}, 7
			m := mustNew(t, base, c)
			checked := 0
			m.afterIter = func(st *fwRun, rec Record) {
				if rec.Gap == nil {
					return
				}
				want := bruteForceGap(base, st.x)
				if math.Abs(*rec.Gap-want) > 1e-10*(1+math.Abs(want)) {
					t.Fatalf("k=%d: gap %.15g, brute force over the product polytope %.15g", rec.K, *rec.Gap, want)
				}
				if f := base.Objective(st.x); f-fstar > *rec.Gap+1e-12 {
					t.Fatalf("k=%d: F − F* = %.3g exceeds the gap %.3g", rec.K, f-fstar, *rec.Gap)
				}
				checked++
			}
			if _, err := m.Run(context.Background(), &collect{}); err != nil {
				t.Fatal(err)
			}
			if checked < 40 {
				t.Fatalf("only %d evaluated iterations checked", checked)
			}
		})
	}
}

// liarProblem's model reports a line along which F always rises, so backtracking never
// accepts a step although the gradient says the direction descends.
type liarProblem struct{ *lsqProblem }
type liarModel struct{ Model }
type risingLine struct{ Line }

func (p liarProblem) NewModel(x []float64) Model { return liarModel{p.lsqProblem.NewModel(x)} }
func (m liarModel) Line(b int, x []float64, d Direction, batch []int) Line {
	return risingLine{m.Model.Line(b, x, d, batch)}
}
func (risingLine) Delta(float64) float64 { return 1 }

// TestStatusesSayWhatHappened: converged only when the stopping rule held or
// the point is stationary to rounding (certified by its gap); a run whose
// step rule finds no step although a descent direction remains is stalled,
// with the last (exact) gap.
func TestStatusesSayWhatHappened(t *testing.T) {
	// stalled: backtracking finds no decrease along a descending direction
	p := newLSQFace(1, 30, 5, 1)
	m := mustNew(t, liarProblem{p}, Config{Algorithm: "afw", Step: "backtrack", Limits: limits(100)})
	res, err := m.Run(context.Background(), &collect{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.Status != StatusStalled || res.Summary.Iters != 1 || !(res.Summary.Gap > 1e-3) || !contains(res.Summary.Message, "gap") {
		t.Fatalf("want stalled at iteration 1 with its gap: %+v", res.Summary)
	}

	// converged at a certified stationary point: a linear term makes the
	// start vertex the minimiser, so the first FW direction does not descend
	v := newLSQFace(1, 30, 5, 1)
	v.lin = []float64{-100, 0, 0, 0, 0}
	m = mustNew(t, v, Config{Algorithm: "afw", Limits: limits(100)})
	res, err = m.Run(context.Background(), &collect{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.Status != StatusConverged || !contains(res.Summary.Message, "stationary") || res.Summary.Gap != 0 {
		t.Fatalf("want converged at a stationary point with gap 0: %+v", res.Summary)
	}

	// converged on the gap tolerance with backtracking down to rounding level
	for _, algo := range []string{"afw", "pfw"} {
		m = mustNew(t, p, Config{Algorithm: algo, Step: "backtrack", Limits: Limits{MaxIters: 20000, EvalEvery: 1, GapTol: 1e-14}})
		res, err = m.Run(context.Background(), &collect{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s backtrack: %s after %d iterations, gap %.3g (%s)", algo, res.Summary.Status, res.Summary.Iters, res.Summary.Gap, res.Summary.Message)
		if res.Summary.Status == StatusConverged && !(res.Summary.Gap <= 1e-14) && !contains(res.Summary.Message, "stationary") {
			t.Errorf("%s: converged without its rule holding: %+v", algo, res.Summary)
		}
		if res.Summary.Status != StatusConverged && res.Summary.Status != StatusStalled {
			t.Errorf("%s: %+v", algo, res.Summary)
		}
		// afw gets there only with the rounding allowance in backtracking
		// (without it, it stalls at a gap of 9e-10)
		if algo == "afw" && res.Summary.Status != StatusConverged {
			t.Errorf("afw with backtracking did not reach the gap tolerance: %+v", res.Summary)
		}
	}
}

// The engine's parallel-for covers every index exactly once, whatever the
// number of workers and however the helpers join, dispatch after dispatch.
func TestParallelCoversEachIndexOnce(t *testing.T) {
	for _, workers := range []int{1, 2, 4} {
		st := &fwRun{workers: workers}
		st.chunksJob, st.rangeJob = st.runChunks, st.runRanges
		for rep := 0; rep < 200; rep++ {
			n := []int{0, 1, 7, 1000}[rep%4]
			hits := make([]atomic.Int32, n)
			st.parallel(n, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					hits[i].Add(1)
				}
			})
			for i := range hits {
				if h := hits[i].Load(); h != 1 {
					t.Fatalf("workers %d, n %d: index %d covered %d times", workers, n, i, h)
				}
			}
		}
		if st.pool != nil {
			close(st.pool)
		}
	}
}

// Every step of every method stays within [0, γ_max] with γ_max read from
// the active set before the step (μ_u/(1 − μ_u) for away steps and drops,
// μ_u for pairwise steps, 1 for FW steps), and the clean-up after a step
// never meets a weight below −1e-15: a clean-up that silently deleted
// negative weights would hide a γ_max that is too large (ARCHITECTURE.md, "Vertex representation").
func TestStepWithinGammaMaxBeforeTheStep(t *testing.T) {
	type rule struct{ algo, step string }
	var rules []rule
	for _, a := range []string{"ssfw-as", "afw", "pfw", "fw", "bc-ssfw-as", "bcfw"} {
		for _, st := range []string{"curvature", "paper", "backtrack"} {
			rules = append(rules, rule{a, st})
		}
	}
	rules = append(rules, rule{"fw", "open-loop"}, rule{"fw", "short"})
	for _, c := range rules {
		for _, q := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/%s/q=%d", c.algo, c.step, q), func(t *testing.T) {
				p := newLSQFace(3, 60, 10, q)
				sch := Schedule{}
				if c.algo == "ssfw-as" || c.algo == "bc-ssfw-as" {
					sch = Schedule{Kind: "paper", Rho: 0.1, Alpha: 0.5}
				}
				r := 0
				if q > 1 && (c.algo == "bc-ssfw-as" || c.algo == "bcfw") {
					r = 2
				}
				m := mustNew(t, p, Config{Algorithm: c.algo, Step: c.step, Schedule: sch, R: r, Limits: Limits{MaxIters: 300, EvalEvery: 50}, Seed: 7, Workers: 2})
				var steps, drops atomic.Int64
				var mu sync.Mutex
				fail := func(format string, args ...any) {
					mu.Lock()
					defer mu.Unlock()
					t.Errorf(format, args...)
				}
				m.beforeCommit = func(bs *blockState) {
					pl := &bs.plan
					g := pl.gamma
					var gmax float64
					switch pl.kind {
					case StepAway, StepDrop:
						w := bs.set.w[pl.u]
						gmax = w / (1 - w)
					case StepPairwise:
						gmax = bs.set.w[pl.u]
					default:
						gmax = 1
					}
					if !(g >= 0 && g <= gmax) {
						fail("block %d, %s step: γ = %v outside [0, %v]", bs.idx, pl.kind, g, gmax)
					}
					steps.Add(1)
					if pl.kind == StepDrop || pl.drop {
						drops.Add(1)
					}
				}
				m.beforeCleanup = func(bs *blockState) {
					for i, w := range bs.set.w {
						if w < -1e-15 {
							fail("block %d: the clean-up meets weight %v of vertex %s", bs.idx, w, bs.set.verts[i].Key)
						}
					}
				}
				res, err := m.Run(context.Background(), &collect{})
				if err != nil || res.Summary.Status == StatusFailed {
					t.Fatalf("run: %v %+v", err, res.Summary)
				}
				if steps.Load() == 0 {
					t.Fatal("no step was checked")
				}
				t.Logf("%d steps, %d drops", steps.Load(), drops.Load())
			})
		}
	}
}
