package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/fwlab/fwlab/internal/store"
)

// Rescue by heartbeat.
//
// River's own rescuer takes a job for lost once it has run longer than its
// timeout, which would bound how long a run may take. fwlab's jobs have no
// timeout (River never rescues them) and are rescued by their run's
// heartbeat instead: every worker looks, every RescueAfter/4 (between
// 100 ms and 30 s), for runs whose job is running but whose heartbeat in
// the store (pgstore.Beat, on the database's clock; the claim for a run
// not yet claimed) is older than RescueAfter, and gives each back to the
// queue: the run queued again (still paused if it was) with its claim
// cleared, the job available again in its place. The next worker's claim
// starts the run afresh, its partial records replaced (pgstore.Claim); a
// worker that was only cut off from the database finds its claim gone at
// its next beat or write and stops without writing. A job rescued
// MaxAttempts times fails its run instead, so a run that kills its
// workers does not go round for ever. A live worker beats every
// BeatEvery however long its run lasts, so long runs run to their end.

// rescueInterval is how often a worker looks for runs to rescue.
func rescueInterval(after time.Duration) time.Duration {
	return min(max(after/4, 100*time.Millisecond), 30*time.Second)
}

// rescueLoop rescues stale runs until ctx ends.
func (w *Worker) rescueLoop(ctx context.Context) {
	t := time.NewTicker(rescueInterval(w.cfg.RescueAfter))
	defer t.Stop()
	for {
		ended := func(sweep string) {
			if err := w.endSweep(context.WithoutCancel(ctx), sweep); err != nil {
				w.cfg.Logger.Warn("ending a sweep", "sweep", sweep, "err", err)
			}
		}
		if n, err := rescueStale(ctx, w.cfg.Store.Pool(), w.cfg.RescueAfter, ended); err != nil && ctx.Err() == nil {
			w.cfg.Logger.Warn("looking for runs to rescue", "err", err)
		} else if n > 0 {
			w.m.rescued.Add(int64(n))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// staleWhere selects the running jobs whose run's heartbeat is older than
// $2 µs and that started longer ago than that ($1 the job kind): j the
// job, r its run. A job River marked completed while its run is live was
// ended by a worker whose claim had been taken over (it was cut off, and
// its run rescued) while another worker ran the run: it is looked at too.

const staleWhere = `j.kind = $1 AND j.state IN ('running', 'completed')
	  AND j.attempted_at < clock_timestamp() - $2 * interval '1 microsecond'
	  AND COALESCE(r.beat_us, 0) < (EXTRACT(EPOCH FROM clock_timestamp()) * 1000000)::BIGINT - $2
	  AND r.status IN ('queued', 'running', 'paused')`

// rescueStale gives the runs of the stale jobs back to the queue and
// returns how many it rescued; ended is called with the sweep of each
// cell's run that it failed.
func rescueStale(ctx context.Context, pool *pgxpool.Pool, after time.Duration, ended func(sweep string)) (int, error) {
	rows, err := pool.Query(ctx, `SELECT j.id FROM river_job j JOIN runs r ON r.id = j.args->>'run_id' WHERE `+staleWhere,
		RunArgs{}.Kind(), after.Microseconds())
	if err != nil {
		return 0, fmt.Errorf("queue: looking for stale runs: %w", err)
	}
	jobs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return 0, fmt.Errorf("queue: looking for stale runs: %w", err)
	}
	n := 0
	for _, job := range jobs {
		ok, sweep, err := rescueJob(ctx, pool, job, after)
		if err != nil {
			return n, err
		}
		if sweep != "" {
			ended(sweep)
		}
		if ok {
			n++
		}
	}
	return n, nil
}

// rescueJob rescues one job if it is still stale (another worker may have
// rescued it, or its worker beaten, since it was selected); sweep is the
// sweep of a cell's run that it failed.
func rescueJob(ctx context.Context, pool *pgxpool.Pool, job int64, after time.Duration) (ok bool, sweep string, err error) {
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var id string
		var attempt, maxAttempts int
		err := tx.QueryRow(ctx, `SELECT r.id, j.attempt, j.max_attempts, COALESCE(j.args->>'sweep_id', '') FROM river_job j JOIN runs r ON r.id = j.args->>'run_id'
			WHERE j.id = $3 AND `+staleWhere+` FOR UPDATE OF j, r SKIP LOCKED`,
			RunArgs{}.Kind(), after.Microseconds(), job).Scan(&id, &attempt, &maxAttempts, &sweep)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		ok = true
		msg, _ := json.Marshal(map[string]any{"at": time.Now().UTC(), "attempt": attempt,
			"error": fmt.Sprintf("rescued: the run's heartbeat is older than -rescue-after (%v)", after)})
		if attempt >= maxAttempts {
			return failRescued(ctx, tx, job, id, attempt, msg)
		}
		sweep = ""
		if _, err := tx.Exec(ctx, `UPDATE traces SET status = $2 WHERE run_id = $1 AND status IN ($2, $3, $4)`,
			id, store.StatusQueued, store.StatusRunning, store.StatusPaused); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE runs SET status = CASE WHEN status = $2 THEN $2 ELSE $3 END, claim = '' WHERE id = $1`,
			id, store.StatusPaused, store.StatusQueued); err != nil {
			return err
		}
		// back in the shared queue, if it had been lent to the worker (lend.go)
		_, err = tx.Exec(ctx, `UPDATE river_job SET state = 'available', queue = $3, finalized_at = NULL, errors = array_append(errors, $2::jsonb) WHERE id = $1`, job, msg, river.QueueDefault)
		return err
	})
	if err != nil {
		return false, "", fmt.Errorf("queue: rescuing job %d: %w", job, err)
	}
	return ok, sweep, nil
}

// failRescued ends a run whose job was rescued too often: the run fails,
// the job is discarded.
func failRescued(ctx context.Context, tx pgx.Tx, job int64, id string, attempts int, msg []byte) error {
	why := fmt.Sprintf("failed: its worker stopped beating on each of %d attempts", attempts)
	if _, err := tx.Exec(ctx, `UPDATE traces SET status = $2 WHERE run_id = $1 AND status IN ($3, $4, $5)`,
		id, store.StatusFailed, store.StatusQueued, store.StatusRunning, store.StatusPaused); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE runs SET status = $2, message = $3, ended_us = (EXTRACT(EPOCH FROM clock_timestamp()) * 1000000)::BIGINT WHERE id = $1`,
		id, store.StatusFailed, why); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `UPDATE river_job SET state = 'discarded', finalized_at = clock_timestamp(), errors = array_append(errors, $2::jsonb) WHERE id = $1`, job, msg)
	return err
}
