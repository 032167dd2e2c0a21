package session

import (
	"context"
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

// Ending reports whether every trace of the run has ended while the run is
// not finished yet: its status is final, and its end is being written to
// the store (Done is closed once it is).
func (r *Run) Ending() bool {
	r.mu.Lock()
	ended := r.running == 0
	r.mu.Unlock()
	return ended && !r.Finished()
}

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
