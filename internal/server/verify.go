package server

// Verification through the queue: POST /api/runs/{id}/verify re-runs a
// stored run's spec as a run of its own (named "verification of run ID",
// queued, watched and stored like any run), and once that run ends
// compares its traces with the original's (package verify) and records the
// outcome in the store. POST /api/sweeps/{id}/verify does so for every
// cell of a sweep, one cell after the other. The watchers run under the
// sweeper's context and wait group, so that Close stops them (an
// interrupted re-run records nothing) and waits for them.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/fwlab/fwlab/internal/bundle"
	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/verify"
)

// VerificationRow is a verification as the API gives it.
type VerificationRow struct {
	At      time.Time `json:"at"`
	Outcome string    `json:"outcome"` // reproduced, differs or failed
	Records int       `json:"records"` // records found identical
	Detail  string    `json:"detail"`  // the first difference, or why the re-run failed
	Version string    `json:"version"` // the fwlab that re-ran it
	RerunID string    `json:"rerun_id,omitempty"`
}

func verificationRow(v store.Verification) VerificationRow {
	return VerificationRow{At: v.At, Outcome: v.Outcome, Records: v.Records, Detail: v.Detail, Version: v.Version, RerunID: v.RerunID}
}

// verifyRoutes registers the verification routes (under /api, with the
// request timeout).
func (s *Server) verifyRoutes(r chi.Router) {
	r.Post("/runs/{id}/verify", s.handleVerify)
	r.Delete("/runs/{id}/verify", s.handleVerifyCancel)
	r.Get("/runs/{id}/verifications", s.handleVerifications)
	r.Post("/sweeps/{id}/verify", s.handleSweepVerify)
	r.Delete("/sweeps/{id}/verify", s.handleSweepVerifyCancel)
}

// verifying holds the verifications in progress: one at a time per run
// and per sweep (a second request answers the first). A verification is a
// run of the client that asked for it: its re-run counts in the client's
// -max-client-runs as any run of it, and a sweep's verification counts in
// its -max-sweeps as a sweep of it, until it ends or is cancelled.
type verifying struct {
	mu     sync.Mutex
	runs   map[string]string       // run id → the id of its re-run
	sweeps map[string]*sweepVerify // sweep id → its verification
}

// sweepVerify is a sweep's verification in progress.
type sweepVerify struct {
	cells  int
	cancel context.CancelFunc
	rerun  string // the re-run of the cell being verified ("" between cells)
}

func (v *verifying) init() {
	if v.runs == nil {
		v.runs, v.sweeps = map[string]string{}, map[string]*sweepVerify{}
	}
}

// rerunOf returns the re-run of run id's verification in progress.
func (s *Server) rerunOf(id string) (string, bool) {
	v := &s.verif
	v.mu.Lock()
	defer v.mu.Unlock()
	v.init()
	rerun, ok := v.runs[id]
	return rerun, ok
}

// handleVerifyCancel cancels a run's verification in progress (its
// re-run): 202 {"id"} of the re-run cancelled; 404 when none is.
func (s *Server) handleVerifyCancel(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	rerun, ok := s.rerunOf(id)
	if !ok {
		writeError(w, http.StatusNotFound, "id", fmt.Sprintf("run %s is not being verified", id))
		return
	}
	if err := s.cancelRerun(r.Context(), rerun); err != nil {
		s.storeError(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"id": rerun, "status": "cancelled"})
}

// handleSweepVerifyCancel cancels a sweep's verification in progress: the
// cell being re-run is cancelled and no other cell is started; 202; 404
// when none is in progress.
func (s *Server) handleSweepVerifyCancel(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	v := &s.verif
	v.mu.Lock()
	v.init()
	sv := v.sweeps[id]
	rerun := ""
	if sv != nil {
		sv.cancel()
		rerun = sv.rerun
	}
	v.mu.Unlock()
	if sv == nil {
		writeError(w, http.StatusNotFound, "id", fmt.Sprintf("sweep %s is not being verified", id))
		return
	}
	if rerun != "" {
		if err := s.cancelRerun(r.Context(), rerun); err != nil {
			s.storeError(w, err)
			return
		}
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"status": "cancelled"})
}

// cancelRerun cancels a verification's re-run wherever it runs: in this
// server's sessions, or queued for or running on a worker (through the
// store, as a run's cancel).
func (s *Server) cancelRerun(ctx context.Context, id string) error {
	if live, ok := s.mgr.Live(id); ok {
		live.Cancel()
		return nil
	}
	_, err := s.cancelRemote(ctx, id)
	return err
}

// handleVerifications: 200 {"verifications": [VerificationRow]}, newest
// first; 404 for an unknown run.
func (s *Server) handleVerifications(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	if _, err := s.st.Get(r.Context(), id); err != nil {
		s.storeError(w, err)
		return
	}
	vs, err := s.st.Verifications(r.Context(), id)
	if err != nil {
		s.storeError(w, err)
		return
	}
	rows := make([]VerificationRow, 0, len(vs))
	for _, v := range vs {
		rows = append(rows, verificationRow(v))
	}
	out := map[string]any{"verifications": rows}
	if rerun, ok := s.rerunOf(id); ok {
		out["verifying"] = rerun // the re-run of the verification in progress
	}
	writeJSON(w, http.StatusOK, out)
}

// verifiable returns a stored run that has ended, or answers why not.
func (s *Server) verifiable(w http.ResponseWriter, r *http.Request, id string) (*store.Run, bool) {
	run, err := s.st.Get(r.Context(), id)
	if err != nil {
		s.storeError(w, err)
		return nil, false
	}
	status := run.Status
	if live, ok := s.mgr.Live(id); ok {
		status = live.RunStatus()
	}
	if store.Live(status) {
		writeError(w, http.StatusConflict, "id", fmt.Sprintf("run %s is %s: verify it once it has ended", id, status))
		return nil, false
	}
	if err := verify.Rerunnable(run.Spec); err != nil {
		writeError(w, http.StatusConflict, "id", fmt.Sprintf("run %s was %v (its exported bundle's: dashboard verify BUNDLE)", id, err))
		return nil, false
	}
	return run, true
}

// handleVerify re-runs a stored run through the queue: 202 {"id"} of the
// re-run; a run already being verified answers its re-run's id (202, with
// "already": true); 404 unknown run, 409 a run still live, and the answers
// of POST /api/runs for the re-run (400, 413, 429 — the client's
// -max-client-runs counts it —, 503, 504).
func (s *Server) handleVerify(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	orig, ok := s.verifiable(w, r, id)
	if !ok {
		return
	}
	v := &s.verif
	v.mu.Lock()
	v.init()
	if rerun, ok := v.runs[id]; ok {
		v.mu.Unlock()
		w.Header().Set("Location", "/api/runs/"+rerun)
		writeJSON(w, http.StatusAccepted, map[string]any{"id": rerun, "already": true})
		return
	}
	// held while the re-run is created, so that two requests make one
	rerun, err := s.startRerun(r.Context(), orig, clientAddr(r))
	if err != nil {
		v.mu.Unlock()
		writeCreateError(w, err)
		return
	}
	v.runs[id] = rerun.ID
	v.mu.Unlock()
	if !s.watch(func(ctx context.Context) {
		defer s.endVerify(id)
		s.finishVerify(ctx, id, rerun)
	}) {
		s.endVerify(id)
	}
	w.Header().Set("Location", "/api/runs/"+rerun.ID)
	writeJSON(w, http.StatusAccepted, map[string]string{"id": rerun.ID})
}

// endVerify forgets run id's verification in progress.
func (s *Server) endVerify(id string) {
	s.verif.mu.Lock()
	delete(s.verif.runs, id)
	s.verif.mu.Unlock()
}

// watch runs fn in a goroutine under the sweeper's context and wait group;
// false when the server is closing (fn is not run).
func (s *Server) watch(fn func(ctx context.Context)) bool {
	sw := s.sweeps
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.ctx.Err() != nil {
		return false
	}
	sw.wg.Add(1)
	go func() {
		defer sw.wg.Done()
		fn(sw.ctx)
	}()
	return true
}

// rerunning is a verification's re-run: a run of this server's sessions,
// or, on a server that queues its runs for workers (Options.Submit), a run
// queued as POST /api/runs queues one.
type rerunning struct {
	ID     string
	done   <-chan struct{}
	cancel func()
}

// Done is closed when the re-run has ended.
func (r *rerunning) Done() <-chan struct{} { return r.done }

// Cancel cancels the re-run.
func (r *rerunning) Cancel() { r.cancel() }

// startRerun creates the re-run of a stored run, named after it: queued
// for the workers when the server's runs go to them, as any run does.
func (s *Server) startRerun(ctx context.Context, orig *store.Run, client string) (*rerunning, error) {
	sp := orig.Spec
	sp.Algorithms = append([]spec.Algo(nil), orig.Spec.Algorithms...)
	sp.StartPaused = false
	var rerun *rerunning
	if s.opts.Submit != nil {
		id, err := s.submitRerun(ctx, sp, client)
		if err != nil {
			return nil, err
		}
		rerun = s.queuedRerun(id)
	} else {
		run, err := s.mgr.CreateFor(ctx, sp, client)
		if err != nil {
			return nil, err
		}
		rerun = &rerunning{ID: run.ID, done: run.Done(), cancel: run.Cancel}
	}
	name := "verification of run " + orig.ID
	if err := s.st.Update(ctx, rerun.ID, store.Edit{Name: &name}); err != nil {
		s.log.Warn("naming a verification run", "id", rerun.ID, "err", err)
	}
	return rerun, nil
}

// submitRerun queues a re-run with the server's Submitter under the
// client's -max-client-runs, as createQueued does a run; a client at its
// limit is told so with session.ErrBusy, as by the sessions.
func (s *Server) submitRerun(ctx context.Context, sp spec.Run, client string) (string, error) {
	max := s.opts.Session.MaxClientRuns
	if max <= 0 {
		max = session.DefaultMaxClientRuns
	}
	id, err := s.opts.Submit(ctx, sp, client, max, s.dataFile)
	if errors.Is(err, ErrClientLimit) {
		return "", fmt.Errorf("%w: a client may have at most %d runs queued, running or paused%s; cancel one or wait until one finishes",
			session.ErrBusy, max, s.opts.flag("MaxClientRuns"))
	}
	return id, err
}

// queuedRerun follows a re-run queued for the workers: done once the store
// says it has ended (or it was deleted, or the server closes); cancelled
// through the store, as DELETE /api/runs/{id} cancels it.
func (s *Server) queuedRerun(id string) *rerunning {
	done := make(chan struct{})
	ctx := s.sweeps.ctx
	go func() {
		defer close(done)
		t := time.NewTicker(sweepRetry)
		defer t.Stop()
		for {
			r, err := s.st.Get(ctx, id)
			if errors.Is(err, store.ErrNotFound) || (err == nil && !store.Live(r.Status)) {
				return
			}
			select {
			case <-t.C:
			case <-ctx.Done():
				return
			}
		}
	}()
	return &rerunning{ID: id, done: done, cancel: func() {
		if _, err := s.cancelRemote(ctx, id); err != nil {
			s.log.Warn("cancelling a verification run", "id", id, "err", err)
		}
	}}
}

// finishVerify waits for the re-run to end, compares it with the original
// and records the outcome. Nothing is recorded when the server closes
// first (the re-run is interrupted: it proves nothing).
func (s *Server) finishVerify(ctx context.Context, id string, rerun *rerunning) {
	select {
	case <-rerun.Done():
	case <-ctx.Done():
		return
	}
	if ctx.Err() != nil {
		return
	}
	v := s.compareRerun(ctx, id, rerun.ID)
	if v == nil {
		return
	}
	if _, err := s.st.AddVerification(ctx, v); err != nil {
		s.log.Warn("recording a verification", "id", id, "rerun", rerun.ID, "err", err)
	}
}

// compareRerun compares a finished re-run with the original run; nil when
// there is nothing to record.
func (s *Server) compareRerun(ctx context.Context, id, rerunID string) *store.Verification {
	failed := func(format string, a ...any) *store.Verification {
		return &store.Verification{RunID: id, RerunID: rerunID, Version: bundle.ProgramVersion(), Outcome: store.VerifyFailed,
			Detail: verify.Clip(fmt.Sprintf(format, a...), store.MaxVerifyDetail)}
	}
	got, err := bundle.FromStore(ctx, s.st, rerunID)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return failed("the re-run %s was deleted before it could be compared", rerunID)
		}
		return failed("reading the re-run %s: %v", rerunID, err)
	}
	switch got.Status {
	case store.StatusInterrupted:
		return nil
	case store.StatusCancelled:
		return failed("the re-run %s was cancelled", rerunID)
	}
	want, err := bundle.FromStore(ctx, s.st, id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil // the run itself was deleted meanwhile
		}
		return failed("reading the run: %v", err)
	}
	v := verify.Outcome(verify.Compare(verify.FromBundle(want), verify.FromBundle(got)))
	v.RunID, v.RerunID, v.Version = id, rerunID, bundle.ProgramVersion()
	return v
}

// handleSweepVerify verifies every cell of a sweep through the queue, one
// cell after the other: 202 {"cells": n} (the cells with a run); a sweep
// already being verified answers so (202, "already": true); 404 unknown
// sweep, 409 a sweep still running, 429 when the client has as many sweeps
// (verifications of sweeps included) as -max-sweeps allows.
func (s *Server) handleSweepVerify(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	sw, err := s.st.GetSweep(r.Context(), id)
	if err != nil {
		s.storeError(w, err)
		return
	}
	if store.Live(sw.Status) {
		writeError(w, http.StatusConflict, "id", fmt.Sprintf("sweep %s is %s: verify it once it has ended", id, sw.Status))
		return
	}
	var ids []string
	for _, c := range sw.Cells {
		if c.RunID != "" {
			ids = append(ids, c.RunID)
		}
	}
	client := clientAddr(r)
	v := &s.verif
	v.mu.Lock()
	defer v.mu.Unlock()
	v.init()
	if sv, ok := v.sweeps[id]; ok {
		writeJSON(w, http.StatusAccepted, map[string]any{"cells": sv.cells, "already": true})
		return
	}
	// a sweep's verification is a sweep of its client
	swr := s.sweeps
	swr.mu.Lock()
	if n := swr.clients[client]; n >= s.opts.MaxSweeps {
		swr.mu.Unlock()
		writeError(w, http.StatusTooManyRequests, "", fmt.Sprintf("this client has %d sweeps queued or running (verifications of sweeps included), at most %d are allowed%s: wait for one to end or cancel one", n, s.opts.MaxSweeps, s.opts.flag("MaxSweeps")))
		return
	}
	swr.clients[client]++
	swr.mu.Unlock()
	release := func() {
		swr.mu.Lock()
		if swr.clients[client]--; swr.clients[client] <= 0 {
			delete(swr.clients, client)
		}
		swr.mu.Unlock()
	}
	ctx, cancel := context.WithCancel(swr.ctx)
	sv := &sweepVerify{cells: len(ids), cancel: cancel}
	v.sweeps[id] = sv
	if !s.watch(func(sctx context.Context) {
		defer func() {
			cancel()
			release()
			v.mu.Lock()
			delete(v.sweeps, id)
			v.mu.Unlock()
		}()
		for _, runID := range ids {
			if !s.verifyCell(ctx, runID, client, sv) {
				return
			}
		}
	}) {
		delete(v.sweeps, id)
		cancel()
		release()
		writeError(w, http.StatusServiceUnavailable, "", "the server is closing")
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]int{"cells": len(ids)})
}

// verifyCell re-runs one stored run, waiting for room in the queue as a
// sweep does, and records the outcome; false when the server is closing
// or the verification was cancelled (ctx). The re-run is noted in sv, so
// that a cancel reaches it.
func (s *Server) verifyCell(ctx context.Context, id, client string, sv *sweepVerify) bool {
	orig, err := s.st.Get(ctx, id)
	if err != nil {
		return ctx.Err() == nil // deleted meanwhile: nothing to verify
	}
	for {
		rerun, err := s.startRerun(ctx, orig, client)
		switch {
		case err == nil:
			s.verif.mu.Lock()
			sv.rerun = rerun.ID
			s.verif.mu.Unlock()
			if ctx.Err() != nil { // cancelled while the re-run was made
				rerun.Cancel()
				return false
			}
			s.finishVerify(ctx, id, rerun)
			s.verif.mu.Lock()
			sv.rerun = ""
			s.verif.mu.Unlock()
			return ctx.Err() == nil
		case errors.Is(err, session.ErrBusy):
			select {
			case <-time.After(sweepRetry):
				continue
			case <-ctx.Done():
				return false
			}
		case ctx.Err() != nil:
			return false
		}
		v := &store.Verification{RunID: id, Version: bundle.ProgramVersion(), Outcome: store.VerifyFailed,
			Detail: verify.Clip("cannot re-run it here: "+err.Error(), store.MaxVerifyDetail)}
		if _, err := s.st.AddVerification(ctx, v); err != nil {
			s.log.Warn("recording a verification", "id", id, "err", err)
		}
		return true
	}
}

// writeCreateError answers a failure to create a run (POST /api/runs and
// the re-runs of verification).
func writeCreateError(w http.ResponseWriter, err error) {
	var fe *spec.FieldError
	switch {
	case errors.As(err, &fe):
		writeError(w, http.StatusBadRequest, fe.Field, fe.Msg)
	case errors.Is(err, session.ErrBusy):
		writeError(w, http.StatusTooManyRequests, "", err.Error())
	case errors.Is(err, session.ErrTooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, "", err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		writeError(w, http.StatusGatewayTimeout, "", err.Error())
	default:
		writeError(w, http.StatusServiceUnavailable, "", err.Error())
	}
}
