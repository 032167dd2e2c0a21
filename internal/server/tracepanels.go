package server

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/fwlab/fwlab/internal/bundle"
	"github.com/fwlab/fwlab/internal/session"
)

// MaxTracePanels caps the panels GET /api/runs/{id}/traces/{t}/panels
// sends: the import's cap on a panel (bundle.MaxPanelBytes), so that every
// run made or imported here fits; a larger stored blob (a store written by
// another version) is refused with 413, unread.
const MaxTracePanels = bundle.MaxPanelBytes

// handleTracePanels answers one trace's panels (its final estimate's views,
// a JSON object): {} while the trace has none, 404 for an unknown run or
// trace, 413 over MaxTracePanels. A run's status says which traces have
// some (has_panels) but never carries them.
func (s *Server) handleTracePanels(w http.ResponseWriter, r *http.Request) {
	run, ok := s.run(w, r)
	if !ok {
		return
	}
	raw := chi.URLParam(r, "trace")
	t, err := strconv.Atoi(raw)
	traces := run.Traces()
	if err != nil || t < 0 || t >= len(traces) {
		writeError(w, http.StatusNotFound, "trace", fmt.Sprintf("run %s has no trace %s (it has %d, numbered from 0)", run.ID, quote(raw), len(traces)))
		return
	}
	b, err := traces[t].Panels(r.Context(), MaxTracePanels)
	switch {
	case errors.Is(err, session.ErrPanelsTooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, "trace", fmt.Sprintf("%v; panels are sent up to %d bytes (4 MiB, the import's cap on a panel, bundle.MaxPanelBytes; no flag changes it)", err, MaxTracePanels))
		return
	case err != nil:
		s.log.Error("trace panels", "run", run.ID, "trace", t, "err", err)
		writeError(w, http.StatusInternalServerError, "", "reading the trace's panels: "+err.Error())
		return
	}
	if b == nil {
		b = []byte("{}")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(b, '\n'))
}
