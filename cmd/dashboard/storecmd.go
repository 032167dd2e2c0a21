package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/fwlab/fwlab/internal/store"
)

const storeUsage = `usage:
  dashboard store check PATH        run SQLite's full integrity check on a run store
  dashboard store salvage PATH NEW  copy what can be read of a damaged store into NEW

check reads the file only (it may run beside a server using it), prints "ok"
or the first problems found, and exits 1 when there are any. The server
refuses to open a store that fails its quick check at start, naming the file
and the first problem: salvage then makes a new file NEW (which must not
exist) with every run, trace and sweep that reads, and each trace's records
up to the first that does not; a run that lost records is marked failed and
its message says which. Serve NEW with -db, and keep the damaged file until
you are satisfied.
`

// runStore dispatches `dashboard store check|salvage`.
func runStore(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dashboard store", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, storeUsage) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	args = fs.Args()
	if len(args) == 0 {
		fmt.Fprintln(stderr, "dashboard store: name a command: check or salvage")
		fs.Usage()
		return 2
	}
	ctx := context.Background()
	switch cmd, rest := args[0], args[1:]; {
	case cmd == "check" && len(rest) == 1:
		return storeCheck(ctx, rest[0], stdout, stderr)
	case cmd == "salvage" && len(rest) == 2:
		return storeSalvage(ctx, rest[0], rest[1], stdout, stderr)
	case cmd == "check" || cmd == "salvage":
		fmt.Fprintf(stderr, "dashboard store %s: wrong number of arguments\n", cmd)
	default:
		fmt.Fprintf(stderr, "dashboard store: unknown command %q\n", cmd)
	}
	fs.Usage()
	return 2
}

func storeCheck(ctx context.Context, path string, stdout, stderr io.Writer) int {
	problems, err := store.Check(ctx, path)
	if err != nil {
		fmt.Fprintf(stderr, "dashboard store check: %v\n", err)
		return 1
	}
	if len(problems) == 0 {
		fmt.Fprintf(stdout, "%s: ok\n", path)
		return 0
	}
	fmt.Fprintf(stdout, "%s: damaged (%d problems shown, at most %d):\n", path, len(problems), store.MaxProblems)
	for _, p := range problems {
		fmt.Fprintf(stdout, "  %s\n", p)
	}
	fmt.Fprintf(stdout, "copy what can be read into a new file with: dashboard store salvage %s NEW\n", path)
	return 1
}

func storeSalvage(ctx context.Context, from, to string, stdout, stderr io.Writer) int {
	rep, err := store.Salvage(ctx, from, to)
	if err != nil {
		fmt.Fprintf(stderr, "dashboard store salvage: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: copied from %s: %s, %s, %s\n", to, from, plural(rep.Runs, "run"), plural(rep.Records, "record"), plural(rep.Sweeps, "sweep"))
	for _, l := range rep.Lost {
		fmt.Fprintf(stdout, "  lost: %s\n", l)
	}
	return 0
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
