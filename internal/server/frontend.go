package server

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/sweep"
)

// Submitter queues a run for other processes to run (a PostgreSQL store's
// queue, taken by `dashboard worker`): a server with one runs none of the
// runs started through POST /api/runs itself (`serve -slots 0`, a pure
// front end); their pages follow them through the store. client is the
// address of the client that started the run: the queue shares its
// workers fairly among clients, as the server's own queue does.
type Submitter func(ctx context.Context, sp spec.Run, client string, files DataFiles) (id string, err error)

// DataFiles resolves the file that the value of a run's data-file
// parameter names, confined as for a run of the server's own: local is the
// file, rel its path inside the server's -data folder ("" for an upload),
// which a worker finds in its own -data folder.
type DataFiles func(p scenarios.Param, value string) (local, rel string, err error)

// dataFile is the server's DataFiles.
func (s *Server) dataFile(p scenarios.Param, value string) (string, string, error) {
	local, err := s.mgr.ResolveDataFile(p, value)
	if err != nil {
		return "", "", err
	}
	if s.opts.DataDir != "" {
		root, err := filepath.Abs(s.opts.DataDir)
		if err == nil {
			if real, err := filepath.EvalSymlinks(root); err == nil {
				root = real
			}
			if rel, err := filepath.Rel(root, local); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return local, rel, nil
			}
		}
	}
	return local, "", nil // an upload: it travels in the store
}

// createQueued answers POST /api/runs by queueing the run with the
// server's Submitter.
func (s *Server) createQueued(w http.ResponseWriter, r *http.Request, sp spec.Run) {
	id, err := s.opts.Submit(r.Context(), sp, clientAddr(r), s.dataFile)
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
type SweepSubmitter func(ctx context.Context, doc *sweep.Doc, client string, files DataFiles) (id string, err error)

// createQueuedSweep answers POST /api/sweeps (its document checked) by
// queueing the sweep with the server's SweepSubmitter.
func (s *Server) createQueuedSweep(w http.ResponseWriter, r *http.Request, doc *sweep.Doc) {
	id, err := s.opts.SubmitSweep(r.Context(), doc, clientAddr(r), s.dataFile)
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
