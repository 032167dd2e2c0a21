package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fwlab/fwlab/internal/store"
)

// Pause, step and resume of a run on a worker travel through the store as
// they do on one machine through the session (internal/session): a pause
// is the run's status paused, a step adds one to the run's step counter
// (each step lets the worker's running trace make one more record), a
// resume sets it running again (queued when no worker holds it). Each
// change is announced on Channel with the payload ControlPayload(id), on
// which the run's worker wakes (and with the run's id, on which the
// servers following the run wake), and the worker also reads it at each
// heartbeat (Beat).
//
// A pause records when it began on the database's clock, and the pause
// timeout of the server that paused the run; a step restarts it. A worker
// whose run has stayed paused for longer cancels it, as a server does its
// own runs.

// Control operations (Control's op).
const (
	OpPause  = "pause"
	OpResume = "resume"
	OpStep   = "step"
)

// ControlPayload is the notification payload on Channel that wakes the
// worker of run id when its status or steps changed.
func ControlPayload(id string) string { return "ctl:" + id }

// nowUS is the database's clock in microseconds since the Unix epoch.
const nowUS = `(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000)::BIGINT`

// RunControl is what a worker reads of its run at each heartbeat.
type RunControl struct {
	Status string // the run's status: running, paused, cancelled, …
	// Steps counts the steps granted since the run was claimed.
	Steps int64
	// PausedFor is how long the run has been paused (since its last step),
	// and PauseTimeout the pause timeout of the server that paused it (0:
	// none).
	PausedFor, PauseTimeout time.Duration
}

// PauseExpired reports whether the run has been paused for longer than its
// pause timeout.
func (c RunControl) PauseExpired() bool {
	return c.Status == store.StatusPaused && c.PauseTimeout > 0 && c.PausedFor > c.PauseTimeout
}

// Control pauses, steps or resumes a live run (op is OpPause, OpStep or
// OpResume) and returns its status afterwards; pauseTimeout is how long
// the run may stay paused before its worker cancels it. As on one machine:
// a pause of a paused run and a resume of a running one change nothing; a
// step of a running (or queued) run pauses it (its trace stops at its next
// record), a step of a paused run lets it make one more record and
// restarts its pause timeout. A run that has ended is left as it is.
func (s *Store) Control(ctx context.Context, id, op string, pauseTimeout time.Duration) (status string, err error) {
	if op != OpPause && op != OpStep && op != OpResume {
		return "", fmt.Errorf("store: run %s: unknown control %q", id, op)
	}
	err = s.tx(ctx, func(tx pgx.Tx) error {
		var claim string
		err := tx.QueryRow(ctx, `SELECT status, claim FROM runs WHERE id = $1 FOR UPDATE`, id).Scan(&status, &claim)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("run " + id)
		}
		if err != nil {
			return err
		}
		next, q := controlUpdate(status, claim, op)
		if q == "" {
			return nil
		}
		status = next
		if _, err := tx.Exec(ctx, q, id, next, pauseTimeout.Microseconds()); err != nil {
			return err
		}
		return notifyControl(ctx, tx, id)
	})
	if err != nil {
		return "", fmt.Errorf("store: %s of run %s: %w", op, id, err)
	}
	return status, nil
}

// controlUpdate returns the status that op gives a run in status (claimed
// by claim, "" none) and the statement that writes it ($1 the run, $2 the
// status, $3 the pause timeout in µs), "" when op changes nothing.
func controlUpdate(status, claim, op string) (string, string) {
	const pause = `UPDATE runs SET status = $2, paused_us = ` + nowUS + `, pause_timeout_us = $3 WHERE id = $1`
	switch {
	case !store.Live(status):
		return status, ""
	case op == OpResume && status == store.StatusPaused:
		next := store.StatusQueued
		if claim != "" {
			next = store.StatusRunning
		}
		return next, `UPDATE runs SET status = $2, paused_us = NULL, pause_timeout_us = $3 WHERE id = $1`
	case op == OpStep && status == store.StatusPaused:
		return status, `UPDATE runs SET status = $2, steps = steps + 1, paused_us = ` + nowUS + `, pause_timeout_us = $3 WHERE id = $1`
	case (op == OpPause || op == OpStep) && status != store.StatusPaused:
		return store.StatusPaused, pause
	}
	return status, ""
}

// notifyControl wakes the run's worker and its followers (sent when tx
// commits).
func notifyControl(ctx context.Context, tx pgx.Tx, id string) error {
	if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, Channel, ControlPayload(id)); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, Channel, id)
	return err
}
