package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"

	"github.com/fwlab/fwlab/internal/figures"
	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/solver"
)

// handleFigure draws a run's figure as SVG, PNG or PDF, ?size=column|page|
// slide (figures.Sizes; page by default). The records are streamed from the
// run's traces (the store, for a finished run) and decimated per column as
// they pass (figures.FromRunStream), so a figure of millions of records
// takes memory bounded by its columns, not by the run. The figure is titled
// with the run's name when it has one.
func (s *Server) handleFigure(format string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		size := r.URL.Query().Get("size")
		if size == "" {
			size = figures.DefaultSize
		}
		sz, err := figures.SizeNamed(size)
		if err != nil {
			writeError(w, http.StatusBadRequest, "size", err.Error())
			return
		}
		run, ok := s.run(w, r)
		if !ok {
			return
		}
		var algos []figures.StreamTraces
		at := map[string]int{}
		for _, t := range run.Traces() {
			i, seen := at[t.Algo]
			if !seen {
				i = len(algos)
				at[t.Algo] = i
				algos = append(algos, figures.StreamTraces{Algo: t.Algo})
			}
			algos[i].Traces = append(algos[i].Traces, traceSource(t))
		}
		fstar := math.NaN()
		if f := run.Info().FStar; f != nil {
			fstar = *f
		}
		// the instance's matrices (GFLASSO's true B and correlation graph)
		// and each algorithm's estimate, as heat maps
		extra := figures.HeatPanels(run.Info().Panels)
		seen := map[string]bool{}
		for _, t := range run.Traces() {
			if seen[t.Algo] {
				continue
			}
			b, err := t.Panels(r.Context(), MaxTracePanels)
			var p map[string]any
			if err != nil || b == nil || json.Unmarshal(b, &p) != nil {
				continue
			}
			seen[t.Algo] = true
			extra = append(extra, figures.EstimatePanels(t.Algo, p)...)
		}
		fig := figures.FromRunStream(s.figureTitle(r, run), algos, fstar, 0, extra...)
		var buf bytes.Buffer
		if err := fig.RenderSize(&buf, format, sz); err != nil {
			writeError(w, http.StatusUnprocessableEntity, "", "drawing the figure: "+err.Error())
			return
		}
		w.Header().Set("Content-Type", map[string]string{"svg": "image/svg+xml", "png": "image/png", "pdf": "application/pdf"}[format])
		w.Header().Set("Content-Disposition", fmt.Sprintf(`inline; filename="fwlab-%s.%s"`, run.ID, format))
		_, _ = w.Write(buf.Bytes())
	}
}

// traceSource reads a trace's records as a stream (from the store when the
// run has finished).
func traceSource(t *session.Trace) figures.TraceSource {
	n := t.Len()
	return figures.TraceSource{Len: n, Each: func(from, to int, fn func(*solver.Record) bool) {
		t.Each(from, min(to, n), func(_ int, rec *solver.Record) bool { return fn(rec) })
	}}
}

// figureTitle names a run's figure: its name (else its problem and id),
// its seed and replications.
func (s *Server) figureTitle(r *http.Request, run *session.Run) string {
	sp := run.Spec()
	title := sp.Problem + " · run " + run.ID
	if name, _, _, err := s.userOf(r, run.ID); err == nil && name != "" {
		title = name + " (" + sp.Problem + ", run " + run.ID + ")"
	}
	title += fmt.Sprintf(": seed %d", sp.Seed)
	if sp.Replications > 1 {
		title += fmt.Sprintf(", median and min–max of %d replications", sp.Replications)
	}
	return title
}

// userOf reads a run's name, note and star from the store, if there is one.
func (s *Server) userOf(r *http.Request, id string) (string, string, bool, error) {
	if s.st == nil {
		return "", "", false, fmt.Errorf("no run store")
	}
	return s.st.User(r.Context(), id)
}
