// Package queue runs fwlab's runs on River, a job queue on PostgreSQL
// (github.com/riverqueue/river with its pgx v5 driver), for a dashboard
// whose runs are shared by several machines (ARCHITECTURE.md, "Many machines").
//
// A run, or a sweep's cell, is put in the PostgreSQL store (pgstore) as a
// queued run and a River job naming it is inserted; `dashboard worker`
// processes take jobs with River's locking and run them (Worker). River
// does the queue's hard parts: one worker per job, priorities (interactive
// runs before sweep cells), retries. On top of River's ordering the queue
// shares the workers fairly among clients (fair.go), lends slots as a
// server does (lend.go), and rescues the run of a worker that died by its
// heartbeat rather than by its length (rescue.go: River's jobs have no
// timeout here). Around River, the store keeps the run's truth: a worker
// claims the run (pgstore.Claim) before it starts, which removes any
// partial records of an earlier attempt; it executes the run through the
// session's executor (session.Manager.Execute: the traces side by side,
// the same recorder, gate, names, summaries and panels as a server's own
// runs), streams records in batches under that claim, beats every
// BeatEvery, and reads the run's status and steps on each beat and
// whenever the store notifies a change, so a cancel, pause, step or resume
// written to the store reaches it (execute.go); a worker whose claim was
// taken over stops without writing.
package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/fwlab/fwlab/internal/bundle"
	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
	"github.com/fwlab/fwlab/internal/sweep"
)

// RunArgs is the job of one run: the run is in the store, the job names it.
type RunArgs struct {
	RunID string `json:"run_id"`
	// SweepID and Cell are set for a sweep's cell.
	SweepID string `json:"sweep_id,omitempty"`
	Cell    int    `json:"cell,omitempty"`
	// Client names who queued the run (a server's client address), for
	// the fair share (fair.go).
	Client string `json:"client,omitempty"`
}

// Kind is River's name of the job kind.
func (RunArgs) Kind() string { return "fwlab_run" }

// Job priorities (River's 1 is first): interactive runs before sweep cells.
const (
	PriorityRun  = 1
	PriorityCell = 2
)

// MaxAttempts bounds how often a job is tried (a worker that died or was
// stopped counts as an attempt).
const MaxAttempts = 5

// migrationLock is the advisory lock key that serialises the River
// migrations of processes starting at once (workers, a server, submit).
const migrationLock = 0x66776c6172 // "fwlar"

// Migrate brings River's tables in the database up to date (beside the
// store's, which pgstore.Open migrates), one process at a time.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	m, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return fmt.Errorf("queue: %w", err)
	}
	// River's migrations take several transactions (an enum's new value
	// must be committed before use), so the lock is a session's, held on
	// a connection of its own while they run
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("queue: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(migrationLock)); err != nil {
		return fmt.Errorf("queue: waiting for the migration lock: %w", err)
	}
	_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if _, uerr := conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(migrationLock)); uerr != nil {
		conn.Conn().Close(ctx) // closing the session releases the lock
	}
	if err != nil {
		return fmt.Errorf("queue: migrating River's tables: %w", err)
	}
	return nil
}

// Queue inserts runs and sweeps as jobs (it works no jobs itself).
type Queue struct {
	st     *pgstore.Store
	client *river.Client[pgx.Tx]

	// Quota bounds the bytes of the data files kept in the store (0: none).
	Quota int64
}

// From says who queues a run: the client (a server's client address, for
// the fair share, fair.go) and how the data files its runs name are found
// (data.go; nil refuses a run that names one).
type From struct {
	Client string
	Files  Files
	// MaxRuns bounds the client's live runs queued by SubmitFor, this one
	// included; MaxSweeps its live sweeps queued by SubmitSweepFor (0: no
	// limit; limits.go). A refusal wraps ErrClientLimit.
	MaxRuns, MaxSweeps int
	// PauseTimeout is how long a run that starts paused may stay paused
	// before its worker cancels it, as a server's -pause-timeout (0: no
	// limit).
	PauseTimeout time.Duration
}

// New returns a queue on the store's database, River's tables migrated.
func New(ctx context.Context, st *pgstore.Store) (*Queue, error) {
	if err := Migrate(ctx, st.Pool()); err != nil {
		return nil, err
	}
	c, err := river.NewClient(riverpgxv5.New(st.Pool()), &river.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, fmt.Errorf("queue: %w", err)
	}
	return &Queue{st: st, client: c}, nil
}

// storedRun resolves a spec as a server does and returns the run to store
// (queued, one trace per (algorithm, replication) in the session's order)
// and the data files it reads, kept in the store when they travel there
// (a sweep's cells share cache).
func (q *Queue) storedRun(ctx context.Context, sp spec.Run, files Files, cache map[string]DataRef) (*store.Run, []byte, error) {
	sc, vals, err := scenarios.Resolve(&sp)
	if err != nil {
		return nil, nil, err
	}
	refs, err := q.dataRefs(ctx, sc, vals, files, cache)
	if err != nil {
		return nil, nil, err
	}
	var rawRefs []byte
	if len(refs) > 0 {
		if rawRefs, err = json.Marshal(refs); err != nil {
			return nil, nil, err
		}
	}
	// a run that starts paused is stored paused, as a server stores it: its
	// worker starts it at its first record (execute.go)
	status := store.StatusQueued
	if sp.StartPaused {
		status = store.StatusPaused
	}
	r := &store.Run{Spec: sp, Version: bundle.ProgramVersion(), Status: status}
	i := 0
	for _, a := range sp.Algorithms {
		for rep := 0; rep < sp.Replications; rep++ {
			r.Traces = append(r.Traces, store.Trace{Index: i, Algo: a.Algo, Replication: rep, Seed: sp.Seed + int64(rep), Status: status})
			i++
		}
	}
	return r, rawRefs, nil
}

// putRun stores a run and its data files' references.
func (q *Queue) putRun(ctx context.Context, r *store.Run, refs []byte) (string, error) {
	id, err := q.st.PutRun(ctx, r)
	if err != nil || refs == nil {
		return id, err
	}
	if err := q.st.SetDataRefs(ctx, id, refs); err != nil {
		return "", q.undo(ctx, id, err)
	}
	return id, nil
}

// Submit stores a run of sp and queues it; it returns the run's id.
func (q *Queue) Submit(ctx context.Context, sp spec.Run) (string, error) {
	return q.SubmitFor(ctx, sp, From{})
}

// SubmitFor is Submit from a client, whose runs take their fair share of
// the workers with the other clients' (fair.go), and whose data files
// travel with its runs (data.go).
func (q *Queue) SubmitFor(ctx context.Context, sp spec.Run, from From) (string, error) {
	if err := checkLimit(ctx, q.st.Pool(), from.Client, false, from.MaxRuns, ""); err != nil {
		return "", err
	}
	r, refs, err := q.storedRun(ctx, sp, from.Files, map[string]DataRef{})
	if err != nil {
		return "", err
	}
	id, err := q.putRun(ctx, r, refs)
	if err != nil {
		return "", err
	}
	if sp.StartPaused && from.PauseTimeout > 0 {
		// paused from now, for at most the pause timeout, as on one machine
		if err := q.st.SetStatus(ctx, id, store.StatusQueued, time.Time{}); err != nil {
			return "", q.undo(ctx, id, err)
		}
		if _, err := q.st.Control(ctx, id, pgstore.OpPause, from.PauseTimeout); err != nil {
			return "", q.undo(ctx, id, err)
		}
	}
	if err := q.insert(ctx, RunArgs{RunID: id, Client: from.Client}, PriorityRun, from.MaxRuns); err != nil {
		return "", q.undo(ctx, id, err)
	}
	return id, nil
}

// undo deletes a run whose job could not be inserted.
func (q *Queue) undo(ctx context.Context, id string, err error) error {
	if _, derr := q.st.Delete(context.WithoutCancel(ctx), id); derr != nil {
		return errors.Join(err, derr)
	}
	return err
}

// SubmitSweep stores a sweep and one queued run per cell, and queues the
// cells; it returns the sweep's id.
func (q *Queue) SubmitSweep(ctx context.Context, doc *sweep.Doc) (string, error) {
	return q.SubmitSweepFor(ctx, doc, From{})
}

// SubmitSweepFor is SubmitSweep from a client (see SubmitFor).
func (q *Queue) SubmitSweepFor(ctx context.Context, doc *sweep.Doc, from From) (string, error) {
	cells, err := doc.Cells()
	if err != nil {
		return "", err
	}
	if err := checkLimit(ctx, q.st.Pool(), from.Client, true, from.MaxSweeps, ""); err != nil {
		return "", err
	}
	runs := make([]*store.Run, len(cells))
	refs := make([][]byte, len(cells))
	cache := map[string]DataRef{}
	for i, c := range cells {
		if runs[i], refs[i], err = q.storedRun(ctx, c.Spec, from.Files, cache); err != nil {
			return "", fmt.Errorf("cell %d: %w", i, err)
		}
	}
	axes, err := jsonAxes(doc.Axes)
	if err != nil {
		return "", err
	}
	sw := &store.Sweep{Base: doc.Base, Axes: axes, Status: store.StatusRunning, Name: doc.Name, Note: doc.Note}
	for i, c := range cells {
		sw.Cells = append(sw.Cells, store.Cell{Index: i, Values: c.ValuesJSON(doc.Axes)})
	}
	sid, err := q.st.PutSweep(ctx, sw)
	if err != nil {
		return "", err
	}
	// every cell has its run before any job is inserted: a worker that
	// ends the first cell while the others are being put would otherwise
	// find the sweep with no live run and end it
	var put []string
	for i, r := range runs {
		id, err := q.putRun(ctx, r, refs[i])
		if err == nil {
			put = append(put, id)
			err = q.st.SetCellRun(ctx, sid, i, id)
		}
		if err != nil {
			return "", q.abandon(ctx, sid, put, fmt.Errorf("cell %d: %w", i, err))
		}
	}
	for i, id := range put {
		limit := 0
		if i == 0 { // the sweep's first job counts it for its client
			limit = from.MaxSweeps
		}
		err := q.insert(ctx, RunArgs{RunID: id, SweepID: sid, Cell: i, Client: from.Client}, PriorityCell, limit)
		if errors.Is(err, ErrClientLimit) {
			return "", q.discard(ctx, sid, put, err)
		}
		if err != nil {
			return "", q.abandon(ctx, sid, put, fmt.Errorf("cell %d: %w", i, err))
		}
	}
	return sid, nil
}

// discard deletes a sweep refused by its client's limit, and its runs
// (none of them has a job).
func (q *Queue) discard(ctx context.Context, sid string, runs []string, err error) error {
	ctx = context.WithoutCancel(ctx)
	errs := []error{err}
	for _, id := range runs {
		if _, derr := q.st.Delete(ctx, id); derr != nil {
			errs = append(errs, derr)
		}
	}
	if derr := q.st.DeleteSweep(ctx, sid); derr != nil {
		errs = append(errs, derr)
	}
	return errors.Join(errs...)
}

// abandon ends a sweep whose cells could not all be queued: the cells put
// so far are cancelled (a worker skips them) and the sweep fails.
func (q *Queue) abandon(ctx context.Context, sid string, runs []string, err error) error {
	ctx = context.WithoutCancel(ctx)
	errs := []error{err}
	for _, id := range runs {
		if serr := q.st.SetStatus(ctx, id, store.StatusCancelled, time.Now()); serr != nil {
			errs = append(errs, serr)
		}
	}
	if serr := q.st.SetSweepStatus(ctx, sid, store.StatusFailed); serr != nil {
		errs = append(errs, serr)
	}
	return errors.Join(errs...)
}
