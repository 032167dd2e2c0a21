package session

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/spec"
	runstore "github.com/fwlab/fwlab/internal/store"
)

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
	sc, vals, budget, recBytes, err := m.checkSpec(&sp)
	if err != nil {
		return nil, err
	}
	// Reserve the records before the (possibly slow) build.
	release, err := m.reserve(client, budget, recBytes)
	if err != nil {
		return nil, err
	}
	r, err := m.build(ctx, sc, vals, sp, client, budget)
	if err != nil {
		release()
		return nil, err
	}
	// With a store, the run is put there first: its id comes from it.
	var id string
	if m.st != nil {
		if id, err = m.putRun(ctx, r); err != nil {
			release()
			r.cancel()
			return nil, err
		}
	}
	if err := m.start(ctx, r, sc, id, client, budget, recBytes); err != nil {
		r.cancel()
		if id != "" {
			_, _ = m.st.Delete(context.Background(), id)
		}
		return nil, err
	}
	r.changed()
	return r, nil
}

// checkSpec resolves and validates sp and checks what it asks of the
// server before anything is built: its records (budget, of about recBytes)
// within MaxRecords and the memory budget, its data paths and workers.
func (m *Manager) checkSpec(sp *spec.Run) (sc *scenarios.Scenario, vals scenarios.Values, budget int, recBytes int64, err error) {
	sc, vals, err = scenarios.Resolve(sp)
	if err != nil {
		return nil, nil, 0, 0, asFieldError(err, "problem")
	}
	ntr := len(sp.Algorithms) * sp.Replications
	if int64(sp.Iters+1)*int64(ntr) > int64(m.opts.MaxRecords) {
		return nil, nil, 0, 0, spec.Errorf("iters", "(iters + 1) × algorithms × replications must be at most %d (the server keeps every record, the start included), got %d × %d × %d",
			m.opts.MaxRecords, sp.Iters+1, len(sp.Algorithms), sp.Replications)
	}
	if err := m.resolvePaths(sc, sp.Params, vals); err != nil {
		return nil, nil, 0, 0, err
	}
	if err := m.checkWorkers(*sp); err != nil {
		return nil, nil, 0, 0, err
	}
	budget = (sp.Iters + 1) * ntr
	recBytes = int64(budget) * RecordBytes
	if recBytes > m.opts.MaxMemory {
		return nil, nil, 0, 0, fmt.Errorf("%w: its %d records need about %s, over the server's memory budget of %s%s",
			ErrTooLarge, budget, mib(recBytes), mib(m.opts.MaxMemory), m.opts.flag("MaxMemory"))
	}
	return sc, vals, budget, recBytes, nil
}

// reserve admits a run of client's with budget records (about recBytes)
// and holds them for it while it is built; release gives them back.
func (m *Manager) reserve(client string, budget int, recBytes int64) (release func(), err error) {
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
	return func() {
		m.mu.Lock()
		m.unreserveLocked(budget, recBytes)
		m.mu.Unlock()
	}, nil
}

// unreserveLocked gives back what reserve held for a run being built.
func (m *Manager) unreserveLocked(budget int, recBytes int64) {
	m.pending--
	m.reserved -= budget
	m.reservedB -= recBytes
}

// build builds sp's instance and the run with its methods; at most
// MaxActive builds at once, the others wait (or give up with the request).
func (m *Manager) build(ctx context.Context, sc *scenarios.Scenario, vals scenarios.Values, sp spec.Run, client string, budget int) (*Run, error) {
	select {
	case m.builds <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting to build %s: %w", sc.Name, ctx.Err())
	}
	inst, err := m.buildWithin(ctx, sc, vals, sp.Seed)
	if err != nil {
		if ctx.Err() != nil {
			// The request ended (timeout or client gone): not the spec's fault.
			return nil, fmt.Errorf("building %s: %w", sc.Name, ctx.Err())
		}
		return nil, asFieldError(fmt.Errorf("building %s: %w", sc.Name, err), "problem")
	}
	return m.newRun(sp, inst, client, budget)
}

// start turns the reservation into the built run r (stored as id, or "" for
// none) and starts or queues it, unless the manager closed, the request
// ended or the run with its instance no longer fits; then the caller
// cancels r and deletes what was stored.
func (m *Manager) start(ctx context.Context, r *Run, sc *scenarios.Scenario, id, client string, budget int, recBytes int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.unreserveLocked(budget, recBytes)
	if m.closed {
		return errors.New("session: the manager is closed")
	}
	// A request abandoned (or timed out) while its run was being built
	// creates nothing, even when the build itself did not watch ctx.
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("building %s: the request ended before its run was made: %w", sc.Name, err)
	}
	instBytes := r.instBytes
	if need := instBytes + recBytes; need > m.opts.MaxMemory {
		return fmt.Errorf("%w: its instance (about %s) and records (about %s) exceed the server's memory budget of %s%s",
			ErrTooLarge, mib(instBytes), mib(recBytes), mib(m.opts.MaxMemory), m.opts.flag("MaxMemory"))
	}
	// Checked again with the instance's size (and the runs created meanwhile).
	if err := m.admitLocked(client, budget, instBytes+recBytes); err != nil {
		return err
	}
	if m.st != nil {
		r.ID = id
		r.setAppender(runstore.NewAppenderFor(m.st, id, 0))
		r.app.OnError(r.storeFailed)
	} else {
		m.next++
		r.ID = "r" + strconv.Itoa(m.next)
	}
	m.startLocked(r)
	m.dispatchLocked()
	return nil
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
