// Package server is fwlab's HTTP layer: the JSON API of runs, the websocket
// stream of their records, the scenario catalogue and the dashboard's pages
// (mounted from the web package). It holds no numerics; runs are managed by
// package session.
//
// Routes (every API error is JSON {"error": message, "field": name}, with
// field "" when no field of the spec is at fault; an error body is at most
// MaxErrorBody bytes and quotes at most 40 characters of any input):
//
//	GET    /healthz                  200 "ok"; 503 "degraded: …" naming the run store's file and
//	                                 why it cannot write (new runs and imports then get 503)
//	GET    /api/scenarios            the Catalogue: problems, algorithms, defaults, presets
//	GET    /api/presets              the presets, each with its run spec
//	POST   /api/uploads              201 {"path","name","bytes","format","rows","cols"}: a data
//	                                 file (multipart field "file", optional "format" csv |
//	                                 svmlight | ocr), checked by parsing (at most MaxParses at
//	                                 once); 400 malformed (the error names file:line:col), no
//	                                 file, or svmlight data beyond the dense models'
//	                                 scenarios.MaxDenseEntries, 413 over MaxUpload or the
//	                                 UploadQuota of all uploads
//	POST   /api/preview              200 {"dim","samples","blocks","fstar"}: the size of the
//	                                 instance {"problem","params","seed"} builds (cached);
//	                                 400 invalid problem or params (field named), 504 slow build
//	POST   /api/runs                 201 {"id"}: the run starts, or waits in the queue (status
//	                                 queued), or starts paused ("start_paused": true); 400
//	                                 invalid spec (field named), 413 body over MaxBody or a run
//	                                 alone over the memory budget, 429 a budget used up (the
//	                                 queue, the memory of the runs held, the client's runs;
//	                                 the message names it and its flag), 503 server closing
//	                                 or its run store cannot write (sweeps too), 504 build
//	                                 cut by the timeout (no run is made, nor for a
//	                                 request abandoned while its run was built)
//	GET    /api/runs                 the run store's history, newest first: ?problem, algo, status,
//	                                 q (name or note), offset, limit → {"runs": [RunRow], "total",
//	                                 "offset", "limit", "disk_bytes"}
//	GET    /api/runs/{id}            session.Status (with "records", the server's count, and
//	                                 "queue_position" while queued; a trace's "has_panels"
//	                                 but never its panels; "name", "note", "starred",
//	                                 "ended", "has_panels" when the instance has panels
//	                                 but never the panels), live or stored (read without them);
//	                                 404 unknown id
//	PATCH  /api/runs/{id}            {"name"?, "note"?, "starred"?} → 200 RunRow
//	POST   /api/runs/delete          {"ids": [...]} → 200 {"deleted": n}; 409 naming ids[i] for a
//	                                 run still live (cancel it first)
//	GET    /api/runs/{id}/bundle     the run as a bundle (package bundle), streamed from the store;
//	                                 whole, or the connection is aborted
//	GET    /api/runs/{id}/figure.svg the run's figure (figures.FromRun); also .png and .pdf
//	POST   /api/runs/import          a bundle, streamed into the store → 201 {"id"}; 200 {"id",
//	                                 "existing": true} for one imported before; 202
//	                                 {"status_url"} when it outlasts ImportWait; 400 naming the
//	                                 field path of a malformed one; 413 over MaxImport; 429
//	                                 over MaxImports or the memory budget (imports.go)
//	GET    /api/imports/{n}          an import's status: importing, done (id) or failed (error)
//	POST   /api/sweeps               {"base": spec, "axes": [...]} (package sweep) → 201 {"id"};
//	                                 400 naming axes[i].param or axes[i].values[j]
//	GET    /api/sweeps/{id}          ?gap=G: status, cells with their run, status and medians
//	GET    /api/sweeps               {"sweeps": [{"id","status","created","axes","cells_total",
//	                                 "cells_done"}], "total", "offset", "limit"}
//	DELETE /api/sweeps/{id}          202 {"status"}: cancels the sweep's queued and running cells
//	POST   /api/runs/{id}/verify     202 {"id"} of a re-run of the run's spec, queued like any run;
//	                                 once it ends it is compared with the run and the outcome
//	                                 stored (verify.go); 409 a run still live
//	GET    /api/runs/{id}/verifications {"verifications": [VerificationRow]}, newest first
//	POST   /api/sweeps/{id}/verify   202 {"cells": n}: verifies every cell, one after the other
//	                                 (one verification at a time per run or sweep: a second
//	                                 request answers the first; counted as the client's runs and
//	                                 sweeps); DELETE /api/runs/{id}/verify and
//	                                 DELETE /api/sweeps/{id}/verify cancel one
//	(more sweep routes: sweepapi.go; the routes of runs opened from outside: live.go)
//	DELETE /api/runs/{id}            202 {"status"} (cancels, a queued run too; a finished run
//	                                 stays as it is)
//	POST   /api/runs/{id}/pause      202 session.Status (also /resume and /step; /resume and /step
//	                                 answer 429 naming the budget when the run's remaining records,
//	                                 or the step's, do not fit, and the run stays as it was)
//	GET    /api/runs/{id}/trace      ?format=jsonl (default) | csv: every stored record, tagged
//	                                 (CSV text cells a spreadsheet would run as formulas are
//	                                 prefixed with '); a read that fails midway aborts the
//	                                 connection, one that fails first answers 500
//	GET    /api/runs/{id}/panels     the instance's panels (an object)
//	GET    /api/runs/{id}/traces/{t}/panels  trace t's panels, its final estimate's views (an
//	                                 object; {} while it has none); 404 unknown run or trace,
//	                                 413 over MaxTracePanels (4 MiB, the import's cap)
//	GET    /api/runs/{id}/traces/{t}/coefficients.csv  trace t's final coefficients as CSV
//	                                 (the vector, or GFLASSO's B by rows), as solve -save-x;
//	                                 404 when its problem has none or it has not finished
//	GET    /ws/runs/{id}             websocket: hello, records, status, done (see handleWS);
//	                                 429 over MaxStreamsPerClient
//	GET    /, /runs/{id}, /static/*  the web package's pages
//
// Every request first goes through guard: the security headers (a
// Content-Security-Policy without inline script and with frame-ancestors
// 'none', nosniff, no referrer) on every answer; 403 for a Host header that
// is not this server's (DNS rebinding); 403 for a cross-origin
// state-changing request (http.CrossOriginProtection); 415 for an API POST
// with a body that is not application/json (uploads are multipart). The
// websocket keeps its own origin check.
//
// Runs live in the run store (Options.Session.Store; New opens an
// in-memory one when none is given, and Close closes it): a finished run is
// read back from it, so its status, trace, panels, stream and exports work
// as for a live run.
//
// Uploaded files are stored in a directory of this server's own below
// Options.UploadDir, each by its SHA-256, charged to its client (upload.go),
// until the last run naming it is deleted, or its grace passes when no run
// names it, or Close removes that directory. On a PostgreSQL store the store
// keeps the uploads and counts their quotas for every server sharing it,
// and the directory holds this server's copies. A run spec names an upload
// as upload:SHA256; runs read data files only from the data directory and
// the uploads (see session).
//
// A wrong method on a known path is a JSON 405. The websocket route has
// neither the Compress nor the Timeout middleware; downloads have no overall
// timeout but each write must progress within WriteTimeout.
package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/fwlab/fwlab/internal/figures"
	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/store"
)

// Defaults of the Options.
const (
	DefaultMaxBody      = 1 << 20 // bytes of a POSTed run spec
	DefaultWriteTimeout = 10 * time.Second
	DefaultPingInterval = 20 * time.Second
	DefaultPongWait     = 60 * time.Second
	DefaultMinInterval  = time.Second / 30 // at most ~30 records messages per second
	DefaultMaxBatch     = 20_000           // records per message while the client keeps up
	DefaultMaxLag       = 200_000          // unsent records at which a client slow to drain is dropped
	DefaultSlowWrite    = 2 * time.Second  // a records write this slow means the client is not draining
	DefaultTimeout      = 60 * time.Second // API requests (the websocket and downloads excepted)
	// DefaultMaxMessage bounds the bytes of one records message (its
	// records are cut there; the rest follow in the next message).
	DefaultMaxMessage = 1 << 20
	// DefaultMaxStreamsPerClient bounds the websockets one client address
	// holds open.
	DefaultMaxStreamsPerClient = 64
	// DefaultUploadQuota bounds the bytes of every upload stored together.
	DefaultUploadQuota = 1 << 30
	// DefaultClientUploadQuota bounds the bytes of one client's uploads:
	// a quarter of the total, so that one client cannot lock the others
	// out.
	DefaultClientUploadQuota = DefaultUploadQuota / 4
	// DefaultUploadGrace is how long an upload no run has named is kept.
	DefaultUploadGrace = time.Hour
	// DefaultMaxParses bounds the uploads parsed at once.
	DefaultMaxParses = 2
	// DefaultUploadTimeout bounds the time an upload's body may take.
	DefaultUploadTimeout = 5 * time.Minute
)

// Options configure a Server. Zero fields take the defaults.
type Options struct {
	// DataDir is the directory of data sets; data-file parameters are looked
	// up in it.
	DataDir string
	// Session limits (concurrent runs, stored runs, records per run, workers).
	Session session.Options
	// Submit, when set, queues the runs of POST /api/runs for worker
	// processes instead of running them here (frontend.go).
	Submit Submitter
	// SubmitSweep, when set, queues the sweeps of POST /api/sweeps the same
	// way (one job per cell).
	SubmitSweep SweepSubmitter
	// RescueAfter is the queue's -rescue-after (0: not known here): with
	// it, the pages count down to the rescue of a run whose worker is
	// silent (workers.go).
	RescueAfter time.Duration
	// MaxBody bounds the size of a request body.
	MaxBody int64
	// UploadDir is where uploaded data files are stored, each server in a
	// directory of its own that Close removes (default: fwlab-uploads in
	// os.TempDir()). MaxUpload bounds an uploaded file's size (default
	// DefaultMaxUpload).
	UploadDir string
	MaxUpload int64
	// Websocket stream: write deadline, ping period, how long to wait for a
	// pong, and minimum interval between records messages. A message holds
	// at most MaxBatch records, or more (up to 10×) while a backlog is being
	// caught up. A client is disconnected with 1013 when MaxLag records wait
	// for it and its last write took longer than SlowWrite (it is not
	// draining); a client that takes no data at all is dropped by
	// WriteTimeout. A backlog that is only due to the rate limit never
	// disconnects anyone.
	WriteTimeout time.Duration
	PingInterval time.Duration
	PongWait     time.Duration
	MinInterval  time.Duration
	MaxBatch     int
	MaxLag       int
	SlowWrite    time.Duration
	// Timeout bounds the API's request handling (building an instance
	// included).
	Timeout time.Duration
	// PreviewTimeout bounds the build of an instance for POST /api/preview
	// (default DefaultPreviewTimeout); PreviewCache is the number of recent
	// previews kept (default DefaultPreviewCache).
	PreviewTimeout time.Duration
	PreviewCache   int
	// Logger receives server errors (default slog.Default()).
	Logger *slog.Logger

	// ListenAddr is the address the server listens on (host:port): its
	// host is accepted in the Host header, and when it is empty or a
	// wildcard address, every IP address is. AllowHosts adds more host
	// names (the -allow-host flag). localhost and loopback addresses are
	// always accepted.
	ListenAddr string
	AllowHosts []string
	// MaxMessage bounds the bytes of one records message.
	MaxMessage int
	// MaxStreamsPerClient bounds the websockets one client address holds.
	MaxStreamsPerClient int
	// UploadQuota bounds the bytes of every upload stored together;
	// MaxParses the uploads parsed at once; UploadTimeout the time an
	// upload's body may take.
	UploadQuota int64
	// ClientUploadQuota bounds the bytes of one client's uploads (default
	// DefaultClientUploadQuota, at most UploadQuota); UploadGrace is how
	// long an upload no run has named is kept (default
	// DefaultUploadGrace). An upload goes when the last run naming it is
	// deleted. On a PostgreSQL store the store counts both quotas, for
	// every server sharing it.
	ClientUploadQuota int64
	UploadGrace       time.Duration
	MaxParses         int
	UploadTimeout     time.Duration
	// Flags names the command-line flag of each limit (by the Options
	// field's name), for error messages.
	Flags map[string]string
	// MaxImport bounds the body of POST /api/runs/import (default
	// DefaultMaxImport); MaxImports the imports running at once (default
	// DefaultMaxImports); ImportWait how long an import runs before it is
	// answered 202 with a status URL (default DefaultImportWait).
	MaxImport  int64
	MaxImports int
	ImportWait time.Duration
	// MaxSweeps bounds the sweeps one client has queued or running
	// (default DefaultMaxSweeps).
	MaxSweeps int
}

// flag names the command-line flag of an Options field, for messages.
func (o Options) flag(field string) string {
	if f := o.Flags[field]; f != "" {
		return " (" + f + ")"
	}
	return ""
}

func (o Options) withDefaults() Options {
	if o.MaxSweeps <= 0 {
		o.MaxSweeps = DefaultMaxSweeps
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.PingInterval <= 0 {
		o.PingInterval = DefaultPingInterval
	}
	if o.PongWait <= 0 {
		o.PongWait = DefaultPongWait
	}
	if o.PongWait <= o.PingInterval {
		o.PongWait = 3 * o.PingInterval
	}
	if o.MinInterval <= 0 {
		o.MinInterval = DefaultMinInterval
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = DefaultMaxBatch
	}
	if o.MaxLag <= 0 {
		o.MaxLag = DefaultMaxLag
	}
	if o.SlowWrite <= 0 {
		o.SlowWrite = DefaultSlowWrite
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.PreviewTimeout <= 0 {
		o.PreviewTimeout = DefaultPreviewTimeout
	}
	if o.PreviewCache <= 0 {
		o.PreviewCache = DefaultPreviewCache
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Session.DataDir == "" {
		o.Session.DataDir = o.DataDir
	}
	if o.UploadDir == "" {
		o.UploadDir = filepath.Join(os.TempDir(), "fwlab-uploads")
	}
	if o.MaxUpload <= 0 {
		o.MaxUpload = DefaultMaxUpload
	}
	if o.MaxMessage <= 0 {
		o.MaxMessage = DefaultMaxMessage
	}
	if o.MaxStreamsPerClient <= 0 {
		o.MaxStreamsPerClient = DefaultMaxStreamsPerClient
	}
	if o.UploadQuota <= 0 {
		o.UploadQuota = DefaultUploadQuota
	}
	if o.ClientUploadQuota <= 0 {
		o.ClientUploadQuota = min(DefaultClientUploadQuota, o.UploadQuota)
	}
	if o.UploadGrace <= 0 {
		o.UploadGrace = DefaultUploadGrace
	}
	if o.MaxParses <= 0 {
		o.MaxParses = DefaultMaxParses
	}
	if o.UploadTimeout <= 0 {
		o.UploadTimeout = DefaultUploadTimeout
	}
	if o.Session.Flags == nil {
		o.Session.Flags = o.Flags
	}
	if o.MaxImport <= 0 {
		o.MaxImport = DefaultMaxImport
	}
	if o.MaxImports <= 0 {
		o.MaxImports = DefaultMaxImports
	}
	if o.ImportWait <= 0 {
		o.ImportWait = DefaultImportWait
	}
	return o
}

// Server is the dashboard's HTTP handler.
type Server struct {
	opts    Options
	log     *slog.Logger
	mgr     *session.Manager
	st      store.Backend
	ownSt   bool // opened by New (in memory), closed by Close
	stOnce  sync.Once
	sweeps  *sweeper
	verif   verifying // verifications in progress (verify.go)
	router  chi.Router
	handler http.Handler // router behind guard
	uploads *uploads
	wall    wallClock // History's time left (walleta.go)
	imp     *importer // POST /api/runs/import (imports.go)
	// previews caches the recent answers of POST /api/preview.
	previews *previews

	// Host allow-list (see hostAllowed).
	allowHosts map[string]struct{}
	anyIP      bool
	// parses bounds the uploads parsed at once.
	parses chan struct{}

	closing   chan struct{}
	closeOnce sync.Once
	connMu    sync.Mutex
	conns     map[*wsConn]struct{}
	perClient map[string]int // open websockets by client address
	closed    bool
	wsWG      sync.WaitGroup
}

// New builds the server.
func New(o Options) (*Server, error) {
	o = o.withDefaults()
	up := newUploads(o.UploadDir, o.UploadQuota, o.ClientUploadQuota, o.UploadGrace)
	if sh, ok := o.Session.Store.(sharedUploads); ok {
		up.shared = sh // a PostgreSQL store counts the quotas for every server sharing it
	}
	if o.Session.UploadDir == "" {
		o.Session.UploadDir = up.dir
	}
	ownSt := false
	if o.Session.Store == nil {
		st, err := store.Open(store.Memory)
		if err != nil {
			return nil, fmt.Errorf("opening an in-memory run store: %w", err)
		}
		o.Session.Store, ownSt = st, true
	}
	s := &Server{
		opts:       o,
		log:        o.Logger,
		mgr:        session.NewManager(o.Session),
		st:         o.Session.Store,
		ownSt:      ownSt,
		closing:    make(chan struct{}),
		conns:      map[*wsConn]struct{}{},
		perClient:  map[string]int{},
		uploads:    up,
		allowHosts: map[string]struct{}{},
		parses:     make(chan struct{}, o.MaxParses),
		imp:        newImporter(o.MaxImports),
	}
	for _, h := range o.AllowHosts {
		if h = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), "."); h != "" {
			s.allowHosts[strings.Trim(h, "[]")] = struct{}{}
		}
	}
	if host, _, err := net.SplitHostPort(o.ListenAddr); err == nil || o.ListenAddr == "" {
		if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
			s.anyIP = true
		} else {
			s.allowHosts[strings.ToLower(host)] = struct{}{}
		}
	}
	s.previews = newPreviews(o.PreviewCache)
	s.sweeps = newSweeper(s)
	r := chi.NewRouter()
	r.Use(middleware.Recoverer)
	r.NotFound(s.notFound)
	r.MethodNotAllowed(s.methodNotAllowed)

	r.Get("/healthz", s.handleHealth)
	// The websocket route has no Compress or Timeout middleware.
	r.Get("/ws/runs/{id}", s.handleWS)

	r.Route("/api", func(r chi.Router) {
		r.NotFound(s.notFound)
		r.MethodNotAllowed(s.methodNotAllowed)
		r.Use(middleware.NoCache)
		r.Use(middleware.Compress(5, "application/json", "application/x-ndjson", "text/csv"))
		// Downloads and uploads take as long as they need.
		r.Get("/runs/{id}/trace", s.handleTrace)
		r.Get("/runs/{id}/bundle", s.handleBundle)
		r.Post("/runs/import", s.handleImport)
		r.Post("/uploads", s.handleUpload)
		r.Group(func(r chi.Router) {
			r.Use(requestTimeout(o.Timeout))
			r.Get("/scenarios", s.handleScenarios)
			r.Get("/presets", s.handlePresets)
			r.With(s.ownNamesMiddleware).Post("/preview", s.handlePreview)
			r.With(s.ownNamesMiddleware).Post("/runs", s.handleCreate)
			r.Get("/runs", s.handleList)
			r.Get("/runs/{id}", s.handleStatus)
			r.Delete("/runs/{id}", s.handleCancel)
			r.Post("/runs/{id}/pause", s.remoteControl("pause", s.handleControl(func(r *session.Run) error { r.Pause(); return nil })))
			r.Post("/runs/{id}/resume", s.remoteControl("resume", s.handleControl((*session.Run).Resume)))
			r.Post("/runs/{id}/step", s.remoteControl("step", s.handleControl((*session.Run).Step)))
			r.Get("/runs/{id}/panels", s.handlePanels)
			r.Get("/runs/{id}/traces/{trace}/panels", s.handleTracePanels)
			r.Get("/runs/{id}/traces/{trace}/coefficients.csv", s.handleCoefficients)
			r.Get("/imports/{id}", s.handleImportStatus)
			r.Patch("/runs/{id}", s.handleEdit)
			r.Post("/runs/delete", s.handleDeleteMany)
			for _, f := range figures.Formats {
				r.Get("/runs/{id}/figure."+f, s.handleFigure(f))
			}
			s.sweepRoutes(r)
			s.verifyRoutes(r)
			s.liveRoutes(r)
		})
	})
	if err := mountPages(r, s); err != nil {
		return nil, err
	}
	s.router = r
	s.handler = s.guard(r)
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Manager returns the run manager (for the pages).
func (s *Server) Manager() *session.Manager { return s.mgr }

// Close cancels every run (those live or queued report interrupted),
// closes every websocket (close code 1001), waits up to three seconds for
// the runs to stop and two for the streams to say goodbye (at once, so that
// Close returns within about three seconds), and removes the files uploaded
// to this server.
func (s *Server) Close() error {
	s.closeOnce.Do(func() { close(s.closing) })
	start := time.Now()
	s.connMu.Lock()
	s.closed = true
	conns := make([]*wsConn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.connMu.Unlock()
	// Writers notice s.closing and say goodbye; a writer stuck on a peer
	// that does not read is released by closing its connection after a
	// grace period.
	done := make(chan struct{})
	go func() { s.wsWG.Wait(); close(done) }()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	s.sweeps.stop()
	err := s.mgr.Close(ctx)
	s.sweeps.wait()
	if s.ownSt {
		s.stOnce.Do(func() {
			if cerr := s.st.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("closing the run store: %w", cerr)
			}
		})
	}
	grace := time.NewTimer(max(2*time.Second-time.Since(start), 0))
	defer grace.Stop()
	select {
	case <-done:
	case <-grace.C:
		for _, c := range conns {
			_ = c.Close()
		}
		<-done
	}
	if rerr := s.uploads.remove(); rerr != nil && err == nil {
		err = fmt.Errorf("removing the uploads: %w", rerr)
	}
	return err
}

// reserveStream counts one more websocket of the client, reporting false
// when it has MaxStreamsPerClient open already.
func (s *Server) reserveStream(client string) bool {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	if s.perClient[client] >= s.opts.MaxStreamsPerClient {
		return false
	}
	s.perClient[client]++
	return true
}

func (s *Server) releaseStream(client string) {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	if s.perClient[client]--; s.perClient[client] <= 0 {
		delete(s.perClient, client)
	}
}

func (s *Server) track(c *wsConn) bool {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c] = struct{}{}
	s.wsWG.Add(1)
	return true
}

func (s *Server) untrack(c *wsConn) {
	s.connMu.Lock()
	delete(s.conns, c)
	s.connMu.Unlock()
	s.wsWG.Done()
}

// openStreams returns the number of websocket connections being served.
func (s *Server) openStreams() int {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	return len(s.conns)
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/api/") || strings.HasPrefix(r.URL.Path, "/ws/") {
		writeError(w, http.StatusNotFound, "", "no such endpoint: "+r.Method+" "+r.URL.Path)
		return
	}
	http.NotFound(w, r)
}

func (s *Server) methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	writeError(w, http.StatusMethodNotAllowed, "", "method "+r.Method+" is not allowed on "+r.URL.Path)
}
