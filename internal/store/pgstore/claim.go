package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/store"
)

// A run taken from the queue by a worker is claimed: the worker's claim (a
// string unique to the attempt, such as "worker-name/job-id/attempt") is
// written on the run, and the run's records are appended, its heart beats
// and it ends only under that claim. A worker presumed dead whose job was
// rescued and claimed again elsewhere finds its claim gone and stops,
// writing nothing more: so every record is stored once.

// ErrClaimLost is returned (wrapped) when a run is no longer claimed by the
// caller (another worker took it over, or it was deleted).
var ErrClaimLost = errors.New("the run is claimed by another worker")

// ErrNotLive is returned (wrapped) by Claim for a run that has ended (it
// was cancelled while queued, for instance): there is nothing to run.
var ErrNotLive = errors.New("the run has ended")

// Claim takes a live run for a worker and starts it afresh: its records,
// trace results and message are removed (a run is a pure function of its
// spec and seed, ARCHITECTURE.md, "Records", so a run restarted elsewhere gives the same
// records again), its traces and itself set running (a paused run stays
// paused, its steps counted afresh).
func (s *Store) Claim(ctx context.Context, id, claim string) error {
	if claim == "" || strings.IndexByte(claim, 0) >= 0 {
		return fmt.Errorf("store: claiming run %s: the claim must be a non-empty text", id)
	}
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var status string
		err := tx.QueryRow(ctx, `SELECT status FROM runs WHERE id = $1 FOR UPDATE`, id).Scan(&status)
		if errors.Is(err, pgx.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		if !store.Live(status) && status != store.StatusInterrupted {
			return fmt.Errorf("%w (%s)", ErrNotLive, status)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM batches WHERE run_id = $1`, id); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE traces SET records = 0, summary = NULL, panels = NULL, panels_error = '', status = $2 WHERE run_id = $1`,
			id, store.StatusRunning); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE runs SET status = CASE WHEN status = $4 THEN $4 ELSE $2 END, steps = 0,
			ended_us = NULL, message = '', claim = $3, beat_us = `+nowUS+` WHERE id = $1`,
			id, store.StatusRunning, claim, store.StatusPaused)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: claiming run %s: %w", id, err)
	}
	return nil
}

// How a transaction under a claim locks the run's row, first of all rows:
// forShare when it writes its traces and batches only (appends, which may
// run side by side), forUpdate when it writes the run's row too. Taking
// the lock it will need on the run's row before any trace's keeps one
// order: a transaction that locked the run for share and updates a trace,
// then tried to update the run, would wait for an append that locked the
// run for share and waits for that trace (a deadlock).
const (
	forShare  = "FOR SHARE"
	forUpdate = "FOR NO KEY UPDATE"
)

// lockClaim locks the run's row in tx (lock: forShare or forUpdate) and
// checks that claim holds it.
func lockClaim(ctx context.Context, tx pgx.Tx, id, claim, lock string) (status string, err error) {
	var got string
	err = tx.QueryRow(ctx, `SELECT claim, status FROM runs WHERE id = $1 `+lock, id).Scan(&got, &status)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("%w: run %s was deleted", ErrClaimLost, id)
	}
	if err != nil {
		return "", err
	}
	if got != claim {
		return "", fmt.Errorf("%w: run %s is now %q's", ErrClaimLost, id, got)
	}
	return status, nil
}

// AppendClaimed is AppendRecords under a claim: nothing is written once the
// claim is lost, nor once the run has ended (a run cancelled through the
// store keeps the records it held when it was cancelled: ErrNotLive).
func (s *Store) AppendClaimed(ctx context.Context, id, claim string, trace int, recs []solver.Record) error {
	if len(recs) == 0 {
		return nil
	}
	return s.AppendClaimedBatches(ctx, id, claim, trace, []store.Batch{{N: len(recs), Blob: store.EncodeBatch(nil, recs)}})
}

// AppendClaimedBatches is AppendClaimed of encoded batches, in one
// transaction.
func (s *Store) AppendClaimedBatches(ctx context.Context, id, claim string, trace int, bs []store.Batch) error {
	if store.BatchRecords(bs) == 0 {
		return nil
	}
	err := s.tx(ctx, func(tx pgx.Tx) error {
		status, err := lockClaim(ctx, tx, id, claim, forShare)
		if err != nil {
			return err
		}
		if !store.Live(status) {
			return fmt.Errorf("%w (%s)", ErrNotLive, status)
		}
		return appendIn(ctx, tx, id, trace, bs)
	})
	if err != nil {
		return fmt.Errorf("store: appending to run %s trace %d: %w", id, trace, err)
	}
	return nil
}

// Beat records that the claimed run's worker is alive (the heartbeat's time
// is the database's, as the rescue compares it) and returns what the
// worker must follow: the run's status (a run cancelled or paused through
// the store reads so here, which is how a cancel or a pause reaches its
// worker), its steps and how long it has been paused (control.go). It is
// one statement, in no transaction of its own: a worker stopped right
// after it holds no lock.
func (s *Store) Beat(ctx context.Context, id, claim string) (c RunControl, err error) {
	var pausedFor *int64
	var timeout int64
	err = s.pool.QueryRow(ctx, `UPDATE runs SET beat_us = `+nowUS+` WHERE id = $1 AND claim = $2
		RETURNING status, steps, `+nowUS+` - paused_us, pause_timeout_us`, id, claim).Scan(&c.Status, &c.Steps, &pausedFor, &timeout)
	if errors.Is(err, pgx.ErrNoRows) {
		var got string
		err = s.pool.QueryRow(ctx, `SELECT claim FROM runs WHERE id = $1`, id).Scan(&got)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			err = fmt.Errorf("%w: run %s was deleted", ErrClaimLost, id)
		case err == nil:
			err = fmt.Errorf("%w: run %s is now %q's", ErrClaimLost, id, got)
		}
	}
	if err != nil {
		return RunControl{}, fmt.Errorf("store: heartbeat of run %s: %w", id, err)
	}
	if pausedFor != nil {
		c.PausedFor = time.Duration(*pausedFor) * time.Microsecond
	}
	c.PauseTimeout = time.Duration(timeout) * time.Microsecond
	return c, nil
}

// Finish ends a claimed run: each trace's result, then the run's status,
// end time and message, in one transaction under the claim.
func (s *Store) Finish(ctx context.Context, id, claim string, results []store.TraceResult, status, message string, ended time.Time) error {
	if !store.KnownStatus(status) {
		return fmt.Errorf("store: finishing run %s: unknown status %q", id, status)
	}
	if err := checkText("message", message, store.MaxNote); err != nil {
		return err
	}
	err := s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := lockClaim(ctx, tx, id, claim, forUpdate); err != nil {
			return err
		}
		for i, r := range results {
			var sum *string
			if r.Summary != nil {
				b, err := store.MarshalSummary(r.Summary)
				if err != nil {
					return err
				}
				str := string(b)
				sum = &str
			}
			if _, err := tx.Exec(ctx, `UPDATE traces SET status = $1, summary = $2, panels = $3, panels_error = $4 WHERE run_id = $5 AND idx = $6`,
				r.Status, sum, nullJSON(r.Panels), strings.ReplaceAll(r.PanelsError, "\x00", ""), id, i); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE runs SET status = $2, ended_us = $3, message = $4 WHERE id = $1`, id, status, micros(ended), message); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, Channel, id) // its followers read the end
		return err
	})
	if err != nil {
		return fmt.Errorf("store: finishing run %s: %w", id, err)
	}
	return nil
}

// Runner returns the claim of the worker that runs (or ran) a run, and its
// last heartbeat (zero if none).
func (s *Store) Runner(ctx context.Context, id string) (claim string, beat time.Time, err error) {
	var us *int64
	err = s.pool.QueryRow(ctx, `SELECT claim, beat_us FROM runs WHERE id = $1`, id).Scan(&claim, &us)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", time.Time{}, notFound("run " + id)
	}
	if err != nil {
		return "", time.Time{}, fmt.Errorf("store: run %s: %w", id, err)
	}
	if us != nil {
		beat = fromMicros(*us)
	}
	return claim, beat, nil
}

// Release gives a claimed run back to the queue (its worker is stopping):
// queued again (or still paused), its claim cleared; the next claim starts
// it afresh. A run that has ended meanwhile (a user cancelled it while its
// worker was cut off) stays as it is. While the store is degraded by a
// storage failure (health.go: its worker's writes were refused for want of
// space), the run ends failed instead, its message naming the database and
// the cause, with the records stored so far: run again, it would only fill
// the disk again (as on the SQLite store, where such a run ends failed).
func (s *Store) Release(ctx context.Context, id, claim string) error {
	if werr := s.writeFailure(); werr != nil {
		return s.failClaimed(ctx, id, claim, werr)
	}
	err := s.tx(ctx, func(tx pgx.Tx) error {
		status, err := lockClaim(ctx, tx, id, claim, forUpdate)
		if err != nil || !store.Live(status) {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE traces SET status = $2 WHERE run_id = $1`, id, store.StatusQueued); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE runs SET status = CASE WHEN status = $3 THEN $3 ELSE $2 END, claim = '' WHERE id = $1`,
			id, store.StatusQueued, store.StatusPaused)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: releasing run %s: %w", id, err)
	}
	return nil
}

// failClaimed ends a claimed live run failed for the storage failure werr.
func (s *Store) failClaimed(ctx context.Context, id, claim string, werr error) error {
	err := s.tx(ctx, func(tx pgx.Tx) error {
		status, err := lockClaim(ctx, tx, id, claim, forUpdate)
		if err != nil || !store.Live(status) {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE traces SET status = $2 WHERE run_id = $1 AND status IN ($3, $4, $5)`,
			id, store.StatusFailed, store.StatusQueued, store.StatusRunning, store.StatusPaused); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE runs SET status = $2, message = $3, ended_us = $4 WHERE id = $1`,
			id, store.StatusFailed, truncateText("failed: "+werr.Error(), store.MaxNote), micros(time.Now())); err != nil {
			return err
		}
		return notifyControl(ctx, tx, id)
	})
	if err != nil {
		return fmt.Errorf("store: ending run %s failed (%v): %w", id, werr, err)
	}
	return nil
}

// truncateText cuts s to at most max characters, without NUL.
func truncateText(s string, max int) string {
	s = strings.ReplaceAll(s, "\x00", "")
	if r := []rune(s); len(r) > max {
		return string(r[:max])
	}
	return s
}
