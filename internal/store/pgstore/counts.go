package pgstore

import (
	"context"
	"time"
)

// countsEvery is how often at most the store folds run_count_deltas.
const countsEvery = 5 * time.Second

// compactCounts folds run_count_deltas into one row per key (schema 15),
// at most every countsEvery: the triggers add a row for each run or
// run_algos entry that comes, goes or changes, and the count of a History
// page sums its key's rows. One statement deletes the rows it sees and
// adds their sums: rows added meanwhile by other transactions are not
// seen and stay, a second fold at the same time skips the rows the first
// deleted, and a reader sees the rows before or after, the same sums.
// A fold that fails leaves the rows as they were (the sums are right
// either way).
func (s *Store) compactCounts(ctx context.Context) {
	now := time.Now().UnixNano()
	last := s.counted.Load()
	if now-last < int64(countsEvery) || !s.counted.CompareAndSwap(last, now) {
		return
	}
	_, _ = s.pool.Exec(ctx, `WITH gone AS (DELETE FROM run_count_deltas RETURNING algo, problem, status, n)
		INSERT INTO run_count_deltas (algo, problem, status, n)
			SELECT algo, problem, status, SUM(n) FROM gone GROUP BY algo, problem, status HAVING SUM(n) <> 0`)
}
