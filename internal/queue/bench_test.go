package queue

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/pgtest"
	"github.com/fwlab/fwlab/internal/store"
)

// BenchmarkQueueOverhead queues 200 trivial runs (two records each) on one
// worker with one slot and reports the time per job from the insert to the
// run stored done (ms/job), and that time less the time of the same runs
// executed by the same worker without the queue (claim, run, records,
// finish), measured in the same op: the queue's own overhead per job
// (overhead-ms/job).
func BenchmarkQueueOverhead(b *testing.B) {
	c := pgtest.Shared(b)
	ctx := context.Background()
	const jobs = 200
	for i := 0; i < b.N; i++ {
		url := c.NewDB(b)
		st := openStoreB(b, url)
		q, err := New(ctx, st)
		if err != nil {
			b.Fatal(err)
		}
		w, err := NewWorker(ctx, Config{Store: openStoreB(b, url), Name: "bench", Slots: 1})
		if err != nil {
			b.Fatal(err)
		}
		// direct: the worker's execution alone
		direct := time.Now()
		for j := 0; j < jobs; j++ {
			r, _, err := q.storedRun(ctx, fakeSpec(1, 0, "fw"), nil, map[string]DataRef{})
			if err != nil {
				b.Fatal(err)
			}
			id, err := st.PutRun(ctx, r)
			if err != nil {
				b.Fatal(err)
			}
			claim := fmt.Sprintf("direct/%d", j)
			if err := st.Claim(ctx, id, claim); err != nil {
				b.Fatal(err)
			}
			if out, err := w.execute(ctx, id, claim, ""); out != finished || err != nil {
				b.Fatal(out, err)
			}
		}
		directT := time.Since(direct)
		// queued: inserted, taken, run and stored
		if err := w.Start(ctx); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		ids := make([]string, jobs)
		for j := range ids {
			if ids[j], err = q.Submit(ctx, fakeSpec(1, 0, "fw")); err != nil {
				b.Fatal(err)
			}
		}
		for _, id := range ids {
			for {
				r, err := st.Get(ctx, id)
				if err != nil {
					b.Fatal(err)
				}
				if !store.Live(r.Status) {
					break
				}
				time.Sleep(2 * time.Millisecond)
			}
		}
		queued := time.Since(start)
		w.Stop(ctx, time.Second)
		b.ReportMetric(float64(queued.Microseconds())/1000/jobs, "ms/job")
		b.ReportMetric(float64((queued-directT).Microseconds())/1000/jobs, "overhead-ms/job")
	}
}

func openStoreB(b *testing.B, url string) *pgstoreStore {
	b.Helper()
	st, err := pgstoreOpen(context.Background(), url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

// BenchmarkWorkerRecords measures the records per second a worker streams
// into PostgreSQL for a run of two traces side by side (rec/s, from the
// submit to the run stored done, every record committed), and that rate
// over the rate of the same run with one trace on the same worker in the
// same op (x-one-trace): about 2 when the traces run at once, 1 when they
// run one after the other. Each record sleeps 100 µs (about 1 ms as the
// system's timers go) in the fake method, so
// the solver's work is not what bounds the rate on a busy machine.
func BenchmarkWorkerRecords(b *testing.B) {
	c := pgtest.Shared(b)
	ctx := context.Background()
	const n = 5_000
	for i := 0; i < b.N; i++ {
		url := c.NewDB(b)
		st := openStoreB(b, url)
		q, err := New(ctx, st)
		if err != nil {
			b.Fatal(err)
		}
		w, err := NewWorker(ctx, Config{Store: openStoreB(b, url), Name: "bench", Slots: 1})
		if err != nil {
			b.Fatal(err)
		}
		if err := w.Start(ctx); err != nil {
			b.Fatal(err)
		}
		rate := func(algos ...string) float64 {
			start := time.Now()
			id, err := q.Submit(ctx, fakeSpec(n, 100, algos...))
			if err != nil {
				b.Fatal(err)
			}
			for {
				r, err := st.GetLean(ctx, id)
				if err != nil {
					b.Fatal(err)
				}
				if !store.Live(r.Status) {
					if r.Status != store.StatusDone {
						b.Fatalf("run %s: %s", id, r.Status)
					}
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			return float64(len(algos)*(n+1)) / time.Since(start).Seconds()
		}
		b.StopTimer()
		rate("fw") // the worker's first job, not measured
		b.StartTimer()
		one := rate("fw")
		two := rate("fw", "afw")
		w.Stop(ctx, time.Second)
		b.ReportMetric(two, "rec/s")
		b.ReportMetric(two/one, "x-one-trace")
	}
}
