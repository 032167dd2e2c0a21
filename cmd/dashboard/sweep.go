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
	"path/filepath"
	"strings"

	"github.com/fwlab/fwlab/internal/datapath"
	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/sweep"
)

// hasSweepFlag reports whether solve's arguments ask for a sweep.
func hasSweepFlag(args []string) bool {
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && name == "sweep" {
			return true
		}
	}
	return false
}

// runSweep is `solve -sweep FILE|JSON -out DIR`: the sweep document the
// server's POST /api/sweeps takes, run headless, cell after cell, each
// written as a bundle DIR/cell-NNN.json (what `dashboard import` loads),
// with DIR/sweep.json listing the cells, their values and files.
func runSweep(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dashboard solve -sweep", flag.ContinueOnError)
	fs.SetOutput(stderr)
	doc := fs.String("sweep", "", "a sweep document {\"base\": RUNSPEC, \"axes\": [{\"param\", \"values\"}, …]}, inline JSON or a file")
	out := fs.String("out", "", "directory for the cells' bundles (created if needed)")
	gap := fs.Float64("gap-target", 0, "gap target of the printed passes-to-gap medians (0: the base spec's gap, or 1e-6)")
	dataDir := shared(fs).data()
	only := fs.Int("cell", -1, "run this cell alone (0 … cells−1; one task of a batch engine's job array), writing its bundle and sweep.json")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: dashboard solve -sweep FILE|JSON -out DIR [-cell I] [-gap-target G] [-data DIR]")
		fs.PrintDefaults()
	}
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
	if *out == "" {
		fmt.Fprintln(stderr, "dashboard solve: -out: is required with -sweep (a directory for the cells' bundles)")
		return 2
	}
	if !(*gap >= 0) || math.IsInf(*gap, 0) {
		fmt.Fprintf(stderr, "dashboard solve: -gap-target: must be a non-negative number, got %v\n", *gap)
		return 2
	}
	d, cells, err := readSweep(*doc)
	if err != nil {
		return exitWith(stderr, "dashboard solve", err)
	}
	if *only >= len(cells) || (*only < 0 && *only != -1) {
		fmt.Fprintf(stderr, "dashboard solve: -cell: must be between 0 and %d (the sweep has %d cells), got %d\n", len(cells)-1, len(cells), *only)
		return 2
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintf(stderr, "dashboard solve: -out: %v\n", err)
		return 1
	}
	folders := datapath.Folders{Data: *dataDir, DataFlag: "solve -sweep … -data DIR"}
	target := *gap
	if target == 0 {
		target = d.Base.Gap
	}
	if target <= 0 {
		target = 1e-6
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	index := sweepIndex{Format: sweepIndexFormat, Name: d.Name, Note: d.Note, Base: d.Base, Axes: d.Axes, GapTarget: target}
	if *only >= 0 {
		// One task of a job array: its cell's bundle, and the index of
		// every cell (the same file from every task, written whole).
		for _, c := range cells {
			index.Cells = append(index.Cells, indexCell{Index: c.Index, Values: c.ValuesJSON(d.Axes), Bundle: cellFile(c.Index)})
		}
		if err := writeIndex(*out, &index); err != nil {
			fmt.Fprintf(stderr, "dashboard solve: -out: %v\n", err)
			return 1
		}
		cells = cells[*only : *only+1]
	}
	code := solveCells(ctx, folders, d, cells, &index, *out, *only < 0, stdout, stderr)
	if *only < 0 {
		if err := writeIndex(*out, &index); err != nil {
			fmt.Fprintf(stderr, "dashboard solve: -out: %v\n", err)
			return 1
		}
	}
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "dashboard solve: interrupted; the cells done so far are written")
		return 1
	}
	return code
}

// readSweep reads the sweep document -sweep names (inline JSON, or a file
// holding it) and its cells.
func readSweep(doc string) (*sweep.Doc, []sweep.Cell, error) {
	var r io.Reader
	src := strings.TrimSpace(doc)
	switch {
	case src == "":
		return nil, nil, usageError("-sweep: is required (a JSON document or a file holding one)")
	case strings.HasPrefix(src, "{"):
		r = strings.NewReader(src)
	default:
		f, err := os.Open(src)
		if err != nil {
			return nil, nil, usageError("-sweep: %v", err)
		}
		defer f.Close()
		r = bufio.NewReader(f)
	}
	d, err := sweep.Decode(r)
	var cells []sweep.Cell
	if err == nil {
		cells, err = d.Cells()
	}
	if err != nil {
		var fe *spec.FieldError
		if errors.As(err, &fe) && fe.Field != "" {
			return nil, nil, usageError("-sweep: %s: %s", fe.Field, fe.Msg)
		}
		return nil, nil, usageError("-sweep: %v", err)
	}
	return d, cells, nil
}

// solveCells solves the cells one after the other until ctx ends, each into
// its bundle in out, printing each one's outcome and, when listed, adding
// it to the index; it returns 1 when a cell failed, else 0.
func solveCells(ctx context.Context, folders datapath.Folders, d *sweep.Doc, cells []sweep.Cell, index *sweepIndex, out string, listed bool, stdout, stderr io.Writer) int {
	code := 0
	target := index.GapTarget
	for _, c := range cells {
		if ctx.Err() != nil {
			break
		}
		name := cellFile(c.Index)
		status, sum, err := solveCell(ctx, folders, c.Spec, filepath.Join(out, name), target)
		if err != nil {
			fmt.Fprintf(stderr, "dashboard solve: cell %d (%s): %v\n", c.Index, c.ValuesJSON(d.Axes), err)
			code = 1
			continue
		}
		if status == "failed" {
			code = 1
		}
		if listed {
			index.Cells = append(index.Cells, indexCell{Index: c.Index, Values: c.ValuesJSON(d.Axes), Bundle: name, Status: status, Summary: &sum})
		}
		fmt.Fprintf(stdout, "cell %d %s: %s, %s, final gap %s, passes to a gap ≤ %g: %s\n", c.Index, c.ValuesJSON(d.Axes), name, status,
			fmtMedian(sum.FinalGap), target, fmtMedian(sum.PassesToGap))
	}
	return code
}

// sweepIndexFormat tags a sweep's index file, DIR/sweep.json.
const sweepIndexFormat = "fwlab-sweep/1"

// sweepIndex is DIR/sweep.json: the sweep document and its cells with
// their bundles' file names (and, when one process ran them all, each
// cell's status and medians). `dashboard import DIR` reads it.
type sweepIndex struct {
	Format    string       `json:"format"`
	Name      string       `json:"name,omitempty"`
	Note      string       `json:"note,omitempty"`
	Base      spec.Run     `json:"base"`
	Axes      []sweep.Axis `json:"axes"`
	GapTarget float64      `json:"gap_target"`
	Cells     []indexCell  `json:"cells"`
}

type indexCell struct {
	Index  int             `json:"index"`
	Values json.RawMessage `json:"values"`
	Bundle string          `json:"bundle"`
	Status string          `json:"status,omitempty"`
	*sweep.Summary
}

func cellFile(i int) string { return fmt.Sprintf("cell-%03d.json", i) }

// writeIndex writes DIR/sweep.json through a temporary file renamed into
// place, so that tasks of a job array writing it at once leave it whole.
func writeIndex(dir string, index *sweepIndex) error {
	b, err := json.MarshalIndent(index, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".sweep-*.json")
	if err != nil {
		return err
	}
	_, err = tmp.Write(append(b, '\n'))
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, "sweep.json"))
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

func fmtMedian(p *float64) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprintf("%.4g", *p)
}

// solveCell runs one cell's spec (every algorithm and replication) and
// writes its bundle to path; it returns the run's status and the medians.
func solveCell(ctx context.Context, folders datapath.Folders, run spec.Run, path string, target float64) (string, sweep.Summary, error) {
	// A cell reads its data files inside the data folder (package
	// datapath), and its bundle keeps the paths as the document gives them.
	given := run.Params
	if err := folders.ConfineRun(&run); err != nil {
		return "", sweep.Summary{}, err
	}
	sc, inst, jobs, err := buildJobs(ctx, &run)
	if err != nil {
		return "", sweep.Summary{}, err
	}
	for _, p := range sc.Params {
		if v, ok := given[p.Name]; ok && p.Kind == scenarios.Path {
			run.Params[p.Name] = v
		}
	}
	var traces []traceOut
	var first []sweep.Outcome // algorithm 0's replications
	for _, j := range jobs {
		tr := traceOut{Algo: j.Label, Replication: j.Replication, Seed: j.Seed}
		res := runJob(ctx, j, solver.RecorderFunc(func(r solver.Record) { tr.Records = append(tr.Records, r) }))
		tr.Summary, tr.X = res.Summary, res.X
		traces = append(traces, tr)
		if j.Index == 0 {
			recs := tr.Records
			first = append(first, sweep.TraceOutcome(func(fn func(*solver.Record) bool) {
				for i := range recs {
					if !fn(&recs[i]) {
						return
					}
				}
			}, target))
		}
		if ctx.Err() != nil {
			break
		}
	}
	var aggs []aggregateOut
	if run.Replications > 1 {
		aggs = aggregateTraces(traces)
	}
	f, err := os.Create(path)
	if err != nil {
		return "", sweep.Summary{}, err
	}
	bw := bufio.NewWriterSize(f, 1<<16)
	err = writeBundle(bw, run, inst, traces, aggs, ctx.Err() != nil)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", sweep.Summary{}, err
	}
	status := "done"
	for _, t := range traces {
		if t.Summary.Status == solver.StatusFailed {
			status = "failed"
		}
	}
	if ctx.Err() != nil {
		status = "cancelled"
	}
	return status, sweep.Summarize(first), nil
}
