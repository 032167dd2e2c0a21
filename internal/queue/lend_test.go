package queue

import (
	"context"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
)

// TestFirstRunBorrowsASlotOnTheCluster: client A's 20 long runs hold the 4
// slots of the worker (16 more queued); client B's first run, 20
// iterations, is done within 20 s (a slot of A's is lent to it); the run
// that lent its slot goes on after, and A's runs never started are still
// queued.
func TestFirstRunBorrowsASlotOnTheCluster(t *testing.T) {
	t.Parallel()
	url, st, q := newQueue(t)
	ctx := context.Background()
	startWorker(t, url, "w1", 4)
	var a []string
	for i := 0; i < 20; i++ {
		id, err := q.SubmitFor(ctx, fakeSpec(100_000, 1000, "fw"), From{Client: "A"}) // 100 s each
		if err != nil {
			t.Fatal(err)
		}
		a = append(a, id)
	}
	running := func() []string {
		var ids []string
		for _, id := range a {
			if s, n := records(t, st, id); s == store.StatusRunning && n > 0 {
				ids = append(ids, id)
			}
		}
		return ids
	}
	waitFor(t, time.Minute, "A's runs on the 4 slots", func() bool { return len(running()) == 4 })
	first := running()
	start := time.Now()
	b, err := q.SubmitFor(ctx, fakeSpec(20, 0, "fw"), From{Client: "B"})
	if err != nil {
		t.Fatal(err)
	}
	for {
		s, _ := records(t, st, b)
		if s == store.StatusDone {
			break
		}
		if !store.Live(s) {
			t.Fatalf("B's run ended %s", s)
		}
		if time.Since(start) > 20*time.Second {
			t.Fatalf("B's first run is %s after 20 s while A's runs hold the slots", s)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("B's 20-iteration run done in %v", time.Since(start))
	// the four that ran go on (the lender too), the others still wait
	for _, id := range first {
		_, n0 := records(t, st, id)
		waitFor(t, 30*time.Second, "run "+id+" going on", func() bool { _, n := records(t, st, id); return n > n0 })
	}
	for _, id := range a {
		if s, _ := records(t, st, id); s == store.StatusQueued {
			continue
		}
		if !contains(first, id) {
			t.Errorf("run %s of A, never started before, is no longer queued", id)
		}
	}
	for _, id := range a {
		_ = st.SetStatus(ctx, id, store.StatusCancelled, time.Now())
	}
}

// TestPausedRunGivesItsSlotOnTheCluster: a worker's one slot is held by a
// run paused through the store; a run queued after it is lent the slot the
// paused run gave back and runs to its end; resumed, the paused run goes
// on to its end too.
func TestPausedRunGivesItsSlotOnTheCluster(t *testing.T) {
	t.Parallel()
	url, st, q := newQueue(t)
	ctx := context.Background()
	startWorker(t, url, "w1", 1)
	p, err := q.Submit(ctx, fakeSpec(4000, 1000, "fw"))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "records", func() bool { _, n := records(t, st, p); return n > 0 })
	if _, err := st.Control(ctx, p, pgstore.OpPause, time.Hour); err != nil {
		t.Fatal(err)
	}
	b, err := q.Submit(ctx, fakeSpec(50, 0, "fw"))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the run queued after the pause to end", func() bool { s, _ := records(t, st, b); return s == store.StatusDone })
	if s, _ := records(t, st, p); s != store.StatusPaused {
		t.Fatalf("the paused run is %s", s)
	}
	if _, err := st.Control(ctx, p, pgstore.OpResume, time.Hour); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "the resumed run's end", func() bool { s, _ := records(t, st, p); return s == store.StatusDone })
	checkWhole(t, st, p, 4000)
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// TestLenderSaysItWaitsOnTheCluster: while a run of A has lent its slot to
// B's run, the store says it is queued; once B's run has ended it is
// running again.
func TestLenderSaysItWaitsOnTheCluster(t *testing.T) {
	t.Parallel()
	url, st, q := newQueue(t)
	ctx := context.Background()
	startWorker(t, url, "w1", 2)
	var a []string
	for i := 0; i < 2; i++ {
		id, err := q.SubmitFor(ctx, fakeSpec(100_000, 1000, "fw"), From{Client: "A"})
		if err != nil {
			t.Fatal(err)
		}
		a = append(a, id)
	}
	waitFor(t, time.Minute, "A's runs on the 2 slots", func() bool {
		for _, id := range a {
			if s, n := records(t, st, id); s != store.StatusRunning || n == 0 {
				return false
			}
		}
		return true
	})
	b, err := q.SubmitFor(ctx, fakeSpec(100_000, 1000, "fw"), From{Client: "B"})
	if err != nil {
		t.Fatal(err)
	}
	lender := ""
	waitFor(t, 30*time.Second, "B's run running and a run of A queued", func() bool {
		if s, n := records(t, st, b); s != store.StatusRunning || n == 0 {
			return false
		}
		for _, id := range a {
			if s, _ := records(t, st, id); s == store.StatusQueued {
				lender = id
				return true
			}
		}
		return false
	})
	// Records made before the lender paused may still reach the store
	// (the appender flushes in batches): wait until its count stays put,
	// then it must stay put.
	n0 := -1
	waitFor(t, 30*time.Second, "the lender's last records stored", func() bool {
		_, n := records(t, st, lender)
		if n == n0 {
			return true
		}
		n0 = n
		time.Sleep(300 * time.Millisecond)
		return false
	})
	time.Sleep(time.Second)
	if s, n := records(t, st, lender); s != store.StatusQueued || n > n0+1 {
		t.Fatalf("the lender: %s with %d records after %d, want queued and still", s, n, n0)
	}
	if err := st.SetStatus(ctx, b, store.StatusCancelled, time.Now()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the lender running again", func() bool {
		s, n := records(t, st, lender)
		return s == store.StatusRunning && n > n0+1
	})
	for _, id := range a {
		_ = st.SetStatus(ctx, id, store.StatusCancelled, time.Now())
	}
}
