package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/fwlab/fwlab/internal/bundle"
	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
)

// DefaultMaxImport bounds the body of POST /api/runs/import.
const DefaultMaxImport = 512 << 20

// MaxDeleteIDs bounds the ids of one POST /api/runs/delete.
const MaxDeleteIDs = 1000

// RunRow is one run of the history (GET /api/runs).
type RunRow struct {
	ID         string         `json:"id"`
	Name       string         `json:"name"`
	Note       string         `json:"note"`
	Starred    bool           `json:"starred"`
	Status     string         `json:"status"`
	Problem    string         `json:"problem"`
	Algorithms []string       `json:"algorithms"`
	Created    time.Time      `json:"created"`
	Ended      *time.Time     `json:"ended,omitempty"`
	Spec       spec.Run       `json:"spec"`
	Params     map[string]any `json:"params"`
	Instance   RowInstance    `json:"instance"`
	Final      []RowFinal     `json:"final"`
	Sweep      *SweepRef      `json:"sweep,omitempty"` // the sweep cell it was made for (sweepapi.go)
	// Progress is a live run's way towards its limits (omitted once it
	// has ended).
	Progress *RowProgress `json:"progress,omitempty"`
	// Verified is the run's latest verification here (GET /api/runs only).
	Verified *VerificationRow `json:"verified,omitempty"`
	// Worker names the worker process that ran the run (a PostgreSQL
	// store's runs taken from the queue; workers.go).
	Worker string `json:"worker,omitempty"`
	// WorkerBeat is the heartbeat of the worker that runs a live run
	// (workers.go).
	WorkerBeat *store.WorkerBeat `json:"worker_beat,omitempty"`
	// Outside marks a run opened from outside (live.go): History shows a
	// badge.
	Outside bool `json:"outside,omitempty"`
}

// RowProgress is how far a live run is: the mean over its traces of the
// fraction of the first limit each will reach (iterations or effective
// passes), and the seconds left from the run's progress over wall time
// (walleta.go; null while measuring). web/static/js/progress.js computes
// the same on the run page.
type RowProgress struct {
	Fraction float64  `json:"fraction"`
	ETA      *float64 `json:"eta_s"`
}

// traceProgress is one trace's state for runProgress: its last record
// (nil: none yet) and whether it has ended.
type traceProgress struct {
	last  *solver.Record
	ended bool
}

// runProgress is a run's progress fraction from its limits and its traces'
// last records: a trace's fraction is k / iters, or passes / passes limit
// when that is nearer, 1 when it has ended; the run's is their mean.
func runProgress(sp spec.Run, traces []traceProgress) float64 {
	if len(traces) == 0 {
		return 0
	}
	iters := sp.Iters
	if iters <= 0 {
		iters = spec.DefaultIters
	}
	var sum float64
	for _, t := range traces {
		f := 0.0
		switch {
		case t.ended:
			f = 1
		case t.last != nil:
			f = float64(t.last.K) / float64(iters)
			if sp.Passes > 0 && t.last.Passes > 0 {
				f = math.Max(f, t.last.Passes/sp.Passes)
			}
			f = math.Min(1, math.Max(0, f))
		}
		sum += f
	}
	return sum / float64(len(traces))
}

// progress is the History progress of run id at fraction f now, its time
// left measured on the wall clock.
func (s *Server) progress(id string, f float64) *RowProgress {
	return &RowProgress{Fraction: f, ETA: s.wall.timeLeft(id, time.Now(), f)}
}

// liveProgress is the progress of a run live in this server.
func (s *Server) liveProgress(sp spec.Run, live *session.Run) *RowProgress {
	var ts []traceProgress
	for _, t := range live.Traces() {
		tp := traceProgress{ended: t.Status() != "running" && t.Status() != "paused" && t.Status() != "queued" && t.Status() != ""}
		if n := t.Len(); n > 0 {
			if recs := t.Records(n-1, n); len(recs) == 1 {
				tp.last = &recs[0]
			}
		}
		ts = append(ts, tp)
	}
	return s.progress(live.ID, runProgress(sp, ts))
}

// storedProgress is the progress of a live run that this server does not
// run (one on a worker process): from the traces' statuses and last
// records in the store, as the worker wrote them. nil when the store
// cannot be read (the row goes without).
func (s *Server) storedProgress(ctx context.Context, r *store.Run) *RowProgress {
	var ts []traceProgress
	for i, t := range r.Traces {
		tp := traceProgress{ended: t.Status != "running" && t.Status != "paused" && t.Status != "queued" && t.Status != ""}
		if t.Records > 0 {
			recs, err := s.st.Records(ctx, r.ID, i, t.Records-1, t.Records)
			if err != nil {
				s.log.Warn("reading a run's progress", "id", r.ID, "trace", i, "err", err)
				return nil
			}
			if len(recs) == 1 {
				tp.last = &recs[0]
			}
		}
		ts = append(ts, tp)
	}
	return s.progress(r.ID, runProgress(r.Spec, ts))
}

// RowInstance is a run's instance summary.
type RowInstance struct {
	Dim     int      `json:"dim"`
	Samples int      `json:"samples"`
	Blocks  int      `json:"blocks"`
	FStar   *float64 `json:"fstar"`
}

// RowFinal is where one trace ended (objective and gap null when never
// evaluated, or while the trace runs).
type RowFinal struct {
	Algo        string   `json:"algo"`
	Replication int      `json:"replication"`
	Objective   *float64 `json:"objective"`
	Gap         *float64 `json:"gap"`
	Status      string   `json:"status"`
}

func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// runRow describes a stored run; a run live in this server reports its
// live status.
func (s *Server) runRow(r *store.Run) RunRow {
	row := RunRow{ID: r.ID, Name: r.Name, Note: r.Note, Starred: r.Starred, Status: r.Status, Outside: r.Outside || r.Spec.Outside,
		Problem: r.Spec.Problem, Created: r.Created, Spec: r.Spec,
		Instance:   RowInstance{Dim: r.Instance.Dim, Samples: r.Instance.Samples, Blocks: r.Instance.Blocks, FStar: r.Instance.FStar},
		Algorithms: []string{}, Final: []RowFinal{},
		Params: map[string]any{"replications": r.Spec.Replications, "iters": r.Spec.Iters, "seed": r.Spec.Seed},
	}
	if !r.Ended.IsZero() {
		e := r.Ended
		row.Ended = &e
	}
	for k, v := range r.Spec.Params {
		row.Params[k] = v
	}
	row.Algorithms = algorithmNames(r.Spec, r.Traces)
	live, _ := s.mgr.Live(r.ID)
	if live != nil {
		row.Status = live.RunStatus()
		if row.Status == "running" || row.Status == "paused" || row.Status == "queued" {
			row.Progress = s.liveProgress(r.Spec, live)
		}
	}
	for i, t := range r.Traces {
		f := RowFinal{Algo: t.Algo, Replication: t.Replication, Status: t.Status}
		if live != nil && i < len(live.Traces()) {
			f.Status = live.Traces()[i].Status()
		}
		if t.Summary != nil {
			f.Objective, f.Gap = finite(t.Summary.Objective), finite(t.Summary.Gap)
		}
		row.Final = append(row.Final, f)
	}
	return row
}

// queryInt reads a non-negative integer query parameter (def when absent).
func queryInt(r *http.Request, name string, def, max int) (int, *apiError) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > max {
		return 0, &apiError{Field: name, Error: fmt.Sprintf("must be an integer from 0 to %d, got %s", max, quote(v))}
	}
	return n, nil
}

// handleList answers GET of the History list: a page of runs by offset or
// by cursor, with the list's total, the store's disk use and the cursors
// of the pages on either side.
func (s *Server) handleList(w http.ResponseWriter, r *http.Request) {
	f, ok := s.listFilter(w, r)
	if !ok {
		return
	}
	page, err := s.st.ListPage(r.Context(), f)
	if err != nil {
		s.storeError(w, err)
		return
	}
	runs, total := page.Runs, page.Total
	disk, err := s.st.DiskUsage(r.Context())
	if err != nil {
		s.storeError(w, err)
		return
	}
	rows, err := s.listRows(r, runs)
	if err != nil {
		s.storeError(w, err)
		return
	}
	offset := pageOffset(f, page, total, len(rows))
	var prev, next *string
	if page.Prev != nil {
		prev = new(page.Prev.String())
	}
	if page.Next != nil {
		next = new(page.Next.String())
	}
	writeJSON(w, http.StatusOK, map[string]any{"runs": rows, "total": total, "offset": offset, "limit": f.Limit, "disk_bytes": disk, "prev": prev, "next": next})
}

// listFilter reads the History list's filter and page from the request's
// query; on bad input it writes the error naming the field and returns
// false.
func (s *Server) listFilter(w http.ResponseWriter, r *http.Request) (store.Filter, bool) {
	q := r.URL.Query()
	f := store.Filter{Problem: q.Get("problem"), Algorithm: q.Get("algo"), Status: q.Get("status"), Text: q.Get("q"), Sweep: q.Get("sweep")}
	if f.Status != "" && !knownStatus(f.Status) {
		writeError(w, http.StatusBadRequest, "status", "must be one of queued, running, paused, done, failed, cancelled, interrupted, got "+quote(f.Status))
		return f, false
	}
	var aerr *apiError
	if f.Offset, aerr = queryInt(r, "offset", 0, math.MaxInt32); aerr != nil {
		writeError(w, http.StatusBadRequest, aerr.Field, aerr.Error)
		return f, false
	}
	if f.Limit, aerr = queryInt(r, "limit", store.DefaultLimit, store.MaxLimit); aerr != nil {
		writeError(w, http.StatusBadRequest, aerr.Field, aerr.Error)
		return f, false
	}
	if f.Limit == 0 {
		f.Limit = store.DefaultLimit
	}
	// a page by cursor: after or before a run's place (a page's next and
	// prev), or the last page
	for _, c := range []struct {
		name string
		to   **store.Cursor
	}{{"after", &f.After}, {"before", &f.Before}} {
		if v, ok := q[c.name]; ok {
			cur, err := store.ParseCursor(c.name, v[0])
			if err != nil {
				s.storeError(w, err)
				return f, false
			}
			*c.to = cur
		}
	}
	if v := q.Get("last"); v != "" {
		last, err := strconv.ParseBool(v)
		if err != nil {
			writeError(w, http.StatusBadRequest, "last", "must be true or false, got "+quote(v))
			return f, false
		}
		f.Last = last
	}
	return f, true
}

// listRows are the History rows of a page's runs: each with its progress
// (read from the store for a run on a worker), its last verification, its
// sweep and its worker.
func (s *Server) listRows(r *http.Request, runs []*store.Run) ([]RunRow, error) {
	ids := make([]string, len(runs))
	for i, run := range runs {
		ids[i] = run.ID
	}
	last, err := s.st.LastVerifications(r.Context(), ids)
	if err != nil {
		return nil, err
	}
	rows := make([]RunRow, 0, len(runs))
	for _, run := range runs {
		row := s.runRow(run)
		if row.Progress == nil && (row.Status == "running" || row.Status == "paused" || row.Status == "queued") {
			row.Progress = s.storedProgress(r.Context(), run) // a run on a worker
		}
		if v, ok := last[run.ID]; ok {
			vr := verificationRow(v)
			row.Verified = &vr
		}
		rows = append(rows, row)
	}
	s.attachSweeps(r, rows)
	if err := s.attachWorkers(r.Context(), rows); err != nil {
		return nil, err
	}
	return rows, nil
}

// pageOffset is the place of a page of n rows among total when it is
// known: a page by cursor tells it only at the list's ends.
func pageOffset(f store.Filter, page *store.Page, total, n int) *int {
	switch {
	case f.Last:
		return new(max(total-n, 0))
	case f.After == nil && f.Before == nil:
		return new(f.Offset)
	case page.Prev == nil && n > 0:
		return new(0)
	case page.Next == nil && n > 0:
		return new(max(total-n, 0))
	}
	return nil
}

func knownStatus(st string) bool {
	for _, k := range store.Statuses {
		if st == k {
			return true
		}
	}
	return false
}

// storeError answers a store failure: 404 for an unknown id, 400 for a
// field error, else 500.
func (s *Server) storeError(w http.ResponseWriter, err error) {
	var fe *spec.FieldError
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, "id", err.Error())
	case errors.As(err, &fe):
		writeError(w, http.StatusBadRequest, fe.Field, fe.Msg)
	case errors.Is(err, context.DeadlineExceeded):
		writeError(w, http.StatusGatewayTimeout, "", err.Error())
	default:
		s.log.Error("run store", "err", err)
		writeError(w, http.StatusInternalServerError, "", "the run store failed: "+err.Error())
	}
}

// decodeBody reads one JSON object with known fields only (at most
// MaxBody bytes) into v.
func (s *Server) decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, "", fmt.Sprintf("the body must be at most %d bytes", s.opts.MaxBody))
		} else {
			writeError(w, http.StatusBadRequest, "", "reading the request body: "+err.Error())
		}
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		ae := jsonError(err)
		writeError(w, http.StatusBadRequest, ae.Field, ae.Error)
		return false
	}
	if _, err := dec.Token(); err != io.EOF {
		writeError(w, http.StatusBadRequest, "", "the body must hold one JSON object, found more after it")
		return false
	}
	return true
}

// handleEdit changes a run's name, note or star.
func (s *Server) handleEdit(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Name    *string `json:"name"`
		Note    *string `json:"note"`
		Starred *bool   `json:"starred"`
	}
	if !s.decodeBody(w, r, &body) {
		return
	}
	id := chi.URLParam(r, "id")
	if err := s.st.Update(r.Context(), id, store.Edit{Name: body.Name, Note: body.Note, Starred: body.Starred}); err != nil {
		s.storeError(w, err)
		return
	}
	run, err := s.st.Get(r.Context(), id)
	if err != nil {
		s.storeError(w, err)
		return
	}
	run.Instance.Panels = nil
	writeJSON(w, http.StatusOK, s.runRow(run))
}

// EndingWait bounds how long deleting a run waits for a run whose traces
// have all ended to write its end: it shows its final status meanwhile.
const EndingWait = 10 * time.Second

// unfinished returns run id when it is live in this server and not
// finished, after waiting (EndingWait at most, or until ctx ends) for a run
// that has ended and is writing its end.
func (s *Server) unfinished(ctx context.Context, id string) (*session.Run, bool) {
	run, ok := s.mgr.Live(id)
	if !ok {
		return nil, false
	}
	if run.Ending() {
		t := time.NewTimer(EndingWait)
		select {
		case <-run.Done():
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	return run, !run.Finished()
}

// handleDeleteMany deletes stored runs; a run still live in this server is
// refused (409 naming it): cancel it first. A run that has ended and is
// writing its end is waited for (EndingWait at most).
func (s *Server) handleDeleteMany(w http.ResponseWriter, r *http.Request) {
	var body struct {
		IDs []string `json:"ids"`
	}
	if !s.decodeBody(w, r, &body) {
		return
	}
	if len(body.IDs) == 0 || len(body.IDs) > MaxDeleteIDs {
		writeError(w, http.StatusBadRequest, "ids", fmt.Sprintf("must list 1 to %d run ids, got %d", MaxDeleteIDs, len(body.IDs)))
		return
	}
	for i, id := range body.IDs {
		if !store.ValidID(id) {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("ids[%d]", i), "is not a run id: "+quote(id))
			return
		}
		if run, live := s.unfinished(r.Context(), id); live {
			msg := fmt.Sprintf("run %s is %s: cancel it (DELETE /api/runs/%s) before deleting it", id, run.RunStatus(), id)
			if run.Ending() {
				msg = fmt.Sprintf("run %s has ended and is still writing its end to the store after %s: try again", id, EndingWait)
			}
			writeError(w, http.StatusConflict, fmt.Sprintf("ids[%d]", i), msg)
			return
		}
	}
	named := s.uploadsNamed(r.Context(), body.IDs)
	n, err := s.st.Delete(r.Context(), body.IDs...)
	if err == nil && n > 0 {
		s.releaseUploads(r.Context(), named) // the files only these runs named
	}
	if err != nil {
		s.storeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]int{"deleted": n})
}

// handleBundle writes a run as a bundle, its records read from the store as
// they go out (a live run: what has reached the store so far); a read that
// fails midway aborts the connection.
func (s *Server) handleBundle(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	if run, ok := s.mgr.Live(id); ok {
		_ = run.FlushStore(r.Context())
	}
	if _, err := s.st.Get(r.Context(), id); err != nil {
		s.storeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="fwlab-%s.json"`, id))
	w.WriteHeader(http.StatusOK)
	pw := &progressWriter{w: w, rc: http.NewResponseController(w), d: s.opts.WriteTimeout}
	if err := bundle.WriteStored(r.Context(), pw, s.st, id); err != nil {
		if r.Context().Err() != nil {
			return // the client went away
		}
		// A bundle is served whole or not at all: a read that failed
		// midway drops the connection (the client sees an error, not a
		// cut JSON document that ends cleanly).
		s.abort("bundle export", id, err)
	}
}

// statusWithUser is a run's status with the user's fields from the store
// (a stored run has them already).
func (s *Server) statusWithUser(ctx context.Context, run *session.Run) session.Status {
	st := run.Status()
	if _, live := s.mgr.Live(run.ID); live {
		if name, note, starred, err := s.st.User(ctx, run.ID); err == nil {
			st.Name, st.Note, st.Starred = name, note, starred
		}
	}
	return s.served(ctx, st)
}

// algorithmNames names each algorithm of a run as the traces table does:
// its first trace's name ("bc-ssfw-as + slack collapse" for a variant that
// departs from the paper, scenarios.TraceLabel), else the algorithm's.
func algorithmNames(sp spec.Run, traces []store.Trace) []string {
	reps := max(sp.Replications, 1)
	out := make([]string, 0, len(sp.Algorithms))
	for i, a := range sp.Algorithms {
		name := a.Algo
		if j := i * reps; j < len(traces) && (traces[j].Algo == a.Algo || strings.HasPrefix(traces[j].Algo, a.Algo+store.VariantSep)) {
			name = traces[j].Algo
		}
		out = append(out, name)
	}
	return out
}
