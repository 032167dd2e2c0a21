package server

import (
	"context"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/fwlab/fwlab/internal/session"
)

// controller is a store whose live runs may run on worker processes (the
// PostgreSQL store): a pause, step or resume is written there and reaches
// the run's worker (pgstore.Control).
type controller interface {
	Control(ctx context.Context, id, op string, pauseTimeout time.Duration) (string, error)
}

// remoteControl answers POST /api/runs/{id}/pause, /step and /resume (op
// "pause", "step" or "resume") for a live run of a shared store that this
// server does not run (queued for, or running on, a worker process): the
// control goes through the store to the run's worker, and the answer is
// the one a local run gives, 202 with the run's status. Any other run goes
// to local, the server's own sessions.
func (s *Server) remoteControl(op string, local http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := chi.URLParam(r, "id")
		ok, err := s.controlRemote(r.Context(), id, op)
		if err != nil {
			s.storeError(w, err)
			return
		}
		if !ok {
			local(w, r)
			return
		}
		run, found := s.mgr.Get(id)
		if !found {
			writeError(w, http.StatusNotFound, "id", "no run "+quote(id))
			return
		}
		writeJSON(w, http.StatusAccepted, s.statusWithUser(r.Context(), run).WithoutPanels())
	}
}

// controlRemote applies op to run id when it is a live run of a shared
// store that this server does not run; ok is false for any other run.
func (s *Server) controlRemote(ctx context.Context, id, op string) (ok bool, err error) {
	c, isCtl := s.st.(controller)
	if !isCtl {
		return false, nil
	}
	if ok, err := s.remoteLive(ctx, id); !ok || err != nil {
		return false, err
	}
	timeout := s.opts.Session.PauseTimeout
	if timeout <= 0 {
		timeout = session.DefaultPauseTimeout
	}
	_, err = c.Control(ctx, id, op, timeout)
	return true, err
}
