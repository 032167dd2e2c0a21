package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
)

const storeUsage = `usage:
  dashboard store check PATH        run SQLite's full integrity check on a run store
  dashboard store salvage PATH NEW  copy what can be read of a damaged store into NEW
  dashboard store data URL          count the data files a PostgreSQL store keeps
  dashboard store reclaim URL       remove those no run names, kept over a day ago

check reads the file only (it may run beside a server using it), prints "ok"
or the first problems found, and exits 1 when there are any. The server
refuses to open a store that fails its quick check at start, naming the file
and the first problem: salvage then makes a new file NEW (which must not
exist) with every run, trace and sweep that reads, and each trace's records
up to the first that does not; a run that lost records is marked failed and
its message says which. Serve NEW with -db, and keep the damaged file until
you are satisfied.
check and salvage work on SQLite files: a PostgreSQL URL is refused, as
PATH or as NEW (PostgreSQL checks its own pages; serve the salvaged file, or
import its runs' bundles into PostgreSQL).

data and reclaim take a PostgreSQL store (postgres://…), which keeps the data
files that travel with runs to workers. Deleting runs removes at once the
files they named that no run names any more, and the files no run has named
once a day has passed since they were last kept (a run being submitted names
its files just after they are kept); reclaim removes such files left by runs
that were never stored.
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
		fmt.Fprintln(stderr, "dashboard store: name a command: check, salvage, data or reclaim")
		fs.Usage()
		return 2
	}
	ctx := context.Background()
	switch cmd, rest := args[0], args[1:]; {
	case cmd == "check" && len(rest) == 1:
		return storeCheck(ctx, rest[0], stdout, stderr)
	case cmd == "salvage" && len(rest) == 2:
		return storeSalvage(ctx, rest[0], rest[1], stdout, stderr)
	case (cmd == "data" || cmd == "reclaim") && len(rest) == 1:
		return storeData(ctx, rest[0], cmd == "reclaim", stdout, stderr)
	case cmd == "check" || cmd == "salvage" || cmd == "data" || cmd == "reclaim":
		fmt.Fprintf(stderr, "dashboard store %s: wrong number of arguments\n", cmd)
	default:
		fmt.Fprintf(stderr, "dashboard store: unknown command %q\n", cmd)
	}
	fs.Usage()
	return 2
}

func storeCheck(ctx context.Context, path string, stdout, stderr io.Writer) int {
	if err := needFile(path, "check reads SQLite's pages (PostgreSQL checks its own: pg_amcheck)"); err != nil {
		fmt.Fprintf(stderr, "dashboard store check: %v\n", err)
		return 2
	}
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
	if err := needFile(from, "salvage reads a damaged SQLite file (PostgreSQL checks and repairs its own pages)"); err != nil {
		fmt.Fprintf(stderr, "dashboard store salvage: %v\n", err)
		return 2
	}
	if err := needFile(to, "salvage writes a new SQLite file: name a file, then serve it with -db (or import the runs' bundles into PostgreSQL)"); err != nil {
		fmt.Fprintf(stderr, "dashboard store salvage: NEW: %v\n", err)
		return 2
	}
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

// storeData prints the counts of the data files the PostgreSQL store at
// url keeps, after removing those past their grace that no run names when
// reclaim is set.
func storeData(ctx context.Context, url string, reclaim bool, stdout, stderr io.Writer) int {
	name := "dashboard store data"
	if reclaim {
		name = "dashboard store reclaim"
	}
	if err := needPostgres(url); err != nil {
		fmt.Fprintf(stderr, "%s: %v; a SQLite store keeps no data files\n", name, err)
		return 2
	}
	st, err := pgstore.Open(ctx, url)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	defer st.Close()
	if reclaim {
		n, b, err := st.ReclaimDataFiles(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			return 1
		}
		fmt.Fprintf(stdout, "%s: removed %s (%s)\n", pgstore.Redact(url), plural(int(n), "data file"), plural(int(b), "byte"))
	}
	c, err := st.DataFiles(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: %s (%s); no run names %d (%s), %d of them (%s) kept over a day ago\n",
		pgstore.Redact(url), plural(int(c.Files), "data file"), plural(int(c.Bytes), "byte"),
		c.Unnamed, plural(int(c.UnnamedBytes), "byte"), c.Reclaimable, plural(int(c.ReclaimBytes), "byte"))
	return 0
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
