package session

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

// Run is one run: several traces (algorithm × replication) on one instance.
type Run struct {
	ID      string
	Created time.Time

	spec   spec.Run
	info   scenarios.Info
	inst   scenarios.Instance
	traces []*Trace
	ctx    context.Context
	cancel context.CancelFunc
	m      *Manager
	budget int // (iters + 1) × traces

	// version counts status changes (a trace finished, pause, resume, step,
	// cancel) so that subscribers know when to send a status message.
	version atomic.Uint64
	// pausedFast mirrors paused for the recorders' fast path.
	pausedFast atomic.Bool

	mu        sync.Mutex
	paused    bool
	cancelled bool
	running   int           // traces not finished
	wake      chan struct{} // closed and replaced when the gate opens
	done      chan struct{} // closed when every trace has finished

	hubMu sync.Mutex                      // serialises changes of subs
	subs  atomic.Pointer[[]*Subscription] // copied on change, read without a lock
}

// Spec returns the normalised run spec.
func (r *Run) Spec() spec.Run { return r.spec }

// Info returns the instance's description.
func (r *Run) Info() scenarios.Info { return r.info }

// Traces returns the run's traces, in spec order (algorithm-major, then
// replication).
func (r *Run) Traces() []*Trace { return r.traces }

// Done is closed when every trace has finished.
func (r *Run) Done() <-chan struct{} { return r.done }

// stored counts the records of every trace.
func (r *Run) stored() int {
	n := 0
	for _, t := range r.traces {
		n += t.Len()
	}
	return n
}

// Finished reports whether every trace has finished.
func (r *Run) Finished() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// Version returns the status version (see Subscription).
func (r *Run) Version() uint64 { return r.version.Load() }

// RunStatus returns running, paused, done, cancelled or failed. A run the
// user cancelled reports cancelled at once, even while its traces are still
// stopping; a finished run reports failed when any of its traces failed.
func (r *Run) RunStatus() string {
	r.mu.Lock()
	paused, cancelled, running := r.paused, r.cancelled, r.running
	r.mu.Unlock()
	switch {
	case cancelled:
		return StatusCancelled
	case running > 0 && paused:
		return StatusPaused
	case running > 0:
		return StatusRunning
	}
	for _, t := range r.traces {
		if t.Status() == solver.StatusFailed {
			return StatusFailed
		}
	}
	return StatusDone
}

// TraceStatus describes one trace.
type TraceStatus struct {
	Trace       int             `json:"trace"`
	Algo        string          `json:"algo"`
	Replication int             `json:"replication"`
	Seed        int64           `json:"seed"`
	Status      string          `json:"status"`
	Records     int             `json:"records"`
	Summary     *solver.Summary `json:"summary"`
	// Panels holds the problem-specific views of the trace's final
	// estimate (scenarios.ResultPanels), set once the trace has finished
	// with an estimate on an instance that offers them.
	Panels map[string]any `json:"panels,omitempty"`
	// HasPanels says that the trace has Panels, also where a lean status
	// (Status.WithoutPanels) leaves them out.
	HasPanels bool `json:"has_panels,omitempty"`
	// PanelsError says why a finished trace has no panels although its
	// instance offers them.
	PanelsError string `json:"panels_error,omitempty"`
}

// Status is the run's status as the API reports it.
type Status struct {
	ID      string         `json:"id"`
	Spec    spec.Run       `json:"spec"`
	Status  string         `json:"status"`
	Created time.Time      `json:"created"`
	Info    scenarios.Info `json:"info"`
	Traces  []TraceStatus  `json:"traces"`
}

// WithoutPanels returns the status with the traces' Panels left out (their
// HasPanels stays): the status messages of a stream, which repeat the whole
// status at every change, stay small however large the estimates are.
func (s Status) WithoutPanels() Status {
	s.Traces = append([]TraceStatus(nil), s.Traces...)
	for i := range s.Traces {
		s.Traces[i].Panels = nil
	}
	return s
}

// Status returns a snapshot of the run's status.
func (r *Run) Status() Status {
	s := Status{ID: r.ID, Spec: r.spec, Status: r.RunStatus(), Created: r.Created, Info: r.info}
	s.Traces = make([]TraceStatus, len(r.traces))
	for i, t := range r.traces {
		s.Traces[i] = t.TraceStatus()
	}
	return s
}

// Cancel stops every trace of the run. It does nothing to a finished run.
func (r *Run) Cancel() {
	r.mu.Lock()
	if r.running > 0 && !r.cancelled {
		r.cancelled = true
		r.version.Add(1)
	}
	r.mu.Unlock()
	r.cancel()
	r.notify()
}

// Pause stops every trace of the run at its next record.
func (r *Run) Pause() {
	r.mu.Lock()
	if r.running > 0 && !r.paused {
		r.paused = true
		r.pausedFast.Store(true)
		r.version.Add(1)
	}
	r.mu.Unlock()
	r.notify()
}

// Resume lets every trace run freely again.
func (r *Run) Resume() {
	r.mu.Lock()
	if r.paused {
		r.paused = false
		r.pausedFast.Store(false)
		for _, t := range r.traces {
			t.tokens = 0
			t.waiting = false
			t.stepping = false
		}
		r.openGateLocked()
		r.version.Add(1)
	}
	r.mu.Unlock()
	r.notify()
}

// Step lets each trace stopped at the pause emit exactly one more record,
// after which it stops again; steps requested while a trace is taking one
// add up. A trace that has not reached the pause yet (it was running when
// the pause came, or is waiting for a worker slot) stops at its next record,
// so stepping a running run pauses it after one more record from each trace.
func (r *Run) Step() {
	r.mu.Lock()
	if r.running > 0 {
		r.paused = true
		r.pausedFast.Store(true)
		for _, t := range r.traces {
			// Only a trace that has stopped at the pause (or is taking a
			// step) gets a step; the others stop at their next record.
			if t.waiting || t.stepping || t.tokens > 0 {
				t.tokens++
				t.waiting = false
			}
		}
		r.openGateLocked()
		r.version.Add(1)
	}
	r.mu.Unlock()
	r.notify()
}

// Parked reports whether the run is paused and every unfinished trace is
// waiting at the pause (so that no record will arrive until a step, resume or
// cancel).
func (r *Run) Parked() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.paused || r.running == 0 {
		return false
	}
	for _, t := range r.traces {
		if !t.waiting && t.Status() == StatusRunning {
			return false
		}
	}
	return true
}

func (r *Run) openGateLocked() {
	close(r.wake)
	r.wake = make(chan struct{})
}

// Subscription delivers change notifications of one run: C receives a value
// (coalesced; never blocking the sender) whenever records were added or the
// status changed.
type Subscription struct {
	C   <-chan struct{}
	c   chan struct{}
	run *Run
}

// Subscribe registers a subscriber; call Close when done.
func (r *Run) Subscribe() *Subscription {
	c := make(chan struct{}, 1)
	s := &Subscription{C: c, c: c, run: r}
	r.hubMu.Lock()
	var next []*Subscription
	if old := r.subs.Load(); old != nil {
		next = append(next, *old...)
	}
	next = append(next, s)
	r.subs.Store(&next)
	r.hubMu.Unlock()
	return s
}

// Close unregisters the subscriber.
func (s *Subscription) Close() {
	r := s.run
	r.hubMu.Lock()
	var next []*Subscription
	if old := r.subs.Load(); old != nil {
		for _, o := range *old {
			if o != s {
				next = append(next, o)
			}
		}
	}
	r.subs.Store(&next)
	r.hubMu.Unlock()
}

// notify wakes every subscriber without blocking. It runs once per record,
// so it takes no lock and skips a subscriber already notified.
func (r *Run) notify() {
	subs := r.subs.Load()
	if subs == nil {
		return
	}
	for _, s := range *subs {
		if len(s.c) > 0 {
			continue
		}
		select {
		case s.c <- struct{}{}:
		default:
		}
	}
}

// Trace is one (algorithm, replication) of a run and its records.
type Trace struct {
	Index       int
	Algo        string
	Replication int
	Seed        int64
	run         *Run

	mu      sync.RWMutex
	store   store
	status  string
	summary *solver.Summary
	// panels and panelsErr are set once, before the status leaves running.
	panels    map[string]any
	panelsErr string

	// Owned by the trace's goroutine.
	slots    int       // worker slots the method computes on (its pool size)
	holding  bool      // holds its worker slots
	acquired time.Time // when the slot was taken
	count    int

	tokens   int  // single steps granted (guarded by run.mu)
	waiting  bool // blocked by a pause (guarded by run.mu)
	stepping bool // took a step and has not stopped again yet (guarded by run.mu)
}

// Len returns the number of records stored so far.
func (t *Trace) Len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.store.n
}

func (t *Trace) view() view {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.store.view()
}

// Records returns a copy of the stored records [from, to) (to clipped to the
// length).
func (t *Trace) Records(from, to int) []solver.Record {
	v := t.view()
	to = min(to, v.n)
	if from < 0 || from >= to {
		return nil
	}
	out := make([]solver.Record, to-from)
	for i := range out {
		v.fill(from+i, &out[i], nil)
	}
	return out
}

// Each calls fn on the stored records [from, to) (to clipped to the length)
// in order until fn returns false, and returns how many it visited. The
// record passed to fn, with its pointers and Extra map, is reused for the
// next call: fn must not keep it. Each does not hold the trace's lock while
// calling fn.
func (t *Trace) Each(from, to int, fn func(i int, rec *solver.Record) bool) int {
	v := t.view()
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
	if t.summary != nil {
		s := *t.summary
		ts.Summary = &s
	}
	ts.Panels, ts.PanelsError, ts.HasPanels = t.panels, t.panelsErr, t.panels != nil
	return ts
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
	if !t.acquireSlot(r.ctx) {
		sum = t.stopped()
		return
	}
	res, err := meth.Run(r.ctx, solver.RecorderFunc(t.record))
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
	var s solver.Summary
	if v.n == 0 {
		return s
	}
	last := v.row(v.n - 1)
	s.Iters, s.Passes, s.Time = int(last.k), last.passes, last.time
	for i := v.n - 1; i >= 0; i-- {
		if r := v.row(i); r.flags&hasObjective != 0 {
			s.Objective = r.objective
			if r.flags&hasGap != 0 {
				s.Gap = r.gap
			}
			break
		}
	}
	return s
}

func (t *Trace) finish(sum solver.Summary) {
	t.mu.Lock()
	t.status = sum.Status
	t.summary = &sum
	t.mu.Unlock()
	r := t.run
	r.mu.Lock()
	r.running--
	last := r.running == 0
	if last {
		r.paused = false
		r.pausedFast.Store(false)
	}
	r.version.Add(1)
	r.mu.Unlock()
	if last {
		close(r.done)
	}
	r.notify()
}

// record is the trace's Recorder: it stores the record, notifies the
// subscribers, and then holds the solver while the run is paused.
func (t *Trace) record(rec solver.Record) {
	t.mu.Lock()
	t.store.append(&rec)
	t.mu.Unlock()
	t.run.notify()
	if t.run.pausedFast.Load() {
		t.gate()
	}
	t.count++
	if t.count&63 == 0 && t.holding && time.Since(t.acquired) > t.run.m.opts.TimeSlice {
		// Give the slot to a waiting trace, if any (the channel queues FIFO).
		t.releaseSlot()
		t.acquireSlot(t.run.ctx)
	}
}

// gate blocks while the run is paused and the trace has no step token.
// Cancellation always wins.
func (t *Trace) gate() {
	r := t.run
	r.mu.Lock()
	for {
		if !r.paused || r.ctx.Err() != nil {
			r.mu.Unlock()
			return
		}
		if t.tokens > 0 {
			t.tokens--
			t.stepping = true
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
