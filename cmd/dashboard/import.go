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

	"github.com/fwlab/fwlab/internal/bundle"
	"github.com/fwlab/fwlab/internal/store"
)

// runImport loads bundles (the output of `solve -format json`, or a run
// exported from a dashboard) into the run store.
func runImport(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dashboard import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db, defErr := shared(fs).db()
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: dashboard import [-db PATH|postgres://…] FILE|DIR…

Loads run bundles (written by "dashboard solve -format json" or exported from
the dashboard) into the run store, where the dashboard lists and compares
them. FILE "-" reads standard input. Each bundle is read as a stream, in
little memory whatever its size; each run gets a new id, except that a
bundle imported before (the same content) answers the run it made then.
A DIR written by "dashboard solve -sweep DOC -out DIR" (or its
DIR/sweep.json) is imported as one sweep with its cells' runs.

`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "dashboard import: no bundle files given")
		fs.Usage()
		return 2
	}
	if *db == "" {
		fmt.Fprintf(stderr, "dashboard import: -db: is required (%v)\n", defErr)
		return 2
	}
	st, err := openRunStore(*db)
	if err != nil {
		fmt.Fprintf(stderr, "dashboard import: -db: %v\n", err)
		return 1
	}
	defer st.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	failed := 0
	for _, name := range fs.Args() {
		// A `solve -sweep` directory (or its sweep.json) is one sweep;
		// figure data is refused saying what it is (importsweep.go).
		index, err := sniffImport(name)
		if err == nil && index != "" {
			err = importSweep(ctx, st, index, stdout, stderr)
		}
		if err != nil || index != "" {
			if err != nil {
				fmt.Fprintf(stderr, "dashboard import: %s: %v\n", name, err)
				failed++
			}
			continue
		}
		res, err := importFile(ctx, st, name, stdin)
		if err != nil {
			fmt.Fprintf(stderr, "dashboard import: %s: %v\n", name, err)
			failed++
			if ctx.Err() != nil {
				break
			}
			continue
		}
		if res.Existing {
			fmt.Fprintf(stdout, "%s: run %s (imported before; nothing new stored)\n", name, res.ID)
			continue
		}
		fmt.Fprintf(stdout, "%s: run %s (%s, %d traces, %d records)\n", name, res.ID, res.Problem, res.Traces, res.Records)
	}
	if failed > 0 {
		return 1
	}
	return 0
}

func importFile(ctx context.Context, st store.Backend, name string, stdin io.Reader) (*bundle.Imported, error) {
	r := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	return bundle.ImportInto(ctx, st, bufio.NewReaderSize(r, 1<<16))
}
