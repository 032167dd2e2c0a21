package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
)

// Why a run's context ends.
var (
	errUserCancel = errors.New("cancelled by the user")
	errClaimLost  = errors.New("the run was taken over by another worker")
	errStore      = errors.New("the store refused the run's records")
)

// outcome is how an execution ended for the queue.
type outcome int

const (
	finished outcome = iota // the run ended (done, failed or cancelled) and is stored so
	released                // the worker stopped first: the job goes back to the queue
	lost                    // another worker has the run: nothing more to do here
)

// execute runs a claimed run to its end, streaming its records under the
// claim. ctx ends when the worker stops (the run is then released) or
// River cancels the job.
func (w *Worker) execute(ctx context.Context, id, claim string) (outcome, error) {
	st := w.cfg.Store
	r, err := st.Get(ctx, id)
	if err != nil {
		return released, err
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// the run's control as it stands (a run paused while queued stops at
	// its first record), then followed at each beat and notification
	g := newGate()
	c, err := st.Beat(ctx, id, claim)
	if errors.Is(err, pgstore.ErrClaimLost) {
		return lost, nil
	}
	if err == nil {
		g.set(c)
	}
	beatDone := make(chan struct{})
	go func() {
		defer close(beatDone)
		w.beat(runCtx, cancel, g, id, claim)
	}()
	defer func() { cancel(nil); <-beatDone }()

	sum, results, msg := w.solve(runCtx, cancel, g, r, claim)
	cause := context.Cause(runCtx)
	var expired errPauseTimeout
	switch {
	case errors.Is(cause, errClaimLost):
		return lost, nil
	case errors.Is(cause, errStore):
		// the database went away (a restart, a failover): the run goes
		// back to the queue and runs again from its spec once it is back
		if err := st.Release(context.WithoutCancel(ctx), id, claim); err != nil && !errors.Is(err, pgstore.ErrClaimLost) {
			return released, errors.Join(cause, err)
		}
		return released, cause
	case ctx.Err() != nil && !errors.Is(cause, errUserCancel) && !errors.As(cause, &expired):
		// the worker is stopping (or River cancelled the job): release
		if err := st.Release(context.WithoutCancel(ctx), id, claim); err != nil && !errors.Is(err, pgstore.ErrClaimLost) {
			return released, err
		}
		return released, ctx.Err()
	}
	status := sum
	switch {
	case errors.Is(cause, errUserCancel):
		status, msg = store.StatusCancelled, "cancelled"
	case errors.As(cause, &expired):
		status, msg = store.StatusCancelled, expired.Error()
	}
	err = st.Finish(context.WithoutCancel(ctx), id, claim, results, status, msg, time.Now())
	if errors.Is(err, pgstore.ErrClaimLost) {
		return lost, nil
	}
	return finished, err
}

// beat writes the run's heartbeat every BeatEvery, and at once when the
// store notifies a change of the run's control, until ctx ends; it passes
// pauses, steps and resumes to the gate, and ends the run's context when
// the run was cancelled through the store, stayed paused for longer than
// its pause timeout, or its claim was lost.
func (w *Worker) beat(ctx context.Context, cancel context.CancelCauseFunc, g *gate, id, claim string) {
	wake, stop := w.cfg.Store.Wake(pgstore.ControlPayload(id))
	defer stop()
	t := time.NewTicker(w.cfg.BeatEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-wake:
		}
		c, err := w.cfg.Store.Beat(ctx, id, claim)
		switch {
		case errors.Is(err, pgstore.ErrClaimLost):
			cancel(errClaimLost)
			return
		case err != nil:
			continue // the database is away: try again on the next beat
		case c.Status == store.StatusCancelled:
			cancel(errUserCancel)
			return
		case c.PauseExpired():
			cancel(errPauseTimeout{c})
			return
		}
		g.set(c)
	}
}

// solve builds the run's instance and runs its traces in order, streaming
// the records; it returns the run's status, every trace's result and a
// message for a run that failed before its traces ran.
func (w *Worker) solve(ctx context.Context, cancel context.CancelCauseFunc, g *gate, r *store.Run, claim string) (string, []store.TraceResult, string) {
	results := make([]store.TraceResult, len(r.Traces))
	for i := range results {
		results[i] = store.TraceResult{Status: store.StatusCancelled}
	}
	fail := func(msg string) (string, []store.TraceResult, string) {
		for i := range results {
			results[i] = store.TraceResult{Status: solver.StatusFailed}
		}
		return store.StatusFailed, results, msg
	}
	sp := r.Spec
	if err := w.materialize(ctx, r.ID, &sp); err != nil {
		if ctx.Err() != nil {
			return store.StatusCancelled, results, ""
		}
		return fail(err.Error())
	}
	sc, vals, err := scenarios.Resolve(&sp)
	if err != nil {
		return fail("the run's spec: " + err.Error())
	}
	inst, err := buildSafely(ctx, sc, vals, sp.Seed)
	if err != nil {
		if ctx.Err() != nil {
			return store.StatusCancelled, results, ""
		}
		return fail("building the instance: " + err.Error())
	}
	if err := w.cfg.Store.SetInstance(ctx, r.ID, instanceOf(inst.Info())); err != nil && ctx.Err() == nil {
		return fail(err.Error())
	}
	jobs, err := scenarios.Jobs(inst, &sp)
	if err != nil {
		return fail(err.Error())
	}
	if len(jobs) != len(r.Traces) {
		return fail(fmt.Sprintf("the spec makes %d traces, the stored run has %d", len(jobs), len(r.Traces)))
	}
	out := newStreamer(w.cfg.Store, r.ID, claim, w.cfg.FlushEvery, w.m.addRecords)
	go func() {
		select {
		case <-out.failed:
			if errors.Is(out.err0(), pgstore.ErrClaimLost) {
				cancel(errClaimLost)
			} else {
				cancel(fmt.Errorf("%w: %w", errStore, out.err0()))
			}
		case <-ctx.Done():
		}
	}()
	status := store.StatusDone
	for i, j := range jobs {
		if ctx.Err() != nil {
			break
		}
		res := runTrace(ctx, inst, j, recorder{ctx: ctx, g: g, emit: func(rec solver.Record) { out.add(i, rec) }})
		if res.Status == solver.StatusFailed {
			status = store.StatusFailed
		}
		results[i] = res
	}
	if err := out.close(context.WithoutCancel(ctx)); err != nil {
		if errors.Is(err, pgstore.ErrClaimLost) {
			cancel(errClaimLost)
		} else {
			cancel(fmt.Errorf("%w: %w", errStore, err))
		}
		return store.StatusFailed, results, ""
	}
	return status, results, ""
}

// runTrace runs one trace and returns its result, panels included.
func runTrace(ctx context.Context, inst scenarios.Instance, j scenarios.Job, rec solver.Recorder) (tr store.TraceResult) {
	defer func() {
		if p := recover(); p != nil {
			tr = store.TraceResult{Status: solver.StatusFailed, Summary: &solver.Summary{Status: solver.StatusFailed, Message: fmt.Sprintf("panic: %v", p)}}
		}
	}()
	res, err := j.Method.Run(ctx, rec)
	sum := res.Summary
	if err != nil {
		sum.Status, sum.Message = solver.StatusFailed, err.Error()
	}
	if sum.Status == "" {
		sum.Status, sum.Message = solver.StatusFailed, "the method returned no status"
	}
	tr = store.TraceResult{Status: sum.Status, Summary: &sum}
	if rp, ok := inst.(scenarios.ResultPanels); ok && len(res.X) > 0 && err == nil {
		p, perr := rp.ResultPanels(res.X)
		switch {
		case perr != nil:
			tr.PanelsError = "the final estimate's panels: " + perr.Error()
		default:
			b, jerr := json.Marshal(p)
			if jerr != nil {
				tr.PanelsError = "the final estimate's panels could not be stored: " + jerr.Error()
			} else {
				tr.Panels = b
			}
		}
	}
	return tr
}

func buildSafely(ctx context.Context, sc *scenarios.Scenario, vals scenarios.Values, seed int64) (inst scenarios.Instance, err error) {
	defer func() {
		if p := recover(); p != nil {
			inst, err = nil, fmt.Errorf("panic: %v", p)
		}
	}()
	return sc.Build(ctx, vals, seed)
}

func instanceOf(info scenarios.Info) store.Instance {
	in := store.Instance{Dim: info.Dim, Samples: info.Samples, Blocks: info.Blocks, FStar: info.FStar}
	if info.Panels != nil {
		if b, err := json.Marshal(info.Panels); err == nil {
			in.Panels = b
		}
	}
	return in
}
