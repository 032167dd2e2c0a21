package storetest_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/storetest"
)

// BenchmarkHistoryList times every History request (storetest.BenchHistory)
// on a SQLite store of -fwlab.history-runs generated runs, written straight
// into its tables by storetest.HistoryFillSQL (one transaction, the runs
// made by a recursive CTE; the store's own triggers file their algorithms,
// names and notes and count them).
//
// The filled store is kept in the user's cache folder
// (fwlab/history-s<schema>-g<generator>-<runs>.db), so a later run of the
// benchmark at the same size, schema and generator skips the fill.
func BenchmarkHistoryList(b *testing.B) {
	path, err := historyStore(*storetest.HistoryRuns, b.Logf)
	if err != nil {
		b.Fatal(err)
	}
	s, err := store.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	storetest.BenchHistory(b, s)
}

// historyGenerator names the generated notebook's form: a change to
// storetest.NewHistoryRun or HistoryFillSQL changes it, so that a store
// cached by an older generator is not read.
const historyGenerator = 3

// historyStore returns the cached store of n generated runs, filling it
// first when there is none.
func historyStore(n int, logf func(string, ...any)) (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "fwlab")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, fmt.Sprintf("history-s%d-g%d-%d.db", store.SchemaVersion, historyGenerator, n))
	if _, err := os.Stat(path); err == nil {
		logf("the store of %d runs cached at %s", n, path)
		return path, nil
	}
	// filled under another name and renamed when whole: an interrupted
	// fill leaves no store that looks ready
	tmp, err := os.MkdirTemp(dir, "fill-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	fill := filepath.Join(tmp, "history.db")
	start := time.Now()
	if err := fillSQLite(context.Background(), fill, n); err != nil {
		return "", err
	}
	if err := os.Rename(fill, path); err != nil {
		return "", err
	}
	logf("%d runs written in %v, cached at %s", n, time.Since(start).Round(time.Millisecond), path)
	return path, nil
}

// fillSQLite makes a store at path and writes runs 0 to n-1 of the
// generated notebook in one transaction, with a page cache large enough
// that it does not spill to the log; the log is folded into the file at
// the end.
func fillSQLite(ctx context.Context, path string, n int) error {
	s, err := store.Open(path) // the schema
	if err != nil {
		return err
	}
	s.Close()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)&_pragma=cache_size(-1048576)&_pragma=journal_mode(wal)")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	with := fmt.Sprintf("WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i + 1 < %d) ", n)
	for _, q := range storetest.HistoryFillSQL(with, "s") {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%w in %.200s", err, q)
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	for _, q := range []string{`PRAGMA wal_checkpoint(TRUNCATE)`} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// The fill writes what the store's own write path does: a small notebook
// filled by SQL lists alike, under every History filter, as the same runs
// written one by one through PutRun.
func TestHistoryFillSQLite(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const n = 800 // past run 700, the first named "baseline 7"
	filled := filepath.Join(dir, "filled.db")
	if err := fillSQLite(ctx, filled, n); err != nil {
		t.Fatal(err)
	}
	a, err := store.Open(filled)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := store.Open(filepath.Join(dir, "put.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	storetest.PutHistoryRuns(t, b, n)
	storetest.SameHistory(t, a, b)
}
