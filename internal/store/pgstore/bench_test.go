package pgstore_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

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

// BenchmarkPGRecords appends a real LASSO trace (2000 records, evaluated
// every 10 iterations) from 8 runs at once to a PostgreSQL store (a
// cluster with PostgreSQL's default durability: fsync on), and
// reports records per second, the bytes per record of the batches table
// (with its index and TOAST), and the rate as a ratio to the SQLite file
// store's in the same op (x-sqlite-rate).
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
		var size int64
		if err := pg.Pool().QueryRow(ctx, `SELECT pg_total_relation_size('batches')`).Scan(&size); err != nil {
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
		b.ReportMetric(rate/sqRate, "x-sqlite-rate")
	}
}
