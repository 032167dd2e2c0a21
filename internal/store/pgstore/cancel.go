package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fwlab/fwlab/internal/store"
)

// Cancelled says what Cancel did with one id.
type Cancelled struct {
	Sweep bool  // the id is a sweep's, Cells of its live cells cancelled
	Cells int   //
	Err   error // why nothing was cancelled (the run has ended, no such id)
}

// ErrNoSuchID is Cancelled.Err for an id of no run and no sweep.
var ErrNoSuchID = errors.New("no run or sweep has this id")

// Cancel cancels runs and sweeps (each sweep's live cells, and the sweep)
// in one transaction: a worker freed by one of the cancels never starts a
// run that another id of the same call cancels. Each cancelled run's
// worker is woken (notifyControl).
func (s *Store) Cancel(ctx context.Context, ids []string, ended time.Time) ([]Cancelled, error) {
	out := make([]Cancelled, len(ids))
	err := s.tx(ctx, func(tx pgx.Tx) error {
		for i, id := range ids {
			var status string
			err := tx.QueryRow(ctx, `SELECT status FROM runs WHERE id = $1 FOR UPDATE`, id).Scan(&status)
			switch {
			case err == nil && !store.Live(status):
				out[i].Err = fmt.Errorf("the run has ended (%s)", status)
			case err == nil:
				err = cancelRunIn(ctx, tx, id, ended)
			case errors.Is(err, pgx.ErrNoRows):
				out[i].Sweep = true
				out[i].Cells, out[i].Err, err = cancelSweepIn(ctx, tx, id, ended)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: cancelling: %w", err)
	}
	return out, nil
}

// cancelRunIn sets a live run and its live traces cancelled in tx.
func cancelRunIn(ctx context.Context, tx pgx.Tx, id string, ended time.Time) error {
	if _, err := tx.Exec(ctx, `UPDATE runs SET status = $2, ended_us = $3 WHERE id = $1`, id, store.StatusCancelled, micros(ended)); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE traces SET status = $2 WHERE run_id = $1 AND status IN ($3, $4, $5)`,
		id, store.StatusCancelled, store.StatusQueued, store.StatusRunning, store.StatusPaused); err != nil {
		return err
	}
	return notifyControl(ctx, tx, id)
}

// cancelSweepIn cancels a sweep's live cells and the sweep in tx; idErr
// says that there is no such sweep.
func cancelSweepIn(ctx context.Context, tx pgx.Tx, id string, ended time.Time) (cells int, idErr, err error) {
	tag, err := tx.Exec(ctx, `UPDATE sweeps SET status = $2 WHERE id = $1`, id, store.StatusCancelled)
	if err != nil {
		return 0, nil, err
	}
	if tag.RowsAffected() == 0 {
		return 0, ErrNoSuchID, nil
	}
	rows, err := tx.Query(ctx, `SELECT r.id FROM sweep_cells c JOIN runs r ON r.id = c.run_id
		WHERE c.sweep_id = $1 AND r.status IN ($2, $3, $4) ORDER BY c.idx FOR UPDATE OF r`,
		id, store.StatusQueued, store.StatusRunning, store.StatusPaused)
	if err != nil {
		return 0, nil, err
	}
	runs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return 0, nil, err
	}
	for _, r := range runs {
		if err := cancelRunIn(ctx, tx, r, ended); err != nil {
			return 0, nil, err
		}
	}
	return len(runs), nil, nil
}

// CancelSweep cancels a sweep and its live cells in one transaction (as
// Cancel does) and returns how many cells it cancelled; a sweep that has
// ended is left as it is.
func (s *Store) CancelSweep(ctx context.Context, id string) (int, error) {
	var cells int
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var status string
		err := tx.QueryRow(ctx, `SELECT status FROM sweeps WHERE id = $1 FOR UPDATE`, id).Scan(&status)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("sweep " + id)
		}
		if err != nil || !store.Live(status) {
			return err
		}
		var idErr error
		cells, idErr, err = cancelSweepIn(ctx, tx, id, now())
		return errors.Join(idErr, err)
	})
	if err != nil {
		return 0, fmt.Errorf("store: cancelling sweep %s: %w", id, err)
	}
	return cells, nil
}
