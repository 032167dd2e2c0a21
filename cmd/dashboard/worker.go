package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fwlab/fwlab/internal/queue"
	"github.com/fwlab/fwlab/internal/store/pgstore"
)

// runWorker runs queued runs from a PostgreSQL run store until SIGINT or
// SIGTERM.
func runWorker(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return worker(ctx, args, stdout, stderr)
}

func defaultWorkerName() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "worker"
	}
	return fmt.Sprintf("%s-%d", host, os.Getpid())
}

// worker takes jobs until ctx ends, then stops taking jobs, gives the
// running ones -drain to finish and releases the rest to the queue.
func worker(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dashboard worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sh := shared(fs)
	db, _ := sh.db()
	slots := sh.slots()
	name := fs.String("name", defaultWorkerName(), "the worker's name, shown with the runs it ran (each worker needs its own)")
	rescue := sh.rescueAfter()
	drain := sh.drain()
	data := sh.data()
	defCache, _ := queue.DefaultCacheDir()
	cache := fs.String("cache", defCache, "where the data files that travel in the store (uploads) are kept once fetched: a folder of this user's alone (made 0700; one owned by another user, or writable by others, is refused)")
	metrics := fs.String("metrics-addr", "localhost:9464", "where /healthz and /metrics (Prometheus text format) are served (\"\" for nowhere; port 0 picks a free one)")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: dashboard worker -db postgres://… [-slots N] [-name NAME] [flags]

Takes queued runs and sweep cells from a PostgreSQL run store (its queue is
River's) and runs them, streaming their records into the store.

`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "dashboard worker: unexpected argument %q\n", fs.Arg(0))
		return 2
	case needPostgres(*db) != nil:
		fmt.Fprintf(stderr, "dashboard worker: -db: %v\n", needPostgres(*db))
		return 2
	case *slots < 1:
		fmt.Fprintf(stderr, "dashboard worker: -slots: must be at least 1, got %d\n", *slots)
		return 2
	case *name == "":
		fmt.Fprintln(stderr, "dashboard worker: -name: must not be empty")
		return 2
	}
	if err := checkWorkerTimes(*rescue, *drain); err != nil {
		return exitWith(stderr, "dashboard worker", err)
	}
	if *data != "" {
		// the OCR set is found under the data folder, as a server finds it
		if err := useDataDir(*data); err != nil {
			return exitWith(stderr, "dashboard worker", err)
		}
		abs, err := filepath.Abs(*data)
		if err != nil {
			fmt.Fprintf(stderr, "dashboard worker: -data: %v\n", err)
			return 2
		}
		*data = abs
	}
	if err := queue.PrepareCacheDir(*cache); err != nil {
		fmt.Fprintf(stderr, "dashboard worker: -cache: %v\n", err)
		return 2
	}
	st, err := pgstore.Open(ctx, *db)
	if err != nil {
		fmt.Fprintf(stderr, "dashboard worker: -db: %v\n", err)
		return 1
	}
	defer st.Close()
	w, err := queue.NewWorker(ctx, queue.Config{Store: st, Name: *name, Slots: *slots, RescueAfter: *rescue, DataDir: *data, CacheDir: *cache,
		Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		fmt.Fprintf(stderr, "dashboard worker: %v\n", err)
		return 1
	}
	var hs *http.Server
	where := "not served"
	if *metrics != "" {
		ln, err := net.Listen("tcp", *metrics)
		if err != nil {
			fmt.Fprintf(stderr, "dashboard worker: -metrics-addr %s: %v\n", *metrics, err)
			return 1
		}
		hs = &http.Server{Handler: w.Handler(), ReadHeaderTimeout: 5 * time.Second}
		go hs.Serve(ln)
		defer hs.Close()
		where = "http://" + ln.Addr().String() + "/metrics"
	}
	if err := w.Start(context.WithoutCancel(ctx)); err != nil {
		fmt.Fprintf(stderr, "dashboard worker: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "fwlab worker %s: %d slots on %s; metrics %s (SIGTERM stops)\n", *name, *slots, pgstore.Redact(*db), where)
	<-ctx.Done()
	fmt.Fprintf(stdout, "stopping: running runs get %v to finish\n", *drain)
	if !stopWorker(w, *drain, stdout, stderr, "dashboard worker: stopping") {
		return 1
	}
	return 0
}
