package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
)

// runCancel cancels runs or sweeps in a PostgreSQL run store: a queued run
// never starts, a running one is stopped by its worker at its next
// heartbeat (its records kept).
func runCancel(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dashboard cancel", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := fs.String("db", "", "the PostgreSQL run store, postgres://USER@HOST/DB?… (required)")
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
	if !pgstore.IsURL(*db) {
		fmt.Fprintf(stderr, "dashboard cancel: -db: must be a PostgreSQL URL (postgres://…), got %q\n", *db)
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
	code := 0
	for _, id := range fs.Args() {
		msg, err := cancelOne(ctx, st, id)
		if err != nil {
			fmt.Fprintf(stderr, "dashboard cancel: %s: %v\n", id, err)
			code = 1
			continue
		}
		fmt.Fprintf(stdout, "%s: %s\n", id, msg)
	}
	return code
}

// cancelOne cancels a run, or a sweep's live cells, and says what it did.
func cancelOne(ctx context.Context, st *pgstore.Store, id string) (string, error) {
	r, err := st.Get(ctx, id)
	switch {
	case err == nil:
		if !store.Live(r.Status) {
			return "", fmt.Errorf("the run has ended (%s)", r.Status)
		}
		if err := st.SetStatus(ctx, id, store.StatusCancelled, time.Now()); err != nil {
			return "", err
		}
		return "run cancelled", nil
	case !errors.Is(err, store.ErrNotFound):
		return "", err
	}
	sw, err := st.GetSweep(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return "", errors.New("no run or sweep has this id")
	}
	if err != nil {
		return "", err
	}
	n := 0
	for _, c := range sw.Cells {
		if c.RunID == "" {
			continue
		}
		r, err := st.Get(ctx, c.RunID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return "", err
		}
		if store.Live(r.Status) {
			if err := st.SetStatus(ctx, r.ID, store.StatusCancelled, time.Now()); err != nil {
				return "", err
			}
			n++
		}
	}
	if err := st.SetSweepStatus(ctx, id, store.StatusCancelled); err != nil {
		return "", err
	}
	return fmt.Sprintf("sweep cancelled (%d live cells)", n), nil
}
