package queue

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
)

// traceRecords returns the run's status and the records stored of each of
// its traces.
func traceRecords(t *testing.T, st *pgstore.Store, id string) (string, []int) {
	t.Helper()
	r, err := st.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	n := make([]int, len(r.Traces))
	for i, tr := range r.Traces {
		n[i] = tr.Records
	}
	return r.Status, n
}

// TestWorkerStreamsTracesSideBySide: a worker runs a two-algorithm run, and
// a run of one algorithm with two replications, as one machine does, both
// traces at once: within one second both traces' stored records grow,
// while neither has finished.
func TestWorkerStreamsTracesSideBySide(t *testing.T) {
	t.Parallel()
	url, st, q := newQueue(t)
	ctx := context.Background()
	startWorker(t, url, "w1", 1)
	// 3000 iterations of 2 ms each: about 6 s per trace
	replicated := fakeSpec(3000, 2000, "fw")
	replicated.Replications = 2
	for _, sp := range []spec.Run{fakeSpec(3000, 2000, "fw", "afw"), replicated} {
		id, err := q.Submit(ctx, sp)
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, time.Minute, "records", func() bool { _, n := traceRecords(t, st, id); return n[0]+n[1] > 0 })
		_, before := traceRecords(t, st, id)
		for {
			time.Sleep(time.Second)
			status, now := traceRecords(t, st, id)
			// both grew, neither from nothing nor to its end
			if before[0] > 0 && before[1] > 0 && now[0] > before[0] && now[1] > before[1] && now[0] < 3001 && now[1] < 3001 {
				break
			}
			if !store.Live(status) || now[0] == 3001 || now[1] == 3001 {
				t.Fatalf("%d algorithms × %d replications: the traces never grew within the same second: %v then %v (status %s)",
					len(sp.Algorithms), sp.Replications, before, now, status)
			}
			before = now
		}
		if err := q.st.SetStatus(ctx, id, store.StatusCancelled, time.Now()); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 30*time.Second, "the cancelled run's end", func() bool {
			r, err := st.Get(ctx, id)
			return err == nil && r.Traces[0].Summary != nil
		})
	}
}

// TestStartPausedOnTheCluster: a run queued to start paused is taken by a
// worker and waits at its first record (one per trace); a step lets one
// more through; a resume runs it to its end.
func TestStartPausedOnTheCluster(t *testing.T) {
	t.Parallel()
	url, st, q := newQueue(t)
	ctx := context.Background()
	startWorker(t, url, "w1", 1)
	sp := fakeSpec(200, 0, "fw", "afw")
	sp.StartPaused = true
	id, err := q.Submit(ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := traceRecords(t, st, id); s != store.StatusPaused {
		t.Fatalf("a run queued to start paused is %s", s)
	}
	waitFor(t, time.Minute, "the first records", func() bool { _, n := traceRecords(t, st, id); return n[0] == 1 && n[1] == 1 })
	time.Sleep(time.Second) // several flushes
	if s, n := traceRecords(t, st, id); s != store.StatusPaused || n[0] != 1 || n[1] != 1 {
		t.Fatalf("started paused: %s with %v records, want paused at the first record of each trace", s, n)
	}
	if _, err := st.Control(ctx, id, pgstore.OpStep, time.Hour); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "a step's records", func() bool { _, n := traceRecords(t, st, id); return n[0] == 2 && n[1] == 2 })
	time.Sleep(time.Second)
	if s, n := traceRecords(t, st, id); s != store.StatusPaused || n[0] != 2 || n[1] != 2 {
		t.Fatalf("after a step: %s with %v records, want paused at the second record of each trace", s, n)
	}
	if _, err := st.Control(ctx, id, pgstore.OpResume, time.Hour); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "the run's end", func() bool { s, _ := traceRecords(t, st, id); return !store.Live(s) })
	if s, _ := traceRecords(t, st, id); s != store.StatusDone {
		t.Fatalf("resumed: ended %s", s)
	}
	checkWhole(t, st, id, 200)
}

// TestStartPausedTimesOutOnTheCluster: a run queued to start paused by a
// server with a pause timeout is cancelled by its worker once it has been
// paused for longer, as on one machine.
func TestStartPausedTimesOutOnTheCluster(t *testing.T) {
	t.Parallel()
	url, st, q := newQueue(t)
	ctx := context.Background()
	startWorker(t, url, "w1", 1)
	sp := fakeSpec(200, 0, "fw")
	sp.StartPaused = true
	id, err := q.SubmitFor(ctx, sp, From{PauseTimeout: 700 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := traceRecords(t, st, id); s != store.StatusPaused {
		t.Fatalf("a run queued to start paused is %s", s)
	}
	waitFor(t, 30*time.Second, "the pause timeout", func() bool { s, _ := traceRecords(t, st, id); return !store.Live(s) })
	r, err := st.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != store.StatusCancelled || !strings.Contains(r.Message, "paused for longer than the pause timeout of 700ms") || r.Traces[0].Records != 1 {
		t.Fatalf("started paused past its timeout: %s %q with %d records", r.Status, r.Message, r.Traces[0].Records)
	}
}
