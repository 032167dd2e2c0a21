package session

// With a store (Options.Store), a run lives there from its creation: its
// id is the store's (random, never reused), its records go to an appender
// as they are made, its status changes are written by the manager's status
// writer (queued, running, paused), and its end (every trace's summary and
// panels, then the run's final status) is written by its last trace before
// the run reports finished. The run then leaves memory; Manager.Get reads
// it back from the store on demand, its records as they are asked for.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/fwlab/fwlab/internal/bundle"
	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/solver"
	runstore "github.com/fwlab/fwlab/internal/store"
)

// putRun stores a new run (queued, or paused when it starts paused) with its
// instance summary and traces, and returns its id.
func (m *Manager) putRun(ctx context.Context, r *Run) (string, error) {
	status := runstore.StatusQueued
	if r.spec.StartPaused {
		status = runstore.StatusPaused
	}
	sr := &runstore.Run{
		Spec: r.spec, Version: bundle.ProgramVersion(), Status: status, Created: r.Created,
		Instance: StoredInstance(r.info),
	}
	for _, t := range r.traces {
		sr.Traces = append(sr.Traces, runstore.Trace{Index: t.Index, Algo: t.Algo, Replication: t.Replication, Seed: t.Seed, Status: status})
	}
	id, err := m.st.PutRun(context.WithoutCancel(ctx), sr)
	if err != nil {
		return "", fmt.Errorf("storing the run: %w", err)
	}
	r.persisted = status
	return id, nil
}

// persistEnd writes the end of a finished run, in the order that keeps
// the store truthful: the appender's last records (committed), then the
// run's end in one write (every trace's result, the message, the final
// status and end time: writeEnd). When the store
// refused any of it the run is failed (never done), its message naming the
// store and the cause; a trace whose records the store did not all take is
// failed too.
func (r *Run) persistEnd() error {
	st := r.m.st
	ctx := context.Background()
	r.persistMu.Lock()
	defer r.persistMu.Unlock()
	var errs []error
	if r.app != nil {
		if err := r.app.Close(); err != nil {
			errs = append(errs, err)
			if r.noteStoreErr(err) {
				slog.Error("run store write failed; the run ends failed", "run", r.ID, "store", st.Path(), "err", err)
			}
		}
	}
	return errors.Join(append(errs, r.writeEnd(ctx))...)
}

// writeEnd writes a finished run's result once its records are in (or
// refused), in one write: every trace's result, the message and the final
// status (r.persistMu held). Written as one, a restart never finds the
// run failed without saying why.
func (r *Run) writeEnd(ctx context.Context) error {
	st := r.m.st
	storeErr, reason := r.storeFailure()
	var held map[int]int // records the store holds by trace, after a failure
	if storeErr != nil {
		held = r.storedCounts(ctx)
	}
	end := runstore.Ending{Traces: make(map[int]runstore.TraceResult, len(r.traces))}
	for _, t := range r.traces {
		res := t.Result()
		if n, ok := held[t.Index]; storeErr != nil && (!ok || n < t.Len()) && res.Status != solver.StatusFailed {
			sum := failedByStore(solver.Summary{}, reason)
			if res.Summary != nil {
				sum = failedByStore(*res.Summary, reason)
			}
			res.Status, res.Summary = sum.Status, &sum
		}
		end.Traces[t.Index] = res
	}
	r.mu.Lock()
	end.Message = r.reason
	r.mu.Unlock()
	end.Status, end.Ended = r.RunStatus(), time.Now()
	err := st.EndRun(ctx, r.ID, end)
	if err != nil && storeErr == nil {
		// the records are in, the run's end is not: not done either (the
		// retry writes it failed, naming the store)
		r.noteStoreErr(err)
		slog.Error("run store write failed; the run ends failed", "run", r.ID, "store", st.Path(), "err", err)
	}
	r.persisted, r.final = end.Status, true
	return err
}

// retryEnd writes the end of a run whose end the store refused, once the
// store can write again (its records stay those the store took), so that
// a restart finds it failed with its message rather than interrupted. It
// gives up when the manager closes.
func (m *Manager) retryEnd(r *Run) {
	m.every(runstore.ProbeInterval, func() bool {
		if m.st.Health() != nil {
			return true
		}
		r.persistMu.Lock()
		err := r.writeEnd(context.Background())
		r.persistMu.Unlock()
		return err != nil && !errors.Is(err, runstore.ErrNotFound) // else written, or the run is gone
	})
}

// every calls f every interval on a goroutine of the manager's, until the
// manager closes or f returns false.
func (m *Manager) every(d time.Duration, f func() bool) {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-m.baseCtx.Done():
				return
			case <-t.C:
			}
			if !f() {
				return
			}
		}
	}()
}

// storedCounts returns the records the store holds of each trace (none
// when it cannot say).
func (r *Run) storedCounts(ctx context.Context) map[int]int {
	sr, err := r.m.st.GetLean(ctx, r.ID)
	if err != nil {
		return nil
	}
	out := map[int]int{}
	for _, t := range sr.Traces {
		out[t.Index] = t.Records
	}
	return out
}

// persistStatus writes a live run's status when it changed since the last
// write (the end is persistEnd's).
func (r *Run) persistStatus() {
	r.persistMu.Lock()
	defer r.persistMu.Unlock()
	if r.final || r.disk != nil {
		return
	}
	s := r.RunStatus()
	if s == r.persisted || !runstore.Live(s) {
		return
	}
	if err := r.m.st.SetStatus(context.Background(), r.ID, s, time.Time{}); err == nil {
		r.persisted = s
	}
}

// setAppender makes a the appender of r's records: each trace seals its
// records in chunks of the run store's batch size and hands each chunk to
// a as it seals (Trace.keep), and before each of a's writes it seals and
// hands over the chunk it is filling, so that a writes every record made
// so far.
func (r *Run) setAppender(a *runstore.Appender) {
	r.app = a
	for _, t := range r.traces {
		t.mu.Lock()
		t.store.limit = runstore.MaxBatchRecords
		t.mu.Unlock()
	}
	a.BeforeWrite(func() {
		for _, t := range r.traces {
			t.mu.Lock()
			if b := t.store.sealOpen(); b.N > 0 {
				a.AddBatch(t.Index, b)
			}
			t.mu.Unlock()
		}
	})
}

// FlushStore writes the records made so far to the store (nothing without
// a store, or for a run already on disk).
func (r *Run) FlushStore(ctx context.Context) error {
	if r.app == nil || r.disk != nil {
		return nil
	}
	return r.app.Flush(ctx)
}

// markDirty hands r to the status writer.
func (m *Manager) markDirty(r *Run) {
	if m.st == nil || r.disk != nil {
		return
	}
	m.dirtyMu.Lock()
	m.dirty[r] = struct{}{}
	m.dirtyMu.Unlock()
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// statusWriter writes the status of the runs marked dirty, until the
// manager closes.
func (m *Manager) statusWriter() {
	defer close(m.writerEnd)
	for {
		select {
		case <-m.baseCtx.Done():
			return
		case <-m.kick:
		}
		m.dirtyMu.Lock()
		runs := m.dirty
		m.dirty = map[*Run]struct{}{}
		m.dirtyMu.Unlock()
		for r := range runs {
			r.persistStatus()
		}
	}
}

func (m *Manager) stopStatusWriter() {
	if m.writerEnd != nil {
		<-m.writerEnd
	}
}

// releaseLocked drops a finished run whose end is on disk from memory: it
// leaves the manager's maps, and its traces (still held by whoever holds the
// run) read their records from the store from now on (m.mu held).
func (m *Manager) releaseLocked(r *Run) {
	delete(m.runs, r.ID)
	for i, o := range m.order {
		if o == r {
			m.order = append(m.order[:i], m.order[i+1:]...)
			break
		}
	}
	var freed int64
	for _, t := range r.traces {
		t.mu.Lock()
		freed += t.store.bytes
		t.diskN, t.disk = t.store.n, true
		t.store = store{}
		t.mu.Unlock()
	}
	m.giveBack(freed)
}

// loadStored reads a run from the store.
func (m *Manager) loadStored(ctx context.Context, id string) (*Run, error) {
	sr, err := m.st.GetLean(ctx, id)
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan struct{})
	close(done)
	r := &Run{
		ID: sr.ID, Created: sr.Created, spec: sr.Spec, ctx: rctx, cancel: cancel, m: m,
		wake: make(chan struct{}), done: done, final: true, reason: sr.Message,
		disk: &diskRun{status: sr.Status, ended: sr.Ended, name: sr.Name, note: sr.Note, starred: sr.Starred},
		info: scenarios.Info{Dim: sr.Instance.Dim, Samples: sr.Instance.Samples, Blocks: sr.Instance.Blocks, FStar: sr.Instance.FStar},
	}
	if len(sr.Instance.Panels) > 0 {
		_ = json.Unmarshal(sr.Instance.Panels, &r.info.Panels)
	}
	for _, t := range sr.Traces {
		tr := &Trace{Index: t.Index, Algo: t.Algo, Replication: t.Replication, Seed: t.Seed, run: r,
			status: t.Status, summary: t.Summary, panelsErr: t.PanelsError, disk: true, diskN: t.Records,
			diskPanels: t.HasPanels}
		r.traces = append(r.traces, tr)
	}
	return r, nil
}

// errStop ends a walk over stored records early.
var errStop = errors.New("stop")

// eachStored is Each over the records in the store.
func (t *Trace) eachStored(from, to int, fn func(i int, rec *solver.Record) bool) int {
	if from < 0 || from >= to {
		return 0
	}
	n := 0
	_ = t.run.m.st.EachRecord(context.Background(), t.run.ID, t.Index, from, to, func(i int, rec *solver.Record) error {
		n++
		if !fn(i, rec) {
			return errStop
		}
		return nil
	})
	return n
}
