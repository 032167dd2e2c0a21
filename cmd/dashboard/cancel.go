package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/fwlab/fwlab/internal/store/pgstore"
)

// runCancel cancels runs or sweeps in a PostgreSQL run store: a queued run
// never starts, a running one is stopped by its worker at its next
// heartbeat (its records kept).
func runCancel(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dashboard cancel", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db, _ := shared(fs).db()
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: dashboard cancel -db postgres://… ID…

Cancels runs, or sweeps (every live cell), queued with "dashboard submit": a
queued run never starts; a running one stops on its worker within a
heartbeat (2 s), its records kept.

`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if err := needPostgres(*db); err != nil {
		fmt.Fprintf(stderr, "dashboard cancel: -db: %v\n", err)
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "dashboard cancel: give the ids of runs or sweeps")
		return 2
	}
	ctx := context.Background()
	st, err := pgstore.Open(ctx, *db)
	if err != nil {
		fmt.Fprintf(stderr, "dashboard cancel: -db: %v\n", err)
		return 1
	}
	defer st.Close()
	// one transaction: a worker freed by one cancel never starts a run
	// that another id cancels
	res, err := st.Cancel(ctx, fs.Args(), time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "dashboard cancel: %v\n", err)
		return 1
	}
	code := 0
	for i, id := range fs.Args() {
		r := res[i]
		switch {
		case r.Err != nil:
			fmt.Fprintf(stderr, "dashboard cancel: %s: %v\n", id, r.Err)
			code = 1
		case r.Sweep:
			fmt.Fprintf(stdout, "%s: sweep cancelled (%d live cells)\n", id, r.Cells)
		default:
			fmt.Fprintf(stdout, "%s: run cancelled\n", id)
		}
	}
	return code
}
