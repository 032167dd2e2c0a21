// Package session runs fwlab's runs for the dashboard: it validates a run
// spec, builds the problem instance once, starts one goroutine per
// (algorithm, replication), stores every record of every trace (the
// complete, authoritative trace of the run) and notifies subscribers of new
// records without ever blocking a solver. It also implements pause, resume,
// single step and cancel, and bounds the resources runs may take.
//
// Limits (all configurable through Options; the defaults are the constants
// below):
//   - at most MaxActive runs are running or paused at a time; creating one
//     more fails with ErrBusy;
//   - at most MaxStored runs are kept; when a new run would exceed it, the
//     oldest finished run is evicted (its id then reports as evicted);
//   - a run's record budget, (iters + 1) × algorithms × replications (every
//     method also reports its starting point), is at most
//     MaxRecords, since every record is kept in memory (about 130 bytes, plus
//     16 per problem-specific Extra value);
//   - the records held by all stored runs (the budgets of active runs, the
//     actual counts of finished ones) stay within MaxTotalRecords: older
//     finished runs are evicted to make room, and a new run that would not
//     fit beside the active ones fails with ErrBusy;
//   - at most Workers solver goroutines execute at once (GOMAXPROCS by
//     default); the others wait for a slot. A trace takes one slot per
//     goroutine its method computes on: a block method's pool is the spec's
//     workers (1 when not given, at most Workers, and never more than the
//     blocks an iteration updates). A trace gives its slots back every
//     TimeSlice so that every trace of a run progresses together, and while
//     it is paused. Results do not depend on the scheduling: every trace is
//     deterministic given its seed.
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
	"time"

	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/spec"
)

// Default limits.
const (
	DefaultMaxActive  = 4
	DefaultMaxStored  = 32
	DefaultMaxRecords = 4_000_000
	// DefaultMaxTotalRecords is about 1–2 GB of records.
	DefaultMaxTotalRecords = 10_000_000
	DefaultTimeSlice       = 20 * time.Millisecond
)

// Run statuses.
const (
	StatusRunning   = "running"
	StatusPaused    = "paused"
	StatusDone      = "done"
	StatusCancelled = "cancelled"
	StatusFailed    = "failed"
)

// ErrBusy is returned by Create when MaxActive runs are already active.
var ErrBusy = errors.New("too many active runs")

// Options configure a Manager. Zero fields take the defaults.
type Options struct {
	MaxActive  int // runs running or paused at once
	MaxStored  int // runs kept (finished ones are evicted oldest first); at least MaxActive
	MaxRecords int // iters × algorithms × replications per run
	// MaxTotalRecords bounds the records of all stored runs (at least MaxRecords).
	MaxTotalRecords int
	Workers         int           // solver goroutines executing at once (0: GOMAXPROCS)
	TimeSlice       time.Duration // a solver goroutine yields its slot after this long
	// DataDir, when set, is where relative data-file parameters (kind Path)
	// are looked up; a path given by the user must stay inside it.
	DataDir string
	// UploadDir, when set, is the directory of uploaded data files: an
	// absolute path inside it is accepted as well as one inside DataDir.
	UploadDir string
}

func (o Options) withDefaults() Options {
	if o.MaxActive <= 0 {
		o.MaxActive = DefaultMaxActive
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
	return o
}

// Manager owns the runs.
type Manager struct {
	opts Options
	sem  chan struct{} // worker slots
	// multi serialises traces taking several slots (see acquireSlot).
	multi sync.Mutex
	wg    sync.WaitGroup

	mu       sync.Mutex
	runs     map[string]*Run
	order    []*Run // creation order
	next     int    // last id number handed out
	pending  int    // runs being built (they hold an active slot)
	reserved int    // record budgets of the runs being built
	closed   bool
	baseCtx  context.Context
	shutdown context.CancelFunc
}

// NewManager returns a manager with the given limits.
func NewManager(o Options) *Manager {
	o = o.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	return &Manager{
		opts:     o,
		sem:      make(chan struct{}, o.Workers),
		runs:     map[string]*Run{},
		baseCtx:  ctx,
		shutdown: cancel,
	}
}

// Options returns the manager's effective limits.
func (m *Manager) Options() Options { return m.opts }

// Create validates sp, builds its instance and every method, and starts the
// run. Validation failures are *spec.FieldError (the field is named as in the
// JSON spec, e.g. "params.n" or "algorithms[1].m0"); ErrBusy (wrapped) when
// too many runs are active.
func (m *Manager) Create(ctx context.Context, sp spec.Run) (*Run, error) {
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
	for i, a := range sp.Algorithms {
		if a.Workers > m.opts.Workers {
			return nil, spec.Errorf(fmt.Sprintf("algorithms[%d].workers", i), "must be at most the server's %d worker slots (each worker of a block method takes one), got %d", m.opts.Workers, a.Workers)
		}
	}

	// Reserve an active slot before the (possibly slow) build.
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, errors.New("session: the manager is closed")
	}
	if m.activeLocked()+m.pending >= m.opts.MaxActive {
		m.mu.Unlock()
		return nil, fmt.Errorf("%w: at most %d runs may run at once; cancel one or wait until one finishes", ErrBusy, m.opts.MaxActive)
	}
	budget := (sp.Iters + 1) * ntr
	if !m.makeRoomLocked(budget) {
		m.mu.Unlock()
		return nil, fmt.Errorf("%w: the runs in progress hold too many records (at most %d in all); cancel one or wait until one finishes", ErrBusy, m.opts.MaxTotalRecords)
	}
	m.pending++
	m.reserved += budget
	m.mu.Unlock()
	release := func() {
		m.mu.Lock()
		m.pending--
		m.reserved -= budget
		m.mu.Unlock()
	}

	inst, err := buildSafely(ctx, sc, vals, sp.Seed)
	if err != nil {
		release()
		if ctx.Err() != nil {
			// The request ended (timeout or client gone): not the spec's fault.
			return nil, fmt.Errorf("building %s: %w", sc.Name, ctx.Err())
		}
		return nil, asFieldError(fmt.Errorf("building %s: %w", sc.Name, err), "problem")
	}
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
		release()
		return nil, err
	}
	q := inst.Info().Blocks

	runCtx, cancel := context.WithCancel(m.baseCtx)
	r := &Run{
		Created: time.Now().UTC(),
		spec:    sp,
		info:    inst.Info(),
		inst:    inst,
		ctx:     runCtx,
		cancel:  cancel,
		m:       m,
		wake:    make(chan struct{}),
		done:    make(chan struct{}),
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
			Index: i, Algo: j.Algo.Algo, Replication: j.Replication, Seed: j.Seed,
			run: r, status: StatusRunning, slots: max(slots, 1),
		})
	}
	r.running = len(r.traces)

	m.mu.Lock()
	m.pending--
	m.reserved -= budget
	r.budget = budget
	if m.closed {
		m.mu.Unlock()
		cancel()
		return nil, errors.New("session: the manager is closed")
	}
	m.next++
	r.ID = "r" + strconv.Itoa(m.next)
	m.runs[r.ID] = r
	m.order = append(m.order, r)
	m.evictLocked()
	m.wg.Add(len(jobs))
	m.mu.Unlock()

	for i, j := range jobs {
		go r.traces[i].execute(j.Method)
	}
	return r, nil
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

// activeLocked counts the runs not yet finished.
func (m *Manager) activeLocked() int {
	n := 0
	for _, r := range m.order {
		if !r.Finished() {
			n++
		}
	}
	return n
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

// heldLocked counts the records the stored runs hold or may still add: the
// budget of an active run, the stored records of a finished one.
func (m *Manager) heldLocked() int {
	n := m.reserved
	for _, r := range m.order {
		if r.Finished() {
			n += r.stored()
		} else {
			n += r.budget
		}
	}
	return n
}

// makeRoomLocked evicts the oldest finished runs until budget more records
// fit within MaxTotalRecords; it reports whether they do.
func (m *Manager) makeRoomLocked(budget int) bool {
	active := m.reserved
	for _, r := range m.order {
		if !r.Finished() {
			active += r.budget
		}
	}
	if active+budget > m.opts.MaxTotalRecords {
		return false // evicting finished runs would not help
	}
	for m.heldLocked()+budget > m.opts.MaxTotalRecords {
		idx := -1
		for i, r := range m.order {
			if r.Finished() {
				idx = i
				break
			}
		}
		if idx < 0 {
			return false
		}
		delete(m.runs, m.order[idx].ID)
		m.order = append(m.order[:idx], m.order[idx+1:]...)
	}
	return true
}

// Get returns the run with the given id.
func (m *Manager) Get(id string) (*Run, bool) {
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

// Close cancels every run and waits until their goroutines have returned (or
// ctx ends). No run can be created afterwards.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.shutdown()
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("session: runs still stopping: %w", ctx.Err())
	}
}
