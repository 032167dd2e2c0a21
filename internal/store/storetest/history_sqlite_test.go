package storetest_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/storetest"
)

// BenchmarkHistoryList builds a SQLite store of -fwlab.history-runs small
// runs (storetest.HistoryRun; one or two traces each, no records) written
// straight into its tables, its indexes kept by its own triggers, and times
// every History request (storetest.BenchHistory).
//
// The store is built once per process (a -count of 3 times it three times)
// in a folder TestMain removes.
func BenchmarkHistoryList(b *testing.B) {
	ctx := context.Background()
	if historyDB == "" {
		dir, err := os.MkdirTemp("", "fwlab-history-")
		if err != nil {
			b.Fatal(err)
		}
		historyDir = dir
		path := filepath.Join(dir, "history.db")
		s, err := store.Open(path) // the schema
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
		start := time.Now()
		if err := fillSQLite(ctx, path, *storetest.HistoryRuns); err != nil {
			b.Fatal(err)
		}
		b.Logf("%d runs written in %v", *storetest.HistoryRuns, time.Since(start).Round(time.Millisecond))
		historyDB = path
	}
	s, err := store.Open(historyDB)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	storetest.BenchHistory(b, s)
}

// historyDB is the store BenchmarkHistoryList built, in historyDir.
var historyDB, historyDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if historyDir != "" {
		os.RemoveAll(historyDir)
	}
	os.Exit(code)
}

// fillSQLite writes n runs in one transaction, with a page cache large
// enough that it does not spill to the log.
func fillSQLite(ctx context.Context, path string, n int) error {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)&_pragma=cache_size(-524288)")
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
	insRun, err := tx.PrepareContext(ctx, `INSERT INTO runs (id, created_us, ended_us, status, problem, spec, version, name, note, entered_us)
		VALUES (?, ?, ?, ?, ?, ?, 'bench', ?, ?, ?)`)
	if err != nil {
		return err
	}
	insTrace, err := tx.PrepareContext(ctx, `INSERT INTO traces (run_id, idx, algo, replication, seed, status, records) VALUES (?, ?, ?, 0, 1, ?, 100)`)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < n; i++ {
		h := storetest.NewHistoryRun(i, rng)
		sp := fmt.Sprintf(`{"problem":%q,"algorithms":[{"algo":%q}],"iters":100,"seed":%d}`, h.Problem, h.Algos[0], i)
		if _, err := insRun.ExecContext(ctx, h.ID, h.At, h.At+500, h.Status, h.Problem, sp, h.Name, h.Note, h.At); err != nil {
			return err
		}
		for j, a := range h.Algos {
			if _, err := insTrace.ExecContext(ctx, h.ID, j, a, h.Status); err != nil {
				return err
			}
		}
	}
	return tx.Commit()
}
