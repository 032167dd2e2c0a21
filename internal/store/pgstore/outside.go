package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fwlab/fwlab/internal/store"
)

// Runs opened from outside on a shared store (docs/live.md, "Many
// servers"). Such a run lives in the memory of the front end that opened
// it, which ends it when its client goes silent. When that front end
// itself stops without ending it (killed, its machine gone), no process
// holds the run any more: on SQLite the store's next owner marks it
// interrupted; on PostgreSQL, which no process owns, the front end that
// holds the run beats on its row while batches come (BeatOutside), and
// any front end ends the runs whose beat is older than their idle timeout
// and some more (EndOrphanOutside).

// BeatOutside says, on the database's clock, that the run opened from
// outside id is held by a live front end and its client is logging.
func (s *Store) BeatOutside(ctx context.Context, id string) error {
	_, err := s.pool.Exec(ctx, `UPDATE runs SET beat_us = `+nowUS+` WHERE id = $1 AND outside`, id)
	if err != nil {
		return fmt.Errorf("store: beating run %s: %w", id, s.noteWrite(err))
	}
	return nil
}

// EndOrphanOutside ends failed every live run opened from outside whose
// last beat (or, never beaten, its creation) is older than after, the
// message saying why, and returns their ids.
func (s *Store) EndOrphanOutside(ctx context.Context, after time.Duration) ([]string, error) {
	msg := fmt.Sprintf("failed: no records came for %v and the server that held the run stopped without ending it (a run opened from outside lives on the server that opened it)", after.Round(time.Second))
	var ids []string
	err := s.tx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `UPDATE runs SET status = $1, message = $2, ended_us = `+nowUS+`
			WHERE outside AND status IN ($3, $4, $5) AND COALESCE(beat_us, created_us) < `+nowUS+` - $6
			RETURNING id`,
			store.StatusFailed, msg, store.StatusQueued, store.StatusRunning, store.StatusPaused, after.Microseconds())
		if err != nil {
			return err
		}
		if ids, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		if _, err := tx.Exec(ctx, `UPDATE traces SET status = $1 WHERE run_id = ANY($2) AND status IN ($3, $4, $5)`,
			store.StatusFailed, ids, store.StatusQueued, store.StatusRunning, store.StatusPaused); err != nil {
			return err
		}
		for _, id := range ids {
			if err := notifyControl(ctx, tx, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: ending the runs opened from outside whose server stopped: %w", err)
	}
	return ids, nil
}
