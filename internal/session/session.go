// Package session runs fwlab's runs for the dashboard: it validates a run
// spec, builds the problem instance once, starts one goroutine per
// (algorithm, replication), stores every record of every trace (the
// complete, authoritative trace of the run) and notifies subscribers of new
// records without ever blocking a solver. It also implements a queue of
// runs (round-robin across clients), pause, resume, single step and cancel,
// and bounds the resources runs may take.
//
// A run's life: queued (waiting for a run slot) → running → done, failed or
// cancelled; a paused run holds no run slot and waits for a resume, a step or
// its pause timeout; a run that was live when the manager closed is
// interrupted. Every status change goes through Run.changed, and every
// record through Trace.keep (a solver's by its recorder, Trace.record; a run
// opened from outside's by AppendOutside, outside.go).
//
// Limits (all configurable through Options; the defaults are the constants
// below):
//   - at most MaxActive runs run at once (run slots); the others wait in a
//     queue of at most MaxQueued runs (status queued), taken round-robin
//     across clients: the next run is the first queued run of the client
//     whose last run started longest ago (a client's 21st run never delays
//     another client's first), first come first served within a client. A
//     paused run gives its slot back and takes one again (through the
//     queue, ahead of the runs never started) when resumed; it is cancelled
//     after PauseTimeout. While every slot is held and a queued run's
//     client holds none, the client holding the most slots (two or more)
//     lends one: its run that has held its slot longest stops at its next
//     record and waits at the head of the queue, saying so, and goes on at
//     the next free slot (lendLocked), so that a client's first run starts
//     at once however long another client's runs are;
//   - a request abandoned before its run is built creates nothing: the
//     request's context reaches the build, and a run whose context ended
//     by the time it is built (timeout or client gone) is dropped;
//   - one client (its address, as the server names it) may have at most
//     MaxClientRuns runs queued, running or paused;
//   - without a store, at most MaxStored runs are kept; when a new run
//     would exceed it, the oldest finished run is evicted (its id then
//     reports as evicted). With a store, a finished run leaves memory once
//     it is on disk and is read back from there;
//   - a run's record budget, (iters + 1) × algorithms × replications (every
//     method also reports its starting point), is at most
//     MaxRecords, since every record is kept in memory (in the run store's
//     compact codec, some tens of bytes each);
//   - the records held by all stored runs (the budgets of unfinished runs,
//     the actual counts of finished and paused ones: a paused run reserves
//     only the records it has made, and Resume fails with ErrBusy when the
//     rest of its budget no longer fits) stay within MaxTotalRecords, and
//     the memory of the unfinished runs' instances plus every run's records
//     stays within MaxMemory: older finished runs are evicted to make room,
//     and a new run that would not fit beside the unfinished ones fails with
//     ErrBusy (ErrTooLarge when it alone exceeds MaxMemory). A finished run
//     frees its instance and keeps only its records;
//   - at most Workers solver goroutines execute at once (GOMAXPROCS by
//     default); the others wait for a slot. A trace takes one slot per
//     goroutine its method computes on: a block method's pool is the spec's
//     workers (1 when not given, at most Workers, and never more than the
//     blocks an iteration updates). A trace gives its slots back every
//     TimeSlice so that every trace of a run progresses together, and while
//     it is paused. Results do not depend on the scheduling: every trace is
//     deterministic given its seed.
//
// With a store (Options.Store), runs get the store's ids (random, never
// reused), stream their records to it in batches while they run, write
// their status as it changes and their results when they end; Get finds a
// finished run in the store. Options.Keep trims the stored runs.
//
// Record.Time and Summary.Time measure the algorithm's own work: methods
// leave out the time spent inside the Recorder, which is where the session
// holds a paused trace or one waiting for a worker slot.
package session

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	runstore "github.com/fwlab/fwlab/internal/store"
)

// Default limits.
const (
	DefaultMaxActive  = 4
	DefaultMaxQueued  = 256
	DefaultMaxStored  = 32
	DefaultMaxRecords = 4_000_000
	// DefaultMaxTotalRecords is about 1–2 GB of records.
	DefaultMaxTotalRecords = 10_000_000
	DefaultMaxMemory       = 2 << 30
	DefaultMaxClientRuns   = 20
	DefaultPauseTimeout    = 30 * time.Minute
	DefaultTimeSlice       = 20 * time.Millisecond
)

// RecordBytes is the memory the MaxMemory budget reserves for each record
// a run may still make. A record made is counted for what it really holds,
// measured (store.go): some tens of bytes once its chunk is sealed in the
// run store's codec (about 40 for a trace without Extra values, 60–80 for a
// teaching trace with a dozen), so the reservation also covers the garbage
// collector's headroom over what is live.
const RecordBytes = 128

// Run statuses.
const (
	StatusQueued      = "queued"
	StatusRunning     = "running"
	StatusPaused      = "paused"
	StatusDone        = "done"
	StatusCancelled   = "cancelled"
	StatusFailed      = "failed"
	StatusInterrupted = "interrupted"
)

// ErrBusy is returned by Create when a budget shared by all runs is used
// up (the queue, the records or the memory of the runs held, a client's
// runs); the message names the budget.
var ErrBusy = errors.New("too many runs")

// ErrTooLarge is returned by Create when the run alone exceeds the memory
// budget.
var ErrTooLarge = errors.New("run too large")

// Options configure a Manager. Zero fields take the defaults.
type Options struct {
	MaxActive int // runs running at once (run slots)
	MaxQueued int // runs waiting for a run slot
	// MaxClientRuns bounds the runs one client has queued, running or
	// paused (runs created without a client name are not counted).
	MaxClientRuns int
	// MaxMemory bounds, in bytes, the instances of unfinished runs plus the
	// records of every run held in memory (what they hold, measured, and
	// RecordBytes for each record an unfinished run may still make).
	MaxMemory int64
	// PauseTimeout cancels a run paused for longer.
	PauseTimeout time.Duration
	// Flags names the command-line flag of each limit (by the Options
	// field's name, e.g. "MaxMemory": "-mem"), for the error messages.
	Flags      map[string]string
	MaxStored  int // runs kept (finished ones are evicted oldest first); at least MaxActive
	MaxRecords int // iters × algorithms × replications per run
	// MaxTotalRecords bounds the records of all stored runs (at least MaxRecords).
	MaxTotalRecords int
	Workers         int           // solver goroutines executing at once (0: GOMAXPROCS)
	TimeSlice       time.Duration // a solver goroutine yields its slot after this long
	// DataDir, when set, is where relative data-file parameters (kind Path)
	// are looked up; a path given by the user must stay inside it or
	// UploadDir (see resolvePaths).
	DataDir string
	// UploadDir, when set, is the directory of uploaded data files: an
	// absolute path inside it is accepted as well as one inside DataDir.
	// Without either, a run may read no data file.
	UploadDir string
	// MaxFile bounds the size of a data file (default DefaultMaxFile).
	MaxFile int64
	// Store, when set, keeps every run (see the package documentation's
	// "With a store"): ids come from it, records stream to it, and a
	// finished run leaves memory once it is on disk. The caller closes it
	// after the manager. Without one, runs live in memory only, with ids
	// r1, r2, … and the MaxStored eviction.
	Store runstore.Backend
	// Keep, with a Store, trims the stored runs to the Keep newest unstarred
	// ones (starred runs are never trimmed) whenever a run ends; 0 keeps all.
	Keep int
	// OutsideIdle ends a run opened from outside failed when no batch came
	// for this long (default DefaultOutsideIdle; outside.go).
	OutsideIdle time.Duration
}

func (o Options) withDefaults() Options {
	if o.MaxActive <= 0 {
		o.MaxActive = DefaultMaxActive
	}
	if o.MaxQueued <= 0 {
		o.MaxQueued = DefaultMaxQueued
	}
	if o.MaxClientRuns <= 0 {
		o.MaxClientRuns = DefaultMaxClientRuns
	}
	if o.MaxMemory <= 0 {
		o.MaxMemory = DefaultMaxMemory
	}
	if o.PauseTimeout <= 0 {
		o.PauseTimeout = DefaultPauseTimeout
	}
	if o.MaxStored <= 0 {
		o.MaxStored = DefaultMaxStored
	}
	if o.MaxStored < o.MaxActive {
		o.MaxStored = o.MaxActive
	}
	if o.MaxRecords <= 0 {
		o.MaxRecords = DefaultMaxRecords
	}
	if o.MaxTotalRecords <= 0 {
		o.MaxTotalRecords = DefaultMaxTotalRecords
	}
	if o.MaxTotalRecords < o.MaxRecords {
		o.MaxTotalRecords = o.MaxRecords
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.TimeSlice <= 0 {
		o.TimeSlice = DefaultTimeSlice
	}
	if o.OutsideIdle <= 0 {
		o.OutsideIdle = DefaultOutsideIdle
	}
	return o
}

// flag names the command-line flag of an Options field, for messages.
func (o Options) flag(field string) string {
	if f := o.Flags[field]; f != "" {
		return " (" + f + ")"
	}
	return ""
}

// Manager owns the runs.
type Manager struct {
	opts Options
	sem  chan struct{} // worker slots
	// builds bounds the instances built at once (MaxActive): a build may
	// take as much memory as the instance, before its size is known.
	builds chan struct{}
	// multi serialises traces taking several slots (see acquireSlot).
	multi sync.Mutex
	wg    sync.WaitGroup

	mu        sync.Mutex
	runs      map[string]*Run
	order     []*Run            // creation order
	queue     []*Run            // runs waiting for a run slot, in arrival order (see nextLocked)
	served    map[string]uint64 // client → tick of its last run started from the queue
	tick      uint64
	running   int   // runs holding a run slot
	next      int   // last id number handed out
	pending   int   // runs being built
	reserved  int   // record budgets of the runs being built
	reservedB int64 // their record bytes

	givingBack atomic.Int64 // runs left since the last FreeOSMemory began (giveBack)
	closed     bool
	baseCtx    context.Context
	shutdown   context.CancelFunc

	st runstore.Backend // nil: runs live in memory only
	// The status writer (with a store): runs whose status changed wait in
	// dirty until it writes them.
	dirtyMu   sync.Mutex
	dirty     map[*Run]struct{}
	kick      chan struct{}
	writerEnd chan struct{}
}

// NewManager returns a manager with the given limits.
func NewManager(o Options) *Manager {
	o = o.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{
		opts:     o,
		sem:      make(chan struct{}, o.Workers),
		builds:   make(chan struct{}, o.MaxActive),
		runs:     map[string]*Run{},
		served:   map[string]uint64{},
		baseCtx:  ctx,
		shutdown: cancel,
		st:       o.Store,
	}
	if m.st != nil {
		m.dirty = map[*Run]struct{}{}
		m.kick = make(chan struct{}, 1)
		m.writerEnd = make(chan struct{})
		go m.statusWriter()
		m.startOrphanEnder()
	}
	return m
}

// Store returns the manager's store (nil when it has none).
func (m *Manager) Store() runstore.Backend { return m.st }

// Options returns the manager's effective limits.
func (m *Manager) Options() Options { return m.opts }

// Get returns the run with the given id: a live one, or (with a store) a
// stored one, read from the store (its records are read as they are asked
// for).
func (m *Manager) Get(id string) (*Run, bool) {
	m.mu.Lock()
	r, ok := m.runs[id]
	m.mu.Unlock()
	if ok || m.st == nil || !runstore.ValidID(id) {
		return r, ok
	}
	r, err := m.loadStored(context.Background(), id)
	if err != nil {
		return nil, false
	}
	return r, true
}

// Live returns the run with the given id if it is held in memory (live, or
// finished but not yet released).
func (m *Manager) Live(id string) (*Run, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.runs[id]
	return r, ok
}

// Evicted reports whether id names a run this manager created and has since
// evicted to respect MaxStored or MaxTotalRecords.
func (m *Manager) Evicted(id string) bool {
	n, err := strconv.Atoi(strings.TrimPrefix(id, "r"))
	if err != nil || !strings.HasPrefix(id, "r") || strconv.Itoa(n) != id[1:] {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	_, stored := m.runs[id]
	return n >= 1 && n <= m.next && !stored
}

// Brief is one line of the run list.
type Brief struct {
	ID      string    `json:"id"`
	Problem string    `json:"problem"`
	Status  string    `json:"status"`
	Created time.Time `json:"created"`
}

// List returns the stored runs, oldest first.
func (m *Manager) List() []Brief {
	m.mu.Lock()
	runs := append([]*Run(nil), m.order...)
	m.mu.Unlock()
	out := make([]Brief, 0, len(runs))
	for _, r := range runs {
		out = append(out, Brief{ID: r.ID, Problem: r.spec.Problem, Status: r.RunStatus(), Created: r.Created})
	}
	return out
}

// Close cancels every run (a run not finished by then reports
// interrupted) and waits until their goroutines have returned (or ctx
// ends). No run can be created afterwards.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	m.closed = true
	m.queue = nil
	for _, r := range m.order {
		r.mu.Lock()
		if r.running > 0 {
			r.interrupted = true
			r.queued = false
			r.launchLocked() // a run never started finishes as its traces stop
		}
		r.mu.Unlock()
	}
	m.mu.Unlock()
	m.shutdown()
	for _, r := range m.List() {
		if run, ok := m.Live(r.ID); ok {
			run.stopPauseTimer()
			run.changed()
		}
	}
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	select {
	case <-done:
		m.stopStatusWriter()
		return nil
	case <-ctx.Done():
		return fmt.Errorf("session: runs still stopping: %w", ctx.Err())
	}
}
