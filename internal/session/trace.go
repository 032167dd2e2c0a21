package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/solver"
	runstore "github.com/fwlab/fwlab/internal/store"
)

// Trace is one (algorithm, replication) of a run and its records.
type Trace struct {
	Index       int
	Algo        string
	Replication int
	Seed        int64
	run         *Run

	mu      sync.RWMutex
	store   store
	disk    bool // the records are in the run store only (diskN of them)
	diskN   int
	status  string
	summary *solver.Summary
	// panels and panelsErr are set once, before the status leaves running.
	panels    map[string]any
	panelsErr string
	// diskPanels says that a trace read from the store has panels there
	// (they stay there: Panels reads them when asked).
	diskPanels bool

	// Owned by the trace's goroutine.
	slots    int       // worker slots the method computes on (its pool size)
	holding  bool      // holds its worker slots
	acquired time.Time // when the slot was taken
	count    int

	tokens   int         // single steps granted (guarded by run.mu)
	waiting  bool        // blocked by a pause (guarded by run.mu)
	stepping bool        // took a step and has not stopped again yet (guarded by run.mu)
	evalStep atomic.Bool // the iteration after a step is evaluated (stepRecorder)
}

// Len returns the number of records stored so far.
func (t *Trace) Len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.disk {
		return t.diskN
	}
	return t.store.n
}

// heldBytes returns the memory the trace's records hold in memory
// (measured: store.bytes) and how many records it has.
func (t *Trace) heldBytes() (int64, int) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.disk {
		return 0, t.diskN
	}
	return t.store.bytes, t.store.n
}

// state returns, under one lock, whether the trace's records are on disk
// (and how many) or else a view of them in memory: a view stays readable
// after the run's memory is released, so a reader never sees neither.
func (t *Trace) state() (disk bool, n int, v view) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.disk {
		return true, t.diskN, view{}
	}
	return false, 0, t.store.view()
}

func (t *Trace) view() view {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.store.view()
}

// Records returns a copy of the stored records [from, to) (to clipped to the
// length).
func (t *Trace) Records(from, to int) []solver.Record {
	disk, n, v := t.state()
	if disk {
		to = min(to, n)
		if from < 0 || from >= to {
			return nil
		}
		recs, err := t.run.m.st.Records(context.Background(), t.run.ID, t.Index, from, to)
		if err != nil {
			return nil
		}
		return recs
	}
	to = min(to, v.n)
	if from < 0 || from >= to {
		return nil
	}
	out := make([]solver.Record, to-from)
	var sc scratch
	for i := range out {
		out[i] = v.copyOut(from+i, &sc)
	}
	return out
}

// Each calls fn on the stored records [from, to) (to clipped to the length)
// in order until fn returns false, and returns how many it visited. The
// record passed to fn, with its pointers and Extra map, is reused for the
// next call: fn must not keep it. Each does not hold the trace's lock while
// calling fn.
func (t *Trace) Each(from, to int, fn func(i int, rec *solver.Record) bool) int {
	disk, n, v := t.state()
	if disk {
		return t.eachStored(from, min(to, n), fn)
	}
	return eachView(&v, from, to, fn)
}

// eachView is Each over records held in memory.
func eachView(v *view, from, to int, fn func(i int, rec *solver.Record) bool) int {
	to = min(to, v.n)
	if from < 0 || from >= to {
		return 0
	}
	var rec solver.Record
	var sc scratch
	for i := from; i < to; i++ {
		v.fill(i, &rec, &sc)
		if !fn(i, &rec) {
			return i + 1 - from
		}
	}
	return to - from
}

// ErrIncomplete is returned by Walk when the store holds fewer of a
// trace's records than the trace reports (a damaged store, or a run deleted
// while it was read).
var ErrIncomplete = errors.New("the trace's records are incomplete")

// Walk is Each that says why it stopped before the end: the store's error
// when a read failed, or ErrIncomplete (wrapped) when fewer records than
// asked for could be read. Records in memory always read whole; a walk that
// fn stopped reports no error.
func (t *Trace) Walk(from, to int, fn func(i int, rec *solver.Record) bool) (int, error) {
	disk, n, v := t.state()
	if !disk {
		return eachView(&v, from, to, fn), nil
	}
	to = min(to, n)
	if from < 0 || from >= to {
		return 0, nil
	}
	visited, stopped := 0, false
	err := t.run.m.st.EachRecord(context.Background(), t.run.ID, t.Index, from, to, func(i int, rec *solver.Record) error {
		visited++
		if !fn(i, rec) {
			stopped = true
			return errStop
		}
		return nil
	})
	switch {
	case stopped:
		return visited, nil
	case err != nil:
		return visited, fmt.Errorf("run %s trace %d: %w", t.run.ID, t.Index, err)
	case visited < to-from:
		return visited, fmt.Errorf("run %s trace %d: %w: %d of records %d to %d read", t.run.ID, t.Index, ErrIncomplete, visited, from, to)
	}
	return visited, nil
}

// Status returns running or the final status of the trace's summary.
func (t *Trace) Status() string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.status
}

// TraceStatus returns a snapshot of the trace's status.
func (t *Trace) TraceStatus() TraceStatus {
	t.mu.RLock()
	defer t.mu.RUnlock()
	ts := TraceStatus{Trace: t.Index, Algo: t.Algo, Replication: t.Replication, Seed: t.Seed,
		Status: t.status, Records: t.store.n}
	if t.disk {
		ts.Records = t.diskN
	}
	if t.summary != nil {
		s := *t.summary
		ts.Summary = &s
	}
	ts.Panels, ts.PanelsError, ts.HasPanels = t.panels, t.panelsErr, t.panels != nil || t.diskPanels
	return ts
}

// ErrPanelsTooLarge is returned (wrapped, naming the size and the cap) by
// Panels for panels over the cap it was given.
var ErrPanelsTooLarge = errors.New("the panels are too large to send")

// Panels returns the trace's panels as a JSON object, nil when it has none
// (yet): from memory while the run is held, else read from the run store,
// where a blob over max bytes is refused unread (ErrPanelsTooLarge).
func (t *Trace) Panels(ctx context.Context, max int64) (json.RawMessage, error) {
	t.mu.RLock()
	p, onDisk := t.panels, t.diskPanels
	t.mu.RUnlock()
	if p != nil {
		b, err := json.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("trace %d: encoding its panels: %w", t.Index, err)
		}
		if int64(len(b)) > max {
			return nil, fmt.Errorf("trace %d: panels of %d bytes, over the cap of %d: %w", t.Index, len(b), max, ErrPanelsTooLarge)
		}
		return b, nil
	}
	if !onDisk || t.run.m == nil || t.run.m.st == nil {
		return nil, nil
	}
	b, err := t.run.m.st.TracePanels(ctx, t.run.ID, t.Index, max)
	if errors.Is(err, runstore.ErrTooLarge) {
		return nil, fmt.Errorf("%w: %w", ErrPanelsTooLarge, err)
	}
	return b, err
}

// execute runs the method on the trace's goroutine.
func (t *Trace) execute(meth solver.Method) {
	r := t.run
	var sum solver.Summary
	defer func() {
		if p := recover(); p != nil {
			sum = t.failure(fmt.Sprintf("panic: %v", p))
		}
		t.releaseSlot()
		t.finish(sum)
		r.m.wg.Done()
	}()
	if r.ctx.Err() != nil || !t.acquireSlot(r.ctx) {
		sum = t.stopped() // cancelled while queued, or while waiting for a slot
		return
	}
	res, err := meth.Run(r.ctx, stepRecorder{t})
	if err != nil {
		sum = t.failure(err.Error())
		return
	}
	sum = res.Summary
	t.resultPanels(res.X)
	if sum.Status == "" {
		sum.Status = solver.StatusFailed
		if sum.Message == "" {
			sum.Message = "the method returned no status"
		}
	}
}

// resultPanels computes the panels of the final estimate x, once, when the
// instance offers them (scenarios.ResultPanels). A failure (or a panic) is
// kept as the trace's PanelsError; the trace's own result stands.
func (t *Trace) resultPanels(x []float64) {
	rp, ok := t.run.inst.(scenarios.ResultPanels)
	if !ok || len(x) == 0 {
		return
	}
	panels, err := func() (p map[string]any, err error) {
		defer func() {
			if r := recover(); r != nil {
				p, err = nil, fmt.Errorf("panic: %v", r)
			}
		}()
		return rp.ResultPanels(x)
	}()
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		t.panelsErr = "the final estimate's panels: " + err.Error()
		return
	}
	t.panels = panels
}

// stopped is the summary of a trace cancelled before it started.
func (t *Trace) stopped() solver.Summary {
	s := t.lastSummary()
	s.Status = solver.StatusCancelled
	s.Message = "cancelled before it started"
	return s
}

// failure is the summary of a trace whose method failed or panicked: the
// figures of its last records and the message.
func (t *Trace) failure(msg string) solver.Summary {
	s := t.lastSummary()
	s.Status = solver.StatusFailed
	s.Message = msg
	return s
}

// lastSummary fills a summary from the stored records.
func (t *Trace) lastSummary() solver.Summary {
	v := t.view()
	return v.lastSummary()
}

// finish ends the trace; the run's last trace to finish ends the run: it
// gives back its run slot, stops its pause timeout and frees its instance
// (the records stay).
func (t *Trace) finish(sum solver.Summary) {
	t.run.mu.Lock()
	interrupted, storeErr, reason := t.run.interrupted, t.run.storeErr, t.run.reason
	t.run.mu.Unlock()
	if storeErr != nil && sum.Status == solver.StatusCancelled {
		sum = failedByStore(sum, reason)
	} else if interrupted && sum.Status == solver.StatusCancelled {
		sum.Status = StatusInterrupted
		sum.Message = "interrupted: the server stopped during the run"
	}
	t.mu.Lock()
	t.status = sum.Status
	t.summary = &sum
	t.store.dropSpare()
	t.mu.Unlock()
	r := t.run
	m := r.m
	m.mu.Lock()
	r.mu.Lock()
	r.running--
	last := r.running == 0
	if last {
		r.paused = false
		r.holdFast.Store(false)
		r.releaseRunSlotLocked()
		m.dequeueLocked(r)
		r.stopPauseTimerLocked()
		r.inst = nil
	}
	r.mu.Unlock()
	if last {
		m.dispatchLocked()
		if m.st == nil {
			close(r.done)
		}
	}
	m.mu.Unlock()
	if !last {
		r.endTrace(t)
	}
	if last && m.st != nil {
		// The run's end goes to disk before it reports finished, and it
		// leaves memory before too (when the writes failed, it stays), so
		// that whoever sees it finished reads what the store holds.
		err := r.persistEnd()
		if err == nil && m.opts.Keep > 0 {
			_, _ = m.st.Trim(context.Background(), m.opts.Keep)
		}
		if err != nil {
			m.retryEnd(r)
		}
		m.mu.Lock()
		if err == nil {
			m.releaseLocked(r)
		}
		close(r.done)
		m.mu.Unlock()
	}
	r.changed()
}

// record is the trace's Recorder: it stores the record, notifies the
// subscribers, and then holds the solver while the run is paused.
func (t *Trace) record(rec solver.Record) {
	t.keep(rec)
	if t.run.holdFast.Load() {
		t.gate()
	}
	t.count++
	if t.count&63 == 0 && t.holding && time.Since(t.acquired) > t.run.m.opts.TimeSlice {
		// Give the slot to a waiting trace, if any (the channel queues FIFO).
		t.releaseSlot()
		t.acquireSlot(t.run.ctx)
	}
}

// keep stores the record (handing a sealed chunk to the run store's
// appender) and notifies the subscribers: what every record of every run
// goes through.
func (t *Trace) keep(rec solver.Record) {
	t.mu.Lock()
	if b := t.store.append(&rec); b.N > 0 && t.run.app != nil {
		t.run.app.AddBatch(t.Index, b)
	}
	t.mu.Unlock()
	t.run.notify()
}

// stepRecorder is the trace's Recorder; as a solver.EvalRequester it asks
// the method to evaluate each iteration taken by a single step.
type stepRecorder struct{ t *Trace }

func (s stepRecorder) Record(rec solver.Record) { s.t.record(rec) }

// EvalNext reports (once) that the iteration being computed was let
// through by a step.
func (s stepRecorder) EvalNext() bool { return s.t.evalStep.Load() && s.t.evalStep.Swap(false) }

// gate blocks while the run is paused and the trace has no step token, or
// while the run is not paused but waits for a run slot. Cancellation always
// wins.
func (t *Trace) gate() {
	r := t.run
	r.mu.Lock()
	for {
		if r.ctx.Err() != nil || (!r.paused && r.slot) {
			r.mu.Unlock()
			return
		}
		if r.paused && t.tokens > 0 {
			t.tokens--
			t.stepping = true
			t.evalStep.Store(true) // the stepped iteration shows F and the gap
			r.mu.Unlock()
			return
		}
		wake := r.wake
		t.waiting = true
		t.stepping = false
		r.mu.Unlock()
		t.releaseSlot()
		select {
		case <-wake:
		case <-r.ctx.Done():
		}
		t.acquireSlot(r.ctx)
		r.mu.Lock()
		t.waiting = false
	}
}

// acquireSlot takes the trace's worker slots, one per goroutine its method
// computes on at once (a block method's worker pool); it reports false,
// holding none, if ctx ended first. A trace that needs several slots takes
// them one at a time under the manager's multi lock, so that two such traces
// never each hold a part of what they need.
func (t *Trace) acquireSlot(ctx context.Context) bool {
	if t.holding {
		return true
	}
	m := t.run.m
	n := max(t.slots, 1)
	if n > 1 {
		m.multi.Lock()
		defer m.multi.Unlock()
	}
	for i := 0; i < n; i++ {
		select {
		case m.sem <- struct{}{}:
		case <-ctx.Done():
			for ; i > 0; i-- {
				<-m.sem
			}
			return false
		}
	}
	t.holding = true
	t.acquired = time.Now()
	return true
}

func (t *Trace) releaseSlot() {
	if t.holding {
		for i := 0; i < max(t.slots, 1); i++ {
			<-t.run.m.sem
		}
		t.holding = false
	}
}
