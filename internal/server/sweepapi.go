package server

// The sweep routes beyond create, get, list and cancel (sweeps.go): a
// sweep's name, note and star (PATCH), deleting sweeps, its cells as CSV or
// JSON, the sweep cell a run was made for, and the per-run limits every
// cell is checked against when the sweep is posted.
//
//	PATCH  /api/sweeps/{id}          {"name"?, "note"?, "starred"?} → 200 {"id", "name", "note", "starred"}
//	POST   /api/sweeps/delete        {"ids": [...], "runs"?: bool} → 200 {"deleted", "runs_deleted"};
//	                                 409 naming ids[i] for a sweep still live (cancel it first)
//	GET    /api/sweeps/{id}/cells    ?format=json (default) | csv, ?gap=G: one row per cell,
//	                                 algorithm and replication, the axis values as columns
//	GET    /api/runs/{id}/sweep      the sweep cell the run was made for ({"sweep": null} when none;
//	                                 404 for an unknown run)

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/sweep"
)

// DefaultMaxSweeps is the sweeps one client may have queued or running.
const DefaultMaxSweeps = 4

func (s *Server) sweepRoutes(r chi.Router) {
	r.With(s.ownNamesMiddleware).Post("/sweeps", s.handleSweepCreate)
	r.Get("/sweeps", s.handleSweepList)
	r.Post("/sweeps/delete", s.handleSweepDelete)
	r.Get("/sweeps/{id}", s.handleSweepGet)
	r.Patch("/sweeps/{id}", s.handleSweepEdit)
	r.Get("/sweeps/{id}/cells", s.handleSweepCells)
	r.Delete("/sweeps/{id}", s.handleSweepCancel)
	r.Get("/runs/{id}/sweep", s.handleRunSweep)
}

// checkCellLimits refuses a cell's spec that the run manager would refuse
// for its size (the per-run limits of CreateFor: records, worker slots,
// memory) or its data files (outside the data folders, missing, too
// large), so that a sweep is refused when posted rather than failing cell
// after cell.
func (s *Server) checkCellLimits(sp spec.Run) error {
	o := s.mgr.Options()
	ntr := int64(len(sp.Algorithms)) * int64(sp.Replications)
	recs := int64(sp.Iters+1) * ntr
	if recs > int64(o.MaxRecords) {
		return spec.Errorf("iters", "(iters + 1) × algorithms × replications must be at most %d, got %d × %d × %d",
			o.MaxRecords, sp.Iters+1, len(sp.Algorithms), sp.Replications)
	}
	for i, a := range sp.Algorithms {
		if a.Workers > o.Workers {
			return spec.Errorf(fmt.Sprintf("algorithms[%d].workers", i), "must be at most the server's %d worker slots, got %d", o.Workers, a.Workers)
		}
	}
	if b := recs * session.RecordBytes; b > o.MaxMemory {
		flag := ""
		if f := o.Flags["MaxMemory"]; f != "" {
			flag = " (" + f + ")"
		}
		return spec.Errorf("iters", "its %d records need about %d MiB, over the server's memory budget of %d MiB%s",
			recs, b>>20, o.MaxMemory>>20, flag)
	}
	return s.mgr.CheckPaths(sp)
}

func (s *Server) handleSweepEdit(w http.ResponseWriter, r *http.Request) {
	var e struct {
		Name    *string `json:"name"`
		Note    *string `json:"note"`
		Starred *bool   `json:"starred"`
	}
	if !s.decodeBody(w, r, &e) {
		return
	}
	id := chi.URLParam(r, "id")
	if err := s.st.UpdateSweep(r.Context(), id, store.Edit{Name: e.Name, Note: e.Note, Starred: e.Starred}); err != nil {
		s.storeError(w, err)
		return
	}
	x, err := s.st.GetSweep(r.Context(), id)
	if err != nil {
		s.storeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": x.ID, "name": x.Name, "note": x.Note, "starred": x.Starred})
}

// handleSweepDelete deletes sweeps (not live ones) and, with "runs", the
// runs of their cells.
func (s *Server) handleSweepDelete(w http.ResponseWriter, r *http.Request) {
	var body struct {
		IDs  []string `json:"ids"`
		Runs bool     `json:"runs"`
	}
	if !s.decodeBody(w, r, &body) {
		return
	}
	if len(body.IDs) == 0 || len(body.IDs) > store.MaxLimit {
		writeError(w, http.StatusBadRequest, "ids", fmt.Sprintf("must list 1 to %d sweep ids, got %d", store.MaxLimit, len(body.IDs)))
		return
	}
	var runs []string
	for i, id := range body.IDs {
		x, err := s.st.GetSweep(r.Context(), id)
		if errors.Is(err, store.ErrNotFound) {
			writeError(w, http.StatusNotFound, fmt.Sprintf("ids[%d]", i), "no sweep "+quote(id))
			return
		}
		if err != nil {
			s.storeError(w, err)
			return
		}
		s.sweeps.mu.Lock()
		_, live := s.sweeps.live[id]
		s.sweeps.mu.Unlock()
		if live {
			writeError(w, http.StatusConflict, fmt.Sprintf("ids[%d]", i), "sweep "+quote(id)+" is still running: cancel it first")
			return
		}
		for _, c := range x.Cells {
			if c.RunID != "" {
				runs = append(runs, c.RunID)
			}
		}
	}
	runsDeleted := 0
	if body.Runs && len(runs) > 0 {
		for _, id := range runs {
			if _, live := s.unfinished(r.Context(), id); live {
				writeError(w, http.StatusConflict, "runs", "run "+quote(id)+" of the sweep is still live: cancel it first")
				return
			}
		}
		named := s.uploadsNamed(r.Context(), runs)
		n, err := s.st.Delete(r.Context(), runs...)
		if err != nil {
			s.storeError(w, err)
			return
		}
		runsDeleted = n
		s.releaseUploads(r.Context(), named) // the files only these runs named
	}
	deleted := 0
	for _, id := range body.IDs {
		if err := s.st.DeleteSweep(r.Context(), id); err == nil {
			deleted++
		}
	}
	writeJSON(w, http.StatusOK, map[string]int{"deleted": deleted, "runs_deleted": runsDeleted})
}

// cellRow is one row of a sweep's cells export: a trace of a cell's run.
type cellRow struct {
	Cell         int                        `json:"cell"`
	Values       map[string]json.RawMessage `json:"values"`
	Run          string                     `json:"run"`
	Status       string                     `json:"status"`
	Algorithm    string                     `json:"algorithm"`
	Replication  *int                       `json:"replication"`
	Seed         *int64                     `json:"seed"`
	FinalObj     *float64                   `json:"final_objective"`
	FinalGap     *float64                   `json:"final_gap"`
	PassesToGap  *float64                   `json:"passes_to_gap"`
	SecondsToGap *float64                   `json:"seconds_to_gap"`
	// Reached says whether the trace reached the gap target; one that did
	// not is censored at PassesAtEnd (where it ended).
	Reached     *bool    `json:"reached"`
	PassesAtEnd *float64 `json:"passes_at_end"`
}

func finiteOrNil(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// cellRows flattens a sweep's cells into export rows: one per trace of a
// finished cell's run, one (without algorithm) for a cell with none.
func (s *Server) cellRows(x *store.Sweep, gap float64) []cellRow {
	cells := s.sweepCells(x, gap)
	var rows []cellRow
	for i, c := range cells {
		var vals map[string]json.RawMessage
		_ = json.Unmarshal(c.Values, &vals)
		base := cellRow{Cell: i, Values: vals, Run: c.Run, Status: c.Status}
		if c.Summary == nil || len(c.Summary.traces) == 0 {
			rows = append(rows, base)
			continue
		}
		for _, t := range c.Summary.traces {
			rw := base
			rep, seed := t.replication, t.seed
			rw.Algorithm, rw.Replication, rw.Seed, rw.Status = t.algo, &rep, &seed, t.status
			rw.FinalObj, rw.FinalGap = finiteOrNil(t.Objective), finiteOrNil(t.Gap)
			rw.PassesToGap, rw.SecondsToGap = finiteOrNil(t.PassesToGap), finiteOrNil(t.SecondsToGap)
			reached := t.Reached()
			rw.Reached, rw.PassesAtEnd = &reached, finiteOrNil(t.PassesAtEnd)
			rows = append(rows, rw)
		}
	}
	return rows
}

func (s *Server) handleSweepCells(w http.ResponseWriter, r *http.Request) {
	format := r.URL.Query().Get("format")
	if format == "" {
		format = "json"
	}
	if format != "json" && format != "csv" {
		writeError(w, http.StatusBadRequest, "format", "must be json or csv, got "+quote(format))
		return
	}
	x, err := s.st.GetSweep(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		s.storeError(w, err)
		return
	}
	gap, ok := gapParam(w, r, x)
	if !ok {
		return
	}
	var axes []sweep.Axis
	_ = json.Unmarshal(x.Axes, &axes)
	rows := s.cellRows(x, gap)
	if format == "json" {
		params := make([]string, len(axes))
		for i, a := range axes {
			params[i] = a.Param
		}
		writeJSON(w, http.StatusOK, map[string]any{"sweep": x.ID, "gap_target": gap, "axes": params,
			"labels": sweep.LabelsOf(x.Axes, &x.Base), "rows": rows})
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="fwlab-sweep-%s.csv"`, x.ID))
	cw := csv.NewWriter(w)
	head := []string{"cell"}
	for _, a := range axes {
		head = append(head, a.Param)
	}
	head = append(head, "run", "status", "algorithm", "replication", "seed", "final_objective", "final_gap",
		"passes_to_gap(gap="+strconv.FormatFloat(gap, 'g', -1, 64)+")", "seconds_to_gap", "reached", "passes_at_end")
	_ = cw.Write(sweep.SafeCSV(head))
	num := func(p *float64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatFloat(*p, 'g', -1, 64)
	}
	for _, rw := range rows {
		rec := []string{strconv.Itoa(rw.Cell)}
		for _, a := range axes {
			rec = append(rec, sweep.ValueText(rw.Values[a.Param]))
		}
		rep, seed := "", ""
		if rw.Replication != nil {
			rep, seed = strconv.Itoa(*rw.Replication), strconv.FormatInt(*rw.Seed, 10)
		}
		reached := ""
		if rw.Reached != nil {
			reached = strconv.FormatBool(*rw.Reached)
		}
		rec = append(rec, rw.Run, rw.Status, rw.Algorithm, rep, seed, num(rw.FinalObj), num(rw.FinalGap), num(rw.PassesToGap), num(rw.SecondsToGap), reached, num(rw.PassesAtEnd))
		_ = cw.Write(sweep.SafeCSV(rec))
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		s.log.Warn("sweep cells export", "sweep", x.ID, "err", err)
	}
}

// handleRunSweep answers the sweep cell a run was made for, with the
// sweep's axis labels: {"sweep", "sweep_name", "index", "values", "labels",
// "axes", "text", "cells"}; {"sweep": null} for a run of no sweep.
func (s *Server) handleRunSweep(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	cells, err := s.st.CellsOf(r.Context(), id)
	if err != nil {
		s.storeError(w, err)
		return
	}
	c, ok := cells[id]
	if !ok {
		// a run of no sweep (every run page asks): an answer, not an error
		if _, err := s.st.Get(r.Context(), id); err != nil {
			s.storeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"sweep": nil})
		return
	}
	x, err := s.st.GetSweep(r.Context(), c.Sweep)
	if err != nil {
		s.storeError(w, err)
		return
	}
	var axes []sweep.Axis
	_ = json.Unmarshal(x.Axes, &axes)
	params := make([]string, len(axes))
	for i, a := range axes {
		params[i] = a.Param
	}
	writeJSON(w, http.StatusOK, map[string]any{"sweep": c.Sweep, "sweep_name": c.SweepName, "index": c.Index,
		"values": c.Values, "axes": params, "text": sweep.Describe(c.Values, x.Axes, &x.Base), "labels": sweep.LabelsOf(x.Axes, &x.Base), "cells": len(x.Cells)})
}

// SweepRef is the sweep cell a run of the history was made for.
type SweepRef struct {
	ID     string          `json:"id"`
	Name   string          `json:"name"`
	Index  int             `json:"index"`
	Values json.RawMessage `json:"values"`
	Text   string          `json:"text"` // the values in words (sweep.Describe)
}

// attachSweeps fills in the sweep of every history row that is a cell.
func (s *Server) attachSweeps(r *http.Request, rows []RunRow) {
	ids := make([]string, len(rows))
	for i, rw := range rows {
		ids[i] = rw.ID
	}
	cells, err := s.st.CellsOf(r.Context(), ids...)
	if err != nil {
		s.log.Warn("history: the sweeps of runs", "err", err)
		return
	}
	sweeps := map[string]*store.Sweep{}
	for i := range rows {
		c, ok := cells[rows[i].ID]
		if !ok {
			continue
		}
		x, seen := sweeps[c.Sweep]
		if !seen {
			x, _ = s.st.GetSweep(r.Context(), c.Sweep)
			sweeps[c.Sweep] = x
		}
		ref := &SweepRef{ID: c.Sweep, Name: c.SweepName, Index: c.Index, Values: c.Values, Text: string(c.Values)}
		if x != nil {
			ref.Text = sweep.Describe(c.Values, x.Axes, &x.Base)
		}
		rows[i].Sweep = ref
	}
}
