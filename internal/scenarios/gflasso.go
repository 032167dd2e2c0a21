package scenarios

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/fwlab/fwlab/internal/aggregate"
	"github.com/fwlab/fwlab/internal/dataio"
	"github.com/fwlab/fwlab/internal/problems/gflasso"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

// The graph-guided fused LASSO (ARCHITECTURE.md, "GFLASSO") and the paper's Figure 1.

var gflassoAlgorithms = spec.AlgorithmsFor("gflasso")

func gflassoDefaults() []spec.Algo { return []spec.Algo{{Algo: "bc-ssfw-as"}, {Algo: "spg"}} }

func gflassoParams() []Param {
	def := gflasso.DefaultSim(0)
	num := func(name string, kind Kind, d string, lo, hi float64, loExcl bool, help string) Param {
		return Param{Name: name, Kind: kind, Default: d, Help: help, Min: lo, Max: hi, HasMin: true, HasMax: true, MinExcl: loExcl}
	}
	return []Param{
		num("n", Int, fmt.Sprint(def.N), 2, 1e6, false, "samples N (rows of X and Y) of the simulated data"),
		num("j", Int, fmt.Sprint(def.J), 1, 1e5, false, "covariates J (columns of X, rows of B) of the simulated data"),
		num("k", Int, fmt.Sprint(def.K), 1, 1e4, false, "tasks K (columns of Y and B) of the simulated data"),
		num("group", Int, fmt.Sprint(def.Group), 1, 1e4, false, "tasks per group of the simulation (groups of consecutive columns share rows of ones)"),
		num("frac1", Float, fmt.Sprint(def.Frac1), 0, 1, false, "fraction of the J rows set to 1 on each group's tasks"),
		num("frac2", Float, fmt.Sprint(def.Frac2), 0, 1, false, "fraction of the J rows set to 1 on each pair of adjacent groups"),
		num("frac3", Float, fmt.Sprint(def.Frac3), 0, 1, false, "fraction of the J rows set to 1 on each triple of adjacent groups"),
		num("noise", Float, fmt.Sprint(def.Noise), 0, 1e6, false, "standard deviation of the Gaussian noise of Y = XB + noise"),
		num("threshold", Float, "0.7", 0, 1, false, "correlations of Y's columns with |r| below this give no edge"),
		num("lambda", Float, "10", 0, 1e12, true, "l1 weight λ > 0 (λ = 0 would make the epigraph polytope unbounded)"),
		num("gamma", Float, "10", 0, 1e12, false, "fusion weight γ ≥ 0 (0: K independent lassos)"),
		{Name: "bound", Kind: Choice, Default: "hat", Choices: []string{"hat", "norm"},
			Help: "epigraph bound T_C: hat = ½‖P_X Y_C‖² (rank X = J, else as norm), norm = ½‖Y_C‖²"},
		{Name: "blocks", Kind: Choice, Default: "component", Choices: []string{"component", "row"},
			Help: "blocks of Algorithm 3: one per connected component of the task graph, or one per (row, component) pair (bcfw, which has no away steps, converges far faster on row blocks)"},
		{Name: "slack", Kind: Choice, Default: "collapse", Choices: []string{"collapse", "keep"},
			Help: "bc-ssfw-as: collapse lowers each stepped block's epigraph variable t_C to Ω_C(B_C) after its step (exactly the slack off the objective, B unchanged); keep leaves t_C to the steps (the slack then drains slowly). bcfw always keeps"},
		num("enum_max", Int, "12", 1, 16, false, "components with more tasks than this are not enumerated: their oracle uses minimum cuts (balanced sign patterns) or linear programs"),
		{Name: "x", Kind: Path, Format: "csv", Default: "", Help: "CSV file of X (N×J numbers, no header); replaces the simulated data, needs y"},
		{Name: "y", Kind: Path, Format: "csv", Default: "", Help: "CSV file of Y (N×K, one column per task), with x"},
	}
}

// GFLASSOInstance is a built GFLASSO instance: bc-ssfw-as and bcfw run
// through the solver package, spg is the problem's own smoothing proximal
// gradient method.
type GFLASSOInstance struct {
	FWInstance
	P *gflasso.Problem
	// BTrue is the simulated coefficient matrix (nil for imported data).
	BTrue *mat.Dense
}

// CoefMatrix turns a solution x (the Result.X of any of the instance's
// methods) into the coefficient matrix B, J rows of K values.
func (g *GFLASSOInstance) CoefMatrix(x []float64) [][]float64 { return rows(g.P.BOf(x)) }

// SolutionRows exports a solution as its coefficient matrix B.
func (g *GFLASSOInstance) SolutionRows(x []float64) [][]float64 { return g.CoefMatrix(x) }

// Method configures bc-ssfw-as, bcfw or spg: an algorithm of the family
// spg (the table's) runs as SPG, the others as FWInstance runs them.
func (g *GFLASSOInstance) Method(a spec.Algo, lim solver.Limits, seed int64) (solver.Method, error) {
	if alg := spec.AlgorithmByName(a.Algo); alg == nil || alg.Family != "spg" {
		return g.FWInstance.Method(a, lim, seed)
	}
	m, err := gflasso.NewSPG(g.P, gflasso.SPGConfig{Mu: a.Mu, Eps: a.Eps, Limits: lim})
	if err != nil {
		return nil, spec.Errorf("algo", "%v", err)
	}
	return m, nil
}

var _ Instance = (*GFLASSOInstance)(nil)

func rows(m *mat.Dense) [][]float64 {
	r, c := m.Dims()
	out := make([][]float64, r)
	for i := range out {
		out[i] = make([]float64, c)
		for j := range out[i] {
			out[i][j] = m.At(i, j)
		}
	}
	return out
}

// loadGFLASSO returns X, Y and (for simulated data) the true B.
func loadGFLASSO(v Values, seed int64) (X, Y, B *mat.Dense, err error) {
	xp, yp := v.Str("x"), v.Str("y")
	switch {
	case xp == "" && yp == "":
		sp := gflasso.SimParams{N: v.Int("n"), J: v.Int("j"), K: v.Int("k"), Group: v.Int("group"),
			Frac1: v.Float("frac1"), Frac2: v.Float("frac2"), Frac3: v.Float("frac3"), Noise: v.Float("noise"), Seed: seed}
		if sp.N*sp.J > maxGFLASSOEntries || sp.N*sp.K > maxGFLASSOEntries || sp.J*sp.K > maxGFLASSOEntries {
			return nil, nil, nil, spec.Errorf("params.n", "n·j, n·k and j·k must each be at most %d, got n=%d, j=%d, k=%d", maxGFLASSOEntries, sp.N, sp.J, sp.K)
		}
		if err := gflassoWork("params.n", "", sp.N, sp.J, sp.K); err != nil {
			return nil, nil, nil, err
		}
		s, err := gflasso.Simulate(sp)
		if err != nil {
			return nil, nil, nil, err
		}
		return s.X, s.Y, s.B, nil
	case xp == "":
		return nil, nil, nil, spec.Errorf("params.x", "is needed with y (the design matrix X as CSV)")
	case yp == "":
		return nil, nil, nil, spec.Errorf("params.y", "is needed with x (the responses Y as CSV, one column per task)")
	}
	if X, err = dataio.ReadCSV(xp); err != nil {
		return nil, nil, nil, spec.Errorf("params.x", "%v", err)
	}
	if Y, err = dataio.ReadCSV(yp); err != nil {
		return nil, nil, nil, spec.Errorf("params.y", "%v", err)
	}
	nx, _ := X.Dims()
	ny, _ := Y.Dims()
	if nx != ny {
		return nil, nil, nil, spec.Errorf("params.y", "%s has %d rows but %s has %d: X and Y need one row per sample", yp, ny, xp, nx)
	}
	if nx < 2 {
		return nil, nil, nil, spec.Errorf("params.x", "%s has %d row; at least 2 samples are needed for the correlations of Y", xp, nx)
	}
	_, j := X.Dims()
	_, k := Y.Dims()
	if err := gflassoWork("params.x", fmt.Sprintf("%s and %s: ", xp, yp), nx, j, k); err != nil {
		return nil, nil, nil, err
	}
	return X, Y, nil, nil
}

// maxGFLASSOWork bounds n·j·k, the multiply-adds of one full gradient (and of
// the bound T's QR step), n·k², those of the task graph's correlations, and
// n·j·min(n, j), those of X's QR and Gram matrices: at 2·10⁹ an iteration
// takes about a second and a build several.
const maxGFLASSOWork = 2_000_000_000

// gflassoWork refuses instances whose gradient or graph would be too slow to
// watch, under the given field.
func gflassoWork(field, prefix string, n, j, k int) error {
	if w := float64(n) * float64(j) * float64(k); w > maxGFLASSOWork {
		return spec.Errorf(field, "%sn·j·k = %.3g exceeds %.0e (one full gradient's multiply-adds; lower n, j or k)", prefix, w, float64(maxGFLASSOWork))
	}
	if w := float64(n) * float64(k) * float64(k); w > maxGFLASSOWork {
		return spec.Errorf(field, "%sn·k² = %.3g exceeds %.0e (the correlations of the task graph; lower n or k)", prefix, w, float64(maxGFLASSOWork))
	}
	if w := float64(n) * float64(j) * float64(min(n, j)); w > maxGFLASSOWork {
		return spec.Errorf(field, "%sn·j·min(n, j) = %.3g exceeds %.0e (the QR and Gram matrices of X behind the bound T and the Lipschitz constant; lower n or j)", prefix, w, float64(maxGFLASSOWork))
	}
	return nil
}

// maxGFLASSOEntries bounds the size of simulated matrices.
const maxGFLASSOEntries = 20_000_000

// BuildGFLASSO builds the instance from validated values.
func BuildGFLASSO(ctx context.Context, v Values, seed int64) (*GFLASSOInstance, error) {
	X, Y, B, err := loadGFLASSO(v, seed)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := gflasso.NewContext(ctx, X, Y, gflasso.Options{Lambda: v.Float("lambda"), Gamma: v.Float("gamma"),
		Threshold: v.Float("threshold"), Bound: v.Str("bound"), Blocks: v.Str("blocks"), EnumMax: v.Int("enum_max"),
		// the slack parameter is applied per algorithm (FWInstance.Slack)
	})
	var oe *gflasso.OptionError
	if errors.As(err, &oe) {
		return nil, spec.Errorf("params."+oe.Option, "%s", oe.Msg)
	}
	if err != nil {
		return nil, errf("gflasso", err)
	}
	g := p.Graph()
	panels := map[string]any{
		"corr":       g.Corr,
		"edges":      g.Edges,
		"components": g.Components,
		"bounds":     p.Bounds(),
		"hat_bound":  p.HatBound(),
		"oracle":     p.OracleKinds(),
		"lambda":     v.Float("lambda"),
		"gamma":      v.Float("gamma"),
		"threshold":  v.Float("threshold"),
		"coef_shape": []int{p.J, p.K},
		// "coef_layout" tells a client how to read B from x without the Go
		// side: block b covers component components[b] (blocks=component),
		// its B part row-major over (row, task of the component), then t_b.
		"coef_layout": p.Options().Blocks,
	}
	if B != nil {
		panels["B_true"] = rows(B)
	}
	inst := &GFLASSOInstance{P: p, BTrue: B}
	inst.FWInstance = FWInstance{Problem: p, Meta: Info{Dim: p.Dim(), Samples: p.Samples(), Blocks: len(p.Blocks()), Panels: panels}, Slack: v.Str("slack")}
	return inst, nil
}

func init() {
	Register(&Scenario{
		Name:  "gflasso",
		Title: "Graph-guided fused LASSO (multi-task regression)",
		Help: "½‖Y − XB‖² + λ‖B‖₁ + γ Σ_e |r_e| Σ_j |B_jm − sign(r_e) B_jl| over the truncated correlation graph of Y's tasks; " +
			"one block per connected component for Algorithm 3 (bc-ssfw-as), against bcfw and the smoothing proximal gradient (spg) of Chen et al.",
		Group:      "gflasso",
		Params:     gflassoParams(),
		Algorithms: gflassoAlgorithms,
		Defaults:   gflassoDefaults(),
		Build: func(ctx context.Context, v Values, seed int64) (Instance, error) {
			return BuildGFLASSO(ctx, v, seed)
		},
	})
	RegisterPreset(&Preset{
		Name:  "paper-fig1",
		Title: "Paper Figure 1: graph-guided fused LASSO, bc-ssfw-as against SPG",
		Help: "The paper's setup (N = 200, J = 50, K = 20, threshold 0.7, λ = γ = 10, Chen et al.'s simulation), 10 replications of " +
			"bc-ssfw-as as the paper's Algorithm 3 (slack=keep, one block per component) and of SPG, with the slack collapse variant " +
			"(\"bc-ssfw-as + slack collapse\", not the paper's method) drawn beside them; the paper claims BC-SSFW-AS beats SPG after about 20 iterations.",
		Spec: spec.Run{
			Problem:      "gflasso",
			Params:       spec.Params{},
			Algorithms:   paperFig1Algorithms(),
			Replications: 10,
			Seed:         1,
			Iters:        2000,
			EvalEvery:    5,
		},
	})
}

// paperFig1Algorithms are the paper-fig1 preset's algorithms: the paper's
// Algorithm 3 (the slack kept), the slack collapse variant beside it, and
// SPG.
func paperFig1Algorithms() []spec.Algo {
	return []spec.Algo{{Algo: "bc-ssfw-as", Slack: "keep"}, {Algo: "bc-ssfw-as", Slack: "collapse"}, {Algo: "spg"}}
}

// Figure1Options configures Figure1. Zero values take the preset's.
type Figure1Options struct {
	Seed         int64       // instance seed; replication r runs with seed Seed+r
	Replications int         // per algorithm
	Iters        int         // iterations per run
	EvalEvery    int         // evaluation cadence
	Params       spec.Params // overrides of the preset's problem parameters
	GridPoints   int         // points of the passes and seconds grids (0: 200)
	// FStarTol is the relative FW-gap tolerance of the long bc-ssfw-as run
	// that gives F* (0: 1e-10), with at most FStarIters iterations (0: 100000).
	FStarTol   float64
	FStarIters int
	Workers    int // runs in parallel (0: 1, so that seconds are comparable)
}

// Figure1Series are the median, minimum and maximum of a field over the
// replications against iterations, effective passes and seconds.
type Figure1Series struct {
	Iterations []aggregate.Stat `json:"iterations"`
	Passes     []aggregate.Stat `json:"passes"`
	Seconds    []aggregate.Stat `json:"seconds"`
}

// Figure1Algo is one algorithm's part of the figure.
type Figure1Algo struct {
	Algo string `json:"algo"`
	// Log10 of the objective and of F − F* (points with F − F* ≤ 0 are left
	// out, see package aggregate).
	LogObjective Figure1Series `json:"log10_objective"`
	LogSubopt    Figure1Series `json:"log10_subopt"`
	// Per replication: the final objective, and the first evaluated
	// iteration, pass count and time at which F − F* ≤ 1e-6·F* (−1: never).
	Final       []float64        `json:"final_objective"`
	Reach1e6K   []int            `json:"reach_1e-6_iteration"`
	Reach1e6P   []float64        `json:"reach_1e-6_passes"`
	Reach1e6Sec []float64        `json:"reach_1e-6_seconds"`
	Summaries   []solver.Summary `json:"summaries"`
}

// Figure1Data is the paper's Figure 1 as JSON-encodable data.
type Figure1Data struct {
	Preset       string            `json:"preset"`
	Params       map[string]string `json:"params"`
	Seed         int64             `json:"seed"`
	Replications int               `json:"replications"`
	Iters        int               `json:"iters"`
	EvalEvery    int               `json:"eval_every"`
	FStar        float64           `json:"fstar"`
	FStarGap     float64           `json:"fstar_gap"`
	FStarIters   int               `json:"fstar_iters"`
	SPGMu        float64           `json:"spg_mu"`
	Algorithms   []Figure1Algo     `json:"algorithms"`
	// The first evaluated iteration (and pass count, and seconds) from which
	// on bc-ssfw-as's median objective stays strictly below SPG's (−1: never).
	CrossIteration float64 `json:"cross_iteration"`
	CrossPasses    float64 `json:"cross_passes"`
	CrossSeconds   float64 `json:"cross_seconds"`
	// The four matrices of the figure: (a) the true B, (b) SPG's B, (c)
	// bc-ssfw-as's B (both from the first replication) and (d) the truncated
	// correlation matrix of Y.
	BTrue      [][]float64    `json:"B_true"`
	BSPG       [][]float64    `json:"B_spg"`
	BBCSSFWAS  [][]float64    `json:"B_bc_ssfw_as"`
	Corr       [][]float64    `json:"corr"`
	Edges      []gflasso.Edge `json:"edges"`
	Components [][]int        `json:"components"`
}

// Figure1 runs the paper-fig1 preset: the instance is built once from Seed,
// every algorithm runs Replications times (seeds Seed, Seed+1, …; SPG is
// deterministic, so its replications differ only in timing), and F* comes
// from a long bc-ssfw-as run stopped at a relative FW gap of FStarTol.
func Figure1(ctx context.Context, o Figure1Options) (*Figure1Data, error) {
	pr, ok := LookupPreset("paper-fig1")
	if !ok {
		return nil, fmt.Errorf("paper-fig1: preset not registered")
	}
	run := figure1Spec(pr, o)
	_, vals, err := Resolve(&run)
	if err != nil {
		return nil, err
	}
	inst, err := BuildGFLASSO(ctx, vals, run.Seed)
	if err != nil {
		return nil, err
	}
	if inst.BTrue == nil {
		return nil, spec.Errorf("params.x", "Figure 1 needs simulated data (the true B), not imported files")
	}
	lim := LimitsOf(&run)
	lim.GapTol = 0
	best, refRes, err := figure1FStar(ctx, inst, o, run.Seed)
	if err != nil {
		return nil, err
	}
	data := &Figure1Data{Preset: pr.Name, Params: vals, Seed: run.Seed, Replications: run.Replications,
		Iters: run.Iters, EvalEvery: run.EvalEvery, FStar: best, FStarGap: refRes.Summary.Gap, FStarIters: refRes.Summary.Iters,
		BTrue: rows(inst.BTrue), Corr: inst.P.Graph().Corr, Edges: inst.P.Graph().Edges, Components: inst.P.Graph().Components}
	traces, results, err := figure1Replications(ctx, inst, &run, lim, max(o.Workers, 1))
	if err != nil {
		return nil, err
	}
	gp := o.GridPoints
	if gp == 0 {
		gp = 200
	}
	var all [][]solver.Record
	for a := range traces {
		all = append(all, traces[a]...)
	}
	figure1Algorithms(data, inst, &run, traces, results, all, gp)
	figure1Crossings(data, inst, &run, traces, all)
	return data, nil
}

// figure1Spec is the preset's run spec with the options' parameters, seed,
// replications, iterations and cadence where given.
func figure1Spec(pr *Preset, o Figure1Options) spec.Run {
	run := pr.Spec
	run.Params = spec.Params{}
	for k, v := range pr.Spec.Params {
		run.Params[k] = v
	}
	for k, v := range o.Params {
		run.Params[k] = v
	}
	if o.Seed != 0 {
		run.Seed = o.Seed
	}
	if o.Replications != 0 {
		run.Replications = o.Replications
	}
	if o.Iters != 0 {
		run.Iters = o.Iters
	}
	if o.EvalEvery != 0 {
		run.EvalEvery = o.EvalEvery
	}
	run.Algorithms = append([]spec.Algo(nil), pr.Spec.Algorithms...)
	return run
}

// figure1FStar is F* from a long, accurate bc-ssfw-as run: the least
// objective it reached, with its result.
func figure1FStar(ctx context.Context, inst *GFLASSOInstance, o Figure1Options, seed int64) (float64, solver.Result, error) {
	tol, maxIt := o.FStarTol, o.FStarIters
	if tol == 0 {
		tol = 1e-10
	}
	if maxIt == 0 {
		maxIt = 100000
	}
	ref := spec.Algo{Algo: "bc-ssfw-as"}
	if err := ref.Normalize(""); err != nil {
		return 0, solver.Result{}, err
	}
	f0 := inst.P.F(mat.NewDense(inst.P.J, inst.P.K, nil))
	m, err := inst.Method(ref, solver.Limits{MaxIters: maxIt, EvalEvery: 50, GapTol: tol * f0}, seed)
	if err != nil {
		return 0, solver.Result{}, err
	}
	best := math.Inf(1)
	refRes, err := m.Run(ctx, solver.RecorderFunc(func(r solver.Record) {
		if r.Objective != nil && *r.Objective < best {
			best = *r.Objective
		}
	}))
	if err != nil {
		return 0, solver.Result{}, err
	}
	if ctx.Err() != nil {
		return 0, solver.Result{}, ctx.Err()
	}
	return best, refRes, nil
}

// figure1Replications runs every algorithm of run Replications times on
// workers goroutines (replication r with seed run.Seed+r) and returns the
// records and results by algorithm and replication.
func figure1Replications(ctx context.Context, inst *GFLASSOInstance, run *spec.Run, lim solver.Limits, workers int) ([][][]solver.Record, [][]solver.Result, error) {
	type job struct{ a, r int }
	nA := len(run.Algorithms)
	traces := make([][][]solver.Record, nA)
	results := make([][]solver.Result, nA)
	for a := range traces {
		traces[a] = make([][]solver.Record, run.Replications)
		results[a] = make([]solver.Result, run.Replications)
	}
	jobs := make(chan job)
	errs := make(chan error, nA*run.Replications)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for jb := range jobs {
				algo := run.Algorithms[jb.a]
				m, err := inst.Method(algo, lim, run.Seed+int64(jb.r))
				if err != nil {
					errs <- err
					continue
				}
				var recs []solver.Record
				res, err := m.Run(ctx, solver.RecorderFunc(func(r solver.Record) { recs = append(recs, r) }))
				if err != nil {
					errs <- err
					continue
				}
				traces[jb.a][jb.r], results[jb.a][jb.r] = recs, res
			}
		}()
	}
	for a := 0; a < nA; a++ {
		for r := 0; r < run.Replications; r++ {
			jobs <- job{a, r}
		}
	}
	close(jobs)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, nil, err
	}
	if ctx.Err() != nil {
		return nil, nil, ctx.Err()
	}
	return traces, results, nil
}

// figure1Algorithms adds each algorithm's series (on gp-point grids over
// all the traces), final objectives and first iterations within 1e-6 of F*,
// and the matrices (b) and (c) of the figure.
func figure1Algorithms(data *Figure1Data, inst *GFLASSOInstance, run *spec.Run, traces [][][]solver.Record, results [][]solver.Result, all [][]solver.Record, gp int) {
	passGrid := aggregate.LinearGrid(all, aggregate.Passes, gp)
	secGrid := aggregate.LinearGrid(all, aggregate.Seconds, gp)
	series := func(tr [][]solver.Record, f aggregate.Field) Figure1Series {
		return Figure1Series{
			Iterations: aggregate.ByIteration(tr, f, data.FStar),
			Passes:     aggregate.OnGrid(tr, aggregate.Passes, passGrid, f, data.FStar),
			Seconds:    aggregate.OnGrid(tr, aggregate.Seconds, secGrid, f, data.FStar),
		}
	}
	for a, algo := range run.Algorithms {
		fa := Figure1Algo{Algo: inst.Label(algo),
			LogObjective: series(traces[a], aggregate.LogObjective),
			LogSubopt:    series(traces[a], aggregate.LogSubopt)}
		for r, tr := range traces[a] {
			res := results[a][r]
			fa.Final = append(fa.Final, res.Summary.Objective)
			fa.Summaries = append(fa.Summaries, res.Summary)
			k, p, s := -1, -1.0, -1.0
			for _, rec := range tr {
				if rec.Objective != nil && *rec.Objective-data.FStar <= 1e-6*data.FStar {
					k, p, s = rec.K, rec.Passes, rec.Time
					break
				}
			}
			fa.Reach1e6K = append(fa.Reach1e6K, k)
			fa.Reach1e6P = append(fa.Reach1e6P, p)
			fa.Reach1e6Sec = append(fa.Reach1e6Sec, s)
		}
		switch fa.Algo {
		case "spg":
			data.BSPG = inst.CoefMatrix(results[a][0].X)
			if s, err := gflasso.NewSPG(inst.P, gflasso.SPGConfig{Mu: algo.Mu, Eps: algo.Eps, Limits: solver.Limits{MaxIters: 1}}); err == nil {
				data.SPGMu = s.Mu()
			}
		case "bc-ssfw-as": // the paper's method (slack kept)
			data.BBCSSFWAS = inst.CoefMatrix(results[a][0].X)
		}
		data.Algorithms = append(data.Algorithms, fa)
	}
}

// figure1Crossings sets the first iteration, pass count and second from
// which on bc-ssfw-as's median objective stays below SPG's (−1: never, or
// one of them not run).
func figure1Crossings(data *Figure1Data, inst *GFLASSOInstance, run *spec.Run, traces [][][]solver.Record, all [][]solver.Record) {
	data.CrossIteration, data.CrossPasses, data.CrossSeconds = -1, -1, -1
	var bc, sp *Figure1Algo
	for i := range data.Algorithms {
		switch data.Algorithms[i].Algo {
		case "bc-ssfw-as":
			bc = &data.Algorithms[i]
		case "spg":
			sp = &data.Algorithms[i]
		}
	}
	if bc == nil || sp == nil {
		return
	}
	// Crossings on fine grids (about 20000 points), finer than the
	// exported series.
	var bcTr, spTr [][]solver.Record
	for a, algo := range run.Algorithms {
		switch inst.Label(algo) {
		case "bc-ssfw-as":
			bcTr = traces[a]
		case "spg":
			spTr = traces[a]
		}
	}
	fine := func(ax aggregate.Axis) float64 {
		g := aggregate.LinearGrid(all, ax, 20001)
		return crossing(aggregate.OnGrid(bcTr, ax, g, aggregate.LogObjective, 0), aggregate.OnGrid(spTr, ax, g, aggregate.LogObjective, 0))
	}
	data.CrossIteration = crossing(bc.LogObjective.Iterations, sp.LogObjective.Iterations)
	data.CrossPasses = fine(aggregate.Passes)
	data.CrossSeconds = fine(aggregate.Seconds)
}

// crossing returns the first abscissa of a from which on a's median is
// strictly below b's at every common abscissa where both have one (−1 if
// there is none). Both series must be on the same abscissae in the same order.
func crossing(a, b []aggregate.Stat) float64 {
	bx := map[float64]float64{}
	for _, s := range b {
		if s.N > 0 {
			bx[s.X] = s.Median
		}
	}
	type pt struct{ x, d float64 }
	var pts []pt
	for _, s := range a {
		if bm, ok := bx[s.X]; ok && s.N > 0 {
			pts = append(pts, pt{s.X, s.Median - bm})
		}
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].x < pts[j].x })
	cross := -1.0
	for i := len(pts) - 1; i >= 0; i-- {
		if !(pts[i].d < 0) {
			break
		}
		cross = pts[i].x
	}
	return cross
}
