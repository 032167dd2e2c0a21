package server

// Sweeps run their cells through the same queue as every run. A sweep keeps
// at most MaxActive of its cells (the server's run slots) queued or running
// at once, each created in the name of the client that posted the sweep, so
// they count against its cap on runs (MaxClientRuns) like the runs they
// are; when a budget is used up (429 for a run) the sweep waits and tries
// again. The next cell is created as one ends.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/sweep"
)

// sweepRetry is how often a sweep waiting for room, or for its cells,
// looks again.
const sweepRetry = 100 * time.Millisecond

type sweeper struct {
	s      *Server
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	live    map[string]context.CancelFunc // running sweeps by id
	clients map[string]int                // running sweeps by client

	// outcomes caches the summaries of finished runs by run id and gap
	// target.
	cacheMu sync.Mutex
	cache   map[outcomeKey]cellSummary
}

type outcomeKey struct {
	run string
	gap float64
}

func newSweeper(s *Server) *sweeper {
	ctx, cancel := context.WithCancel(context.Background())
	sw := &sweeper{s: s, ctx: ctx, cancel: cancel, live: map[string]context.CancelFunc{}, clients: map[string]int{}, cache: map[outcomeKey]cellSummary{}}
	// Sweeps left running by a process that ended cannot go on.
	if s.st.Owner() {
		for off := 0; ; off += store.MaxLimit {
			list, total, err := s.st.ListSweeps(ctx, off, store.MaxLimit)
			if err != nil {
				break
			}
			for _, x := range list {
				if store.Live(x.Status) {
					_ = s.st.SetSweepStatus(ctx, x.ID, store.StatusInterrupted)
				}
			}
			if off+len(list) >= total || len(list) == 0 {
				break
			}
		}
	}
	return sw
}

// stop cancels every sweep (they stop creating cells and end interrupted).
func (sw *sweeper) stop() { sw.cancel() }

func (sw *sweeper) wait() { sw.wg.Wait() }

func (s *Server) handleSweepCreate(w http.ResponseWriter, r *http.Request) {
	if s.refuseDegraded(w) {
		return
	}
	var doc sweep.Doc
	if !s.decodeBody(w, r, &doc) {
		return
	}
	cells, err := doc.CellsChecked(s.checkCellLimits)
	if err != nil {
		var fe *spec.FieldError
		if errors.As(err, &fe) {
			writeError(w, http.StatusBadRequest, fe.Field, fe.Msg)
		} else {
			writeError(w, http.StatusBadRequest, "", err.Error())
		}
		return
	}
	if s.opts.SubmitSweep != nil {
		s.createQueuedSweep(w, r, &doc)
		return
	}
	client := clientAddr(r)
	axes, _ := json.Marshal(doc.Axes)
	rec := &store.Sweep{Base: doc.Base, Axes: axes, Status: store.StatusQueued, Name: doc.Name, Note: doc.Note}
	for _, c := range cells {
		rec.Cells = append(rec.Cells, store.Cell{Index: c.Index, Values: c.ValuesJSON(doc.Axes)})
	}
	sw := s.sweeps
	sw.mu.Lock()
	if sw.ctx.Err() != nil {
		sw.mu.Unlock()
		writeError(w, http.StatusServiceUnavailable, "", "the server is closing")
		return
	}
	if n := sw.clients[client]; n >= s.opts.MaxSweeps {
		sw.mu.Unlock()
		writeError(w, http.StatusTooManyRequests, "", fmt.Sprintf("this client has %d sweeps queued or running, at most %d are allowed%s: wait for one to end or cancel one", n, s.opts.MaxSweeps, s.opts.flag("MaxSweeps")))
		return
	}
	id, err := s.st.PutSweep(r.Context(), rec)
	if err != nil {
		sw.mu.Unlock()
		s.storeError(w, err)
		return
	}
	ctx, cancel := context.WithCancel(sw.ctx)
	sw.live[id] = cancel
	sw.clients[client]++
	sw.wg.Add(1)
	sw.mu.Unlock()
	go sw.run(ctx, id, cells, client)
	w.Header().Set("Location", "/api/sweeps/"+id)
	writeJSON(w, http.StatusCreated, map[string]string{"id": id})
}

// run creates the sweep's cells as room allows and waits for them.
func (sw *sweeper) run(ctx context.Context, id string, cells []sweep.Cell, client string) {
	defer sw.wg.Done()
	defer func() {
		sw.mu.Lock()
		if c := sw.live[id]; c != nil {
			c()
		}
		delete(sw.live, id)
		if sw.clients[client]--; sw.clients[client] <= 0 {
			delete(sw.clients, client)
		}
		sw.mu.Unlock()
	}()
	st, mgr := sw.s.st, sw.s.mgr
	bg := context.Background()
	_ = st.SetSweepStatus(bg, id, store.StatusRunning)
	limit := mgr.Options().MaxActive
	var inflight []*session.Run
	next, failed := 0, false
	tick := time.NewTicker(sweepRetry)
	defer tick.Stop()
	for next < len(cells) || len(inflight) > 0 {
		for next < len(cells) && len(inflight) < limit && ctx.Err() == nil {
			run, err := mgr.CreateFor(ctx, cells[next].Spec, client)
			if errors.Is(err, session.ErrBusy) {
				break // try again later
			}
			if err != nil {
				if ctx.Err() != nil {
					break
				}
				sw.s.log.Warn("sweep cell", "sweep", id, "cell", next, "err", err)
				failed = true
				next++
				continue
			}
			_ = st.SetCellRun(bg, id, next, run.ID)
			inflight = append(inflight, run)
			next++
		}
		select {
		case <-ctx.Done():
			status := store.StatusCancelled
			if sw.ctx.Err() != nil {
				status = store.StatusInterrupted // the server is stopping: it interrupts the runs
			} else {
				for _, run := range inflight {
					run.Cancel()
				}
			}
			_ = st.SetSweepStatus(bg, id, status)
			return
		case <-tick.C:
		}
		kept := inflight[:0]
		for _, run := range inflight {
			if !run.Finished() {
				kept = append(kept, run)
			}
		}
		inflight = kept
	}
	status := store.StatusDone
	if failed {
		status = store.StatusFailed
	}
	_ = st.SetSweepStatus(bg, id, status)
}

// cellSummary is a cell's outcome: algorithm 0's medians, and every
// algorithm's.
type cellSummary struct {
	sweep.Summary
	PerAlgo map[string]sweep.Summary `json:"per_algo"`
	traces  []traceOutcome           // every trace's, in the run's order
}

// traceOutcome is one trace's outcome (a row of the cells' export).
type traceOutcome struct {
	algo        string
	replication int
	seed        int64
	status      string
	sweep.Outcome
}

// summarize computes a finished run's outcomes for the gap target; it has
// none (nil) for a run still live, which on a shared store may be one read
// from the store while it runs on a worker: only an ended run's outcomes
// are computed and kept.
func (sw *sweeper) summarize(run *session.Run, gap float64) *cellSummary {
	if !run.Finished() || store.Live(run.RunStatus()) {
		return nil
	}
	key := outcomeKey{run.ID, gap}
	sw.cacheMu.Lock()
	if c, ok := sw.cache[key]; ok {
		sw.cacheMu.Unlock()
		return &c
	}
	sw.cacheMu.Unlock()
	by := map[string][]sweep.Outcome{}
	c := cellSummary{PerAlgo: map[string]sweep.Summary{}}
	for _, t := range run.Traces() {
		o := sweep.TraceOutcome(func(fn func(*solver.Record) bool) {
			t.Each(0, t.Len(), func(_ int, r *solver.Record) bool { return fn(r) })
		}, gap)
		by[t.Algo] = append(by[t.Algo], o)
		c.traces = append(c.traces, traceOutcome{algo: t.Algo, replication: t.Replication, seed: t.Seed, status: t.Status(), Outcome: o})
	}
	for a, os := range by {
		c.PerAlgo[a] = sweep.Summarize(os)
	}
	// algorithm 0's: its traces come first (their label may add to the
	// algorithm's name, "ssfw-as + slack collapse")
	if trs := run.Traces(); len(trs) > 0 {
		c.Summary = c.PerAlgo[trs[0].Algo]
	}
	sw.cacheMu.Lock()
	if len(sw.cache) > 10_000 {
		clear(sw.cache)
	}
	sw.cache[key] = c
	sw.cacheMu.Unlock()
	return &c
}

type sweepCell struct {
	Values  json.RawMessage `json:"values"`
	Run     string          `json:"run"`
	Status  string          `json:"status"`
	Summary *cellSummary    `json:"summary"`
	// the worker that runs a live cell's run, and its heartbeat (workers.go)
	Worker     string            `json:"worker,omitempty"`
	WorkerBeat *store.WorkerBeat `json:"worker_beat,omitempty"`
}

func (s *Server) handleSweepGet(w http.ResponseWriter, r *http.Request) {
	x, err := s.st.GetSweep(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		s.storeError(w, err)
		return
	}
	gap, ok := gapParam(w, r, x)
	if !ok {
		return
	}
	cells := s.sweepCells(x, gap)
	s.attachCellWorkers(r.Context(), cells)
	writeJSON(w, http.StatusOK, map[string]any{
		"id": x.ID, "status": x.Status, "base": x.Base, "axes": x.Axes, "created": x.Created,
		"name": x.Name, "note": x.Note, "starred": x.Starred, "problem": x.Base.Problem,
		"labels": sweep.LabelsOf(x.Axes, &x.Base), "default_outcome": defaultOutcome(x),
		"gap_target": gap, "cells": cells,
	})
}

// gapParam reads ?gap (the gap target of the outcomes): the base spec's
// gap when it states one, else 1e-6.
func gapParam(w http.ResponseWriter, r *http.Request, x *store.Sweep) (float64, bool) {
	gap := x.Base.Gap
	if gap <= 0 {
		gap = 1e-6
	}
	if v := r.URL.Query().Get("gap"); v != "" {
		g, err := strconv.ParseFloat(v, 64)
		if err != nil || !(g > 0) || math.IsInf(g, 0) {
			writeError(w, http.StatusBadRequest, "gap", "must be a positive number, got "+quote(v))
			return 0, false
		}
		gap = g
	}
	return gap, true
}

// defaultOutcome is what a sweep's page shows first: the passes to reach
// the gap its base spec states, else the final gap.
func defaultOutcome(x *store.Sweep) string {
	if x.Base.Gap > 0 {
		return "passes_to_gap"
	}
	return "final_gap"
}

// sweepCells is every cell of a sweep with its run's status and, once the
// run has finished, its outcomes for the gap target.
func (s *Server) sweepCells(x *store.Sweep, gap float64) []sweepCell {
	cells := make([]sweepCell, 0, len(x.Cells))
	for _, c := range x.Cells {
		sc := sweepCell{Values: c.Values, Run: c.RunID, Status: store.StatusQueued}
		if c.RunID != "" {
			if run, ok := s.mgr.Get(c.RunID); ok {
				sc.Status = run.RunStatus()
				sc.Summary = s.sweeps.summarize(run, gap)
			} else {
				sc.Status = "deleted"
			}
		} else if x.Status == store.StatusDone {
			sc.Status = "deleted" // a done sweep ran every cell: its run was deleted since
		} else if !store.Live(x.Status) {
			sc.Status = x.Status // never created (the sweep ended first), or deleted since
		}
		cells = append(cells, sc)
	}
	return cells
}

func (s *Server) handleSweepList(w http.ResponseWriter, r *http.Request) {
	offset, aerr := queryInt(r, "offset", 0, math.MaxInt32)
	if aerr == nil {
		var limit int
		limit, aerr = queryInt(r, "limit", store.DefaultLimit, store.MaxLimit)
		if aerr == nil {
			s.listSweeps(w, r, offset, max(limit, 1))
			return
		}
	}
	writeError(w, http.StatusBadRequest, aerr.Field, aerr.Error)
}

func (s *Server) listSweeps(w http.ResponseWriter, r *http.Request, offset, limit int) {
	list, total, err := s.st.ListSweeps(r.Context(), offset, limit)
	if err != nil {
		s.storeError(w, err)
		return
	}
	type row struct {
		ID         string          `json:"id"`
		Status     string          `json:"status"`
		Created    time.Time       `json:"created"`
		Axes       json.RawMessage `json:"axes"`
		Labels     []string        `json:"labels"`
		Name       string          `json:"name"`
		Note       string          `json:"note"`
		Starred    bool            `json:"starred"`
		Problem    string          `json:"problem"`
		Algorithms []string        `json:"algorithms"`
		CellsTotal int             `json:"cells_total"`
		CellsDone  int             `json:"cells_done"`
	}
	rows := make([]row, 0, len(list))
	for _, x := range list {
		full, err := s.st.GetSweep(r.Context(), x.ID)
		if err != nil {
			continue // deleted meanwhile
		}
		rw := row{ID: x.ID, Status: x.Status, Created: x.Created, Axes: x.Axes, CellsTotal: len(full.Cells),
			Labels: sweep.LabelsOf(x.Axes, &x.Base), Name: x.Name, Note: x.Note, Starred: x.Starred, Problem: x.Base.Problem}
		for _, a := range x.Base.Algorithms {
			rw.Algorithms = append(rw.Algorithms, a.Algo)
		}
		rw.CellsDone = s.cellsDone(r.Context(), full)
		rows = append(rows, rw)
	}
	writeJSON(w, http.StatusOK, map[string]any{"sweeps": rows, "total": total, "offset": offset, "limit": limit})
}

// cellsDone counts a sweep's cells whose run has ended: a run not held in
// memory has ended unless the store is shared (PostgreSQL), where it may
// run on a worker, and its live runs are counted in the store.
func (s *Server) cellsDone(ctx context.Context, x *store.Sweep) int {
	done := 0
	for _, c := range x.Cells {
		if c.RunID == "" {
			continue
		}
		if run, live := s.mgr.Live(c.RunID); s.st.Owner() && live && !run.Finished() {
			continue
		}
		done++
	}
	if s.st.Owner() {
		return done
	}
	for _, status := range []string{store.StatusQueued, store.StatusRunning, store.StatusPaused} {
		_, n, err := s.st.List(ctx, store.Filter{Sweep: x.ID, Status: status, Limit: 1})
		if err == nil {
			done -= n
		}
	}
	return max(done, 0)
}

// handleSweepCancel cancels a sweep: its cells not yet created never are,
// and its queued or running cells are cancelled.
func (s *Server) handleSweepCancel(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	x, err := s.st.GetSweep(r.Context(), id)
	if err != nil {
		s.storeError(w, err)
		return
	}
	sw := s.sweeps
	sw.mu.Lock()
	cancel := sw.live[id]
	sw.mu.Unlock()
	if cancel == nil {
		if ok, err := s.cancelRemoteSweep(r.Context(), x); err != nil {
			s.storeError(w, err)
			return
		} else if ok {
			x.Status = store.StatusCancelled // its cells on workers (remotecancel.go)
		}
		writeJSON(w, http.StatusAccepted, map[string]string{"status": x.Status})
		return
	}
	cancel()
	// The sweep's goroutine writes its end; wait briefly for it.
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		sw.mu.Lock()
		_, running := sw.live[id]
		sw.mu.Unlock()
		if !running {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	status := store.StatusCancelled
	if y, err := s.st.GetSweep(r.Context(), id); err == nil {
		status = y.Status
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"status": status})
}
