package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/sweep"
)

// Submitter queues a run for a worker to run (a PostgreSQL store's queue,
// taken by `dashboard worker` processes, and by `dashboard serve` itself
// when it has slots): a server with one runs none of the runs started
// through POST /api/runs in its own sessions; their pages follow them
// through the store. client is the
// address of the client that started the run: the queue shares its
// workers fairly among clients, as the server's own queue does. max is
// the most runs the client may have live (queued, running or paused),
// this one included, the server's own limit (MaxClientRuns): over it the
// Submitter stores nothing and returns an error wrapping ErrClientLimit.
type Submitter func(ctx context.Context, sp spec.Run, client string, max int, files DataFiles) (id string, err error)

// ErrClientLimit is wrapped by a Submitter's (SweepSubmitter's) error when
// the client has as many live runs (sweeps) as it may: the server answers
// 429 naming the limit's flag, as for a run of its own.
var ErrClientLimit = errors.New("the client has as many live runs or sweeps as it may")

// DataFiles resolves the file that the value of a run's data-file
// parameter names, confined as for a run of the server's own: local is the
// file, rel its path inside the server's -data folder ("" for an upload),
// which a worker finds in its own -data folder.
type DataFiles func(p scenarios.Param, value string) (local, rel string, err error)

// dataFile is the server's DataFiles.
func (s *Server) dataFile(p scenarios.Param, value string) (string, string, error) {
	// an upload another server sharing the store took
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	s.uploads.copyShared(ctx, value)
	cancel()
	local, err := s.mgr.ResolveDataFile(p, value)
	if err != nil {
		return "", "", err
	}
	if rel, ok := s.mgr.Folders().Rel(local); ok {
		return local, rel, nil
	}
	return local, "", nil // an upload: it travels in the store
}

// createQueued answers POST /api/runs by queueing the run with the
// server's Submitter.
func (s *Server) createQueued(w http.ResponseWriter, r *http.Request, sp spec.Run) {
	max := s.opts.Session.MaxClientRuns
	if max <= 0 {
		max = session.DefaultMaxClientRuns
	}
	id, err := s.opts.Submit(r.Context(), sp, clientAddr(r), max, s.dataFile)
	if err != nil {
		var fe *spec.FieldError
		switch {
		case errors.As(err, &fe):
			writeError(w, http.StatusBadRequest, fe.Field, fe.Msg)
			return
		case errors.Is(err, ErrClientLimit):
			// as the sessions answer for a run of the server's own
			writeError(w, http.StatusTooManyRequests, "", fmt.Sprintf("%v: a client may have at most %d runs queued, running or paused%s; cancel one or wait until one finishes",
				session.ErrBusy, max, s.opts.flag("MaxClientRuns")))
			return
		}
		writeError(w, http.StatusServiceUnavailable, "", "queueing the run: "+err.Error())
		return
	}
	w.Header().Set("Location", "/api/runs/"+id)
	writeJSON(w, http.StatusCreated, map[string]string{"id": id})
}

// SweepSubmitter queues a sweep's cells for other processes to run, as
// Submitter does a run; max is the most sweeps the client may have live,
// this one included (MaxSweeps; the cells do not count as runs).
type SweepSubmitter func(ctx context.Context, doc *sweep.Doc, client string, max int, files DataFiles) (id string, err error)

// createQueuedSweep answers POST /api/sweeps (its document checked) by
// queueing the sweep with the server's SweepSubmitter.
func (s *Server) createQueuedSweep(w http.ResponseWriter, r *http.Request, doc *sweep.Doc) {
	id, err := s.opts.SubmitSweep(r.Context(), doc, clientAddr(r), s.opts.MaxSweeps, s.dataFile)
	if err != nil {
		var fe *spec.FieldError
		switch {
		case errors.As(err, &fe):
			writeError(w, http.StatusBadRequest, fe.Field, fe.Msg)
			return
		case errors.Is(err, ErrClientLimit):
			// as for a sweep of the server's own (sweeps.go)
			writeError(w, http.StatusTooManyRequests, "", fmt.Sprintf("this client has %d sweeps queued or running, at most %d are allowed%s: wait for one to end or cancel one",
				s.opts.MaxSweeps, s.opts.MaxSweeps, s.opts.flag("MaxSweeps")))
			return
		}
		writeError(w, http.StatusServiceUnavailable, "", "queueing the sweep: "+err.Error())
		return
	}
	w.Header().Set("Location", "/api/sweeps/"+id)
	writeJSON(w, http.StatusCreated, map[string]string{"id": id})
}
