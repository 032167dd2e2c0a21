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
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/spec"
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
	}
	return m
}

// Store returns the manager's store (nil when it has none).
func (m *Manager) Store() runstore.Backend { return m.st }

// Options returns the manager's effective limits.
func (m *Manager) Options() Options { return m.opts }

// Create is CreateFor without a client name.
func (m *Manager) Create(ctx context.Context, sp spec.Run) (*Run, error) {
	return m.CreateFor(ctx, sp, "")
}

// CreateFor validates sp, builds its instance and every method, and starts
// the run, or queues it when every run slot is taken (a spec with
// StartPaused starts paused at its first record instead). client names the
// client (its address) for the per-client cap; "" counts for none.
// Validation failures are *spec.FieldError (the field is named as in the
// JSON spec, e.g. "params.n" or "algorithms[1].m0"); ErrBusy (wrapped) when
// a shared budget is used up, ErrTooLarge (wrapped) when the run alone
// exceeds the memory budget.
func (m *Manager) CreateFor(ctx context.Context, sp spec.Run, client string) (*Run, error) {
	sc, vals, err := scenarios.Resolve(&sp)
	if err != nil {
		return nil, asFieldError(err, "problem")
	}
	ntr := len(sp.Algorithms) * sp.Replications
	if int64(sp.Iters+1)*int64(ntr) > int64(m.opts.MaxRecords) {
		return nil, spec.Errorf("iters", "(iters + 1) × algorithms × replications must be at most %d (the server keeps every record, the start included), got %d × %d × %d",
			m.opts.MaxRecords, sp.Iters+1, len(sp.Algorithms), sp.Replications)
	}
	if err := m.resolvePaths(sc, sp.Params, vals); err != nil {
		return nil, err
	}
	if err := m.checkWorkers(sp); err != nil {
		return nil, err
	}
	budget := (sp.Iters + 1) * ntr
	recBytes := int64(budget) * RecordBytes
	if recBytes > m.opts.MaxMemory {
		return nil, fmt.Errorf("%w: its %d records need about %s, over the server's memory budget of %s%s",
			ErrTooLarge, budget, mib(recBytes), mib(m.opts.MaxMemory), m.opts.flag("MaxMemory"))
	}

	// Reserve the records before the (possibly slow) build.
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, errors.New("session: the manager is closed")
	}
	if err := m.admitLocked(client, budget, recBytes); err != nil {
		m.mu.Unlock()
		return nil, err
	}
	m.pending++
	m.reserved += budget
	m.reservedB += recBytes
	m.mu.Unlock()
	release := func() {
		m.mu.Lock()
		m.pending--
		m.reserved -= budget
		m.reservedB -= recBytes
		m.mu.Unlock()
	}

	// At most MaxActive builds at once; the others wait (or give up with
	// the request).
	select {
	case m.builds <- struct{}{}:
	case <-ctx.Done():
		release()
		return nil, fmt.Errorf("waiting to build %s: %w", sc.Name, ctx.Err())
	}
	inst, err := m.buildWithin(ctx, sc, vals, sp.Seed)
	if err != nil {
		release()
		if ctx.Err() != nil {
			// The request ended (timeout or client gone): not the spec's fault.
			return nil, fmt.Errorf("building %s: %w", sc.Name, ctx.Err())
		}
		return nil, asFieldError(fmt.Errorf("building %s: %w", sc.Name, err), "problem")
	}
	r, err := m.newRun(sp, inst, client, budget)
	if err != nil {
		release()
		return nil, err
	}
	cancel := r.cancel

	// With a store, the run is put there first: its id comes from it.
	var id string
	if m.st != nil {
		if id, err = m.putRun(ctx, r); err != nil {
			release()
			cancel()
			return nil, err
		}
	}
	unput := func() {
		if id != "" {
			_, _ = m.st.Delete(context.Background(), id)
		}
	}

	m.mu.Lock()
	m.pending--
	m.reserved -= budget
	m.reservedB -= recBytes
	if m.closed {
		m.mu.Unlock()
		cancel()
		unput()
		return nil, errors.New("session: the manager is closed")
	}
	// A request abandoned (or timed out) while its run was being built
	// creates nothing, even when the build itself did not watch ctx.
	if err := ctx.Err(); err != nil {
		m.mu.Unlock()
		cancel()
		unput()
		return nil, fmt.Errorf("building %s: the request ended before its run was made: %w", sc.Name, err)
	}
	instBytes := r.instBytes
	if need := instBytes + recBytes; need > m.opts.MaxMemory {
		m.mu.Unlock()
		cancel()
		unput()
		return nil, fmt.Errorf("%w: its instance (about %s) and records (about %s) exceed the server's memory budget of %s%s",
			ErrTooLarge, mib(instBytes), mib(recBytes), mib(m.opts.MaxMemory), m.opts.flag("MaxMemory"))
	}
	// Checked again with the instance's size (and the runs created meanwhile).
	if err := m.admitLocked(client, budget, instBytes+recBytes); err != nil {
		m.mu.Unlock()
		cancel()
		unput()
		return nil, err
	}
	if m.st != nil {
		r.ID = id
		r.app = runstore.NewAppenderFor(m.st, id, 0)
		r.app.OnError(r.storeFailed)
	} else {
		m.next++
		r.ID = "r" + strconv.Itoa(m.next)
	}
	m.startLocked(r)
	m.dispatchLocked()
	m.mu.Unlock()
	r.changed()
	return r, nil
}

// newRun makes a run of sp on its built instance: one trace per
// (algorithm, replication), named by the one labelling function
// (scenarios.Jobs), each with its method; the run is not yet registered,
// queued or started. It is the one place a run's traces are made, whether
// the run was created here (CreateFor) or taken from a shared queue
// (Execute).
func (m *Manager) newRun(sp spec.Run, inst scenarios.Instance, client string, budget int) (*Run, error) {
	// Block methods compute on a pool of Workers goroutines, each of which
	// takes a worker slot: one unless the spec asks for more, and never more
	// than the server has.
	js := sp
	js.Algorithms = append([]spec.Algo(nil), sp.Algorithms...)
	for i := range js.Algorithms {
		if a := &js.Algorithms[i]; a.Workers == 0 {
			a.Workers = 1
		}
	}
	jobs, err := scenarios.Jobs(inst, &js)
	if err != nil {
		return nil, err
	}
	info := inst.Info()
	q := info.Blocks
	runCtx, cancel := context.WithCancel(m.baseCtx)
	r := &Run{
		Created:   time.Now().UTC(),
		spec:      sp,
		info:      info,
		inst:      inst,
		ctx:       runCtx,
		cancel:    cancel,
		m:         m,
		client:    client,
		budget:    budget,
		instBytes: InstanceBytes(inst),
		wake:      make(chan struct{}),
		done:      make(chan struct{}),
	}
	for i, j := range jobs {
		slots := j.Algo.Workers // at most the blocks an iteration updates
		if q >= 1 {
			slots = min(slots, q)
		}
		if j.Algo.R > 0 {
			slots = min(slots, j.Algo.R)
		}
		r.traces = append(r.traces, &Trace{
			Index: i, Algo: j.Label, Replication: j.Replication, Seed: j.Seed,
			run: r, status: StatusRunning, slots: max(slots, 1),
		})
		r.methods = append(r.methods, j.Method)
	}
	r.running = len(r.traces)
	r.holdFast.Store(true)
	return r, nil
}

// startLocked registers a new run and queues it, or starts it paused at its
// first record when its spec says so (the manager's lock held); the caller
// dispatches the queue.
func (m *Manager) startLocked(r *Run) {
	m.runs[r.ID] = r
	m.order = append(m.order, r)
	m.evictLocked()
	r.mu.Lock()
	if r.spec.StartPaused {
		r.paused = true
		r.launchLocked()
		r.armPauseTimerLocked()
	} else {
		r.queued = true
		m.queue = append(m.queue, r)
	}
	r.mu.Unlock()
}

// checkWorkers checks that every block method's pool fits in the worker
// slots (a trace needing more would wait for ever).
func (m *Manager) checkWorkers(sp spec.Run) error {
	for i, a := range sp.Algorithms {
		if a.Workers > m.opts.Workers {
			return spec.Errorf(fmt.Sprintf("algorithms[%d].workers", i), "must be at most the server's %d worker slots (each worker of a block method takes one), got %d", m.opts.Workers, a.Workers)
		}
	}
	return nil
}

// admitLocked checks the shared budgets for one more run of budget records
// taking bytes of memory, evicting finished runs to make room.
func (m *Manager) admitLocked(client string, budget int, bytes int64) error {
	if m.pending+len(m.queue) >= m.opts.MaxQueued {
		return fmt.Errorf("%w: at most %d runs may wait in the queue%s; cancel one or wait until one finishes",
			ErrBusy, m.opts.MaxQueued, m.opts.flag("MaxQueued"))
	}
	if client != "" {
		n := 0
		for _, r := range m.order {
			if r.client == client && !r.Finished() {
				n++
			}
		}
		if n >= m.opts.MaxClientRuns {
			return fmt.Errorf("%w: a client may have at most %d runs queued, running or paused%s; cancel one or wait until one finishes",
				ErrBusy, m.opts.MaxClientRuns, m.opts.flag("MaxClientRuns"))
		}
	}
	if !m.makeRoomLocked(budget) {
		return fmt.Errorf("%w: the runs in progress hold too many records (at most %d in all); cancel one or wait until one finishes", ErrBusy, m.opts.MaxTotalRecords)
	}
	if !m.makeMemoryLocked(bytes) {
		return fmt.Errorf("%w: the runs in progress hold %s of the server's memory budget of %s%s and this one needs about %s more; cancel one or wait until one finishes",
			ErrBusy, mib(m.liveBytesLocked()), mib(m.opts.MaxMemory), m.opts.flag("MaxMemory"), mib(bytes))
	}
	return nil
}

// mib formats a byte count in MiB.
func mib(b int64) string {
	return strconv.FormatFloat(float64(b)/(1<<20), 'f', 1, 64) + " MiB"
}

// InstanceBytes is the memory an instance is counted for: its own figure
// when it reports one (a MemoryBytes() int64 method), else 16 bytes per
// entry of a dense samples × dimension matrix (the data and one working
// copy) plus 64 KiB.
func InstanceBytes(inst scenarios.Instance) int64 {
	if s, ok := inst.(interface{ MemoryBytes() int64 }); ok {
		return s.MemoryBytes()
	}
	info := inst.Info()
	return 16*int64(max(info.Dim, 1))*int64(max(info.Samples, 1)) + 64<<10
}

// dispatchLocked gives free run slots to the queued runs in the order of
// queueOrderLocked: resumed runs first, then round-robin across clients.
func (m *Manager) dispatchLocked() {
	for m.running < m.opts.MaxActive && len(m.queue) > 0 {
		i := m.nextLocked()
		m.startQueuedLocked(m.queue[i], i)
	}
	m.lendLocked()
}

// startQueuedLocked gives a free run slot to the queued run r (at queue
// index i).
func (m *Manager) startQueuedLocked(r *Run, i int) {
	m.queue = append(m.queue[:i], m.queue[i+1:]...)
	m.tick++
	m.served[r.client] = m.tick
	m.pruneServedLocked()
	r.mu.Lock()
	r.queued = false
	r.lentTo = ""
	if r.ctx.Err() == nil && r.running > 0 {
		r.slot = true
		r.slotTick = m.tick
		m.running++
		r.holdFast.Store(r.paused)
		r.launchLocked()
		r.openGateLocked()
	}
	r.mu.Unlock()
	r.changed()
}

// lendLocked lends run slots so that a client's first run never waits for
// another client's long runs: while every run slot is held and a queued run
// (never started) belongs to a client that holds none, the client holding
// the most slots (at least two) lends one: its run that has held its slot
// longest gives it to that queued run and waits at the head of the queue,
// as a resumed run does, so that it goes on at the next free slot (at the
// latest when the borrower ends). Its records, and its result, are those
// it would have made without the pause (runs are pure functions of their
// spec, ARCHITECTURE.md, "Records").
func (m *Manager) lendLocked() {
	for m.running >= m.opts.MaxActive && len(m.queue) > 0 {
		held := map[string]int{}
		for _, r := range m.order {
			if r.slot {
				held[r.client]++
			}
		}
		waits := false // a queued run of a client holding no slot
		for _, q := range m.queue {
			if !q.started && held[q.client] == 0 {
				waits = true
				break
			}
		}
		if !waits {
			return
		}
		var borrower *Run
		for _, q := range m.queueOrderLocked() {
			if !q.started && held[q.client] == 0 && q.ctx.Err() == nil {
				borrower = q
				break
			}
		}
		var lender *Run
		for _, r := range m.order {
			if !r.slot || held[r.client] < 2 {
				continue
			}
			if lender == nil || held[r.client] > held[lender.client] ||
				(held[r.client] == held[lender.client] && r.slotTick < lender.slotTick) {
				lender = r
			}
		}
		if borrower == nil || lender == nil {
			return
		}
		lender.mu.Lock()
		lender.releaseRunSlotLocked()
		lender.holdFast.Store(true)
		lender.lentTo = borrower.ID
		i := 0
		for i < len(m.queue) && m.queue[i].started {
			i++
		}
		m.queue = append(m.queue, nil)
		copy(m.queue[i+1:], m.queue[i:])
		m.queue[i] = lender
		lender.queued = true
		lender.mu.Unlock()
		lender.changed()
		for j, q := range m.queue {
			if q == borrower {
				m.startQueuedLocked(borrower, j)
				break
			}
		}
	}
}

// nextLocked returns the queue index of the run to start next: the first
// resumed run (it ran before), else the first run of the client served
// longest ago (a client never served first), so that runs are taken
// round-robin across clients and a client's many runs never delay another
// client's first.
func (m *Manager) nextLocked() int {
	best, stamp := -1, uint64(0)
	for i, r := range m.queue {
		if r.started {
			return i
		}
		if st := m.served[r.client]; best < 0 || st < stamp {
			best, stamp = i, st
		}
	}
	return best
}

// queueOrderLocked returns the queued runs in the order they will start
// (when nothing else changes): resumed runs first, then one run of each
// client in turn, the clients served longest ago first.
func (m *Manager) queueOrderLocked() []*Run {
	order := make([]*Run, 0, len(m.queue))
	byClient := map[string][]*Run{}
	var clients []string
	for _, r := range m.queue {
		if r.started {
			order = append(order, r)
			continue
		}
		if _, ok := byClient[r.client]; !ok {
			clients = append(clients, r.client)
		}
		byClient[r.client] = append(byClient[r.client], r)
	}
	// Stable: clients served equally long ago keep their queue order.
	sort.SliceStable(clients, func(a, b int) bool { return m.served[clients[a]] < m.served[clients[b]] })
	for round := 0; len(order) < len(m.queue); round++ {
		for _, c := range clients {
			if runs := byClient[c]; round < len(runs) {
				order = append(order, runs[round])
			}
		}
	}
	return order
}

// pruneServedLocked forgets when clients with nothing queued were served,
// once many are remembered.
func (m *Manager) pruneServedLocked() {
	if len(m.served) <= maxServed {
		return
	}
	queued := map[string]bool{}
	for _, r := range m.queue {
		queued[r.client] = true
	}
	for c := range m.served {
		if !queued[c] {
			delete(m.served, c)
		}
	}
}

// maxServed bounds the clients whose last service the queue remembers
// beyond those with runs queued.
const maxServed = 4096

// dequeueLocked removes r from the queue (m.mu and r.mu held).
func (m *Manager) dequeueLocked(r *Run) {
	if !r.queued {
		return
	}
	r.queued = false
	for i, q := range m.queue {
		if q == r {
			m.queue = append(m.queue[:i], m.queue[i+1:]...)
			return
		}
	}
}

// QueuePosition returns r's place in the queue (1: next to start), or 0
// when it is not queued.
func (m *Manager) QueuePosition(r *Run) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !r.queued {
		return 0
	}
	for i, q := range m.queueOrderLocked() {
		if q == r {
			return i + 1
		}
	}
	return 0
}

// buildWithin builds the instance (holding a build slot, taken by the
// caller) and returns when it is built or when ctx ends, whichever comes
// first: a request over its budget is answered at once, while a build that
// does not watch ctx finishes in the background, keeps its build slot until
// then, and is dropped.
func (m *Manager) buildWithin(ctx context.Context, sc *scenarios.Scenario, v scenarios.Values, seed int64) (scenarios.Instance, error) {
	type built struct {
		inst scenarios.Instance
		err  error
	}
	ch := make(chan built, 1)
	go func() {
		inst, err := buildSafely(ctx, sc, v, seed)
		<-m.builds
		ch <- built{inst, err}
	}()
	select {
	case b := <-ch:
		return b.inst, b.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// buildSafely calls Build, turning a panic into an error.
func buildSafely(ctx context.Context, sc *scenarios.Scenario, v scenarios.Values, seed int64) (inst scenarios.Instance, err error) {
	defer func() {
		if p := recover(); p != nil {
			inst, err = nil, fmt.Errorf("panic: %v", p)
		}
	}()
	inst, err = sc.Build(ctx, v, seed)
	if err == nil && inst == nil {
		err = errors.New("the scenario built no instance")
	}
	return inst, err
}

// asFieldError returns err as a *spec.FieldError, naming field when err
// does not name one.
func asFieldError(err error, field string) error {
	var fe *spec.FieldError
	if errors.As(err, &fe) {
		return fe
	}
	return &spec.FieldError{Field: field, Msg: err.Error()}
}

// evictLocked drops the oldest finished runs beyond MaxStored.
func (m *Manager) evictLocked() {
	for len(m.order) > m.opts.MaxStored {
		idx := -1
		for i, r := range m.order {
			if r.Finished() {
				idx = i
				break
			}
		}
		if idx < 0 {
			return // every stored run is active; MaxStored ≥ MaxActive makes this rare
		}
		delete(m.runs, m.order[idx].ID)
		m.order = append(m.order[:idx], m.order[idx+1:]...)
	}
}

// holds returns the records a run is counted for: the budget of a run
// that may still run, the records made by a finished or a paused one (a
// paused run reserves only what it has made; Resume takes its budget back
// when it fits).
func (r *Run) holds() int {
	if r.Finished() {
		return r.stored()
	}
	r.mu.Lock()
	paused := r.paused
	r.mu.Unlock()
	if paused {
		return r.stored()
	}
	return r.budget
}

// heldLocked counts the records the stored runs hold or may still add: the
// budget of an active run, the stored records of a finished or paused one.
func (m *Manager) heldLocked() int {
	n := m.reserved
	for _, r := range m.order {
		n += r.holds()
	}
	return n
}

// makeRoomLocked evicts the oldest finished runs until budget more records
// fit within MaxTotalRecords; it reports whether they do.
func (m *Manager) makeRoomLocked(budget int) bool {
	active := m.reserved
	for _, r := range m.order {
		if !r.Finished() {
			active += r.holds()
		}
	}
	if active+budget > m.opts.MaxTotalRecords {
		return false // evicting finished runs would not help
	}
	for m.heldLocked()+budget > m.opts.MaxTotalRecords {
		if !m.evictOldestFinishedLocked() {
			return false
		}
	}
	return true
}

// evictOldestFinishedLocked forgets the oldest finished run kept in memory;
// it reports whether there was one.
func (m *Manager) evictOldestFinishedLocked() bool {
	for i, r := range m.order {
		if r.Finished() {
			delete(m.runs, r.ID)
			m.order = append(m.order[:i], m.order[i+1:]...)
			held, _ := r.heldBytes()
			m.giveBack(held)
			return true
		}
	}
	return false
}

// liveBytesLocked is the memory the stored runs are counted for: an
// unfinished run's instance and record budget, a finished run's records.
func (m *Manager) liveBytesLocked() int64 {
	n := m.reservedB
	for _, r := range m.order {
		n += r.holdsBytes()
	}
	return n
}

// holdsBytes is the memory a run is counted for: what its records really
// hold (measured, Trace.heldBytes), RecordBytes for each record an
// unfinished run may still add, and, while it is unfinished, its instance.
func (r *Run) holdsBytes() int64 {
	held, n := r.heldBytes()
	if r.Finished() {
		return held
	}
	return r.instBytes + held + int64(max(r.holds()-n, 0))*RecordBytes
}

// heldBytes returns the memory the run's records hold in memory and how
// many records it has made.
func (r *Run) heldBytes() (bytes int64, n int) {
	for _, t := range r.traces {
		b, k := t.heldBytes()
		bytes += b
		n += k
	}
	return bytes, n
}

// BaseMemory is the memory a server takes beside its MaxMemory budget: the
// Go runtime and the server's code, the pages and their buffers, the run
// store's cache, the chunks of records being filled (up to chunkSize
// records of each live trace, as made) and the records on their way to the
// run store. The server's resident set stays within MaxMemory plus this.
const BaseMemory = 192 << 20

// GiveBackBytes is how much memory a run leaving memory must free before the
// manager hands the process's free memory back to the system.
const GiveBackBytes = 32 << 20

// giveBack returns the heap's free memory to the system after a run that
// held at least GiveBackBytes left memory: the garbage collector would
// otherwise run again (and the runtime return the pages) only once the
// program allocates again, which an idle server may not do for minutes, so
// its resident set would stay at its peak. One collection runs at a time,
// in the background; a run leaving meanwhile is covered by the next.
func (m *Manager) giveBack(freed int64) {
	if freed < GiveBackBytes {
		return
	}
	if m.givingBack.Add(1) > 1 {
		return // the running one goes round again
	}
	go func() {
		for {
			n := m.givingBack.Load()
			debug.FreeOSMemory()
			if m.givingBack.Add(-n) == 0 {
				return
			}
		}
	}()
}

// makeMemoryLocked evicts the oldest finished runs until bytes more fit
// within MaxMemory; it reports whether they do.
func (m *Manager) makeMemoryLocked(bytes int64) bool {
	active := m.reservedB
	for _, r := range m.order {
		if !r.Finished() {
			active += r.holdsBytes()
		}
	}
	if active+bytes > m.opts.MaxMemory {
		return false
	}
	for m.liveBytesLocked()+bytes > m.opts.MaxMemory {
		if !m.evictOldestFinishedLocked() {
			return false
		}
	}
	return true
}

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
