package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/fwlab/fwlab/internal/bundle"
	"github.com/fwlab/fwlab/internal/dataio"
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
	b, ok := s.tracePanels(w, r, run)
	if !ok {
		return
	}
	if b == nil {
		b = []byte("{}")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(b, '\n'))
}

// tracePanels reads the panels of the trace the {trace} URL parameter
// names (nil when it has none), answering the error itself when it cannot.
func (s *Server) tracePanels(w http.ResponseWriter, r *http.Request, run *session.Run) ([]byte, bool) {
	raw := chi.URLParam(r, "trace")
	t, err := strconv.Atoi(raw)
	traces := run.Traces()
	if err != nil || t < 0 || t >= len(traces) {
		writeError(w, http.StatusNotFound, "trace", fmt.Sprintf("run %s has no trace %s (it has %d, numbered from 0)", run.ID, quote(raw), len(traces)))
		return nil, false
	}
	b, err := traces[t].Panels(r.Context(), MaxTracePanels)
	switch {
	case errors.Is(err, session.ErrPanelsTooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, "trace", fmt.Sprintf("%v; panels are sent up to %d bytes (4 MiB, the import's cap on a panel, bundle.MaxPanelBytes; no flag changes it)", err, MaxTracePanels))
		return nil, false
	case err != nil:
		s.log.Error("trace panels", "run", run.ID, "trace", t, "err", err)
		writeError(w, http.StatusInternalServerError, "", "reading the trace's panels: "+err.Error())
		return nil, false
	}
	return b, true
}

// handleCoefficients answers a finished trace's coefficients as CSV, as
// `dashboard solve -save-x` writes them: the vector one value a line (the
// panel "coefficients"), GFLASSO's B one row of K values a line (the panel
// "B"); 404 naming why when the trace has none (its problem has no
// coefficient vector, or it has not finished).
func (s *Server) handleCoefficients(w http.ResponseWriter, r *http.Request) {
	run, ok := s.run(w, r)
	if !ok {
		return
	}
	b, ok := s.tracePanels(w, r, run)
	if !ok {
		return
	}
	var p struct {
		Coefficients []float64   `json:"coefficients"`
		Omitted      string      `json:"coefficients_omitted"`
		B            [][]float64 `json:"B"`
	}
	if len(b) > 0 {
		if err := json.Unmarshal(b, &p); err != nil {
			writeError(w, http.StatusInternalServerError, "", "reading the trace's panels: "+err.Error())
			return
		}
	}
	var rows [][]float64
	switch {
	case p.Coefficients != nil:
		rows = make([][]float64, len(p.Coefficients))
		for i := range p.Coefficients {
			rows[i] = p.Coefficients[i : i+1]
		}
	case p.B != nil:
		rows = p.B
	case p.Omitted != "":
		writeError(w, http.StatusNotFound, "trace", fmt.Sprintf("trace %s of run %s kept no coefficients: %s", chi.URLParam(r, "trace"), run.ID, p.Omitted))
		return
	default:
		writeError(w, http.StatusNotFound, "trace", fmt.Sprintf("trace %s of run %s has no coefficients: its problem (%s) has no coefficient vector, or the trace has not finished", chi.URLParam(r, "trace"), run.ID, run.Spec().Problem))
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", fmt.Sprintf("%s-trace%s-coefficients.csv", run.ID, chi.URLParam(r, "trace"))))
	w.WriteHeader(http.StatusOK)
	_ = dataio.WriteRows(w, rows)
}
