package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/sweep"
)

// Submitter queues a run for other processes to run (a PostgreSQL store's
// queue, taken by `dashboard worker`): a server with one runs none of the
// runs started through POST /api/runs itself (`serve -slots 0`, a pure
// front end); their pages follow them through the store.
type Submitter func(ctx context.Context, sp spec.Run) (id string, err error)

// createQueued answers POST /api/runs by queueing the run with the
// server's Submitter.
func (s *Server) createQueued(w http.ResponseWriter, r *http.Request, sp spec.Run) {
	id, err := s.opts.Submit(r.Context(), sp)
	if err != nil {
		var fe *spec.FieldError
		if errors.As(err, &fe) {
			writeError(w, http.StatusBadRequest, fe.Field, fe.Msg)
			return
		}
		writeError(w, http.StatusServiceUnavailable, "", "queueing the run: "+err.Error())
		return
	}
	w.Header().Set("Location", "/api/runs/"+id)
	writeJSON(w, http.StatusCreated, map[string]string{"id": id})
}

// SweepSubmitter queues a sweep's cells for other processes to run, as
// Submitter does a run.
type SweepSubmitter func(ctx context.Context, doc *sweep.Doc) (id string, err error)

// createQueuedSweep answers POST /api/sweeps (its document checked) by
// queueing the sweep with the server's SweepSubmitter.
func (s *Server) createQueuedSweep(w http.ResponseWriter, r *http.Request, doc *sweep.Doc) {
	id, err := s.opts.SubmitSweep(r.Context(), doc)
	if err != nil {
		var fe *spec.FieldError
		if errors.As(err, &fe) {
			writeError(w, http.StatusBadRequest, fe.Field, fe.Msg)
			return
		}
		writeError(w, http.StatusServiceUnavailable, "", "queueing the sweep: "+err.Error())
		return
	}
	w.Header().Set("Location", "/api/sweeps/"+id)
	writeJSON(w, http.StatusCreated, map[string]string{"id": id})
}
