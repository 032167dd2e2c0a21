package session

// A run taken from a shared queue (a PostgreSQL store's River jobs, run by
// `dashboard worker` or a server with slots) is executed by a manager
// exactly as a run created here: Execute makes its traces with newRun (the
// one labelling function), queues it for a run slot, and its traces run
// side by side through the same recorder, gate (pause, step, resume),
// worker slots, summaries and panels. Only where its records and its end
// go differ: records go to the worker's writer (under its claim), and the
// worker reads the traces' results (Run.Results) and ends the run in the
// store itself once Done is closed.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/spec"
	runstore "github.com/fwlab/fwlab/internal/store"
)

// Claimed is a run taken from a shared queue for Execute.
type Claimed struct {
	ID     string   // the run's id in the shared store
	Spec   spec.Run // its spec (StartPaused: it starts paused at its first record)
	Client string   // who queued it, for the manager's round-robin
	// Records takes the run's records in batches (only its AppendRecords
	// is called), every FlushEvery (≤ 0: the store's default).
	Records    runstore.Backend
	FlushEvery time.Duration
	// RecordsFailed is called once when a write of records fails; the run
	// is then cancelled.
	RecordsFailed func(error)
	// TraceEnded, when set, is called when a trace ends while others go
	// on, once its records are written (Records), with its result, so
	// that the shared store says it ended as a run of a server's own does.
	// The last trace's end is the caller's (Results, once Done is closed).
	TraceEnded func(trace int, res runstore.TraceResult)
}

// ErrBuild is wrapped by Execute's error when the run's instance or its
// methods could not be made (as opposed to the manager being closed).
var ErrBuild = errors.New("the run could not be made")

// Execute builds the instance of a run taken from a shared queue and runs
// it as CreateFor runs its runs (see Claimed). The run's records are kept
// in memory only while it runs: once Done is closed, the caller closes its
// records (CloseRecords), reads its results and status, and calls Forget.
// The manager's own store, if any, is not written. Cancelling ctx before
// the run is built abandons it.
func (m *Manager) Execute(ctx context.Context, c Claimed) (*Run, error) {
	sp := c.Spec
	sc, vals, err := scenarios.Resolve(&sp)
	if err != nil {
		return nil, fmt.Errorf("%w: the run's spec: %w", ErrBuild, err)
	}
	if err := m.checkWorkers(sp); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBuild, err)
	}
	select {
	case m.builds <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	inst, err := m.buildWithin(ctx, sc, vals, sp.Seed)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: building the instance: %w", ErrBuild, err)
	}
	budget := (sp.Iters + 1) * len(sp.Algorithms) * sp.Replications
	r, err := m.newRun(sp, inst, c.Client, budget)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBuild, err)
	}
	r.ID = c.ID
	r.traceEnded = c.TraceEnded
	r.setAppender(runstore.NewAppenderFor(c.Records, c.ID, c.FlushEvery))
	r.app.OnError(func(err error) {
		if c.RecordsFailed != nil {
			c.RecordsFailed(err)
		}
		r.Cancel()
	})
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		r.cancel()
		_ = r.app.Close()
		return nil, errors.New("session: the manager is closed")
	}
	m.startLocked(r)
	m.dispatchLocked()
	m.mu.Unlock()
	r.changed()
	return r, nil
}

// endTrace tells the caller of Execute that trace t has ended while the
// run goes on, once the records it made are written.
func (r *Run) endTrace(t *Trace) {
	if r.traceEnded == nil || r.app == nil {
		return
	}
	if r.app.Flush(context.Background()) != nil {
		return // the run is cancelled (Claimed.RecordsFailed)
	}
	r.traceEnded(t.Index, t.Result())
}

// CloseRecords writes the records a run taken from a shared queue has left
// to write and returns the first write failure (see Execute).
func (r *Run) CloseRecords() error {
	if r.app == nil {
		return nil
	}
	return r.app.Close()
}

// Forget drops a finished run from the manager's memory (a run taken from
// a shared queue, once its end is written).
func (m *Manager) Forget(r *Run) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.runs[r.ID]; ok && r.Finished() {
		delete(m.runs, r.ID)
		for i, o := range m.order {
			if o == r {
				m.order = append(m.order[:i], m.order[i+1:]...)
				break
			}
		}
	}
}

// Results returns every trace's result as the store keeps it: status,
// summary, panels or why there are none.
func (r *Run) Results() []runstore.TraceResult {
	out := make([]runstore.TraceResult, len(r.traces))
	for i, t := range r.traces {
		out[i] = t.Result()
	}
	return out
}

// Result returns the trace's result as the store keeps it.
func (t *Trace) Result() runstore.TraceResult {
	ts := t.TraceStatus()
	res := runstore.TraceResult{Status: ts.Status, Summary: ts.Summary, PanelsError: ts.PanelsError}
	if ts.Panels != nil {
		b, err := json.Marshal(ts.Panels)
		if err != nil {
			res.PanelsError = "the final estimate's panels could not be stored: " + err.Error()
		} else {
			res.Panels = b
		}
	}
	return res
}

// Labels returns the traces' names, in order.
func (r *Run) Labels() []string {
	out := make([]string, len(r.traces))
	for i, t := range r.traces {
		out[i] = t.Algo
	}
	return out
}

// StoredInstance is the description of an instance that the store keeps.
func StoredInstance(info scenarios.Info) runstore.Instance {
	in := runstore.Instance{Dim: info.Dim, Samples: info.Samples, Blocks: info.Blocks, FStar: info.FStar}
	if info.Panels != nil {
		if b, err := json.Marshal(info.Panels); err == nil {
			in.Panels = b
		}
	}
	return in
}
