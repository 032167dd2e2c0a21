package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/fwlab/fwlab/internal/dataio"
	"github.com/fwlab/fwlab/internal/figures"
	"github.com/fwlab/fwlab/internal/recordfields"
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
	fs := flag.NewFlagSet("dashboard solve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o solveOpts
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

	problem, scenario := findProblem(args)
	var preset *scenarios.Preset
	if scenario != "" {
		p, ok := scenarios.LookupPreset(scenario)
		if !ok {
			fmt.Fprintf(stderr, "dashboard solve: -scenario: unknown preset %q (one of %s)\n", scenario, strings.Join(presetNames(), ", "))
			return 2
		}
		preset = p
		if problem == "" {
			problem = p.Spec.Problem
		}
	}
	var sc *scenarios.Scenario
	params := map[string]*string{}
	if problem != "" {
		s, ok := scenarios.Lookup(problem)
		if !ok {
			fmt.Fprintf(stderr, "dashboard solve: -problem: unknown problem %q (one of %s)\n", problem, strings.Join(scenarios.Names(), ", "))
			return 2
		}
		sc = s
		for _, p := range s.Params {
			if fs.Lookup(p.Name) != nil {
				continue // the problem's parameter shares a name with a solve flag
			}
			v := new(string)
			params[p.Name] = v
			help := p.Help
			if rule := strings.TrimPrefix(p.Rule(), "must be "); rule != "" {
				help += " (" + rule + ")"
			}
			fs.StringVar(v, p.Name, p.Default, help)
		}
	}
	fs.Usage = func() { solveUsage(fs, sc) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "dashboard solve: unexpected argument %q (flags only)\n", fs.Arg(0))
		return 2
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if _, err := figures.SizeNamed(o.figsize); err != nil {
		fmt.Fprintf(stderr, "dashboard solve: -figsize: %v\n", err)
		return 2
	}

	if preset != nil && special(preset.Name) != nil {
		if o.printSpec {
			fmt.Fprintf(stderr, "dashboard solve: -print-spec: the %s preset draws a figure from several runs; it has no single run spec\n", preset.Name)
			return 2
		}
		if err := special(preset.Name).checkFlags(preset.Name, set, func(f string) bool { return params[f] != nil }); err != nil {
			fmt.Fprintf(stderr, "dashboard solve: %v\n", err)
			return 2
		}
		fa := figureArgs{o: o, set: set, params: map[string]string{}}
		for name, v := range params {
			if set[name] {
				if p := paramOf(sc, name); p != nil {
					if err := p.Check(*v); err != nil {
						fmt.Fprintf(stderr, "dashboard solve: %s\n", flagError(err))
						return 2
					}
				}
				fa.params[name] = *v
			}
		}
		return runFigure(preset.Name, fa, stdout, stderr)
	}

	// Build the run spec: the preset's, overridden by explicit flags.
	var run spec.Run
	if preset != nil {
		run = preset.Spec
		run.Params = spec.Params{}
		for k, v := range preset.Spec.Params {
			run.Params[k] = v
		}
		run.Algorithms = append([]spec.Algo(nil), preset.Spec.Algorithms...)
	}
	if sc == nil {
		fmt.Fprintln(stderr, "dashboard solve: -problem: is required (or -scenario); one of "+strings.Join(scenarios.Names(), ", "))
		return 2
	}
	run.Problem = sc.Name
	if run.Params == nil {
		run.Params = spec.Params{}
	}
	for name, v := range params {
		if set[name] {
			run.Params[name] = *v
		}
	}
	if o.algos != "" || preset == nil {
		if o.algos == "" {
			fmt.Fprintln(stderr, "dashboard solve: -algo: is required (one of "+strings.Join(sc.Algorithms, ", ")+")")
			return 2
		}
		run.Algorithms = nil
		for _, a := range strings.Split(o.algos, ",") {
			al := o.algo
			al.Algo = strings.TrimSpace(a)
			if !set["rho"] {
				al.Rho = 0
			}
			if !set["alpha"] {
				al.Alpha = 0
			}
			if !set["m0"] {
				al.M0 = 0
			}
			if !set["growth"] {
				al.Growth = 0
			}
			run.Algorithms = append(run.Algorithms, al)
		}
	}
	// In the spec 0 means "the default"; on the command line an explicit 0
	// is a mistake and is said so.
	for _, c := range []struct {
		name string
		v    int
	}{{"replications", o.reps}} {
		if set[c.name] && c.v < 1 {
			fmt.Fprintf(stderr, "dashboard solve: -%s: must be at least 1, got %d\n", c.name, c.v)
			return 2
		}
	}
	if set["iters"] && (o.iters < 0 || o.iters > spec.MaxIters) {
		fmt.Fprintf(stderr, "dashboard solve: -iters: must be between 0 (no limit) and %d, got %d\n", spec.MaxIters, o.iters)
		return 2
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
	switch o.format {
	case "jsonl", "csv", "json":
	default:
		fmt.Fprintf(stderr, "dashboard solve: -format: must be jsonl, csv or json, got %q\n", o.format)
		return 2
	}
	s, vals, err := scenarios.Resolve(&run)
	if err != nil {
		fmt.Fprintf(stderr, "dashboard solve: %s\n", flagError(err))
		return 2
	}
	if o.printSpec {
		e := json.NewEncoder(stdout)
		e.SetIndent("", "  ")
		if err := e.Encode(run); err != nil {
			fmt.Fprintf(stderr, "dashboard solve: writing the spec: %v\n", err)
			return 1
		}
		return 0
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	inst, err := s.Build(ctx, vals, run.Seed)
	if err != nil {
		msg := flagError(err)
		if !strings.HasPrefix(msg, s.Name+":") {
			msg = s.Name + ": " + msg
		}
		fmt.Fprintf(stderr, "dashboard solve: %s\n", msg)
		var fe *spec.FieldError
		if errors.As(err, &fe) {
			return 2
		}
		return 1
	}
	jobs, err := scenarios.Jobs(inst, &run)
	if err != nil {
		fmt.Fprintf(stderr, "dashboard solve: %s\n", flagError(err))
		return 2
	}

	w := stdout
	var outFile *os.File
	// -out FILE.svg (.png, .pdf) draws the run's figure into FILE; the
	// records still go to standard output.
	drawAs, _ := figures.FormatOf(o.out)
	if o.out != "" && drawAs == "" {
		f, err := os.Create(o.out)
		if err != nil {
			fmt.Fprintf(stderr, "dashboard solve: -out: %v\n", err)
			return 1
		}
		outFile = f
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	tagged := len(jobs) > 1
	enc := newRecordWriter(bw, o.format, tagged)
	progress := newProgress(stderr)
	var traces []traceOut
	failed := false
	for _, j := range jobs {
		tr := traceOut{Algo: j.Label, Replication: j.Replication, Seed: j.Seed}
		rec := solver.RecorderFunc(func(r solver.Record) {
			if o.format == "json" || run.Replications > 1 || drawAs != "" {
				tr.Records = append(tr.Records, r)
			}
			if o.format != "json" {
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
		if o.format != "json" {
			enc.summary(j.Label, j.Replication, j.Seed, res.Summary, stderr)
		}
		traces = append(traces, tr)
		if ctx.Err() != nil {
			break
		}
	}
	var aggs []aggregateOut
	if run.Replications > 1 {
		aggs = aggregateTraces(traces)
		if o.format == "jsonl" {
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
	if o.format == "json" {
		if err := writeBundle(bw, run, inst, traces, aggs, ctx.Err() != nil); err != nil {
			fmt.Fprintf(stderr, "dashboard solve: writing the output: %v\n", err)
			return 1
		}
	}
	if err := enc.flush(); err != nil {
		fmt.Fprintf(stderr, "dashboard solve: writing the output: %v\n", err)
		return 1
	}
	if err := bw.Flush(); err != nil {
		fmt.Fprintf(stderr, "dashboard solve: writing the output: %v\n", err)
		return 1
	}
	if outFile != nil {
		if err := outFile.Close(); err != nil {
			fmt.Fprintf(stderr, "dashboard solve: -out: %v\n", err)
			return 1
		}
	}
	if drawAs != "" {
		if err := drawRun(o.out, drawAs, o.figsize, &run, inst, traces); err != nil {
			fmt.Fprintf(stderr, "dashboard solve: -out: %v\n", err)
			return 1
		}
	}
	if o.saveX != "" && len(traces) > 0 {
		if err := saveSolution(o.saveX, inst, traces[len(traces)-1].X); err != nil {
			fmt.Fprintf(stderr, "dashboard solve: -save-x: %v\n", err)
			return 1
		}
	}
	if failed {
		return 1
	}
	return 0
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

// traceOut is one run's output for the json format and the aggregates.
type traceOut struct {
	Algo        string          `json:"algo"`
	Replication int             `json:"replication"`
	Seed        int64           `json:"seed"`
	Summary     solver.Summary  `json:"summary"`
	Records     []solver.Record `json:"records,omitempty"`
	X           []float64       `json:"-"`
}

// recordWriter writes records as JSON Lines or CSV. A record is encoded by
// hand into a reused buffer (appendRecordJSON, appendCSVRow), the
// bytes encoding/json and encoding/csv would write, at a fraction of their
// cost: an OCR pass of bcfw reports 6 251 records.
type recordWriter struct {
	w      *bufio.Writer
	format string
	tagged bool
	header bool
	enc    *json.Encoder
	buf    []byte
}

func newRecordWriter(w *bufio.Writer, format string, tagged bool) *recordWriter {
	return &recordWriter{w: w, format: format, tagged: tagged, enc: json.NewEncoder(w)}
}

// csvHeader is the CSV output's header row (after algo and replication when
// tagged): the record's declared columns (internal/recordfields), the
// problem-specific metrics last.
var csvHeader = append(recordfields.CSVHeader(), recordfields.MetricsField.CSV)

// jsonStyle writes a record as json.Marshal does (solver.Record's
// MarshalJSON): a non-finite number as 0, or left out where optional.
var jsonStyle = recordfields.JSONStyle{
	Float: func(b []byte, f float64) []byte {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			f = 0
		}
		return solver.AppendJSONFloat(b, f)
	},
	Str:  appendJSONString,
	Keep: func(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) },
}

// appendJSONString appends s as encoding/json writes it.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == ' ' || c == '+') {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendRecordJSON appends the record's JSON object, field by declared
// field.
func appendRecordJSON(b []byte, r *solver.Record) []byte {
	b = append(b, '{')
	b = recordfields.AppendJSON(b, r, &jsonStyle)
	return append(b, '}')
}

// csvStyle writes numbers as strconv does ('g', NaN and ±Inf spelt out).
var csvStyle = recordfields.CSVStyle{
	Float: func(b []byte, f float64) []byte { return strconv.AppendFloat(b, f, 'g', -1, 64) },
	Str:   appendCSVField,
}

// appendExtraCell appends a record's problem-specific metrics as one JSON
// object (keys sorted, non-finite values null): their keys are not known
// before the run (a 2-D trace has one weight per vertex it visits), and rows
// are written as the run goes. Nothing for no metrics.
func appendExtraCell(b []byte, e map[string]float64) []byte {
	if len(e) == 0 {
		return b
	}
	var small [16]string
	keys := small[:0]
	for k := range e {
		if !recordfields.IsSlot(k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		q, _ := json.Marshal(k) // a string always marshals
		b = append(b, q...)
		b = append(b, ':')
		if v := e[k]; math.IsNaN(v) || math.IsInf(v, 0) {
			b = append(b, "null"...)
		} else {
			b = solver.AppendJSONFloat(b, v)
		}
	}
	return append(b, '}')
}

// appendCSVField appends one field as encoding/csv writes it (comma
// separated, LF line ends): quoted, with its quotes doubled, when it holds a
// comma, a quote or a line break, starts with a space, or is \.
func appendCSVField(b []byte, f string) []byte {
	quote := f == `\.`
	for i := 0; i < len(f) && !quote; i++ {
		c := f[i]
		quote = c == ',' || c == '"' || c == '\r' || c == '\n'
	}
	if !quote && f != "" {
		r, _ := utf8.DecodeRuneInString(f)
		quote = unicode.IsSpace(r)
	}
	if !quote {
		return append(b, f...)
	}
	b = append(b, '"')
	for i := 0; i < len(f); i++ {
		if f[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, f[i])
	}
	return append(b, '"')
}

// appendCSVRow appends the record's CSV row, line end included.
func appendCSVRow(b []byte, r *solver.Record) []byte {
	b = recordfields.AppendCSV(b, r, &csvStyle)
	b = append(b, ',')
	if recordfields.MetricCount(r) > 0 {
		// the cell is a JSON object: it holds quotes, so it is quoted
		start := len(b)
		b = appendExtraCell(b, r.Extra)
		cell := string(b[start:])
		b = appendCSVField(b[:start], cell)
	}
	return append(b, '\n')
}

func (rw *recordWriter) write(algo string, rep int, r solver.Record) {
	b := rw.buf[:0]
	switch rw.format {
	case "jsonl":
		if rw.tagged {
			// splice the tags into the record's own JSON object
			b = append(b, `{"algo":`...)
			b = strconv.AppendQuote(b, algo)
			b = append(b, `,"replication":`...)
			b = strconv.AppendInt(b, int64(rep), 10)
			b = append(b, ',')
			start := len(b)
			b = appendRecordJSON(b, &r)
			b = append(b[:start], b[start+1:]...)
		} else {
			b = appendRecordJSON(b, &r)
		}
		b = append(b, '\n')
	case "csv":
		if !rw.header {
			h := csvHeader
			if rw.tagged {
				h = append([]string{"algo", "replication"}, h...)
			}
			for i, f := range h {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendCSVField(b, f)
			}
			b = append(b, '\n')
			rw.header = true
		}
		if rw.tagged {
			b = appendCSVField(b, algo)
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(rep), 10)
			b = append(b, ',')
		}
		b = appendCSVRow(b, &r)
	}
	rw.w.Write(b)
	rw.buf = b
}

func (rw *recordWriter) line(v any) { rw.enc.Encode(sanitize(v)) }

func (rw *recordWriter) summary(algo string, rep int, seed int64, s solver.Summary, stderr io.Writer) {
	body := map[string]any{"objective": s.Objective, "gap": s.Gap, "iters": s.Iters, "passes": s.Passes, "time_s": s.Time, "status": s.Status, "message": s.Message}
	if rw.tagged {
		body["algo"], body["replication"], body["seed"] = algo, rep, seed
	}
	if rw.format == "csv" {
		b, _ := json.Marshal(sanitize(map[string]any{"summary": body}))
		fmt.Fprintln(stderr, string(b))
		return
	}
	rw.line(map[string]any{"summary": body})
}

func (rw *recordWriter) flush() error { return nil }

// progress prints a status line on stderr when stderr is a terminal.
type progress struct {
	w    io.Writer
	on   bool
	last time.Time
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.on = true
		}
	}
	return p
}

func (p *progress) show(algo string, rep int, r solver.Record) {
	if !p.on || time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	obj, gap := "-", "-"
	if r.Objective != nil {
		obj = strconv.FormatFloat(*r.Objective, 'g', 8, 64)
	}
	if r.Gap != nil {
		gap = strconv.FormatFloat(*r.Gap, 'g', 3, 64)
	}
	fmt.Fprintf(p.w, "\r\033[K%s#%d k=%d passes=%.2f objective=%s gap=%s", algo, rep, r.K, r.Passes, obj, gap)
}

func (p *progress) done() {
	if p.on {
		fmt.Fprint(p.w, "\r\033[K")
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
