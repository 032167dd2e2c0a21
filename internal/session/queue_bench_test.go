package session_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/store"
)

// BenchmarkSessionQueueOverhead is BenchmarkQueueOverhead (internal/queue,
// River on PostgreSQL) for the in-process queue that serves the SQLite
// store: 200 trivial runs (two records each) on one run slot, stored in a
// SQLite file, all created at once so that each waits in the queue and is
// started when the one before it ends (ms/job, from the first create to
// the last run stored done), less the same runs executed directly in the
// same op, each created when the slot is free and awaited before the next
// (it never waits in the queue): the queue's own cost per job
// (overhead-ms/job).
func BenchmarkSessionQueueOverhead(b *testing.B) {
	const jobs = 200
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		st, err := store.Open(filepath.Join(b.TempDir(), "runs.db"))
		if err != nil {
			b.Fatal(err)
		}
		m := session.NewManager(session.Options{MaxActive: 1, MaxQueued: jobs, MaxStored: 2 * jobs, Store: st})
		run := func(r *session.Run) {
			<-r.Done()
			if s := r.RunStatus(); s != session.StatusDone {
				b.Fatalf("run %s: %s", r.ID, s)
			}
		}
		create := func() *session.Run {
			r, err := m.Create(ctx, fakeSpec(1, nil, "fw"))
			if err != nil {
				b.Fatal(err)
			}
			return r
		}
		direct := time.Now()
		for j := 0; j < jobs; j++ {
			run(create())
		}
		directT := time.Since(direct)
		start := time.Now()
		runs := make([]*session.Run, jobs)
		for j := range runs {
			runs[j] = create()
		}
		for _, r := range runs {
			run(r)
		}
		queued := time.Since(start)
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = m.Close(cctx)
		cancel()
		if cerr := st.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(queued.Microseconds())/1000/jobs, "ms/job")
		b.ReportMetric(float64(directT.Microseconds())/1000/jobs, "direct-ms/job")
		b.ReportMetric(float64((queued-directT).Microseconds())/1000/jobs, "overhead-ms/job")
	}
}
