package queue

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
)

// records returns the run's status and the records stored of its first
// trace.
func records(t *testing.T, st *pgstore.Store, id string) (string, int) {
	t.Helper()
	r, err := st.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r.Status, r.Traces[0].Records
}

// steady waits until the run's stored records stop growing (the same
// count for a second, several of the test worker's flushes) and returns
// the count.
func steady(t *testing.T, st *pgstore.Store, id string) int {
	t.Helper()
	_, last := records(t, st, id)
	since := time.Now()
	deadline := since.Add(30 * time.Second)
	for time.Since(since) < time.Second {
		if time.Now().After(deadline) {
			t.Fatalf("run %s: its records never stopped growing (%d)", id, last)
		}
		time.Sleep(50 * time.Millisecond)
		if _, n := records(t, st, id); n != last {
			last, since = n, time.Now()
		}
	}
	return last
}

// TestPauseStepResumeReachTheWorker: a pause written to the store stops the
// worker's run (its records stop growing), a step lets exactly one more
// record through and pauses again, a resume lets it run on, and a cancel
// while paused ends it cancelled with its records kept; a run paused for
// longer than its pause timeout is cancelled by its worker, naming the
// timeout.
func TestPauseStepResumeReachTheWorker(t *testing.T) {
	t.Parallel()
	url, st, q := newQueue(t)
	ctx := context.Background()
	// no heartbeat during the test: only the store's notifications wake
	// the worker
	w1 := startWorkerWith(t, url, Config{Name: "w1", Slots: 1, BeatEvery: time.Hour, RescueAfter: 3 * time.Hour})
	id, err := q.Submit(ctx, fakeSpec(1_000_000, 1000, "fw"))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "records", func() bool { _, n := records(t, st, id); return n > 0 })
	control := func(op string, want string) {
		t.Helper()
		if got, err := st.Control(ctx, id, op, time.Hour); err != nil || got != want {
			t.Fatalf("%s: %q, %v; want %q", op, got, err, want)
		}
	}
	control(pgstore.OpPause, store.StatusPaused)
	n := steady(t, st, id)
	for i := 1; i <= 3; i++ {
		control(pgstore.OpStep, store.StatusPaused)
		waitFor(t, 30*time.Second, "a step's record", func() bool { _, got := records(t, st, id); return got > n })
		if got := steady(t, st, id); got != n+1 {
			t.Fatalf("step %d: %d records after %d, want one more", i, got, n)
		}
		n++
	}
	control(pgstore.OpResume, store.StatusRunning)
	waitFor(t, 30*time.Second, "the resumed run to go on", func() bool { _, got := records(t, st, id); return got > n+50 })
	control(pgstore.OpPause, store.StatusPaused)
	n = steady(t, st, id)
	if err := st.SetStatus(ctx, id, store.StatusCancelled, time.Now()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the worker to end the run", func() bool {
		r, err := st.Get(ctx, id)
		return err == nil && r.Traces[0].Summary != nil
	})
	r, _ := st.Get(ctx, id)
	if r.Status != store.StatusCancelled || r.Traces[0].Status != solver.StatusCancelled || r.Traces[0].Records != n {
		t.Errorf("cancelled while paused: %s, trace %s with %d records (paused at %d)", r.Status, r.Traces[0].Status, r.Traces[0].Records, n)
	}

	// paused for longer than its (short) pause timeout: its worker, which
	// reads it at each beat, cancels it
	if _, err := w1.Stop(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	startWorker(t, url, "w2", 1)
	id2, err := q.Submit(ctx, fakeSpec(1_000_000, 1000, "fw"))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "records", func() bool { _, n := records(t, st, id2); return n > 0 })
	if _, err := st.Control(ctx, id2, pgstore.OpPause, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the pause timeout", func() bool {
		r, err := st.Get(ctx, id2)
		return err == nil && !store.Live(r.Status)
	})
	r, _ = st.Get(ctx, id2)
	if r.Status != store.StatusCancelled || !strings.Contains(r.Message, "paused for longer than the pause timeout of 300ms") {
		t.Errorf("paused past its timeout: %s %q", r.Status, r.Message)
	}
}
