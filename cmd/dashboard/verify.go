package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/fwlab/fwlab/internal/bundle"
	"github.com/fwlab/fwlab/internal/datapath"
	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/verify"
)

// runVerify is `dashboard verify`: re-run bundles or stored runs on this
// machine and compare every record, or check bundles' digests.
func runVerify(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dashboard verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sh := shared(fs)
	db, _ := sh.db()
	sweepID := fs.String("sweep", "", "with -db: verify every cell of this sweep")
	digestOnly := fs.Bool("digest-only", false, "check the bundles' digests without re-running them")
	dataDir := sh.data()
	fs.Usage = func() {
		fmt.Fprintf(stderr, `usage: dashboard verify BUNDLE…
       dashboard verify -digest-only BUNDLE…
       dashboard verify -db PATH ID…
       dashboard verify -db PATH -sweep ID

Re-runs each run's spec on this machine, through the same code as
"dashboard solve", and compares every field of every record, and every
trace's summary, with what the bundle or the store holds, bit for bit.
Left out, as wall-clock by nature: %s (of records and summaries).
Prints "reproduced: N records identical", or the first differing record
(trace, k), its field and both values. A trace that did not finish
(cancelled, interrupted) is compared with the re-run's first records.

A spec read from a bundle or a store reads its data files only inside
the -data folder, by the paths the spec names relative to it; an
absolute path, or one that climbs out of the folder, is refused before
anything is opened, and nothing of a file's content is printed or
recorded (a file that does not parse is named with its line and column).

A bundle's digest (the SHA-256 of its traces, see docs/store.md) is checked first;
-digest-only checks it alone, without re-running. With -db the outcome is
recorded in the store, where the run page and History show it. FILE "-"
reads a bundle from standard input.

Exit status: 0 every run reproduced (or every digest matched); 1 a
difference, a digest that does not match (with -digest-only: or none),
or a run that could not be re-run; 2 a usage error.

`, strings.Join(verify.Ignored, ", "))
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "dashboard verify: "+format+"\n", a...)
		return 2
	}
	switch {
	case *db == "" && *sweepID != "":
		return usageErr("-sweep: needs -db (the store holding the sweep)")
	case *db != "" && *digestOnly:
		return usageErr("-digest-only: checks bundle files; a stored run has no digest to check (give its exported bundle)")
	case *db != "" && *sweepID != "" && fs.NArg() > 0:
		return usageErr("-sweep: verifies the sweep's cells; give no run ids with it (got %q)", fs.Arg(0))
	case *db != "" && *sweepID == "" && fs.NArg() == 0:
		return usageErr("no run ids given (or -sweep ID)")
	case *db == "" && fs.NArg() == 0:
		return usageErr("no bundle files given")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	folders := datapath.Folders{Data: *dataDir, DataFlag: "verify -data DIR"}
	if *db != "" {
		return verifyStored(ctx, folders, *db, *sweepID, fs.Args(), stdout, stderr)
	}
	bad := 0
	for _, name := range fs.Args() {
		if !verifyBundleFile(ctx, folders, name, *digestOnly, stdin, stdout, stderr) {
			bad++
		}
		if ctx.Err() != nil {
			break
		}
	}
	if bad > 0 || ctx.Err() != nil {
		return 1
	}
	return 0
}

// verifyBundleFile checks one bundle file and reports whether it passed.
func verifyBundleFile(ctx context.Context, folders datapath.Folders, name string, digestOnly bool, stdin io.Reader, stdout, stderr io.Writer) bool {
	b, err := readBundle(name, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "dashboard verify: %s: %v\n", name, err)
		return false
	}
	ok := true
	switch err := bundle.CheckDigest(b); {
	case errors.Is(err, bundle.ErrNoDigest):
		fmt.Fprintf(stdout, "%s: no digest: %v\n", name, err)
		if digestOnly {
			return false
		}
	case err != nil:
		fmt.Fprintf(stdout, "%s: %v\n", name, err)
		ok = false
	default:
		fmt.Fprintf(stdout, "%s: digest ok (%s)\n", name, b.Digest)
	}
	if digestOnly {
		return ok
	}
	if err := verify.Rerunnable(b.Spec); err != nil {
		fmt.Fprintf(stdout, "%s: not re-run: %v\n", name, err)
		return ok && b.Digest != ""
	}
	out, err := reproduce(ctx, folders, b)
	if err != nil {
		fmt.Fprintf(stdout, "%s: %v\n", name, err)
		return false
	}
	fmt.Fprintf(stdout, "%s: %s\n", name, out.line)
	return ok && out.res.OK()
}

func readBundle(name string, stdin io.Reader) (*bundle.Bundle, error) {
	r := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	return bundle.Decode(bufio.NewReaderSize(r, 1<<16))
}

// outcome is a re-run's comparison and its one-line report.
type outcome struct {
	res  verify.Result
	line string
}

// reproduce re-runs b's spec and compares the re-run with b's traces. An
// error means the run could not be re-run here.
func reproduce(ctx context.Context, folders datapath.Folders, b *bundle.Bundle) (outcome, error) {
	if store.Live(b.Status) {
		return outcome{}, fmt.Errorf("the run is still %s: verify it once it has ended", b.Status)
	}
	want := verify.FromBundle(b)
	got, err := rerun(ctx, folders, b, want)
	if err != nil {
		return outcome{}, err
	}
	res := verify.Compare(want, got)
	return outcome{res: res, line: describe(res, b.Version)}, nil
}

// describe is the report of a comparison, with the versions when they
// differ.
func describe(res verify.Result, version string) string {
	s := verify.Report(res)
	if v := bundle.ProgramVersion(); !res.OK() && version != "" && version != v {
		s += fmt.Sprintf("; the run was made by fwlab %s, re-run by %s", version, v)
	}
	return s
}

// rerun runs b's spec through solve's path (buildJobs, runJob), its data
// files confined to the folders (package datapath). An unfinished trace is run only as far as the stored one went; a trace not
// in the bundle is not run.
func rerun(ctx context.Context, folders datapath.Folders, b *bundle.Bundle, want []verify.Trace) ([]verify.Trace, error) {
	run := b.Spec
	run.Algorithms = append(run.Algorithms[:0:0], b.Spec.Algorithms...)
	var (
		s    *scenarios.Scenario
		jobs []scenarios.Job
	)
	err := folders.ConfineRun(&run)
	if err == nil {
		s, _, jobs, err = buildJobs(ctx, &run)
		if err != nil && dataFiles(b.Spec) {
			// what a data file holds is never shown (nor recorded)
			var fe *spec.FieldError
			if errors.As(err, &fe) {
				err = spec.Errorf(fe.Field, "%s", verify.Scrub(errors.New(fe.Msg)))
			} else {
				err = errors.New(verify.Scrub(err))
			}
		}
	}
	if err != nil {
		name := run.Problem
		if s != nil {
			name = s.Name
		}
		var fe *spec.FieldError
		if errors.As(err, &fe) {
			// the spec's own field names (spec.params.data: …), not flags
			return nil, fmt.Errorf("cannot re-run it here: %s: spec.%s: %s", name, fe.Field, fe.Msg)
		}
		return nil, fmt.Errorf("cannot re-run it here: %s: %v", name, err)
	}
	// the traces are stored in the order of the jobs (algorithm, then
	// replication); a run cut short may have fewer
	if len(want) > len(jobs) {
		return nil, fmt.Errorf("cannot re-run it here: the spec makes %d traces, the run has %d", len(jobs), len(want))
	}
	got := make([]verify.Trace, 0, len(want))
	for i, w := range want {
		j := jobs[i]
		g := verify.Trace{Algo: j.Label, Replication: j.Replication, Seed: j.Seed}
		jctx, cancel := context.WithCancel(ctx)
		limit := -1
		if w.Partial {
			limit = len(w.Records)
		}
		if limit != 0 {
			res := runJob(jctx, j, solver.RecorderFunc(func(r solver.Record) {
				g.Records = append(g.Records, r)
				if len(g.Records) == limit {
					cancel() // the stored trace went no further
				}
			}))
			g.Summary = &res.Summary
		}
		cancel()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("interrupted while re-running %s #%d", w.Algo, w.Replication)
		}
		got = append(got, g)
	}
	return got, nil
}

// verifyStored verifies stored runs (or a sweep's cells) and records each
// outcome in the store.
func verifyStored(ctx context.Context, folders datapath.Folders, path, sweepID string, ids []string, stdout, stderr io.Writer) int {
	st, err := openRunStore(path)
	if err != nil {
		fmt.Fprintf(stderr, "dashboard verify: -db: %v\n", err)
		return 1
	}
	defer st.Close()
	type item struct{ label, id string }
	var items []item
	if sweepID != "" {
		sw, err := st.GetSweep(ctx, sweepID)
		if err != nil {
			fmt.Fprintf(stderr, "dashboard verify: -sweep: %v\n", err)
			return 1
		}
		for _, c := range sw.Cells {
			items = append(items, item{fmt.Sprintf("cell %d %s: run %s", c.Index, c.Values, c.RunID), c.RunID})
		}
	} else {
		for _, id := range ids {
			items = append(items, item{"run " + id, id})
		}
	}
	bad := 0
	for _, it := range items {
		if ctx.Err() != nil {
			break
		}
		if it.id == "" {
			fmt.Fprintf(stdout, "%s: no run (deleted, or never started)\n", strings.TrimSuffix(it.label, ": run "))
			bad++
			continue
		}
		v, line := verifyStoredRun(ctx, folders, st, it.id)
		fmt.Fprintf(stdout, "%s: %s\n", it.label, line)
		if v == nil {
			bad++
			continue
		}
		if v.Outcome != store.VerifyReproduced {
			bad++
		}
		if ctx.Err() != nil {
			break // an interrupted re-run proves nothing: not recorded
		}
		if _, err := st.AddVerification(context.WithoutCancel(ctx), v); err != nil {
			fmt.Fprintf(stderr, "dashboard verify: recording the outcome of run %s: %v\n", it.id, err)
			bad++
		}
	}
	if bad > 0 || ctx.Err() != nil {
		return 1
	}
	return 0
}

// verifyStoredRun re-runs one stored run and returns the verification to
// record (nil when there is nothing to record: an unknown or live run) and
// the line to print.
func verifyStoredRun(ctx context.Context, folders datapath.Folders, st store.Backend, id string) (*store.Verification, string) {
	if !store.ValidID(id) {
		return nil, fmt.Sprintf("not a run id (%d characters of a-z and 2-7)", store.IDLen)
	}
	b, err := bundle.FromStore(ctx, st, id)
	if err != nil {
		return nil, err.Error()
	}
	if store.Live(b.Status) {
		return nil, fmt.Sprintf("the run is still %s: verify it once it has ended", b.Status)
	}
	if err := verify.Rerunnable(b.Spec); err != nil {
		return nil, "not re-run: " + err.Error() + " (export its bundle and verify -digest-only it)"
	}
	out, err := reproduce(ctx, folders, b)
	if err != nil {
		return &store.Verification{RunID: id, Version: bundle.ProgramVersion(), Outcome: store.VerifyFailed,
			Detail: verify.Clip(err.Error(), store.MaxVerifyDetail)}, err.Error()
	}
	v := verify.Outcome(out.res)
	v.RunID, v.Version = id, bundle.ProgramVersion()
	return v, out.line
}

// dataFiles reports whether the spec names a data file.
func dataFiles(run spec.Run) bool {
	sc, ok := scenarios.Lookup(run.Problem)
	if !ok {
		return false
	}
	for _, p := range sc.Params {
		if p.Kind == scenarios.Path && strings.TrimSpace(run.Params[p.Name]) != "" {
			return true
		}
	}
	return false
}
