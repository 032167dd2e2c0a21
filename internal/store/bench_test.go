package store

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

// solverRecords runs a real method and returns its records (realistic
// floats: times, passes and objectives as a run produces them).
func solverRecords(b *testing.B, problem, algo string, iters, evalEvery int) []solver.Record {
	b.Helper()
	run := spec.Run{Problem: problem, Algorithms: []spec.Algo{{Algo: algo}}, Iters: iters, EvalEvery: evalEvery, Seed: 1}
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

// BenchmarkStoreRecords appends a real trace to a file store in batches of
// 64 (about what a run streams per flush) and reports the database's growth
// per record (its pages, and its files with the write-ahead log), and that size as a ratio to the trace's JSON Lines (what
// /api/runs/{id}/trace sends).
func BenchmarkStoreRecords(b *testing.B) {
	for _, c := range []struct {
		name, problem, algo string
		evalEvery           int
		noExtra             bool
	}{
		{"evaluated", "lasso", "ssfw-as", 1, true},        // objective, gap and grad_err on every record
		{"evaluated-extra", "lasso", "ssfw-as", 1, false}, // and LASSO's two extra metrics
		{"every10", "lasso", "ssfw-as", 10, true},         // the evaluation cadence of a long run
	} {
		b.Run(c.name, func(b *testing.B) {
			recs := solverRecords(b, c.problem, c.algo, 2000, c.evalEvery)
			for i := range recs {
				if c.noExtra {
					recs[i].Extra = nil
				}
			}
			var jsonl, blob int
			for lo := 0; lo < len(recs); lo += 64 {
				blob += len(encodeBatch(nil, recs[lo:min(lo+64, len(recs))]))
			}
			for i := range recs {
				j, err := json.Marshal(&recs[i])
				if err != nil {
					b.Fatal(err)
				}
				jsonl += len(j) + 1
			}
			ctx := context.Background()
			s, err := Open(filepath.Join(b.TempDir(), "bench.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			// a first run lays out the schema's pages
			if _, err := s.PutRun(ctx, testRun(c.problem, c.algo)); err != nil {
				b.Fatal(err)
			}
			before, _ := s.mainUsage(ctx)
			diskBefore, _ := s.DiskUsage(ctx)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				id, err := s.PutRun(ctx, testRun(c.problem, c.algo))
				if err != nil {
					b.Fatal(err)
				}
				for lo := 0; lo < len(recs); lo += 64 {
					if err := s.AppendRecords(ctx, id, 0, recs[lo:min(lo+64, len(recs))]); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.StopTimer()
			after, _ := s.mainUsage(ctx)
			diskAfter, _ := s.DiskUsage(ctx)
			perRecord := float64(after-before) / float64(b.N*len(recs))
			b.ReportMetric(perRecord, "bytes/record")
			// what the files take, the write-ahead log included (SQLite
			// lets it grow to about 1000 pages before a checkpoint reuses it)
			b.ReportMetric(float64(diskAfter-diskBefore)/float64(b.N*len(recs)), "disk-bytes/record")
			b.ReportMetric(float64(blob)/float64(len(recs)), "blob-bytes/record")
			b.ReportMetric(float64(len(recs)), "records/trace")
			b.ReportMetric(perRecord/(float64(jsonl)/float64(len(recs))), "x-jsonl-size")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
		})
	}
}
