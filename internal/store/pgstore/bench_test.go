package pgstore_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fwlab/fwlab/internal/pgtest"
	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
	"github.com/fwlab/fwlab/internal/store/storetest"
)

// solverRecords runs a real method and returns its records.
func solverRecords(b *testing.B, iters, evalEvery int) []solver.Record {
	b.Helper()
	run := spec.Run{Problem: "lasso", Algorithms: []spec.Algo{{Algo: "ssfw-as"}}, Iters: iters, EvalEvery: evalEvery, Seed: 1}
	sc, vals, err := scenarios.Resolve(&run)
	if err != nil {
		b.Fatal(err)
	}
	inst, err := sc.Build(context.Background(), vals, run.Seed)
	if err != nil {
		b.Fatal(err)
	}
	jobs, err := scenarios.Jobs(inst, &run)
	if err != nil {
		b.Fatal(err)
	}
	var recs []solver.Record
	if _, err := jobs[0].Method.Run(context.Background(), solver.RecorderFunc(func(r solver.Record) { recs = append(recs, r) })); err != nil {
		b.Fatal(err)
	}
	return recs
}

// appendAll appends recs to a new run in batches of 64 (about what a run
// streams per flush), 8 runs at once as a server's slots would, and
// returns the records per second.
func appendAll(b *testing.B, s store.Backend, recs []solver.Record) float64 {
	b.Helper()
	ctx := context.Background()
	const runs = 8
	ids := make([]string, runs)
	for i := range ids {
		id, err := s.PutRun(ctx, storetest.TestRun("lasso", "ssfw-as"))
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = id
	}
	start := time.Now()
	errs := make(chan error, runs)
	for _, id := range ids {
		go func() {
			for lo := 0; lo < len(recs); lo += 64 {
				if err := s.AppendRecords(ctx, id, 0, recs[lo:min(lo+64, len(recs))]); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range ids {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	return float64(runs*len(recs)) / time.Since(start).Seconds()
}

// batchBytes returns the bytes the records of the batches table occupy:
// its heap pages that hold a row and its TOAST table's pages that hold a
// chunk (8 KiB each), and the indexes of both. Left out, as they are not
// a cost per record: the empty pages PostgreSQL adds ahead when several
// sessions insert at once (up to 20 per waiting session; later inserts
// fill them), which made pg_total_relation_size vary from 35 to 80 bytes
// a record between runs of the same benchmark with the contention of its
// 8 runs, and the free-space and visibility maps (a fixed few pages a
// table). alloc is pg_total_relation_size, everything allocated.
func batchBytes(ctx context.Context, pool *pgxpool.Pool) (used, alloc int64, err error) {
	var toast string
	var idx int64
	err = pool.QueryRow(ctx, `SELECT reltoastrelid::regclass::text, pg_indexes_size('batches') + pg_indexes_size(reltoastrelid),
		pg_total_relation_size('batches') FROM pg_class WHERE relname = 'batches'`).Scan(&toast, &idx, &alloc)
	if err != nil {
		return 0, 0, err
	}
	var pages int64
	err = pool.QueryRow(ctx, `SELECT (SELECT count(DISTINCT (ctid::text::point)[0]) FROM batches)
		+ (SELECT count(DISTINCT (ctid::text::point)[0]) FROM `+toast+`)`).Scan(&pages)
	if err != nil {
		return 0, 0, err
	}
	return pages*8192 + idx, alloc, nil
}

// BenchmarkPGRecords appends a real LASSO trace (2000 iterations,
// evaluated every 10) from 8 runs at once to a PostgreSQL store (a
// cluster with PostgreSQL's default durability: fsync on), and reports
// records per second, the bytes per record the batches table occupies
// (batchBytes: its pages in use with TOAST and indexes; alloc-bytes/record
// is everything allocated, pre-extended empty pages and maps included),
// and the rate as a ratio to the SQLite file store's in the same op
// (x-sqlite-rate).
func BenchmarkPGRecords(b *testing.B) {
	c := pgtest.StartDurable(b) // fsync on, as a real server has it
	recs := solverRecords(b, 2000, 10)
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		pg, err := pgstore.Open(ctx, c.NewDB(b))
		if err != nil {
			b.Fatal(err)
		}
		rate := appendAll(b, pg, recs)
		size, alloc, err := batchBytes(ctx, pg.Pool())
		if err != nil {
			b.Fatal(err)
		}
		pg.Close()
		sq, err := store.Open(filepath.Join(b.TempDir(), "fwlab.db"))
		if err != nil {
			b.Fatal(err)
		}
		sqRate := appendAll(b, sq, recs)
		sq.Close()
		b.ReportMetric(rate, "records/s")
		b.ReportMetric(float64(size)/float64(8*len(recs)), "bytes/record")
		b.ReportMetric(float64(alloc)/float64(8*len(recs)), "alloc-bytes/record")
		b.ReportMetric(rate/sqRate, "x-sqlite-rate")
	}
}
