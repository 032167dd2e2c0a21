package methods_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/fw"
	"github.com/fwlab/fwlab/fw/methods"
)

// This file uses the public packages only, as a user's program does.

// representation checks the vertex representation after every iteration:
// weights ≥ 0 summing to one per block, distinct keys, x_b = Σ μ_v v, and
// the record's Active equal to the number of active vertices; it keeps each
// iteration's keys for the drop checks.
type representation struct {
	t    *testing.T
	name string
	p    fw.Problem
	keys []map[string]bool // per iteration: "block/key" of the active vertices
	// per iteration: the number of active vertices
	activeOf []int
	recs     []fw.Record
	bad      int
}

func (c *representation) Iterate(k int, x []float64, verts [][]fw.Vertex, weights [][]float64) {
	c.t.Helper()
	keys := map[string]bool{}
	active := 0
	for b, blk := range c.p.Blocks() {
		sum := 0.0
		xb := make([]float64, blk.Size)
		for i, v := range verts[b] {
			w := weights[b][i]
			if !(w >= 0) {
				c.failf("k=%d block %d: weight %v of %s is negative", k, b, w, v.Key)
			}
			sum += w
			v.AddTo(xb, w)
			id := string(rune('0'+b)) + "/" + v.Key
			if keys[id] {
				c.failf("k=%d block %d: vertex %s twice in the active set", k, b, v.Key)
			}
			keys[id] = true
		}
		active += len(verts[b])
		if math.Abs(sum-1) > 1e-12 {
			c.failf("k=%d block %d: weights sum to %v", k, b, sum)
		}
		for i := range xb {
			if d := math.Abs(xb[i] - x[blk.Offset+i]); d > 1e-10 {
				c.failf("k=%d block %d: x[%d] = %v but Σ μ_v v gives %v", k, b, i, x[blk.Offset+i], xb[i])
			}
		}
	}
	if len(c.keys) != k {
		c.failf("Iterate called for k=%d after %d iterations", k, len(c.keys))
	}
	c.keys = append(c.keys, keys)
	c.activeOf = append(c.activeOf, active)
}

func (c *representation) failf(format string, args ...any) {
	c.t.Helper()
	if c.bad++; c.bad <= 5 {
		c.t.Errorf(c.name+": "+format, args...)
	}
}

func (c *representation) Record(r fw.Record) {
	if r.Active != c.activeOf[r.K] {
		c.failf("record k=%d: Active %d, the active sets hold %d", r.K, r.Active, c.activeOf[r.K])
	}
	c.recs = append(c.recs, r)
}

// gradient is ∇F(x) computed from the data, independently of the model.
func gradient(p *leastSquares, x []float64) []float64 {
	g := make([]float64, p.Dim())
	for i, row := range p.a {
		r := dot(row, x) - p.y[i]
		for j := range g {
			g[j] += r * row[j] / float64(len(p.a))
		}
	}
	return g
}

// bruteGap is the FW gap Σ_b max_v <∇_b F(x), x_b − v> over every vertex v
// of every block (the unit vectors), by enumeration.
func bruteGap(p *leastSquares, x []float64) float64 {
	g := gradient(p, x)
	gap := 0.0
	for _, blk := range p.Blocks() {
		gb, xb := g[blk.Offset:blk.Offset+blk.Size], x[blk.Offset:blk.Offset+blk.Size]
		best := math.Inf(-1)
		for j := 0; j < blk.Size; j++ {
			v := make([]float64, blk.Size)
			v[j] = 1
			best = math.Max(best, dot(gb, xb)-dot(gb, v))
		}
		gap += best
	}
	return gap
}

type methodCase struct {
	opt methods.Options
	// converges: the run must reach gap ≤ 1e-8 within its iterations
	converges bool
	// drops: the method has away or pairwise steps (vanilla methods never
	// drop)
	drops bool
}

func cases(blocks bool) []methodCase {
	cs := []methodCase{
		{methods.Options{Algorithm: "ssfw-as", MaxIters: 600, Seed: 3}, true, true},
		{methods.Options{Algorithm: "ssfw-as", Step: "paper", L: 4, Schedule: "geometric", M0: 4, MaxIters: 6000, Seed: 4}, true, true},
		{methods.Options{Algorithm: "afw", MaxIters: 600}, true, true},
		{methods.Options{Algorithm: "afw", Step: "backtrack", MaxIters: 1500}, true, true},
		{methods.Options{Algorithm: "pfw", MaxIters: 600}, true, true},
		{methods.Options{Algorithm: "pfw", Step: "paper", L: 4, MaxIters: 3000}, true, true},
		{methods.Options{Algorithm: "fw", MaxIters: 400}, false, false},
		{methods.Options{Algorithm: "fw", Step: "curvature", MaxIters: 400}, false, false},
	}
	if blocks {
		cs = append(cs,
			methodCase{methods.Options{Algorithm: "bc-ssfw-as", R: 2, MaxIters: 2000, Seed: 5}, true, true},
			methodCase{methods.Options{Algorithm: "bc-ssfw-as", MaxIters: 800, Seed: 6}, true, true},
			methodCase{methods.Options{Algorithm: "bcfw", R: 1, MaxIters: 600, Workers: 2}, false, false},
		)
	}
	return cs
}

// TestEveryMethodOnAUsersProblem runs every applicable method on a least
// squares problem defined here, over the simplex and over a product of
// three simplices (the block methods), and checks the vertex
// representation after every iteration, the reported gaps against the
// gap enumerated over the vertices at the final iterate and against
// F − F* (F* = 0 by construction), and the drop steps.
func TestEveryMethodOnAUsersProblem(t *testing.T) {
	for _, q := range []int{1, 3} {
		p, _ := newLeastSquares(60, q, 10)
		for _, c := range cases(q > 1) {
			name := c.opt.Algorithm + "/" + c.opt.Step + "/q=" + string(rune('0'+q))
			rep := &representation{t: t, name: name, p: p}
			res, err := methods.Run(context.Background(), p, c.opt, rep)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			checkRun(t, name, p, c, rep, res)
		}
	}
}

func checkRun(t *testing.T, name string, p *leastSquares, c methodCase, rep *representation, res methods.Result) {
	t.Helper()
	recs := rep.recs
	if len(recs) == 0 || recs[0].K != 0 || recs[len(recs)-1].K != res.Summary.Iters {
		t.Fatalf("%s: %d records, summary iters %d", name, len(recs), res.Summary.Iters)
	}
	// the final gap, reported and enumerated over the vertices
	gap := bruteGap(p, res.X)
	if math.Abs(gap-res.Summary.Gap) > 1e-9*math.Max(1, gap) {
		t.Errorf("%s: reported gap %v, enumerated %v", name, res.Summary.Gap, gap)
	}
	for _, r := range recs {
		// every evaluated record: F − F* ≤ gap (F* = 0)
		if r.Objective != nil && *r.Objective > *r.Gap+1e-12 {
			t.Errorf("%s: k=%d: F − F* = %v above the gap %v", name, r.K, *r.Objective, *r.Gap)
		}
	}
	if c.converges && !(res.Summary.Gap <= 1e-8) {
		t.Errorf("%s: gap %v after %d iterations (%s: %s)", name, res.Summary.Gap, res.Summary.Iters, res.Summary.Status, res.Summary.Message)
	}
	if !c.converges && !(res.Summary.Gap < 0.05) {
		t.Errorf("%s: gap %v after %d iterations", name, res.Summary.Gap, res.Summary.Iters)
	}
	checkDrops(t, name, c, len(p.Blocks()), rep)
}

// checkDrops: a vertex leaves an active set only by a drop, a collapse or
// a clean-up; each drop removes one active vertex (away) or the away vertex
// while p may join (pairwise); vanilla methods never drop, and on the
// block problem the methods with away or pairwise steps do (vertices
// outside the solution's support enter and must leave).
func checkDrops(t *testing.T, name string, c methodCase, q int, rep *representation) {
	t.Helper()
	drops := 0
	for _, r := range rep.recs[1:] {
		drops += r.Drops
		before, after := rep.keys[r.K-1], rep.keys[r.K]
		gone := 0
		for k := range before {
			if !after[k] {
				gone++
			}
		}
		if gone > 0 && r.Drops == 0 && r.Cleanups == 0 && r.Step != fw.StepCollapse && !(r.Step == fw.StepBlock && r.FWSteps > 0) {
			t.Errorf("%s: k=%d: %d vertices left the active sets on a %s step without a drop, collapse or clean-up", name, r.K, gone, r.Step)
		}
		if r.Drops == 0 || r.Step == fw.StepBlock {
			continue
		}
		added := len(after) - (len(before) - gone)
		switch {
		case gone < 1:
			t.Errorf("%s: k=%d: a %s step with a drop removed no vertex", name, r.K, r.Step)
		case r.Step == fw.StepDrop && (added != 0 || r.Active != rep.activeOf[r.K-1]-1-r.Cleanups):
			t.Errorf("%s: k=%d: a drop went from %d to %d active vertices (%d added, %d clean-ups)", name, r.K, len(before), len(after), added, r.Cleanups)
		case r.Step == fw.StepPairwise && added > 1:
			t.Errorf("%s: k=%d: a pairwise drop added %d vertices", name, r.K, added)
		}
	}
	if c.drops && q > 1 && drops == 0 {
		t.Errorf("%s: no drop step, though the start must leave the active set", name)
	}
	if !c.drops && drops != 0 {
		t.Errorf("%s: %d drops by a method without away steps", name, drops)
	}
}

// TestRunReproducible: the same problem, options and seed give the same
// records, whatever the number of workers.
func TestRunReproducible(t *testing.T) {
	p, _ := newLeastSquares(60, 3, 5)
	for _, algo := range []string{"ssfw-as", "bc-ssfw-as"} {
		var runs [][]fw.Record
		for _, w := range []int{1, 2, 1} {
			recs, _, err := methods.Collect(context.Background(), p, methods.Options{Algorithm: algo, R: 0, Workers: w, MaxIters: 200, EvalEvery: 5, Seed: 9})
			if err != nil {
				t.Fatal(err)
			}
			for i := range recs {
				recs[i].Time = 0
			}
			runs = append(runs, recs)
		}
		for _, r := range runs[1:] {
			if string(jsonOf(r)) != string(jsonOf(runs[0])) {
				t.Errorf("%s: the records differ between runs", algo)
			}
		}
	}
}

func jsonOf(recs []fw.Record) []byte {
	var b []byte
	for _, r := range recs {
		b = r.AppendJSON(b)
	}
	return b
}

// brokenBlocks is a problem whose blocks do not cover its dimension.
type brokenBlocks struct{ *leastSquares }

func (b brokenBlocks) Blocks() []fw.Block { return []fw.Block{{Offset: 0, Size: 3}} }

// badStart starts from a vertex outside its block.
type badStart struct{ *leastSquares }

func (b badStart) Start(int) fw.Vertex { return fw.Vertex{Key: "x", Idx: []int{7}, Val: []float64{1}} }

// panicky's oracle panics, as a user's code may.
type panicky struct{ *leastSquares }

func (p panicky) LMO(int, []float64) fw.Vertex { panic("the oracle broke") }

// TestRunRejectsBadInput: bad options and malformed problems get an error
// naming the field and the rule, and a panic in the problem's code an
// error, never a panic.
func TestRunRejectsBadInput(t *testing.T) {
	p, _ := newLeastSquares(20, 1, 5)
	for _, c := range []struct {
		p    fw.Problem
		opt  methods.Options
		want string
	}{
		{p, methods.Options{Algorithm: "fista"}, "Algorithm: must be one of"},
		{p, methods.Options{Algorithm: "afw", Step: "open-loop"}, `Step: "open-loop" is a rule of fw only`},
		{p, methods.Options{Algorithm: "afw", Schedule: "paper"}, "Schedule: afw uses full gradients"},
		{p, methods.Options{Algorithm: "ssfw-as", Schedule: "constant", M0: 21}, "M0: must be at most the number of samples n = 20, got 21"},
		{p, methods.Options{Algorithm: "ssfw-as", Rho: 1.5}, "Rho: must lie strictly between 0 and 1"},
		{p, methods.Options{Algorithm: "bcfw", R: 2}, "R: must be at most the number of blocks q = 1, got 2"},
		{p, methods.Options{Algorithm: "afw", L: math.NaN()}, "L: must be a positive number"},
		{p, methods.Options{Algorithm: "afw", Step: "paper"}, "L: this problem has no automatic bound"},
		{p, methods.Options{Algorithm: "afw", MaxIters: -1}, "MaxIters: must be between 1 and"},
		{p, methods.Options{Algorithm: "afw", GapTol: math.Inf(1)}, "GapTol: must be a non-negative number"},
		{p, methods.Options{Algorithm: "afw", EvalEvery: -2}, "EvalEvery: must be at least 1"},
		{brokenBlocks{p}, methods.Options{Algorithm: "afw"}, "problem: Blocks cover [0, 3), but Dim is 5"},
		{badStart{p}, methods.Options{Algorithm: "afw"}, "problem: Start(0): Idx must be strictly increasing within [0, 5)"},
		{panicky{p}, methods.Options{Algorithm: "afw"}, "the problem's code panicked: the oracle broke"},
		{nil, methods.Options{Algorithm: "afw"}, "problem: is nil"},
	} {
		_, err := methods.Run(context.Background(), c.p, c.opt, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got error %v, want one containing %q", c.opt, err, c.want)
		}
	}
}
