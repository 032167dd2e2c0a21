package queue

import (
	"context"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
)

// TestTraceEndsWhileTheRunGoesOn: a trace that converges on a worker while
// another trace of its run goes on reads ended in the store at once (its
// status and summary, all its records in), as a trace of a run in a
// server's memory does; the run and its other trace still run.
func TestTraceEndsWhileTheRunGoesOn(t *testing.T) {
	t.Parallel()
	url, st, q := newQueue(t)
	ctx := context.Background()
	startWorker(t, url, "w1", 1)
	// ssfw-as converges within a few thousand iterations; fista goes on
	// to the iteration limit
	sp := spec.Run{Problem: "toy-polygon", Seed: 1, Replications: 1, Iters: 5_000_000,
		Params:     spec.Params{"target": "edge", "vertices": "12", "cond": "1000"},
		Algorithms: []spec.Algo{{Algo: "ssfw-as", Rho: 0.01}, {Algo: "fista"}}}
	id, err := q.Submit(ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	defer st.SetStatus(ctx, id, store.StatusCancelled, time.Now())
	var r *store.Run
	waitFor(t, 2*time.Minute, "the converged trace's end in the store", func() bool {
		if r, err = st.Get(ctx, id); err != nil {
			t.Fatal(err)
		}
		if !store.Live(r.Status) {
			t.Fatalf("the run ended %s (traces %+v) before its converged trace read ended", r.Status, r.Traces)
		}
		return !store.Live(r.Traces[0].Status)
	})
	tr := r.Traces[0]
	if tr.Status != solver.StatusConverged || tr.Summary == nil || tr.Summary.Iters+1 != tr.Records {
		t.Fatalf("the converged trace reads %s with summary %+v and %d records", tr.Status, tr.Summary, tr.Records)
	}
	if recs, err := st.Records(ctx, id, 0, 0, tr.Records); err != nil || len(recs) != tr.Records {
		t.Fatalf("reading its %d records: %d, %v", tr.Records, len(recs), err)
	}
	if r.Status != store.StatusRunning || r.Traces[1].Status != store.StatusRunning {
		t.Fatalf("the run is %s and its other trace %s, want both running", r.Status, r.Traces[1].Status)
	}
}

// TestCancelledRunOnAWorkerKeepsItsRecords: a run cancelled through the
// store (as the server's Stop and dashboard cancel do) while its worker
// streams keeps exactly the records the store held when it was cancelled:
// its worker writes none after, and its counts are what a download reads.
func TestCancelledRunOnAWorkerKeepsItsRecords(t *testing.T) {
	t.Parallel()
	url, st, q := newQueue(t)
	ctx := context.Background()
	startWorker(t, url, "w1", 1)
	id, err := q.Submit(ctx, fakeSpec(200_000, 100, "fw", "afw"))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "records", func() bool { _, n := traceRecords(t, st, id); return n[0] > 500 && n[1] > 500 })
	if err := st.SetStatus(ctx, id, store.StatusCancelled, time.Now()); err != nil {
		t.Fatal(err)
	}
	_, atCancel := traceRecords(t, st, id)
	waitFor(t, 30*time.Second, "the cancelled run's end", func() bool {
		r, err := st.Get(ctx, id)
		return err == nil && r.Traces[0].Summary != nil && r.Traces[1].Summary != nil
	})
	time.Sleep(500 * time.Millisecond) // flushes that would come late
	status, after := traceRecords(t, st, id)
	if status != store.StatusCancelled || after[0] != atCancel[0] || after[1] != atCancel[1] {
		t.Fatalf("cancelled with %v records stored, then %s with %v", atCancel, status, after)
	}
	for i, n := range after {
		got := 0
		if err := st.EachRecord(ctx, id, i, 0, 1<<30, func(int, *solver.Record) error { got++; return nil }); err != nil || got != n {
			t.Fatalf("trace %d counts %d records, a read gives %d (%v)", i, n, got, err)
		}
	}
}
