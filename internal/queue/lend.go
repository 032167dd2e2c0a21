package queue

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
)

// Lending slots across workers.
//
// On one machine the session lends run slots (internal/session): a queued
// run of a client holding none takes the slot of the run that has held one
// longest, of the client holding the most, which goes on at the next free
// slot; a paused run gives its slot back. On River a job waits until a
// worker has a free River slot, and a worker's runs (paused ones too)
// keep theirs, so the queue lends too, to the same rule: each worker runs
// a second River queue of its own (lendQueue) beside the shared one, with
// as many slots, and every lendInterval one worker (an advisory lock)
// looks at the jobs of the first priority waiting (interactive runs before
// sweep cells) that have waited for longer than lendAfter, in River's
// order, and moves a job to a worker's own queue when that worker
//
//   - has a paused run whose slot no moved job has taken yet: the job
//     takes the slot the paused run gave back in the worker's session; or
//   - runs two or more runs of one client while the job's client has no
//     run running anywhere: the worker's session lends the job a slot of
//     that client's run that has held one longest, which goes on once a
//     slot is free again (at the latest when the job's run ends).
//
// A job moved to a worker's queue that has not started within lendExpiry
// (the worker stopped, say), or that is rescued, goes back to the shared
// queue.

// Lending's timing.
const (
	lendAfter    = time.Second
	lendInterval = 500 * time.Millisecond
	lendExpiry   = 5 * time.Second
)

// lendLock is the advisory lock key under which jobs are lent.
const lendLock = 0x66776c616c // "fwlal"

// lendQueue is the name of a worker's own River queue, to which jobs lent
// to it are moved.
func lendQueue(worker string) string {
	h := sha256.Sum256([]byte(worker))
	return "lend-" + hex.EncodeToString(h[:8])
}

// lendLoop lends slots until ctx ends.
func (w *Worker) lendLoop(ctx context.Context) {
	t := time.NewTicker(lendInterval)
	defer t.Stop()
	for {
		if _, err := lendOnce(ctx, w.cfg.Store.Pool()); err != nil && ctx.Err() == nil {
			w.cfg.Logger.Warn("lending slots", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// lendOnce moves waiting jobs to the queues of the workers that can take
// them (see above) and returns how many it moved.
func lendOnce(ctx context.Context, pool *pgxpool.Pool) (moved int, err error) {
	kind := RunArgs{}.Kind()
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var locked bool
		if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1)`, int64(lendLock)).Scan(&locked); err != nil || !locked {
			return err
		}
		// lent jobs no worker took in time go back to the shared queue
		if _, err := tx.Exec(ctx, `UPDATE river_job SET queue = $1
			WHERE kind = $2 AND queue LIKE 'lend-%' AND state IN ('available', 'retryable', 'scheduled')
			  AND COALESCE((metadata->>'lent_us')::BIGINT, 0) < (EXTRACT(EPOCH FROM clock_timestamp()) * 1000000)::BIGINT - $3`,
			river.QueueDefault, kind, lendExpiry.Microseconds()); err != nil {
			return err
		}
		l, err := readLending(ctx, tx, kind)
		if err != nil || len(l.workers) == 0 || !l.canLend() {
			// nothing to lend: the waiting jobs are not looked at
			return err
		}
		waiting, err := readWaiting(ctx, tx, kind)
		if err != nil {
			return err
		}
		for _, j := range waiting {
			to := l.target(j)
			if to == nil {
				continue
			}
			ok, err := lendJob(ctx, tx, j, to)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			to.lent++
			l.running[j.client]++
			moved++
		}
		return nil
	})
	return moved, err
}

// lendWorker is one worker as the lending sees it.
type lendWorker struct {
	queue   string
	paused  int            // runs paused
	lent    int            // jobs in its own queue, running or waiting
	clients map[string]int // runs running (not paused) by client
}

// lending is the state of the workers that run jobs now.
type lending struct {
	workers map[string]*lendWorker // by worker name
	byQueue map[string]*lendWorker // by the worker's own queue
	running map[string]int         // runs running anywhere, by client
}

// waitingJob is a job waiting in the shared queue.
type waitingJob struct {
	id     int64
	client string
}

// readLending reads the runs running on each worker (a job whose run has
// ended may still be running for River a moment: its run's status says)
// and the jobs waiting in each worker's own queue.
func readLending(ctx context.Context, tx pgx.Tx, kind string) (*lending, error) {
	l := &lending{workers: map[string]*lendWorker{}, byQueue: map[string]*lendWorker{}, running: map[string]int{}}
	rows, err := tx.Query(ctx, `SELECT j.attempted_by[cardinality(j.attempted_by)], COALESCE(j.args->>'client', ''), r.status, j.queue
		FROM river_job j JOIN runs r ON r.id = j.args->>'run_id'
		WHERE j.kind = $1 AND j.state = 'running' AND cardinality(j.attempted_by) > 0
		  AND r.status IN ('running', 'paused')`, kind)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var name, client, status, queue string
		if err := rows.Scan(&name, &client, &status, &queue); err != nil {
			rows.Close()
			return nil, err
		}
		wk := l.workers[name]
		if wk == nil {
			wk = &lendWorker{queue: lendQueue(name), clients: map[string]int{}}
			l.workers[name], l.byQueue[wk.queue] = wk, wk
		}
		if queue == wk.queue {
			wk.lent++
		}
		if status == "paused" {
			wk.paused++
			continue
		}
		wk.clients[client]++
		l.running[client]++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(l.workers) == 0 {
		return l, nil
	}
	rows, err = tx.Query(ctx, `SELECT queue, count(*) FROM river_job WHERE kind = $1 AND queue LIKE 'lend-%' AND state = 'available' GROUP BY queue`, kind)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var queue string
		var n int
		if err := rows.Scan(&queue, &n); err != nil {
			rows.Close()
			return nil, err
		}
		if wk := l.byQueue[queue]; wk != nil {
			wk.lent += n
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return l, nil
}

// canLend reports whether some worker has a slot to lend: a paused run's,
// or one a single client holds two runs or more in.
func (l *lending) canLend() bool {
	for _, wk := range l.workers {
		if wk.paused > wk.lent {
			return true
		}
		for _, n := range wk.clients {
			if n-wk.lent >= 2 {
				return true
			}
		}
	}
	return false
}

// readWaiting reads up to 100 jobs of the shared queue's first priority
// that have waited longer than lendAfter, oldest first.
func readWaiting(ctx context.Context, tx pgx.Tx, kind string) ([]waitingJob, error) {
	var waiting []waitingJob
	rows, err := tx.Query(ctx, `SELECT id, COALESCE(args->>'client', '') FROM river_job
		WHERE kind = $1 AND queue = $2 AND state = 'available' AND created_at < now() - $3 * interval '1 microsecond'
		  AND priority = (SELECT min(priority) FROM river_job WHERE kind = $1 AND queue = $2 AND state = 'available')
		ORDER BY priority, scheduled_at, id LIMIT 100`, kind, river.QueueDefault, lendAfter.Microseconds())
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var j waitingJob
		if err := rows.Scan(&j.id, &j.client); err != nil {
			rows.Close()
			return nil, err
		}
		waiting = append(waiting, j)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return waiting, nil
}

// target is the worker a waiting job is lent to, nil for none: the
// worker with the most slots of paused runs first; else, for a client
// with no run running, the worker where another client holds the most
// runs.
func (l *lending) target(j waitingJob) *lendWorker {
	var to *lendWorker
	for _, wk := range l.workers { // a paused run's slot first
		if wk.paused > wk.lent && (to == nil || wk.paused-wk.lent > to.paused-to.lent) {
			to = wk
		}
	}
	if to == nil && l.running[j.client] == 0 {
		best := 0
		for _, wk := range l.workers { // the worker where one client holds the most
			for c, n := range wk.clients {
				if c != j.client && n-wk.lent >= 2 && n-wk.lent > best {
					to, best = wk, n-wk.lent
				}
			}
		}
	}
	return to
}

// lendJob moves a waiting job to the queue of the worker it is lent to,
// stamped with the time, and reports whether it moved. The waiting jobs
// are read unlocked, so that River's fetches never skip them meanwhile; a
// job a worker is taking is left.
func lendJob(ctx context.Context, tx pgx.Tx, j waitingJob, to *lendWorker) (bool, error) {
	tag, err := tx.Exec(ctx, `UPDATE river_job SET queue = $2,
		metadata = metadata || jsonb_build_object('lent_us', (EXTRACT(EPOCH FROM clock_timestamp()) * 1000000)::BIGINT)
		WHERE id = (SELECT id FROM river_job WHERE id = $1 AND queue = $3 AND state = 'available' FOR UPDATE SKIP LOCKED)`,
		j.id, to.queue, river.QueueDefault)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() != 0, nil
}
