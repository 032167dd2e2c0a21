package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strings"

	"github.com/fwlab/fwlab/internal/dataio"
	"github.com/fwlab/fwlab/internal/figures"
	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

// solveOpts are the solve command's own flags (the problem's parameters are
// added per problem from the scenario catalogue).
type solveOpts struct {
	problem, scenario, algos string
	algo                     spec.Algo
	iters, evalEvery, reps   int
	passes, gap              float64
	seed                     int64
	format, out, saveX       string
	figsize                  string // -figsize: a figure's size preset (figures.Sizes)
	printSpec                bool
}

// findProblem scans the arguments for -problem or -scenario before the flags
// are parsed, so that the problem's own flags can be declared.
func findProblem(args []string) (problem, scenario string) {
	for i := 0; i < len(args); i++ {
		a := strings.TrimLeft(args[i], "-")
		if !strings.HasPrefix(args[i], "-") {
			continue
		}
		name, val, hasVal := strings.Cut(a, "=")
		if name != "problem" && name != "scenario" {
			continue
		}
		if !hasVal && i+1 < len(args) {
			val = args[i+1]
		}
		if name == "problem" {
			problem = val
		} else {
			scenario = val
		}
	}
	return problem, scenario
}

// runSolve runs one or more solvers headless and writes their records.
func runSolve(args []string, stdout, stderr io.Writer) int {
	if hasSweepFlag(args) {
		return runSweep(args, stdout, stderr)
	}
	c := &solveCmd{fs: flag.NewFlagSet("dashboard solve", flag.ContinueOnError), params: map[string]*string{}}
	c.fs.SetOutput(stderr)
	c.o.define(c.fs)
	if err := c.parse(args); err != nil {
		return exitWith(stderr, "dashboard solve", err)
	}
	if c.preset != nil && special(c.preset.Name) != nil {
		fa, err := c.figureArgs()
		if err != nil {
			return exitWith(stderr, "dashboard solve", err)
		}
		return runFigure(c.preset.Name, fa, stdout, stderr)
	}
	run, err := c.runSpec()
	if err != nil {
		return exitWith(stderr, "dashboard solve", err)
	}
	s, vals, err := scenarios.Resolve(&run)
	if err != nil {
		return exitWith(stderr, "dashboard solve", usageError("%s", flagError(err)))
	}
	if c.o.printSpec {
		e := json.NewEncoder(stdout)
		e.SetIndent("", "  ")
		if err := e.Encode(run); err != nil {
			return exitWith(stderr, "dashboard solve", failure("writing the spec: %v", err))
		}
		return 0
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return exitWith(stderr, "dashboard solve", c.solve(ctx, &run, s, vals, stdout, stderr))
}

// define declares solve's own flags on fs.
func (o *solveOpts) define(fs *flag.FlagSet) {
	fs.StringVar(&o.problem, "problem", "", "problem to solve (see the list below)")
	fs.StringVar(&o.scenario, "scenario", "", "a preset run: "+strings.Join(presetNames(), ", "))
	fs.StringVar(&o.algos, "algo", "", "algorithm, or several separated by commas: "+strings.Join(spec.AlgoNames, ", "))
	fs.StringVar(&o.algo.Stepsize, "stepsize", "", "step-size rule: paper | curvature (default) | backtrack; fw also open-loop (its default) | short")
	fs.StringVar(&o.algo.L, "L", "auto", "Lipschitz constant for -stepsize paper: a positive number or auto (from the data; an estimate for the models with a design matrix, see docs/problems.md)")
	fs.StringVar(&o.algo.Schedule, "schedule", "", "batch schedule of the stochastic methods: paper (default) | constant | geometric | full")
	fs.Float64Var(&o.algo.Rho, "rho", spec.DefaultRho, "paper schedule: ρ in (0,1)")
	fs.Float64Var(&o.algo.Alpha, "alpha", spec.DefaultAlpha, "paper schedule: α in (0,1)")
	fs.IntVar(&o.algo.M0, "m0", spec.DefaultM0, "constant and geometric schedules: first batch size")
	fs.Float64Var(&o.algo.Growth, "growth", spec.DefaultGrowth, "geometric schedule: growth factor > 1")
	fs.IntVar(&o.algo.R, "r", 0, "block methods: blocks sampled per iteration (0: all)")
	fs.IntVar(&o.algo.Workers, "workers", 0, "block methods: worker goroutines (0: one per CPU); results do not depend on it")
	fs.BoolVar(&o.algo.Caratheodory, "caratheodory", false, "keep at most p+1 active vertices per block (Carathéodory reduction)")
	fs.Float64Var(&o.algo.Mu, "mu", 0, "spg: smoothing parameter μ (0: from -eps)")
	fs.Float64Var(&o.algo.Eps, "eps", 0, "spg: target accuracy ε used to choose μ")
	fs.IntVar(&o.algo.Path, "path", 0, "cd: continuation stages along λ, from λ_max down to -lambda, each warm-starting the next (0: none)")
	fs.BoolVar(&o.algo.NoAverage, "no-average", false, "structural SVM: report the plain iterate instead of the weighted average")
	fs.IntVar(&o.iters, "iters", spec.DefaultIters, fmt.Sprintf("maximum iterations (0: no limit, up to %d); when -passes is given without -iters, the passes alone govern; with neither, the problem's default (ssvm-ocr: 30 passes)", spec.MaxIters))
	fs.Float64Var(&o.passes, "passes", 0, "maximum effective passes over the data (0: no limit); given alone, iterations are not limited")
	fs.Float64Var(&o.gap, "gap", 0, "stop when the duality gap is at most this (0: never)")
	fs.IntVar(&o.evalEvery, "eval-every", spec.DefaultEval, "evaluate the objective and the gap every E iterations (0: the default cadence, decided by counted work: evaluations cost about an eighth of the work)")
	fs.IntVar(&o.reps, "replications", 1, "run R times with seeds seed, seed+1, … and report the per-iteration median, min and max")
	fs.Int64Var(&o.seed, "seed", spec.DefaultSeed, "random seed (instance and runs); a preset keeps its own unless given")
	fs.StringVar(&o.format, "format", "jsonl", "output format: jsonl | csv | json (csv: problem-specific metrics in the last column, as a JSON object)")
	fs.StringVar(&o.out, "out", "", "write the output to FILE instead of standard output; FILE.svg, .png or .pdf draws the run's figure there instead (records still on standard output)")
	fs.StringVar(&o.saveX, "save-x", "", "write the final solution to FILE as CSV")
	fs.StringVar(&o.figsize, "figsize", figures.DefaultSize, "size of a figure drawn by -out FILE.svg|.png|.pdf: column (3.5 in wide, 8 pt text), page (7 in, 9 pt) or slide (13.3 in, 16 pt)")
	fs.BoolVar(&o.printSpec, "print-spec", false, "print the run spec as JSON (the body POST /api/runs takes) and exit without running")
}

// solveCmd is one solve command line: its flags, the preset and problem
// it names, the problem's own flags and which flags were given.
type solveCmd struct {
	fs     *flag.FlagSet
	o      solveOpts
	preset *scenarios.Preset
	sc     *scenarios.Scenario
	params map[string]*string // the problem's parameters, by flag
	set    map[string]bool    // the flags given
}

// parse finds the preset and the problem, declares the problem's own
// flags and parses the command line.
func (c *solveCmd) parse(args []string) error {
	fs := c.fs
	problem, scenario := findProblem(args)
	if scenario != "" {
		p, ok := scenarios.LookupPreset(scenario)
		if !ok {
			return usageError("-scenario: unknown preset %q (one of %s)", scenario, strings.Join(presetNames(), ", "))
		}
		c.preset = p
		if problem == "" {
			problem = p.Spec.Problem
		}
	}
	if problem != "" {
		s, ok := scenarios.Lookup(problem)
		if !ok {
			return usageError("-problem: unknown problem %q (one of %s)", problem, strings.Join(scenarios.Names(), ", "))
		}
		c.sc = s
		c.defineParams()
	}
	fs.Usage = func() { solveUsage(fs, c.sc) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return quietExit(0)
		}
		return quietExit(2)
	}
	if fs.NArg() > 0 {
		return usageError("unexpected argument %q (flags only)", fs.Arg(0))
	}
	c.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { c.set[f.Name] = true })
	if _, err := figures.SizeNamed(c.o.figsize); err != nil {
		return usageError("-figsize: %v", err)
	}
	return nil
}

// defineParams declares the problem's parameters as flags, each with its
// rule in its help.
func (c *solveCmd) defineParams() {
	for _, p := range c.sc.Params {
		if c.fs.Lookup(p.Name) != nil {
			continue // the problem's parameter shares a name with a solve flag
		}
		v := new(string)
		c.params[p.Name] = v
		help := p.Help
		if rule := strings.TrimPrefix(p.Rule(), "must be "); rule != "" {
			help += " (" + rule + ")"
		}
		c.fs.StringVar(v, p.Name, p.Default, help)
	}
}

// figureArgs checks the flags of a preset that draws a figure from several
// runs and gathers them.
func (c *solveCmd) figureArgs() (figureArgs, error) {
	name, set, params := c.preset.Name, c.set, c.params
	if c.o.printSpec {
		return figureArgs{}, usageError("-print-spec: the %s preset draws a figure from several runs; it has no single run spec", name)
	}
	if err := special(name).checkFlags(name, set, func(f string) bool { return params[f] != nil }); err != nil {
		return figureArgs{}, usageError("%v", err)
	}
	fa := figureArgs{o: c.o, set: set, params: map[string]string{}}
	for name, v := range params {
		if set[name] {
			if p := paramOf(c.sc, name); p != nil {
				if err := p.Check(*v); err != nil {
					return figureArgs{}, usageError("%s", flagError(err))
				}
			}
			fa.params[name] = *v
		}
	}
	return fa, nil
}

// runSpec builds the run spec: the preset's, overridden by explicit flags.
func (c *solveCmd) runSpec() (spec.Run, error) {
	var run spec.Run
	preset, set := c.preset, c.set
	if preset != nil {
		run = preset.Spec
		run.Params = spec.Params{}
		for k, v := range preset.Spec.Params {
			run.Params[k] = v
		}
		run.Algorithms = append([]spec.Algo(nil), preset.Spec.Algorithms...)
	}
	if c.sc == nil {
		return run, usageError("-problem: is required (or -scenario); one of %s", strings.Join(scenarios.Names(), ", "))
	}
	run.Problem = c.sc.Name
	if run.Params == nil {
		run.Params = spec.Params{}
	}
	for name, v := range c.params {
		if set[name] {
			run.Params[name] = *v
		}
	}
	if c.o.algos != "" || preset == nil {
		if c.o.algos == "" {
			return run, usageError("-algo: is required (one of %s)", strings.Join(c.sc.Algorithms, ", "))
		}
		run.Algorithms = c.algorithms()
	}
	if err := c.limits(&run); err != nil {
		return run, err
	}
	switch c.o.format {
	case "jsonl", "csv", "json":
	default:
		return run, usageError("-format: must be jsonl, csv or json, got %q", c.o.format)
	}
	return run, nil
}

// algorithms is -algo's list, each with the algorithm flags; a schedule's
// parameter not given is left to the spec's default (0). -path goes to
// the algorithms that take it when the list holds one (-algo cd,fista
// -path 10); else the spec refuses it, naming the field.
func (c *solveCmd) algorithms() []spec.Algo {
	var out []spec.Algo
	names := strings.Split(c.o.algos, ",")
	takesPath := func(name string) bool {
		a := spec.AlgorithmByName(strings.TrimSpace(name))
		return a != nil && slices.Contains(a.Settings, "path")
	}
	somePath := slices.ContainsFunc(names, takesPath)
	for _, a := range names {
		al := c.o.algo
		al.Algo = strings.TrimSpace(a)
		if somePath && !takesPath(a) {
			al.Path = 0
		}
		if !c.set["rho"] {
			al.Rho = 0
		}
		if !c.set["alpha"] {
			al.Alpha = 0
		}
		if !c.set["m0"] {
			al.M0 = 0
		}
		if !c.set["growth"] {
			al.Growth = 0
		}
		out = append(out, al)
	}
	return out
}

// limits sets the run's limits, cadence, replications and seed from the
// flags given (all of them without a preset).
func (c *solveCmd) limits(run *spec.Run) error {
	o, set, preset := &c.o, c.set, c.preset
	// In the spec 0 means "the default"; on the command line an explicit 0
	// is a mistake and is said so.
	for _, f := range []struct {
		name string
		v    int
	}{{"replications", o.reps}} {
		if set[f.name] && f.v < 1 {
			return usageError("-%s: must be at least 1, got %d", f.name, f.v)
		}
	}
	if set["iters"] && (o.iters < 0 || o.iters > spec.MaxIters) {
		return usageError("-iters: must be between 0 (no limit) and %d, got %d", spec.MaxIters, o.iters)
	}
	// -iters 0 means no iteration limit, and so does -passes given alone:
	// the passes then govern. The spec bounds every run, so "no limit" is
	// its largest iteration count.
	if (set["iters"] && o.iters == 0) || (set["passes"] && o.passes > 0 && !set["iters"]) {
		o.iters = spec.MaxIters
		set["iters"] = true
	}
	overrideInt := func(name string, dst *int, v int) {
		if set[name] || preset == nil {
			*dst = v
		}
	}
	overrideInt("iters", &run.Iters, o.iters)
	if preset == nil && !set["iters"] && !set["passes"] {
		// neither limit given: the problem's default budget (Resolve)
		run.Iters = 0
	}
	overrideInt("eval-every", &run.EvalEvery, o.evalEvery)
	overrideInt("replications", &run.Replications, o.reps)
	if set["passes"] || preset == nil {
		run.Passes = o.passes
	}
	if set["gap"] || preset == nil {
		run.Gap = o.gap
	}
	if set["seed"] || preset == nil {
		run.Seed = o.seed
	}
	return nil
}

// solve builds the run's instance and jobs, runs them and writes the
// output, the figure and the solution the flags ask for.
func (c *solveCmd) solve(ctx context.Context, run *spec.Run, s *scenarios.Scenario, vals scenarios.Values, stdout, stderr io.Writer) error {
	o := &c.o
	inst, err := s.Build(ctx, vals, run.Seed)
	if err != nil {
		msg := flagError(err)
		if !strings.HasPrefix(msg, s.Name+":") {
			msg = s.Name + ": " + msg
		}
		var fe *spec.FieldError
		if errors.As(err, &fe) {
			return usageError("%s", msg)
		}
		return failure("%s", msg)
	}
	jobs, err := scenarios.Jobs(inst, run)
	if err != nil {
		return usageError("%s", flagError(err))
	}
	w := stdout
	var outFile *os.File
	// -out FILE.svg (.png, .pdf) draws the run's figure into FILE; the
	// records still go to standard output.
	drawAs, _ := figures.FormatOf(o.out)
	if o.out != "" && drawAs == "" {
		f, err := os.Create(o.out)
		if err != nil {
			return failure("-out: %v", err)
		}
		outFile = f
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	enc := newRecordWriter(bw, o.format, len(jobs) > 1)
	keep := o.format == "json" || run.Replications > 1 || drawAs != ""
	traces, failed := runTraces(ctx, jobs, enc, keep, stderr)
	if err := c.writeOutput(ctx, bw, enc, run, inst, traces); err != nil {
		return err
	}
	if outFile != nil {
		if err := outFile.Close(); err != nil {
			return failure("-out: %v", err)
		}
	}
	if drawAs != "" {
		if err := drawRun(o.out, drawAs, o.figsize, run, inst, traces); err != nil {
			return failure("-out: %v", err)
		}
	}
	if o.saveX != "" && len(traces) > 0 {
		if err := saveSolution(o.saveX, inst, traces[len(traces)-1].X); err != nil {
			return failure("-save-x: %v", err)
		}
	}
	if failed {
		return quietExit(1)
	}
	return nil
}

// runTraces runs the jobs one after the other until ctx ends, writing
// each record (enc.format jsonl or csv) and the progress on stderr, and
// keeping the records in the traces when keep says so. failed says
// whether a trace failed.
func runTraces(ctx context.Context, jobs []scenarios.Job, enc *recordWriter, keep bool, stderr io.Writer) (traces []traceOut, failed bool) {
	progress := newProgress(stderr)
	for _, j := range jobs {
		tr := traceOut{Algo: j.Label, Replication: j.Replication, Seed: j.Seed}
		rec := solver.RecorderFunc(func(r solver.Record) {
			if keep {
				tr.Records = append(tr.Records, r)
			}
			if enc.format != "json" {
				enc.write(j.Label, j.Replication, r)
			}
			progress.show(j.Label, j.Replication, r)
		})
		res := runJob(ctx, j, rec)
		progress.done()
		if res.Summary.Status == solver.StatusFailed {
			failed = true
		}
		tr.Summary = res.Summary
		tr.X = res.X
		if enc.format != "json" {
			enc.summary(j.Label, j.Replication, j.Seed, res.Summary, stderr)
		}
		traces = append(traces, tr)
		if ctx.Err() != nil {
			break
		}
	}
	return traces, failed
}

// writeOutput writes what follows the records: the aggregates over the
// replications (jsonl), or the whole run as a bundle (json); then flushes.
func (c *solveCmd) writeOutput(ctx context.Context, bw *bufio.Writer, enc *recordWriter, run *spec.Run, inst scenarios.Instance, traces []traceOut) error {
	var aggs []aggregateOut
	if run.Replications > 1 {
		aggs = aggregateTraces(traces)
		if c.o.format == "jsonl" {
			for _, a := range aggs {
				for i, st := range a.Objective {
					row := map[string]any{"algo": a.Algo, "k": int(st.X), "objective": st}
					if i < len(a.Gap) && a.Gap[i].X == st.X {
						row["gap"] = a.Gap[i]
					}
					enc.line(map[string]any{"aggregate": row})
				}
			}
		}
	}
	if c.o.format == "json" {
		if err := writeBundle(bw, *run, inst, traces, aggs, ctx.Err() != nil); err != nil {
			return failure("writing the output: %v", err)
		}
	}
	if err := enc.flush(); err != nil {
		return failure("writing the output: %v", err)
	}
	if err := bw.Flush(); err != nil {
		return failure("writing the output: %v", err)
	}
	return nil
}

// buildJobs resolves run (in place), builds its instance and configures
// every (algorithm, replication) of it: with runJob, the one path by which
// solve, solve -sweep and verify run a spec.
func buildJobs(ctx context.Context, run *spec.Run) (*scenarios.Scenario, scenarios.Instance, []scenarios.Job, error) {
	s, vals, err := scenarios.Resolve(run)
	if err != nil {
		return nil, nil, nil, err
	}
	inst, err := s.Build(ctx, vals, run.Seed)
	if err != nil {
		return s, nil, nil, err
	}
	jobs, err := scenarios.Jobs(inst, run)
	if err != nil {
		return s, nil, nil, err
	}
	return s, inst, jobs, nil
}

// runJob runs one trace of a run, handing every record to rec; a method's
// error ends the trace failed, with the error as its message.
func runJob(ctx context.Context, j scenarios.Job, rec solver.Recorder) solver.Result {
	res, err := j.Method.Run(ctx, rec)
	if err != nil {
		res.Summary.Status, res.Summary.Message = solver.StatusFailed, err.Error()
	}
	return res
}

// flagError phrases a validation error in the command's vocabulary: the
// spec's field names become flags.
func flagError(err error) string {
	var fe *spec.FieldError
	if !errors.As(err, &fe) {
		return err.Error()
	}
	f := fe.Field
	if i := strings.LastIndex(f, "."); i >= 0 {
		f = f[i+1:]
	}
	f = strings.ReplaceAll(f, "_", "-")
	return "-" + f + ": " + fe.Msg
}

func presetNames() []string {
	var ns []string
	for _, p := range scenarios.Presets() {
		ns = append(ns, p.Name)
	}
	for n := range figurePresets {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return dedupe(ns)
}

func dedupe(a []string) []string {
	out := a[:0]
	for i, s := range a {
		if i == 0 || s != a[i-1] {
			out = append(out, s)
		}
	}
	return out
}

func solveUsage(fs *flag.FlagSet, sc *scenarios.Scenario) {
	w := fs.Output()
	fmt.Fprint(w, `usage: dashboard solve -problem NAME [problem flags] -algo NAME[,NAME…] [flags]
       dashboard solve -scenario PRESET [flags] [-out FILE]
       dashboard solve -scenario paper-fig1 -out fig1.svg   (or .png, .pdf: the figure drawn)
       dashboard solve -sweep FILE|JSON -out DIR             (a sweep: one bundle per cell)

Runs solvers headless and writes one line per iteration record (k, passes,
time_s, step, gamma, batch, active, objective, gap, grad_err), then a summary.

`)
	fs.PrintDefaults()
	if sc == nil {
		fmt.Fprintln(w, "\nproblems (give -problem NAME -h for a problem's own flags):")
		for _, s := range scenarios.All() {
			fmt.Fprintf(w, "  %-14s %s\n", s.Name, s.Title)
		}
	} else {
		fmt.Fprintf(w, "\n%s runs: %s\n", sc.Name, strings.Join(sc.Algorithms, ", "))
	}
}

// saveSolution writes x as CSV: the instance's own export form when it has
// one (β for the penalised models, the matrix B for GFLASSO), else one value
// per line.
func saveSolution(path string, inst scenarios.Instance, x []float64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	rows := [][]float64{}
	if m, ok := inst.(interface{ SolutionRows(x []float64) [][]float64 }); ok {
		rows = m.SolutionRows(x)
	} else {
		for _, v := range x {
			rows = append(rows, []float64{v})
		}
	}
	if err := dataio.WriteRows(f, rows); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func paramOf(sc *scenarios.Scenario, name string) *scenarios.Param {
	if sc == nil {
		return nil
	}
	for i := range sc.Params {
		if sc.Params[i].Name == name {
			return &sc.Params[i]
		}
	}
	return nil
}
