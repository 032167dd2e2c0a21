package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Delete deletes runs with their traces and records; unknown ids are
// skipped. It returns the number deleted.
func (s *Store) Delete(ctx context.Context, ids ...string) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	total := 0
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), 500)]
		ids = ids[len(chunk):]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		res, err := s.exec(ctx, `DELETE FROM runs WHERE id IN (`+placeholders(len(chunk))+`)`, args...)
		if err != nil {
			return total, fmt.Errorf("store: deleting runs: %w", err)
		}
		n, _ := res.RowsAffected()
		total += int(n)
	}
	if total > 0 {
		// give the freed pages back to the file system
		if _, err := s.exec(ctx, `PRAGMA incremental_vacuum`); err != nil {
			return total, fmt.Errorf("store: vacuum after delete: %w", err)
		}
		s.truncateWAL(ctx)
	}
	return total, nil
}

// WALTruncateBytes is the size of the write-ahead log over which a delete
// checkpoints it and truncates the file: a large trim writes every page it
// frees to the log, and SQLite's own checkpoints copy the log back into the
// database without ever shrinking the file.
var WALTruncateBytes int64 = 64 << 20

// truncateWAL checkpoints the write-ahead log into the database and
// truncates it when it is over WALTruncateBytes. A reader in the way makes
// the checkpoint give up, leaving the log as it is (the next delete tries
// again): a failure here loses nothing.
func (s *Store) truncateWAL(ctx context.Context) {
	if s.walSize() <= WALTruncateBytes {
		return
	}
	var busy, logPages, done int
	_ = s.db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logPages, &done)
}

// TrimGrace is how long after it ended, or entered the store, a run is
// spared by Trim (a variable so that tests of trimming need not wait).
var TrimGrace = time.Minute

// Trim deletes the unstarred runs beyond the keep that entered this store
// last (by when they entered it, not by the dates a bundle carries), and
// returns the number deleted. It never deletes a starred run, a live one,
// one that ended or entered within TrimGrace (by this store's clock: a
// date in the future does not count as recent), or one whose records are
// being read in this process (EachRecord).
func (s *Store) Trim(ctx context.Context, keep int) (int, error) {
	rule, err := NewTrimRule(keep, now(), &s.reading)
	if err != nil {
		return 0, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, status, ended_us, entered_us FROM runs
		WHERE starred = 0 AND entered_us IS NOT NULL ORDER BY entered_us DESC, id DESC`)
	if err != nil {
		return 0, fmt.Errorf("store: trimming: %w", err)
	}
	var del []string
	for i := 0; rows.Next(); i++ {
		var id, st string
		var ended sql.NullInt64
		var entered int64
		if err := rows.Scan(&id, &st, &ended, &entered); err != nil {
			rows.Close()
			return 0, fmt.Errorf("store: trimming: %w", err)
		}
		var end *int64
		if ended.Valid {
			end = &ended.Int64
		}
		if rule.Deletes(i, id, st, end, entered) {
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
