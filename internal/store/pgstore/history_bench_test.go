package pgstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/pgtest"
	"github.com/fwlab/fwlab/internal/store/pgstore"
	"github.com/fwlab/fwlab/internal/store/storetest"
)

// BenchmarkPGHistoryList builds a PostgreSQL store of -fwlab.history-runs
// generated runs (storetest.HistoryFillSQL from generate_series, in one
// transaction) and times every History request (storetest.BenchHistory).
func BenchmarkPGHistoryList(b *testing.B) {
	ctx := context.Background()
	if historyURL == "" {
		c := pgtest.Shared(b)
		url := c.NewDB(b)
		start := time.Now()
		if err := fillPG(ctx, url, *storetest.HistoryRuns); err != nil {
			b.Fatal(err)
		}
		b.Logf("%d runs written in %v", *storetest.HistoryRuns, time.Since(start).Round(time.Millisecond))
		historyURL = url
	}
	s, err := pgstore.Open(ctx, historyURL)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	storetest.BenchHistory(b, s)
}

// historyURL is the database BenchmarkPGHistoryList built, kept for the
// next round of a -count (the shared cluster lives as long as the process).
var historyURL string

// fillPG makes the store's schema in the database at url and writes runs
// 0 to n-1 of the generated notebook in one transaction with the triggers
// off (per row they would take most of an hour at 10⁶ runs): the runs'
// algorithms filed and counted set at a time, as the triggers' functions
// file and count one run's; then the tables are vacuumed and analyzed, as
// autovacuum does after a large write (its vacuum also merges the
// trigram indexes' pending entries, which a search reads otherwise).
func fillPG(ctx context.Context, url string, n int) error {
	s, err := pgstore.Open(ctx, url)
	if err != nil {
		return err
	}
	defer s.Close()
	tx, err := s.Pool().Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SET LOCAL session_replication_role = replica`); err != nil {
		return err
	}
	for _, q := range storetest.HistoryFillSQL("", fmt.Sprintf("generate_series(0::bigint, %d) AS s(i)", n-1)) {
		if _, err := tx.Exec(ctx, q); err != nil {
			return fmt.Errorf("%w in %.200s", err, q)
		}
	}
	for _, q := range []string{
		`INSERT INTO run_algos (algo, at_us, run_id, problem, status)
			SELECT DISTINCT n.algo, r.created_us, r.id, r.problem, r.status
			FROM (SELECT run_id, algo FROM traces
				UNION SELECT run_id, split_part(algo, ' + ', 1) FROM traces WHERE strpos(algo, ' + ') > 0) n
			JOIN runs r ON r.id = n.run_id`,
		`INSERT INTO run_count_deltas (algo, problem, status, n)
			SELECT '', problem, status, COUNT(*) FROM runs GROUP BY problem, status
			UNION ALL SELECT algo, problem, status, COUNT(*) FROM run_algos GROUP BY algo, problem, status`,
	} {
		if _, err := tx.Exec(ctx, q); err != nil {
			return err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	_, err = s.Pool().Exec(ctx, `VACUUM ANALYZE`)
	return err
}

// The fill writes what the store's own write path does: a small notebook
// filled by SQL lists alike, under every History filter, as the same runs
// written one by one through PutRun.
func TestHistoryFillPG(t *testing.T) {
	ctx := context.Background()
	c := pgtest.Shared(t)
	const n = 800 // past run 700, the first named "baseline 7"
	url := c.NewDB(t)
	if err := fillPG(ctx, url, n); err != nil {
		t.Fatal(err)
	}
	a, err := pgstore.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b := open(t, c)
	storetest.PutHistoryRuns(t, b, n)
	storetest.SameHistory(t, a, b)
}
