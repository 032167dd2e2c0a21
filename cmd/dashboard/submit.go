package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/fwlab/fwlab/internal/queue"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
	"github.com/fwlab/fwlab/internal/sweep"
)

// runSubmit queues a run or a sweep in a PostgreSQL run store, for
// `dashboard worker` processes to run.
func runSubmit(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	fs := flag.NewFlagSet("dashboard submit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db, _ := shared(fs).db()
	isSweep := fs.Bool("sweep", false, "FILE is a sweep document (base and axes, as solve -sweep reads) rather than a run spec")
	wait := fs.Bool("wait", false, "wait until the run or sweep has ended and print how it ended (exit 1 unless done)")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: dashboard submit -db postgres://… [-sweep] [-wait] FILE

Queues the run spec in FILE (the JSON "dashboard solve -print-spec" prints,
the body POST /api/runs takes; "-" reads standard input), or with -sweep a
sweep document, in a PostgreSQL run store; "dashboard worker" processes run
it. Prints the run's (or sweep's) id.

`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "dashboard submit: give exactly one FILE")
		return 2
	}
	if err := needPostgres(*db); err != nil {
		fmt.Fprintf(stderr, "dashboard submit: -db: %v\n", err)
		return 2
	}
	in, err := openInput(fs.Arg(0), stdin)
	if err != nil {
		fmt.Fprintf(stderr, "dashboard submit: %v\n", err)
		return 1
	}
	defer in.Close()
	var doc *sweep.Doc
	var sp spec.Run
	if *isSweep {
		doc, err = sweep.Decode(in)
	} else {
		dec := json.NewDecoder(in)
		dec.DisallowUnknownFields()
		err = dec.Decode(&sp)
	}
	if err != nil {
		fmt.Fprintf(stderr, "dashboard submit: %s: %v\n", fs.Arg(0), err)
		return 2
	}
	st, err := pgstore.Open(ctx, *db)
	if err != nil {
		fmt.Fprintf(stderr, "dashboard submit: -db: %v\n", err)
		return 1
	}
	defer st.Close()
	q, err := queue.New(ctx, st)
	if err != nil {
		fmt.Fprintf(stderr, "dashboard submit: %v\n", err)
		return 1
	}
	var id, what string
	if doc != nil {
		id, err = q.SubmitSweepFor(ctx, doc, queue.From{Client: submitClient(), Files: queue.LocalFiles})
		what = "sweep"
	} else {
		id, err = q.SubmitFor(ctx, sp, queue.From{Client: submitClient(), Files: queue.LocalFiles})
		what = "run"
	}
	if err != nil {
		fmt.Fprintf(stderr, "dashboard submit: %s\n", flagError(err))
		var fe *spec.FieldError
		if errors.As(err, &fe) {
			return 2
		}
		return 1
	}
	fmt.Fprintf(stdout, "%s %s queued\n", what, id)
	if !*wait {
		return 0
	}
	status, err := waitEnded(ctx, st, what, id)
	if err != nil {
		fmt.Fprintf(stderr, "dashboard submit: -wait: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s %s %s\n", what, id, status)
	if status != store.StatusDone {
		return 1
	}
	return 0
}

func openInput(name string, stdin io.Reader) (io.ReadCloser, error) {
	if name == "-" {
		return io.NopCloser(stdin), nil
	}
	return os.Open(name)
}

// waitEnded polls the store until the run or sweep is no longer live.
func waitEnded(ctx context.Context, st *pgstore.Store, what, id string) (string, error) {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		var status string
		if what == "sweep" {
			sw, err := st.GetSweep(ctx, id)
			if err != nil {
				return "", err
			}
			status = sw.Status
		} else {
			r, err := st.Get(ctx, id)
			if err != nil {
				return "", err
			}
			status = r.Status
		}
		if !store.Live(status) {
			return status, nil
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-t.C:
		}
	}
}

// submitClient names the client of the runs `dashboard submit` queues, for
// the queue's fair share: the user and the machine.
func submitClient() string {
	host, _ := os.Hostname()
	who := os.Getenv("USER")
	if who == "" {
		who = "?"
	}
	return "submit:" + who + "@" + host
}
