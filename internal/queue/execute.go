package queue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fwlab/fwlab/internal/session"
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

// claimedWriter writes a run's records under the worker's claim: it is
// the store a session's appender writes to (AppendBatches; AppendRecords
// too, claimed, should anything call it), so a worker's records are
// batched exactly as a server's.
type claimedWriter struct {
	*pgstore.Store
	claim   string
	written func(n int) // counts the records stored (metrics)
}

func (c claimedWriter) AppendRecords(ctx context.Context, id string, trace int, recs []solver.Record) error {
	if err := c.AppendClaimed(ctx, id, c.claim, trace, recs); err != nil {
		return err
	}
	c.written(len(recs))
	return nil
}

func (c claimedWriter) AppendBatches(ctx context.Context, id string, trace int, bs []store.Batch) error {
	if err := c.AppendClaimedBatches(ctx, id, c.claim, trace, bs); err != nil {
		return err
	}
	c.written(store.BatchRecords(bs))
	return nil
}

// execute runs a claimed run to its end through the worker's session
// manager, the executor a server runs its own runs with (its traces side by
// side, pause, step and resume through the session's gate), streaming its
// records under the claim. ctx ends when the worker stops (the run is then
// released) or River cancels the job.
func (w *Worker) execute(ctx context.Context, id, claim, client string) (outcome, error) {
	st := w.cfg.Store
	r, err := st.Get(ctx, id)
	if err != nil {
		return released, err
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// the run's control as it stands: a run paused while queued (or
	// queued to start paused) starts paused at its first record
	c, err := st.Beat(ctx, id, claim)
	if errors.Is(err, pgstore.ErrClaimLost) {
		return lost, nil
	}
	sp := r.Spec
	sp.StartPaused = err == nil && c.Status == store.StatusPaused
	if err := w.materialize(runCtx, r.ID, &sp); err != nil {
		if ctx.Err() != nil {
			return w.release(ctx, id, claim, ctx.Err())
		}
		return w.fail(ctx, id, claim, len(r.Traces), err.Error())
	}
	run, err := w.sess.Execute(runCtx, session.Claimed{ID: id, Spec: sp, Client: client,
		Records: claimedWriter{st, claim, w.m.addRecords}, FlushEvery: w.cfg.FlushEvery,
		RecordsFailed: func(err error) { cancel(recordsCause(err)) },
		TraceEnded: func(trace int, res store.TraceResult) {
			if err := st.EndTrace(runCtx, id, claim, trace, res); err != nil && runCtx.Err() == nil {
				w.cfg.Logger.Warn("writing the end of a trace", "run", id, "trace", trace, "err", err)
			}
		}})
	switch {
	case errors.Is(err, session.ErrBuild):
		return w.fail(ctx, id, claim, len(r.Traces), err.Error())
	case err != nil:
		return w.release(ctx, id, claim, err)
	}
	defer w.sess.Forget(run)
	stopCancel := context.AfterFunc(runCtx, run.Cancel)
	defer stopCancel()
	w.describe(runCtx, cancel, run, r, id, claim)
	beatDone := make(chan struct{})
	go func() {
		defer close(beatDone)
		w.beat(runCtx, cancel, run, c, id, claim)
	}()
	<-run.Done()
	cancel(nil) // the beat stops
	<-beatDone
	recErr := run.CloseRecords()
	cause := context.Cause(runCtx)
	if recErr != nil && errors.Is(cause, context.Canceled) {
		cause = recordsCause(recErr)
	}
	var expired errPauseTimeout
	switch {
	case errors.Is(cause, errClaimLost):
		return lost, nil
	case errors.Is(cause, errStore):
		// the database went away (a restart, a failover): the run goes
		// back to the queue and runs again from its spec once it is back
		return w.release(ctx, id, claim, cause)
	case ctx.Err() != nil && !errors.Is(cause, errUserCancel) && !errors.As(cause, &expired):
		// the worker is stopping (or River cancelled the job): release
		return w.release(ctx, id, claim, ctx.Err())
	}
	status, msg := run.RunStatus(), ""
	switch {
	case errors.Is(cause, errUserCancel):
		status, msg = store.StatusCancelled, "cancelled"
	case errors.As(cause, &expired):
		status, msg = store.StatusCancelled, expired.Error()
	case !errors.Is(cause, context.Canceled) && cause != nil:
		status, msg = store.StatusFailed, cause.Error()
	}
	err = st.Finish(context.WithoutCancel(ctx), id, claim, run.Results(), status, msg, time.Now())
	if errors.Is(err, pgstore.ErrClaimLost) {
		return lost, nil
	}
	return finished, err
}

// describe stores the names of the run's traces (the one labelling
// function's) and the instance's description, which need the instance.
// It cancels the run, with the cause, when the spec makes a number of
// traces other than the stored run's, or when the store refuses them.
func (w *Worker) describe(ctx context.Context, cancel context.CancelCauseFunc, run *session.Run, r *store.Run, id, claim string) {
	if len(run.Traces()) != len(r.Traces) {
		cancel(fmt.Errorf("the spec makes %d traces, the stored run has %d", len(run.Traces()), len(r.Traces)))
		return
	}
	st := w.cfg.Store
	var err error
	labels, named := run.Labels(), false
	for i, l := range labels {
		if l == r.Traces[i].Algo {
			labels[i] = "" // named so already
		} else {
			named = true
		}
	}
	if named {
		err = st.SetLabels(ctx, id, claim, labels)
	}
	if err == nil {
		err = st.SetInstance(ctx, id, session.StoredInstance(run.Info()))
	}
	switch {
	case errors.Is(err, pgstore.ErrClaimLost):
		cancel(errClaimLost)
	case err != nil:
		cancel(fmt.Errorf("%w: %w", errStore, err))
	}
}

// recordsCause is why a run ends when the store refused its records: its
// claim was lost, it was cancelled through the store (it keeps the
// records the store held then), or the store failed.
func recordsCause(err error) error {
	switch {
	case errors.Is(err, pgstore.ErrClaimLost):
		return errClaimLost
	case errors.Is(err, pgstore.ErrNotLive):
		return errUserCancel
	}
	return fmt.Errorf("%w: %w", errStore, err)
}

// release gives a claimed run back to the queue.
func (w *Worker) release(ctx context.Context, id, claim string, cause error) (outcome, error) {
	if err := w.cfg.Store.Release(context.WithoutCancel(ctx), id, claim); err != nil && !errors.Is(err, pgstore.ErrClaimLost) {
		return released, errors.Join(cause, err)
	}
	return released, cause
}

// fail ends a claimed run that could not be made (its data, its spec or
// its instance), every trace failed, with msg.
func (w *Worker) fail(ctx context.Context, id, claim string, traces int, msg string) (outcome, error) {
	results := make([]store.TraceResult, traces)
	for i := range results {
		results[i] = store.TraceResult{Status: solver.StatusFailed}
	}
	err := w.cfg.Store.Finish(context.WithoutCancel(ctx), id, claim, results, store.StatusFailed, msg, time.Now())
	if errors.Is(err, pgstore.ErrClaimLost) {
		return lost, nil
	}
	return finished, err
}

// beat writes the run's heartbeat every BeatEvery, and at once when the
// store notifies a change of the run's control, until ctx ends; it passes
// pauses, steps and resumes to the run, as a server's buttons do on one
// machine, and ends the run's context when the run was cancelled through
// the store, stayed paused for longer than its pause timeout, or its claim
// was lost.
func (w *Worker) beat(ctx context.Context, cancel context.CancelCauseFunc, run *session.Run, c pgstore.RunControl, id, claim string) {
	wake, stop := w.cfg.Store.Wake(pgstore.ControlPayload(id))
	defer stop()
	t := time.NewTicker(w.cfg.BeatEvery)
	defer t.Stop()
	paused := c.Status == store.StatusPaused // as the run started
	var steps int64                          // the steps passed on (the store counts them since the claim)
	for {
		switch {
		case c.Status == store.StatusCancelled:
			cancel(errUserCancel)
			return
		case c.PauseExpired():
			cancel(errPauseTimeout{c})
			return
		case c.Status != "":
			for ; steps < c.Steps; steps++ {
				_ = run.Step() // a worker's manager has no record budget to refuse it
				paused = true
			}
			switch p := c.Status == store.StatusPaused; {
			case p && !paused:
				run.Pause()
			case !p && paused:
				_ = run.Resume()
			}
			paused = c.Status == store.StatusPaused
		}
		w.mirror(ctx, run, c.Status, id, claim)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-wake:
		}
		var err error
		c, err = w.cfg.Store.Beat(ctx, id, claim)
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, pgstore.ErrClaimLost):
			cancel(errClaimLost)
			return
		case err != nil:
			c = pgstore.RunControl{} // the database is away: try again on the next beat
		}
	}
}

// mirror writes to the store that a run has lent its slot (session's
// lending): queued while it waits for a slot again, running once it has
// one, so that its page and History say it waits; its followers are
// woken. stored is the status the store holds.
func (w *Worker) mirror(ctx context.Context, run *session.Run, stored, id, claim string) {
	local := run.RunStatus()
	var to string
	switch {
	case stored == store.StatusRunning && local == session.StatusQueued:
		to = store.StatusQueued
	case stored == store.StatusQueued && local == session.StatusRunning:
		to = store.StatusRunning
	default:
		return
	}
	_, _ = w.cfg.Store.Pool().Exec(ctx, `WITH u AS (UPDATE runs SET status = $3 WHERE id = $1 AND claim = $2 AND status = $4 RETURNING id)
		SELECT pg_notify($5, id) FROM u`, id, claim, to, stored, pgstore.Channel)
}

// errPauseTimeout ends a run paused for longer than its pause timeout.
type errPauseTimeout struct{ c pgstore.RunControl }

func (e errPauseTimeout) Error() string {
	return fmt.Sprintf("cancelled: paused for longer than the pause timeout of %v (-pause-timeout of the server that paused it)", e.c.PauseTimeout)
}
