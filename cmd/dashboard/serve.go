package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fwlab/fwlab/internal/queue"
	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/server"
	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/ssvm"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
)

// runServe starts the web dashboard and serves until SIGINT or SIGTERM.
func runServe(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, args, stdout, stderr)
}

// serve runs the dashboard until ctx ends, then shuts down gracefully: the
// runs are cancelled, the websockets closed (code 1001) and the requests in
// flight given a few seconds to finish.
func serve(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dashboard serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "localhost:8080", "address to listen on (host:port; port 0 picks a free one)")
	data := fs.String("data", defaultDataDir(), "directory of data sets: runs read data files only from it and from the uploads (\"\" for none; the default is ../shared/data when it exists)")
	var allow hostList
	fs.Var(&allow, "allow-host", "a host name the server answers to besides localhost and the -addr host (repeat or separate with commas)")
	mem := sizeFlag(fs, "mem", session.DefaultMaxMemory, "memory budget of the runs: instances of unfinished runs plus every stored record (e.g. 2GiB, 512MiB)")
	quota := sizeFlag(fs, "upload-quota", server.DefaultUploadQuota, "disk quota of all uploaded files together")
	clientQuota := sizeFlag(fs, "client-upload-quota", server.DefaultClientUploadQuota, "disk quota of one client's uploaded files (at most -upload-quota); a file's bytes come back when the last run naming it is deleted, or an hour after its upload when no run named it")
	maxUpload := sizeFlag(fs, "max-upload", server.DefaultMaxUpload, "largest uploaded file")
	maxFile := sizeFlag(fs, "max-file", session.DefaultMaxFile, "largest data file a run may read")
	maxActive := fs.Int("max-active", session.DefaultMaxActive, "runs running at once (run slots); more wait in the queue")
	slots := fs.Int("slots", -1, "runs this server runs at once: N ≥ 1 is -max-active N; -1: -max-active. With -db postgres://… the runs and sweeps started through the server are queued for workers, and a server with slots is one of them (named HOST-PID, as \"dashboard worker\" by default), taking queued jobs, its own and others'; 0 (PostgreSQL only): none, a pure front end")
	drain := fs.Duration("drain", 30*time.Second, "with -db postgres://… and slots: on SIGTERM or SIGINT, time the runs the server's worker is running get to finish before they are given back to the queue")
	rescue := fs.Duration("rescue-after", queue.DefaultRescueAfter, "with -db postgres://… and slots: a run whose worker's heartbeat (every 2s) is older than this is queued again, as \"dashboard worker -rescue-after\" (the same on every worker; at least 4s)")
	maxQueued := fs.Int("max-queued", session.DefaultMaxQueued, "runs waiting in the queue")
	maxClient := fs.Int("max-client-runs", session.DefaultMaxClientRuns, "runs one client address may have queued, running or paused (with -db postgres://…: the runs it queued through any server on the database, counted there; a sweep's cells count toward -max-sweeps instead)")
	maxStreams := fs.Int("max-streams", server.DefaultMaxStreamsPerClient, "websockets one client address may hold open")
	maxSweeps := fs.Int("max-sweeps", server.DefaultMaxSweeps, "sweeps one client address may have queued or running (with -db postgres://…: counted in the database, as -max-client-runs)")
	watch := fs.String("watch", "", "a folder where job arrays write sweeps (`solve -sweep DOC -cell I -out DIR`, DIR being the folder or one of its subfolders): each is imported as one sweep once all its cells' bundles are there, looking every 5s")
	pauseTimeout := fs.Duration("pause-timeout", session.DefaultPauseTimeout, "a run paused for longer is cancelled")
	readHeader := fs.Duration("read-header-timeout", 10*time.Second, "time to read a request's headers")
	readTimeout := fs.Duration("read-timeout", 30*time.Second, "time to read a whole request (uploads: 5 minutes)")
	writeTimeout := fs.Duration("write-timeout", 90*time.Second, "time to answer a request (downloads and websockets set their own per-write deadlines)")
	idleTimeout := fs.Duration("idle-timeout", 2*time.Minute, "time a kept-alive connection may stay idle")
	defDB, defDBErr := store.DefaultPath()
	db := fs.String("db", defDB, "the run store: a file, created on first start (\":memory:\" keeps nothing), or a PostgreSQL database postgres://USER@HOST/DB?… (shared with dashboard worker processes)")
	keep := fs.Int("keep", 0, "keep at most this many unstarred runs, deleting those that entered the store first as runs end; starred and live runs, runs that ended or entered in the last minute and runs being downloaded are spared (0: keep all)")
	maxImport := sizeFlag(fs, "max-import", server.DefaultMaxImport, "largest run bundle POST /api/runs/import takes")
	maxImports := fs.Int("max-imports", server.DefaultMaxImports, "bundle imports running at once (each streams into the store and is counted in -mem)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: dashboard [serve] [-addr localhost:8080] [-data DIR] [flags]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "dashboard serve: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return 2
	}
	if *maxImports < 1 {
		fmt.Fprintf(stderr, "dashboard serve: -max-imports: must be at least 1, got %d\n", *maxImports)
		return 2
	}
	if *keep < 0 {
		fmt.Fprintf(stderr, "dashboard serve: -keep: must be 0 (keep all) or a positive number of runs, got %d\n", *keep)
		return 2
	}
	if *db == "" {
		fmt.Fprintf(stderr, "dashboard serve: -db: is required (%v)\n", defDBErr)
		return 2
	}
	if *data != "" {
		st, err := os.Stat(*data)
		if err != nil || !st.IsDir() {
			fmt.Fprintf(stderr, "dashboard serve: -data %q must be a readable directory\n", *data)
			return 2
		}
		// The OCR scenario finds its data set under the data directory
		// unless the environment names another place.
		if os.Getenv(ssvm.EnvOCR) == "" {
			if st, err := os.Stat(filepath.Join(*data, "ocr")); err == nil && st.IsDir() {
				_ = os.Setenv(ssvm.EnvOCR, filepath.Join(*data, "ocr"))
			}
		}
	}

	if *watch != "" {
		if fi, err := os.Stat(*watch); err != nil || !fi.IsDir() {
			fmt.Fprintf(stderr, "dashboard serve: -watch %q must be a readable directory\n", *watch)
			return 2
		}
	}
	switch {
	case *slots < -1:
		fmt.Fprintf(stderr, "dashboard serve: -slots: must be 0 or more, got %d\n", *slots)
		return 2
	case *slots == 0 && !pgstore.IsURL(*db):
		fmt.Fprintf(stderr, "dashboard serve: -slots 0 (a pure front end) needs -db postgres://…: the runs are queued in PostgreSQL for `dashboard worker` processes\n")
		return 2
	case *rescue < 2*queue.DefaultBeatEvery:
		fmt.Fprintf(stderr, "dashboard serve: -rescue-after: must be at least two heartbeats (%v), got %v\n", 2*queue.DefaultBeatEvery, *rescue)
		return 2
	case *drain < 0:
		fmt.Fprintf(stderr, "dashboard serve: -drain: must not be negative, got %v\n", *drain)
		return 2
	case *slots > 0:
		*maxActive = *slots
	}
	defer limitMemory(*mem)()
	st, err := openRunStore(*db)
	if err != nil {
		fmt.Fprintf(stderr, "dashboard serve: -db: %v\n", err)
		return 1
	}
	defer st.Close()
	submit, submitSweep, err := frontEnd(st, *quota, *pauseTimeout)
	if err != nil {
		fmt.Fprintf(stderr, "dashboard serve: -db: the queue: %v\n", err)
		return 1
	}
	if !pgstore.IsURL(*db) && !st.Owner() {
		fmt.Fprintf(stderr, "dashboard serve: -db %s: another fwlab process holds this run store (a server, or an import in progress); two servers cannot share one file: use another -db, or retry once the import is done\n", *db)
		return 1
	}
	srv, err := server.New(server.Options{
		DataDir:             *data,
		ListenAddr:          *addr,
		AllowHosts:          allow,
		UploadQuota:         *quota,
		ClientUploadQuota:   min(*clientQuota, *quota),
		MaxUpload:           *maxUpload,
		MaxStreamsPerClient: *maxStreams,
		MaxImport:           *maxImport,
		MaxSweeps:           *maxSweeps,
		MaxImports:          *maxImports,
		Submit:              submit,
		SubmitSweep:         submitSweep,
		RescueAfter:         *rescue,
		Session: session.Options{
			MaxActive: *maxActive, MaxQueued: *maxQueued, MaxClientRuns: *maxClient,
			MaxMemory: *mem, PauseTimeout: *pauseTimeout, MaxFile: *maxFile,
			Store: st, Keep: *keep,
		},
		Flags: map[string]string{
			"MaxMemory": "-mem", "UploadQuota": "-upload-quota", "ClientUploadQuota": "-client-upload-quota", "MaxUpload": "-max-upload",
			"MaxActive": "-max-active", "MaxQueued": "-max-queued", "MaxClientRuns": "-max-client-runs",
			"MaxStreamsPerClient": "-max-streams", "PauseTimeout": "-pause-timeout", "MaxFile": "-max-file",
			"MaxImport": "-max-import", "MaxImports": "-max-imports", "MaxSweeps": "-max-sweeps",
		},
	})
	if err != nil {
		fmt.Fprintf(stderr, "dashboard serve: %v\n", err)
		return 1
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "dashboard serve: -addr %s: %v\n", *addr, err)
		_ = srv.Close()
		return 1
	}
	hs := &http.Server{
		Handler:           srv,
		ReadHeaderTimeout: *readHeader,
		ReadTimeout:       *readTimeout,
		WriteTimeout:      *writeTimeout,
		IdleTimeout:       *idleTimeout,
		MaxHeaderBytes:    64 << 10,
	}
	fmt.Fprintf(stdout, "fwlab dashboard at %s (%d problems, %d presets; Ctrl-C stops)\n",
		dashboardURL(*addr, ln.Addr()), len(scenarios.All()), len(scenarios.Presets()))
	if n := st.Recovered(); n > 0 {
		fmt.Fprintf(stdout, "run store %s: %d runs live when fwlab last stopped are marked interrupted\n", *db, n)
	}

	if *watch != "" {
		// the watcher ends before the store closes
		wctx, cancel := context.WithCancel(ctx)
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			w := newWatcher(st, *watch, stdout, stderr)
			// bundles bounded as POST /api/runs/import's, counted in -mem
			w.opt.maxBundle, w.opt.reserve = *maxImport, srv.Manager().Reserve
			w.run(wctx)
		}()
		defer func() { cancel(); <-watched }()
	}
	var wk *queue.Worker
	if pg, ok := st.(*pgstore.Store); ok && *slots != 0 {
		name := defaultWorkerName()
		if wk, err = serveWorker(ctx, pg, name, *maxActive, *rescue, *data, stderr); err != nil {
			fmt.Fprintf(stderr, "dashboard serve: the worker: %v\n", err)
			_ = srv.Close()
			_ = ln.Close()
			return 1
		}
		fmt.Fprintf(stdout, "fwlab worker %s: %d slots taking queued runs on %s\n", name, *maxActive, pgstore.Redact(*db))
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	if *keep > 0 {
		// the first trim of a large store takes seconds: the pages answer
		// meanwhile (every run's end trims again)
		tctx, cancel := context.WithCancel(ctx)
		trimmed := make(chan struct{})
		go func() {
			defer close(trimmed)
			if n, err := st.Trim(tctx, *keep); err != nil && tctx.Err() == nil {
				fmt.Fprintf(stderr, "dashboard serve: -keep: %v\n", err)
			} else if n > 0 {
				fmt.Fprintf(stdout, "run store: -keep %d: %d older runs deleted\n", *keep, n)
			}
		}()
		defer func() { cancel(); <-trimmed }()
	}
	select {
	case err := <-errc:
		stopServeWorker(wk, 0, stdout, stderr)
		_ = srv.Close()
		fmt.Fprintf(stderr, "dashboard serve: %v\n", err)
		return 1
	case <-ctx.Done():
	}
	fmt.Fprintln(stdout, "shutting down")
	code := 0
	// the worker first, while the pages still follow its runs: it takes
	// no new job, its runs get -drain to finish, the rest go back to the
	// queue
	if !stopServeWorker(wk, *drain, stdout, stderr) {
		code = 1
	}
	// Everything stops within about five seconds: the runs are cancelled
	// and the websockets closed (srv.Close takes at most about three), then
	// the requests in flight get what is left.
	deadline := time.Now().Add(4500 * time.Millisecond)
	if err := srv.Close(); err != nil {
		fmt.Fprintf(stderr, "dashboard serve: %v\n", err)
		code = 1
	}
	sctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		fmt.Fprintf(stderr, "dashboard serve: shutdown: %v\n", err)
		_ = hs.Close()
		code = 1
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "dashboard serve: %v\n", err)
		code = 1
	}
	return code
}

// stopServeWorker stops the server's worker (none: nil), as a `dashboard
// worker` stops on SIGTERM: no new job, drain for the running runs to
// finish, the rest given back to the queue. It says whether all went well.
func stopServeWorker(w *queue.Worker, drain time.Duration, stdout, stderr io.Writer) bool {
	if w == nil {
		return true
	}
	if drain > 0 {
		fmt.Fprintf(stdout, "stopping the worker: running runs get %v to finish\n", drain)
	}
	return stopWorker(w, drain, stdout, stderr, "dashboard serve: stopping the worker")
}

// stopWorker stops w: it takes no new job, its running runs get drain to
// finish and the rest go back to the queue (said on stdout); an error goes
// to stderr after what. It says whether all went well.
func stopWorker(w *queue.Worker, drain time.Duration, stdout, stderr io.Writer, what string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	released, err := w.Stop(ctx, 10*time.Second)
	if released > 0 {
		fmt.Fprintf(stdout, "%d runs given back to the queue\n", released)
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", what, err)
		return false
	}
	return true
}

// dashboardURL is the address to print: the host the user asked for (or
// localhost when none) with the port actually bound.
func dashboardURL(addr string, bound net.Addr) string {
	host, _, err := net.SplitHostPort(addr)
	_, port, err2 := net.SplitHostPort(bound.String())
	if err != nil || err2 != nil {
		return "http://" + bound.String() + "/"
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port) + "/"
}

// defaultDataDir is ../shared/data when it is a directory, else "" (no
// data directory: runs read only uploaded files).
func defaultDataDir() string {
	const d = "../shared/data"
	if st, err := os.Stat(d); err == nil && st.IsDir() {
		return d
	}
	return ""
}

// hostList collects -allow-host values.
type hostList []string

func (h *hostList) String() string { return strings.Join(*h, ",") }

func (h *hostList) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*h = append(*h, p)
		}
	}
	return nil
}

// sizeValue is a byte count given as a number with an optional unit (B,
// KiB, MiB, GiB, TiB; K, M, G, T and KB, MB, GB, TB are taken as the binary
// units too).
type sizeValue struct{ n *int64 }

func sizeFlag(fs *flag.FlagSet, name string, def int64, usage string) *int64 {
	n := def
	fs.Var(sizeValue{&n}, name, usage)
	return &n
}

func (s sizeValue) String() string {
	if s.n == nil {
		return ""
	}
	return formatSize(*s.n)
}

func (s sizeValue) Set(v string) error {
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	*s.n = n
	return nil
}

func formatSize(n int64) string {
	for _, u := range []struct {
		name  string
		shift uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10)
}

func parseSize(v string) (int64, error) {
	t := strings.TrimSpace(v)
	i := len(t)
	for i > 0 && (t[i-1] < '0' || t[i-1] > '9') {
		i--
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	var shift uint
	switch strings.TrimSuffix(strings.TrimSuffix(unit, "b"), "i") {
	case "":
		shift = 0
	case "k":
		shift = 10
	case "m":
		shift = 20
	case "g":
		shift = 30
	case "t":
		shift = 40
	default:
		return 0, fmt.Errorf("unknown unit %q (use B, KiB, MiB, GiB or TiB)", t[i:])
	}
	n, err := strconv.ParseFloat(num, 64)
	if err != nil || n <= 0 || n*float64(int64(1)<<shift) > 1<<62 {
		return 0, fmt.Errorf("must be a positive size such as 512MiB or 2GiB, got %q", v)
	}
	return int64(n * float64(int64(1)<<shift)), nil
}

// limitMemory sets the garbage collector's soft memory limit to the runs'
// budget plus session.BaseMemory (unless GOMEMLIMIT sets one), so that the
// collector's headroom over the live heap never takes the process past
// what -mem promises; the returned function restores the previous limit.
func limitMemory(budget int64) (restore func()) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	prev := debug.SetMemoryLimit(budget + session.BaseMemory)
	return func() { debug.SetMemoryLimit(prev) }
}
