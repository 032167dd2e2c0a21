package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/fwlab/fwlab/internal/store"
)

// Delete deletes runs with their traces and records, and in the same
// transaction the data files no run names any more that a run named (or
// past their grace, datafiles.go); unknown ids are skipped. It returns the number deleted.
func (s *Store) Delete(ctx context.Context, ids ...string) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	var n int
	err := s.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM runs WHERE id = ANY($1)`, ids)
		if err != nil {
			return err
		}
		n = int(tag.RowsAffected())
		if n == 0 {
			return nil
		}
		_, _, err = reclaimIn(ctx, tx, DataFileGrace)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: deleting runs: %w", err)
	}
	return n, nil
}

// Trim deletes the unstarred runs beyond the keep that entered this store
// last, as store.Store.Trim does: never a starred run, a live one, one
// that ended or entered within store.TrimGrace (by this store's clock), or
// one whose records this process is reading.
func (s *Store) Trim(ctx context.Context, keep int) (int, error) {
	rule, err := store.NewTrimRule(keep, now(), &s.reading)
	if err != nil {
		return 0, err
	}
	rows, err := s.pool.Query(ctx, `SELECT id, status, ended_us, entered_us FROM runs WHERE NOT starred ORDER BY entered_us DESC, id COLLATE "C" DESC`)
	if err != nil {
		return 0, fmt.Errorf("store: trimming: %w", err)
	}
	var del []string
	for i := 0; rows.Next(); i++ {
		var id, st string
		var ended *int64
		var entered int64
		if err := rows.Scan(&id, &st, &ended, &entered); err != nil {
			rows.Close()
			return 0, fmt.Errorf("store: trimming: %w", err)
		}
		if rule.Deletes(i, id, st, ended, entered) {
			del = append(del, id)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("store: trimming: %w", err)
	}
	// a read that began since the rule looked spares its run too
	return s.reading.DeleteUnread(del, func(ids ...string) (int, error) { return s.Delete(ctx, ids...) })
}
