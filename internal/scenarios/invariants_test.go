package scenarios

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fwlab/fwlab/internal/problems/glm"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

// Invariants every Frank-Wolfe-type run on the real problems must keep
// (ARCHITECTURE.md, "Records" and "Vertex representation"), checked on the records of each iteration and on the final
// solution of 300 iterations with an evaluation every iteration.

const invIters = 300

// fwAlgorithms are the methods of the Frank-Wolfe engine.
var fwAlgorithms = []string{"ssfw-as", "afw", "pfw", "fw", "bc-ssfw-as", "bcfw"}

// invRun is one run to check.
type invRun struct {
	scenario string
	algo     spec.Algo
}

func invRuns(t *testing.T) []invRun {
	var out []invRun
	for _, s := range All() {
		if s.Group != "toy" && s.Group != "model" {
			continue
		}
		for _, a := range s.Algorithms {
			if !slices.Contains(fwAlgorithms, a) {
				continue
			}
			out = append(out, invRun{s.Name, spec.Algo{Algo: a}})
			if !spec.Stochastic(a) {
				// the other step-size rules of the deterministic methods
				for _, st := range []string{"backtrack", "paper"} {
					out = append(out, invRun{s.Name, spec.Algo{Algo: a, Stepsize: st}})
				}
				if a == "fw" {
					out = append(out, invRun{s.Name, spec.Algo{Algo: a, Stepsize: "curvature"}})
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no toy or model scenario registered")
	}
	return out
}

func TestFWInvariants(t *testing.T) {
	insts := map[string]*FWInstance{}
	steps := map[string]int{} // step kinds over every run, so the checks are not vacuous
	for _, run := range invRuns(t) {
		name := run.scenario + "/" + run.algo.Algo
		if run.algo.Stepsize != "" {
			name += "/" + run.algo.Stepsize
		}
		t.Run(name, func(t *testing.T) {
			r := spec.Run{Problem: run.scenario, Algorithms: []spec.Algo{run.algo}, Iters: invIters, EvalEvery: 1, Seed: 3}
			s, v, err := Resolve(&r)
			if err != nil {
				t.Fatal(err)
			}
			fw := insts[run.scenario]
			if fw == nil {
				inst, err := s.Build(context.Background(), v, r.Seed)
				if err != nil {
					t.Fatal(err)
				}
				var ok bool
				if fw, ok = inst.(*FWInstance); !ok {
					t.Fatalf("%s builds a %T, not an FWInstance", run.scenario, inst)
				}
				insts[run.scenario] = fw
			}
			a := r.Algorithms[0]
			m, err := fw.Method(a, LimitsOf(&r), 5)
			if err != nil {
				t.Fatal(err)
			}
			var recs []solver.Record
			res, err := m.Run(context.Background(), solver.RecorderFunc(func(rc solver.Record) { recs = append(recs, rc) }))
			if err != nil {
				t.Fatal(err)
			}
			checkRecords(t, fw, a, recs)
			checkResult(t, fw, res, recs)
			kinds := map[string]int{}
			for _, rc := range recs {
				kinds[rc.Step]++
				steps[rc.Step]++
				steps["dropped vertices"] += rc.Drops
			}
			t.Logf("%d iterations, %s; steps %v", res.Summary.Iters, res.Summary.Status, kinds)
		})
	}
	for _, k := range []string{solver.StepFW, solver.StepAway, solver.StepDrop, solver.StepPairwise, "dropped vertices"} {
		if steps[k] == 0 {
			t.Errorf("no %s in any run: the step-kind checks went untested", k)
		}
	}
	t.Logf("steps over all runs: %v", steps)
}

// checkRecords checks the per-iteration invariants.
func checkRecords(t *testing.T, fw *FWInstance, a spec.Algo, recs []solver.Record) {
	t.Helper()
	n := fw.Problem.Samples()
	if len(recs) == 0 || recs[0].K != 0 {
		t.Fatalf("the trace does not start with the k = 0 record (%d records)", len(recs))
	}
	// A deterministic method with a step rule that guarantees descent
	// (everything but fw's open-loop 2/(k+2)) never increases the objective.
	monotone := !spec.Stochastic(a.Algo) && a.Stepsize != "open-loop"
	// The penalised models report Σf + λ‖β‖₁; the FW methods descend on the
	// P1 objective Σf + λt, which is that plus λ·t_slack.
	lambda := 0.0
	if g, ok := fw.Problem.(*glm.Problem); ok {
		lambda = g.Lambda()
	}
	p1 := func(r solver.Record) float64 { return *r.Objective + lambda*r.Extra["t_slack"] }
	// With the slack collapse (the models' default), methods with away or
	// pairwise steps end every step with t = ‖β‖₁ up to the collapse's
	// threshold 1e-12·T and rounding.
	slackTol := math.Inf(1)
	if g, ok := fw.Problem.(*glm.Problem); ok && (a.Algo == "afw" || a.Algo == "ssfw-as" || a.Algo == "pfw") {
		slackTol = 2e-12 * g.T()
	}
	fail := func(r solver.Record, format string, args ...any) {
		t.Helper()
		t.Fatalf("k=%d (step %s, γ %v, active %d, drops %d, cleanups %d): %s", r.K, r.Step, r.Gamma, r.Active, r.Drops, r.Cleanups, fmt.Sprintf(format, args...))
	}
	for i, r := range recs {
		if r.K != i {
			fail(r, "record %d has k = %d: k must increase by one", i, r.K)
		}
		if !(r.Gamma >= 0) || math.IsInf(r.Gamma, 0) {
			fail(r, "γ = %v is not a non-negative number", r.Gamma)
		}
		if r.Active < 1 {
			fail(r, "the active set is empty")
		}
		if !r.Evaluated() || r.Gap == nil {
			fail(r, "not evaluated although eval_every = 1")
		}
		if obj, gap := *r.Objective, *r.Gap; !(gap >= -1e-9*(1+math.Abs(obj))) {
			fail(r, "duality gap %v < 0 (objective %v)", gap, obj)
		}
		if r.Drops > 0 && r.Step != solver.StepDrop && r.Step != solver.StepPairwise && r.Step != solver.StepBlock {
			fail(r, "%d drops counted on a %q step", r.Drops, r.Step)
		}
		if s := r.Extra["t_slack"]; i > 0 && r.Step != solver.StepNone && math.Abs(s) > slackTol {
			fail(r, "epigraph slack t − ‖β‖₁ = %v after the step, the collapse leaves at most %v", s, slackTol)
		}
		if r.Batch < 0 || r.Batch > n {
			fail(r, "batch %d outside [0, n = %d]", r.Batch, n)
		}
		if i == 0 {
			if r.Step != solver.StepNone || r.Passes != 0 || r.Gamma != 0 || r.Active != len(fw.Problem.Blocks()) {
				fail(r, "the start record should be a no-move at 0 passes with one vertex per block")
			}
			continue
		}
		prev := recs[i-1]
		if r.Passes < prev.Passes {
			fail(r, "passes went back from %v to %v", prev.Passes, r.Passes)
		}
		// Effective passes: each iteration costs m_k/n of a pass (one block
		// here); backtracking adds its extra batch evaluations.
		if inc, want := r.Passes-prev.Passes, float64(r.Batch)/float64(n); a.Stepsize != "backtrack" && math.Abs(inc-want) > 1e-9 {
			fail(r, "passes grew by %v for a batch of %d of n = %d (want %v)", inc, r.Batch, n, want)
		} else if a.Stepsize == "backtrack" && inc < want-1e-9 {
			fail(r, "passes grew by %v, less than one batch %v", inc, want)
		}
		if !spec.Stochastic(a.Algo) && r.Batch != n {
			fail(r, "a full-gradient method used a batch of %d of %d", r.Batch, n)
		}
		if spec.Stochastic(a.Algo) && a.Schedule == "paper" {
			// the paper's schedule m_k = ⌈n / (1 + n(1 − ρ)^{2αk})⌉
			exact := float64(n) / (1 + float64(n)*math.Pow(1-a.Rho, 2*a.Alpha*float64(r.K)))
			want := min(max(int(math.Ceil(exact)), 1), n)
			nearInt := math.Abs(exact-math.Round(exact)) <= 1e-9*exact
			if r.Batch != want && !(nearInt && abs(r.Batch-want) == 1) {
				fail(r, "batch %d, the paper's schedule gives ⌈%v⌉ = %d (n = %d, ρ = %v, α = %v)", r.Batch, exact, want, n, a.Rho, a.Alpha)
			}
		}
		if (r.GradErr != nil) != (r.Batch < n) {
			fail(r, "grad_err %v reported with batch %d of %d (it belongs to sampled gradients)", r.GradErr, r.Batch, n)
		}
		if monotone {
			if f0, f1 := p1(prev), p1(r); f1 > f0+1e-12*(1+math.Abs(f0)) {
				fail(r, "the objective rose from %v to %v (by %.3g) under a descent rule", f0, f1, f1-f0)
			}
		}
		// the active set changes as the step kind says
		grow := r.Active - (prev.Active - r.Drops - r.Cleanups)
		switch r.Step {
		case solver.StepNone:
			if r.Gamma != 0 || r.Active != prev.Active {
				fail(r, "a no-move changed γ or the active set (from %d)", prev.Active)
			}
		case solver.StepFW:
			if !(r.Gamma > 0 && r.Gamma < 1) || r.Drops != 0 || (grow != 0 && grow != 1) {
				fail(r, "a FW step needs 0 < γ < 1 and adds at most its vertex (active was %d)", prev.Active)
			}
		case solver.StepCollapse:
			if r.Gamma != 1 || r.Active != 1 {
				fail(r, "a full collapse needs γ = 1 and leaves one vertex")
			}
		case solver.StepAway:
			if !(r.Gamma > 0) || r.Drops != 0 || grow != 0 {
				fail(r, "an away step needs γ > 0 and keeps its vertex (active was %d)", prev.Active)
			}
		case solver.StepDrop:
			if !(r.Gamma > 0) || r.Drops != 1 || grow != 0 {
				fail(r, "a drop step removes exactly its vertex (active was %d)", prev.Active)
			}
		case solver.StepPairwise:
			if !(r.Gamma > 0 && r.Gamma <= 1) || r.Drops > 1 || (grow != 0 && grow != 1) {
				fail(r, "a pairwise step moves 0 < γ ≤ 1 of weight and adds at most one vertex (active was %d)", prev.Active)
			}
		default:
			fail(r, "unexpected step kind for %s on one block", a.Algo)
		}
		if a.Algo != "afw" && a.Algo != "ssfw-as" && (r.Step == solver.StepAway || r.Step == solver.StepDrop) {
			fail(r, "%s takes no away steps", a.Algo)
		}
		if a.Algo != "pfw" && r.Step == solver.StepPairwise {
			fail(r, "%s takes no pairwise steps", a.Algo)
		}
		checkWeights(t, fw, r)
	}
}

func abs(i int) int {
	if i < 0 {
		return -i
	}
	return i
}

// checkWeights checks, on the two-dimensional teaching problem whose records
// carry the active weights, that the weights are positive, sum to one and
// reproduce the iterate: x = Σ_v w_v v.
func checkWeights(t *testing.T, fw *FWInstance, r solver.Record) {
	t.Helper()
	geo, ok := fw.Meta.Panels["geometry"].(map[string]any)
	if !ok {
		return
	}
	keys, _ := geo["keys"].([]string)
	verts, _ := geo["vertices"].([][]float64)
	if len(keys) == 0 || len(keys) != len(verts) {
		t.Fatalf("geometry panel without vertices and keys: %v", geo)
	}
	sum, x0, x1, count := 0.0, 0.0, 0.0, 0
	for i, k := range keys {
		w, ok := r.Extra["w:"+k]
		if !ok {
			continue
		}
		if !(w > 0) {
			t.Fatalf("k=%d: vertex %s held with weight %v (a ghost atom)", r.K, k, w)
		}
		count++
		sum += w
		x0 += w * verts[i][0]
		x1 += w * verts[i][1]
	}
	if count != r.Active {
		t.Fatalf("k=%d: %d weights reported for %d active vertices", r.K, count, r.Active)
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Fatalf("k=%d: the weights sum to %v", r.K, sum)
	}
	scale := 1 + math.Abs(r.Extra["x0"]) + math.Abs(r.Extra["x1"])
	if math.Abs(x0-r.Extra["x0"]) > 1e-12*scale || math.Abs(x1-r.Extra["x1"]) > 1e-12*scale {
		t.Fatalf("k=%d: x = (%v, %v) but Σ w_v v = (%v, %v)", r.K, r.Extra["x0"], r.Extra["x1"], x0, x1)
	}
}

// checkResult checks the final solution: its objective is the one reported,
// and it is feasible.
func checkResult(t *testing.T, fw *FWInstance, res solver.Result, recs []solver.Record) {
	t.Helper()
	p := fw.Problem
	x := res.X
	if len(x) != p.Dim() {
		t.Fatalf("solution of length %d, dimension %d", len(x), p.Dim())
	}
	last := recs[len(recs)-1]
	if res.Summary.Iters != last.K || res.Summary.Passes != last.Passes {
		t.Fatalf("summary %+v disagrees with the last record k=%d, passes %v", res.Summary, last.K, last.Passes)
	}
	if got := p.Objective(x); got != res.Summary.Objective || got != *last.Objective {
		t.Fatalf("F(x) = %v for the returned x, summary says %v, last record %v", got, res.Summary.Objective, *last.Objective)
	}
	scale := 0.0
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("solution has a non-finite entry: %v", x)
		}
		scale = math.Max(scale, math.Abs(v))
	}
	// Feasibility through the problem's projection: where the proximal view
	// is the indicator of the same polytope (same coordinates), projecting a
	// feasible point leaves it where it is.
	if fw.Prox != nil && fw.Prox.ProxDim() == p.Dim() {
		dst := make([]float64, len(x))
		fw.Prox.Prox(dst, x, 1)
		for i := range x {
			if math.Abs(dst[i]-x[i]) > 1e-9*(1+scale) {
				t.Fatalf("x is not feasible: its projection moves coordinate %d from %v to %v", i, x[i], dst[i])
			}
		}
	}
	// The penalised models' P1 polytope is the epigraph {‖β‖₁ ≤ t ≤ T}
	// (their proximal view is the l1 penalty in β alone).
	if g, ok := p.(*glm.Problem); ok {
		beta, tt := x[:g.P()], x[g.P()]
		l1 := 0.0
		for _, v := range beta {
			l1 += math.Abs(v)
		}
		if l1 > tt+1e-9*(1+tt) || tt > g.T()*(1+1e-9) || tt < 0 {
			t.Fatalf("x is not in the epigraph: ‖β‖₁ = %v, t = %v, T = %v", l1, tt, g.T())
		}
	}
	// Every problem: x lies in the polytope only if <c, x> ≥ min_v <c, v>
	// for every direction c; try the coordinate directions and a few random
	// ones, block by block.
	rng := rand.New(rand.NewPCG(1, 2))
	for bi, b := range p.Blocks() {
		xb := x[b.Offset : b.Offset+b.Size]
		var dirs [][]float64
		for i := 0; i < b.Size && i < 64; i++ {
			for _, s := range []float64{1, -1} {
				c := make([]float64, b.Size)
				c[i] = s
				dirs = append(dirs, c)
			}
		}
		for j := 0; j < 8; j++ {
			c := make([]float64, b.Size)
			for i := range c {
				c[i] = rng.NormFloat64()
			}
			dirs = append(dirs, c)
		}
		// the support value min_v <c, v>: by enumeration where the problem
		// lists its vertices, else from the oracle
		enum, _ := p.(interface{ Vertices() []solver.Vertex })
		for _, c := range dirs {
			v := p.LMO(bi, c)
			h := v.Dot(c)
			if enum != nil {
				for _, u := range enum.Vertices() {
					if d := u.Dot(c); d < h {
						v, h = u, d
					}
				}
			}
			cx, mag := 0.0, 0.0
			for i := range c {
				cx += c[i] * xb[i]
				mag += math.Abs(c[i] * xb[i])
			}
			if cx < h-1e-9*(1+mag+math.Abs(h)) {
				t.Fatalf("x is outside block %d: <c, x> = %v below the support value %v of vertex %s", bi, cx, h, v.Key)
			}
		}
	}
}
