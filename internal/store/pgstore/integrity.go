package pgstore

import (
	"context"
	"fmt"
	"strings"
)

// IntegrityCheck checks the records' bookkeeping: every trace's batches
// start at record 0, follow each other without gap or overlap and add up
// to the trace's record count.
func (s *Store) IntegrityCheck(ctx context.Context) error {
	rows, err := s.pool.Query(ctx, `
		WITH b AS (
			SELECT run_id, trace, first_rec, n,
				COALESCE(LAG(first_rec + n) OVER (PARTITION BY run_id, trace ORDER BY first_rec), 0) AS expect
			FROM batches)
		SELECT run_id, trace, 'batch at ' || first_rec || ' follows records to ' || expect FROM b WHERE first_rec <> expect
		UNION ALL
		SELECT t.run_id, t.idx, 'counts ' || t.records || ' records, its batches hold ' || COALESCE(SUM(b.n), 0)
		FROM traces t LEFT JOIN batches b ON b.run_id = t.run_id AND b.trace = t.idx
		GROUP BY t.run_id, t.idx, t.records HAVING t.records <> COALESCE(SUM(b.n), 0)
		LIMIT 20`)
	if err != nil {
		return fmt.Errorf("store: integrity check: %w", err)
	}
	defer rows.Close()
	var msgs []string
	for rows.Next() {
		var id, msg string
		var trace int
		if err := rows.Scan(&id, &trace, &msg); err != nil {
			return fmt.Errorf("store: integrity check: %w", err)
		}
		msgs = append(msgs, fmt.Sprintf("run %s trace %d: %s", id, trace, msg))
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: integrity check: %w", err)
	}
	if len(msgs) > 0 {
		return fmt.Errorf("store: integrity check: %s", strings.Join(msgs, "; "))
	}
	return nil
}

// DiskUsage returns the size of the database.
func (s *Store) DiskUsage(ctx context.Context) (int64, error) {
	var n int64
	if err := s.pool.QueryRow(ctx, `SELECT pg_database_size(current_database())`).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: disk usage: %w", err)
	}
	return n, nil
}
