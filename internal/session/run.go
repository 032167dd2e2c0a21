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
	"github.com/fwlab/fwlab/internal/spec"
	runstore "github.com/fwlab/fwlab/internal/store"
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
	// client is the name of the client that created the run ("" none).
	client string
	// instBytes is the memory the instance is counted for (InstanceBytes).
	instBytes int64
	// methods are the traces' methods until the run is launched.
	methods []solver.Method

	// version counts status changes (a trace finished, pause, resume, step,
	// cancel) so that subscribers know when to send a status message.
	version atomic.Uint64
	// holdFast mirrors paused || !slot for the recorders' fast path: a
	// trace stops at its next record when it is set.
	holdFast atomic.Bool

	// Guarded by mu; queued, slot and started change with the manager's
	// lock held too (the manager's lock is taken first).
	mu          sync.Mutex
	paused      bool
	cancelled   bool
	interrupted bool   // live when the manager closed
	reason      string // why the run was cancelled, when not by the user
	storeErr    error  // the store refused the run's writes (storefail.go)
	queued      bool   // waiting in the manager's queue
	slot        bool   // holds a run slot
	started     bool   // the traces' goroutines are launched
	slotTick    uint64 // when it took its run slot (the manager's tick)
	lentTo      string // the run it lent its slot to, while it waits for one again
	running     int    // traces not finished
	pauseTimer  *time.Timer
	pauseEpoch  int
	wake        chan struct{} // closed and replaced when the gate opens
	done        chan struct{} // closed when every trace has finished

	hubMu sync.Mutex                      // serialises changes of subs
	subs  atomic.Pointer[[]*Subscription] // copied on change, read without a lock

	// With a store: the appender of the run's records, and the status last
	// written (guarded by persistMu; final once the run's end is written).
	app *runstore.Appender
	// traceEnded is Claimed.TraceEnded of a run taken from a shared queue
	traceEnded func(trace int, res runstore.TraceResult)
	persistMu  sync.Mutex
	persisted  string
	final      bool
	// A run read from the store (Manager.Get of a run not in memory): its
	// status and user fields as stored.
	disk *diskRun
	// outside is set on a run opened from outside (outside.go).
	outside *outside
}

// diskRun holds what a run read from the store adds to the in-memory fields.
type diskRun struct {
	status     string
	ended      time.Time
	name, note string
	starred    bool
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

// RunStatus returns queued, running, paused, done, cancelled, failed or
// interrupted. A run the user cancelled reports cancelled at once, even
// while its traces are still stopping; a run live when the manager closed
// reports interrupted; a finished run reports failed when any of its traces
// failed. A run waiting for a run slot (never started, or resumed after a
// pause) is queued.
func (r *Run) RunStatus() string {
	if r.disk != nil {
		return r.disk.status
	}
	r.mu.Lock()
	paused, cancelled, running, interrupted, slot := r.paused, r.cancelled, r.running, r.interrupted, r.slot
	storeErr := r.storeErr
	r.mu.Unlock()
	switch {
	case storeErr != nil:
		return StatusFailed
	case interrupted:
		return StatusInterrupted
	case cancelled:
		return StatusCancelled
	case running > 0 && paused:
		return StatusPaused
	case running > 0 && !slot && r.outside == nil:
		return StatusQueued
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
	ID     string   `json:"id"`
	Spec   spec.Run `json:"spec"`
	Status string   `json:"status"`
	// Message says why a run was cancelled when the user did not cancel it
	// (its pause outlived the pause timeout).
	Message string    `json:"message,omitempty"`
	Created time.Time `json:"created"`
	// Records counts the records the server holds, every trace together
	// (a page that shows fewer is catching up).
	Records int `json:"records"`
	// QueuePosition is the run's place in the queue (1: next to start)
	// while it is queued.
	QueuePosition int `json:"queue_position,omitempty"`
	// Waiting says why a run that ran waits in the queue again when it
	// did not pause (it lent its run slot to another client's run).
	Waiting string         `json:"waiting,omitempty"`
	Info    scenarios.Info `json:"info"`
	Traces  []TraceStatus  `json:"traces"`
	// The user's name, note and star of a stored run, and when it ended
	// (omitted while live). A live run's come from the store too (the
	// server fills them in).
	Name    string     `json:"name"`
	Note    string     `json:"note"`
	Starred bool       `json:"starred"`
	Ended   *time.Time `json:"ended,omitempty"`
	// Worker names the worker process that ran a run taken from the queue
	// (a PostgreSQL store; the server fills it in).
	Worker string `json:"worker,omitempty"`
	// WorkerBeat is the heartbeat of the worker that runs a live run (the
	// server fills it in): a page says when it is silent.
	WorkerBeat *runstore.WorkerBeat `json:"worker_beat,omitempty"`
	// HasPanels says that the instance has panels (Info.Panels), also where
	// a lean status (WithoutPanels) leaves them out: a page fetches them
	// on their own (GET /api/runs/{id}/panels).
	HasPanels bool `json:"has_panels,omitempty"`
}

// WithoutPanels returns the status with the instance's panels and the
// traces' Panels left out (HasPanels, the run's and each trace's, says
// which there are): a status, which a stream repeats at every change,
// stays small however large the instance or the estimates are.
func (s Status) WithoutPanels() Status {
	s.HasPanels = s.HasPanels || s.Info.Panels != nil
	s.Info.Panels = nil
	s.Traces = append([]TraceStatus(nil), s.Traces...)
	for i := range s.Traces {
		s.Traces[i].Panels = nil
	}
	return s
}

// Status returns a snapshot of the run's status.
func (r *Run) Status() Status {
	s := Status{ID: r.ID, Spec: r.spec, Status: r.RunStatus(), Created: r.Created, Info: r.info}
	if d := r.disk; d != nil {
		s.Name, s.Note, s.Starred = d.name, d.note, d.starred
		if !d.ended.IsZero() {
			e := d.ended
			s.Ended = &e
		}
	}
	r.mu.Lock()
	s.Message = r.reason
	r.mu.Unlock()
	if s.Status == StatusQueued {
		s.QueuePosition = r.m.QueuePosition(r)
		r.mu.Lock()
		if r.lentTo != "" {
			s.Waiting = "lent its run slot to run " + r.lentTo + " of a client that had none; goes on at the next free slot"
		}
		r.mu.Unlock()
	}
	s.Traces = make([]TraceStatus, len(r.traces))
	for i, t := range r.traces {
		s.Traces[i] = t.TraceStatus()
		s.Records += s.Traces[i].Records
	}
	return s
}

// changed marks a change of the run's status (queued, started, paused,
// resumed, stepped, cancelled, a trace finished): subscribers are told.
func (r *Run) changed() {
	r.version.Add(1)
	r.notify()
	r.m.markDirty(r)
}

// launchLocked starts the traces' goroutines, once (the manager's lock and
// r.mu held).
func (r *Run) launchLocked() {
	if r.started {
		return
	}
	r.started = true
	r.m.wg.Add(len(r.traces))
	for i, t := range r.traces {
		go t.execute(r.methods[i])
	}
	r.methods = nil
}

// armPauseTimerLocked (re)starts the pause timeout (r.mu held).
func (r *Run) armPauseTimerLocked() {
	if r.pauseTimer != nil {
		r.pauseTimer.Stop()
	}
	r.pauseEpoch++
	epoch := r.pauseEpoch
	d := r.m.opts.PauseTimeout
	r.pauseTimer = time.AfterFunc(d, func() {
		r.mu.Lock()
		expired := r.paused && r.pauseEpoch == epoch && r.running > 0
		if expired {
			r.reason = fmt.Sprintf("cancelled: paused for longer than the pause timeout of %v%s", d, r.m.opts.flag("PauseTimeout"))
		}
		r.mu.Unlock()
		if expired {
			r.Cancel()
		}
	})
}

func (r *Run) stopPauseTimerLocked() {
	if r.pauseTimer != nil {
		r.pauseTimer.Stop()
		r.pauseTimer = nil
	}
	r.pauseEpoch++
}

func (r *Run) stopPauseTimer() {
	r.mu.Lock()
	r.stopPauseTimerLocked()
	r.mu.Unlock()
}

// releaseRunSlotLocked gives the run slot back (the manager's lock and r.mu
// held); the caller dispatches the queue.
func (r *Run) releaseRunSlotLocked() {
	if r.slot {
		r.slot = false
		r.m.running--
	}
}

// Cancel stops every trace of the run (a queued run leaves the queue). It
// does nothing to a finished run.
func (r *Run) Cancel() {
	m := r.m
	m.mu.Lock()
	r.mu.Lock()
	if r.running > 0 && !r.cancelled {
		r.cancelled = true
		m.dequeueLocked(r)
		r.stopPauseTimerLocked()
		// The context ends before a run never started is launched, so that
		// its traces stop before their first record.
		r.cancel()
		r.launchLocked()
	}
	r.mu.Unlock()
	m.mu.Unlock()
	r.cancel()
	r.changed()
}

// pauseLocked pauses the run: it leaves the queue or gives its run slot
// back, its traces stop at their next record, and the pause timeout starts
// (the manager's lock and r.mu held; the caller dispatches the queue). A
// queued run never started is launched: its traces stop at their first
// record.
func (r *Run) pauseLocked() {
	r.paused = true
	r.holdFast.Store(true)
	r.m.dequeueLocked(r)
	r.releaseRunSlotLocked()
	r.launchLocked()
	r.armPauseTimerLocked()
}

// Pause stops every trace of the run at its next record and gives the run
// slot back; a run paused for longer than the pause timeout is cancelled.
// A run opened from outside holds no slot and is left as it is.
func (r *Run) Pause() {
	if r.outside != nil {
		return // its records come from outside: nothing to hold
	}
	m := r.m
	m.mu.Lock()
	r.mu.Lock()
	if r.running > 0 && !r.paused && r.ctx.Err() == nil {
		r.pauseLocked()
	}
	r.mu.Unlock()
	m.dispatchLocked()
	m.mu.Unlock()
	r.changed()
}

// Resume lets every trace run freely again once the run has a run slot: it
// joins the queue ahead of the runs never started, and runs at once when a
// slot is free. A paused run reserves only the records it has made, so
// Resume takes the rest of its record budget back first: when that does not
// fit beside the other runs, it fails with ErrBusy (wrapped) and the run
// stays paused.
func (r *Run) Resume() error {
	m := r.m
	m.mu.Lock()
	if err := m.reclaimLocked(r); err != nil {
		m.mu.Unlock()
		return err
	}
	r.mu.Lock()
	if r.paused {
		r.paused = false
		r.stopPauseTimerLocked()
		for _, t := range r.traces {
			t.tokens = 0
			t.waiting = false
			t.stepping = false
		}
		if !r.slot && r.running > 0 && r.ctx.Err() == nil && !r.queued {
			i := 0
			for i < len(m.queue) && m.queue[i].started {
				i++
			}
			m.queue = append(m.queue, nil)
			copy(m.queue[i+1:], m.queue[i:])
			m.queue[i] = r
			r.queued = true
		}
		r.holdFast.Store(!r.slot)
		r.openGateLocked()
	}
	r.mu.Unlock()
	m.dispatchLocked()
	m.mu.Unlock()
	r.changed()
	return nil
}

// reclaimLocked checks that a paused run's remaining records (its budget
// less what it has made) fit in the record and memory budgets again,
// evicting finished runs to make room (m.mu held).
func (m *Manager) reclaimLocked(r *Run) error {
	r.mu.Lock()
	paused := r.paused && r.running > 0 && r.ctx.Err() == nil
	r.mu.Unlock()
	if !paused {
		return nil
	}
	more := r.budget - r.stored()
	if more <= 0 {
		return nil
	}
	if !m.makeRoomLocked(more) {
		return fmt.Errorf("%w: resuming needs room for the run's %d remaining records, and the runs in progress leave too few of the %d records allowed in all%s; cancel one or wait until one finishes",
			ErrBusy, more, m.opts.MaxTotalRecords, m.opts.flag("MaxTotalRecords"))
	}
	if bytes := int64(more) * RecordBytes; !m.makeMemoryLocked(bytes) {
		return fmt.Errorf("%w: resuming needs about %s for the run's %d remaining records, and the runs in progress hold %s of the server's memory budget of %s%s; cancel one or wait until one finishes",
			ErrBusy, mib(bytes), more, mib(m.liveBytesLocked()), mib(m.opts.MaxMemory), m.opts.flag("MaxMemory"))
	}
	return nil
}

// Step lets each trace stopped at the pause emit exactly one more record,
// after which it stops again; steps requested while a trace is taking one
// add up. A trace that has not reached the pause yet (it was running when
// the pause came, or is waiting for a worker slot) stops at its next record,
// so stepping a running run pauses it after one more record from each trace.
// A paused run reserves only the records it has made, so a step first
// checks that one more record per trace fits: when it does not, Step fails
// with ErrBusy (wrapped) and the run stays as it is.
func (r *Run) Step() error {
	if r.outside != nil {
		return fmt.Errorf("run %s: %w: it cannot be stepped", r.ID, ErrNotPausable)
	}
	m := r.m
	m.mu.Lock()
	if err := m.stepRoomLocked(r); err != nil {
		m.mu.Unlock()
		return err
	}
	r.mu.Lock()
	if r.running > 0 && r.ctx.Err() == nil {
		if !r.paused {
			r.pauseLocked()
		} else {
			r.armPauseTimerLocked() // a step is activity: the timeout restarts
		}
		for _, t := range r.traces {
			// Only a trace that has stopped at the pause (or is taking a
			// step) gets a step; the others stop at their next record.
			if t.waiting || t.stepping || t.tokens > 0 {
				t.tokens++
				t.waiting = false
			}
		}
		r.openGateLocked()
	}
	r.mu.Unlock()
	m.dispatchLocked()
	m.mu.Unlock()
	r.changed()
	return nil
}

// stepRoomLocked checks that a paused run's next step (a record per trace)
// fits in the record and memory budgets (m.mu held).
func (m *Manager) stepRoomLocked(r *Run) error {
	r.mu.Lock()
	paused := r.paused && r.running > 0 && r.ctx.Err() == nil
	r.mu.Unlock()
	if !paused {
		return nil
	}
	more := min(len(r.traces), max(r.budget-r.stored(), 0))
	if more == 0 {
		return nil
	}
	if !m.makeRoomLocked(more) {
		return fmt.Errorf("%w: a step adds a record to each of the run's %d traces, and the runs in progress leave too few of the %d records allowed in all%s; cancel one or wait until one finishes",
			ErrBusy, more, m.opts.MaxTotalRecords, m.opts.flag("MaxTotalRecords"))
	}
	if !m.makeMemoryLocked(int64(more) * RecordBytes) {
		return fmt.Errorf("%w: a step adds a record to each of the run's %d traces, and the runs in progress hold %s of the server's memory budget of %s%s; cancel one or wait until one finishes",
			ErrBusy, more, mib(m.liveBytesLocked()), mib(m.opts.MaxMemory), m.opts.flag("MaxMemory"))
	}
	return nil
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

// keep stores the record, hands it to the run store's appender and
// notifies the subscribers: what every record of every run goes through.
func (t *Trace) keep(rec solver.Record) {
	t.mu.Lock()
	t.store.append(&rec)
	t.mu.Unlock()
	if a := t.run.app; a != nil {
		a.Add(t.Index, rec)
	}
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
