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
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fwlab/fwlab/internal/queue"
	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/server"
	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
)

// runServe starts the web dashboard and serves until SIGINT or SIGTERM.
func runServe(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, args, stdout, stderr)
}

// serveOpts are serve's flags.
type serveOpts struct {
	addr, data, watch, db                                         *string
	allow                                                         hostList
	mem, quota, clientQuota, maxUpload, maxFile, maxImport        *int64
	maxActive, slots, maxQueued, maxClient, maxStreams, maxSweeps *int
	keep, maxImports                                              *int
	drain, rescue, pauseTimeout, outsideIdle                      *time.Duration
	readHeader, readTimeout, writeTimeout, idleTimeout            *time.Duration
	defDBErr                                                      error // why there is no default -db
}

// define declares serve's flags on fs.
func (o *serveOpts) define(fs *flag.FlagSet) {
	o.addr = fs.String("addr", "localhost:8080", "address to listen on (host:port; port 0 picks a free one)")
	sh := shared(fs)
	o.data = sh.data()
	fs.Var(&o.allow, "allow-host", "a host name the server answers to besides localhost and the -addr host (repeat or separate with commas)")
	o.mem = sizeFlag(fs, "mem", session.DefaultMaxMemory, "memory budget of the runs: instances of unfinished runs plus every stored record (e.g. 2GiB, 512MiB)")
	o.quota = sizeFlag(fs, "upload-quota", server.DefaultUploadQuota, "disk quota of all uploaded files together")
	o.clientQuota = sizeFlag(fs, "client-upload-quota", server.DefaultClientUploadQuota, "disk quota of one client's uploaded files (at most -upload-quota); a file's bytes come back when the last run naming it is deleted, or an hour after its upload when no run named it")
	o.maxUpload = sizeFlag(fs, "max-upload", server.DefaultMaxUpload, "largest uploaded file")
	o.maxFile = sizeFlag(fs, "max-file", session.DefaultMaxFile, "largest data file a run may read")
	o.maxActive = fs.Int("max-active", session.DefaultMaxActive, "runs running at once (run slots); more wait in the queue")
	o.slots = sh.slots()
	o.drain = sh.drain()
	o.rescue = sh.rescueAfter()
	o.maxQueued = fs.Int("max-queued", session.DefaultMaxQueued, "runs waiting in the queue")
	o.maxClient = fs.Int("max-client-runs", session.DefaultMaxClientRuns, "runs one client address may have queued, running or paused (with -db postgres://…: the runs it queued through any server on the database, counted there; a sweep's cells count toward -max-sweeps instead)")
	o.maxStreams = fs.Int("max-streams", server.DefaultMaxStreamsPerClient, "websockets one client address may hold open")
	o.maxSweeps = fs.Int("max-sweeps", server.DefaultMaxSweeps, "sweeps one client address may have queued or running (with -db postgres://…: counted in the database, as -max-client-runs)")
	o.watch = fs.String("watch", "", "a folder where job arrays write sweeps (`solve -sweep DOC -cell I -out DIR`, DIR being the folder or one of its subfolders): each is imported as one sweep once all its cells' bundles are there, looking every 5s")
	o.pauseTimeout = fs.Duration("pause-timeout", session.DefaultPauseTimeout, "a run paused for longer is cancelled")
	o.outsideIdle = fs.Duration("outside-idle", session.DefaultOutsideIdle, "a run opened from outside (docs/live.md) that gets no records for this long is ended failed (at least 1s); with -db postgres://…, any server ends such a run a fifth later if the server that held it stopped")
	o.readHeader = fs.Duration("read-header-timeout", 10*time.Second, "time to read a request's headers")
	o.readTimeout = fs.Duration("read-timeout", 30*time.Second, "time to read a whole request (uploads: 5 minutes)")
	o.writeTimeout = fs.Duration("write-timeout", 90*time.Second, "time to answer a request (downloads and websockets set their own per-write deadlines)")
	o.idleTimeout = fs.Duration("idle-timeout", 2*time.Minute, "time a kept-alive connection may stay idle")
	o.db, o.defDBErr = sh.db()
	o.keep = fs.Int("keep", 0, "keep at most this many unstarred runs, deleting those that entered the store first as runs end; starred and live runs, runs that ended or entered in the last minute and runs being downloaded are spared (0: keep all)")
	o.maxImport = sizeFlag(fs, "max-import", server.DefaultMaxImport, "largest run bundle POST /api/runs/import takes")
	o.maxImports = fs.Int("max-imports", server.DefaultMaxImports, "bundle imports running at once (each streams into the store and is counted in -mem)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: dashboard [serve] [-addr localhost:8080] [-data DIR] [flags]")
		fs.PrintDefaults()
	}
}

// check refuses flag values serve cannot work with, and points the OCR
// scenario at -data's ocr folder (unless the environment names another).
func (o *serveOpts) check() error {
	if *o.maxImports < 1 {
		return usageError("-max-imports: must be at least 1, got %d", *o.maxImports)
	}
	if *o.outsideIdle < time.Second {
		return usageError("-outside-idle: must be at least 1s, got %v", *o.outsideIdle)
	}
	if *o.keep < 0 {
		return usageError("-keep: must be 0 (keep all) or a positive number of runs, got %d", *o.keep)
	}
	if *o.db == "" {
		return usageError("-db: is required (%v)", o.defDBErr)
	}
	if *o.data != "" {
		if err := useDataDir(*o.data); err != nil {
			return err
		}
	}
	if *o.watch != "" {
		if fi, err := os.Stat(*o.watch); err != nil || !fi.IsDir() {
			return usageError("-watch %q must be a readable directory", *o.watch)
		}
	}
	switch {
	case *o.slots < -1:
		return usageError("-slots: must be 0 or more, got %d", *o.slots)
	case *o.slots == 0 && !pgstore.IsURL(*o.db):
		return usageError("-slots 0 (a pure front end) needs -db postgres://…: the runs are queued in PostgreSQL for `dashboard worker` processes")
	}
	if err := checkWorkerTimes(*o.rescue, *o.drain); err != nil {
		return err
	}
	if *o.slots > 0 {
		*o.maxActive = *o.slots
	}
	return nil
}

// serverOptions is the server's configuration from the flags.
func (o *serveOpts) serverOptions(st store.Backend, submit server.Submitter, submitSweep server.SweepSubmitter) server.Options {
	return server.Options{
		DataDir:             *o.data,
		ListenAddr:          *o.addr,
		AllowHosts:          o.allow,
		UploadQuota:         *o.quota,
		ClientUploadQuota:   min(*o.clientQuota, *o.quota),
		MaxUpload:           *o.maxUpload,
		MaxStreamsPerClient: *o.maxStreams,
		MaxImport:           *o.maxImport,
		MaxSweeps:           *o.maxSweeps,
		MaxImports:          *o.maxImports,
		Submit:              submit,
		SubmitSweep:         submitSweep,
		RescueAfter:         *o.rescue,
		Session: session.Options{
			MaxActive: *o.maxActive, MaxQueued: *o.maxQueued, MaxClientRuns: *o.maxClient,
			MaxMemory: *o.mem, PauseTimeout: *o.pauseTimeout, MaxFile: *o.maxFile,
			OutsideIdle: *o.outsideIdle, Store: st, Keep: *o.keep,
		},
		Flags: map[string]string{
			"MaxMemory": "-mem", "UploadQuota": "-upload-quota", "ClientUploadQuota": "-client-upload-quota", "MaxUpload": "-max-upload",
			"MaxActive": "-max-active", "MaxQueued": "-max-queued", "MaxClientRuns": "-max-client-runs",
			"MaxStreamsPerClient": "-max-streams", "PauseTimeout": "-pause-timeout", "MaxFile": "-max-file", "OutsideIdle": "-outside-idle",
			"MaxImport": "-max-import", "MaxImports": "-max-imports", "MaxSweeps": "-max-sweeps",
		},
	}
}

// serve runs the dashboard until ctx ends, then shuts down gracefully: the
// runs are cancelled, the websockets closed (code 1001) and the requests in
// flight given a few seconds to finish.
func serve(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dashboard serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o serveOpts
	o.define(fs)
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
	if err := o.check(); err != nil {
		return exitWith(stderr, "dashboard serve", err)
	}
	defer limitMemory(*o.mem)()
	st, err := openRunStore(*o.db)
	if err != nil {
		fmt.Fprintf(stderr, "dashboard serve: -db: %v\n", err)
		return 1
	}
	defer st.Close()
	submit, submitSweep, err := frontEnd(st, *o.quota, *o.pauseTimeout)
	if err != nil {
		fmt.Fprintf(stderr, "dashboard serve: -db: the queue: %v\n", err)
		return 1
	}
	if !pgstore.IsURL(*o.db) && !st.Owner() {
		fmt.Fprintf(stderr, "dashboard serve: -db %s: another fwlab process holds this run store (a server, or an import in progress); two servers cannot share one file: use another -db, or retry once the import is done\n", *o.db)
		return 1
	}
	srv, err := server.New(o.serverOptions(st, submit, submitSweep))
	if err != nil {
		fmt.Fprintf(stderr, "dashboard serve: %v\n", err)
		return 1
	}
	ln, err := net.Listen("tcp", *o.addr)
	if err != nil {
		fmt.Fprintf(stderr, "dashboard serve: -addr %s: %v\n", *o.addr, err)
		_ = srv.Close()
		return 1
	}
	return o.run(ctx, st, srv, ln, stdout, stderr)
}

// run serves on ln until ctx ends or the server fails, with the folder
// watcher, the server's worker and the first trim of the store the flags
// ask for, then shuts down.
func (o *serveOpts) run(ctx context.Context, st store.Backend, srv *server.Server, ln net.Listener, stdout, stderr io.Writer) int {
	hs := &http.Server{
		Handler:           srv,
		ReadHeaderTimeout: *o.readHeader,
		ReadTimeout:       *o.readTimeout,
		WriteTimeout:      *o.writeTimeout,
		IdleTimeout:       *o.idleTimeout,
		MaxHeaderBytes:    64 << 10,
	}
	fmt.Fprintf(stdout, "fwlab dashboard at %s (%d problems, %d presets; Ctrl-C stops)\n",
		dashboardURL(*o.addr, ln.Addr()), len(scenarios.All()), len(scenarios.Presets()))
	if n := st.Recovered(); n > 0 {
		fmt.Fprintf(stdout, "run store %s: %d runs live when fwlab last stopped are marked interrupted\n", *o.db, n)
	}
	if *o.watch != "" {
		defer o.startWatcher(ctx, st, srv, stdout, stderr)()
	}
	var wk *queue.Worker
	if pg, ok := st.(*pgstore.Store); ok && *o.slots != 0 {
		name := defaultWorkerName()
		var err error
		if wk, err = serveWorker(ctx, pg, name, *o.maxActive, *o.rescue, *o.data, stderr); err != nil {
			fmt.Fprintf(stderr, "dashboard serve: the worker: %v\n", err)
			_ = srv.Close()
			_ = ln.Close()
			return 1
		}
		fmt.Fprintf(stdout, "fwlab worker %s: %d slots taking queued runs on %s\n", name, *o.maxActive, pgstore.Redact(*o.db))
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	if *o.keep > 0 {
		defer o.startTrim(ctx, st, stdout, stderr)()
	}
	select {
	case err := <-errc:
		stopServeWorker(wk, 0, stdout, stderr)
		_ = srv.Close()
		fmt.Fprintf(stderr, "dashboard serve: %v\n", err)
		return 1
	case <-ctx.Done():
	}
	return o.shutdown(hs, srv, wk, errc, stdout, stderr)
}

// startWatcher imports the sweeps that appear in -watch until ctx ends or
// the returned function is called (which waits for it: the watcher ends
// before the store closes).
func (o *serveOpts) startWatcher(ctx context.Context, st store.Backend, srv *server.Server, stdout, stderr io.Writer) (stop func()) {
	wctx, cancel := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		w := newWatcher(st, *o.watch, stdout, stderr)
		// bundles bounded as POST /api/runs/import's, counted in -mem
		w.opt.maxBundle, w.opt.reserve = *o.maxImport, srv.Manager().Reserve
		w.run(wctx)
	}()
	return func() { cancel(); <-watched }
}

// startTrim trims the store to -keep runs in the background: the first trim
// of a large store takes seconds, and the pages answer meanwhile (every
// run's end trims again). The returned function stops it and waits.
func (o *serveOpts) startTrim(ctx context.Context, st store.Backend, stdout, stderr io.Writer) (stop func()) {
	tctx, cancel := context.WithCancel(ctx)
	trimmed := make(chan struct{})
	go func() {
		defer close(trimmed)
		if n, err := st.Trim(tctx, *o.keep); err != nil && tctx.Err() == nil {
			fmt.Fprintf(stderr, "dashboard serve: -keep: %v\n", err)
		} else if n > 0 {
			fmt.Fprintf(stdout, "run store: -keep %d: %d older runs deleted\n", *o.keep, n)
		}
	}()
	return func() { cancel(); <-trimmed }
}

// shutdown stops the server's worker, the runs, the websockets and the
// requests in flight, and returns serve's exit status.
func (o *serveOpts) shutdown(hs *http.Server, srv *server.Server, wk *queue.Worker, errc chan error, stdout, stderr io.Writer) int {
	fmt.Fprintln(stdout, "shutting down")
	code := 0
	// the worker first, while the pages still follow its runs: it takes
	// no new job, its runs get -drain to finish, the rest go back to the
	// queue
	if !stopServeWorker(wk, *o.drain, stdout, stderr) {
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
