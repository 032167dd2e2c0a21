package session_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
)

// TestFirstRunBorrowsASlot: client A's 20 long runs hold the 4 run slots
// (16 more queued); client B's first run, 20 iterations, starts at once on
// a slot one of A's runs lends it, and is done within 20 s; the run that
// lent its slot waits at the head of the queue saying why, and goes on
// once B's run has ended, before A's runs never started.
func TestFirstRunBorrowsASlot(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	m := newManager(t, session.Options{MaxActive: 4, Store: st})
	long := fakeSpec(100_000, spec.Params{"delay_us": "1000"}, "fw") // 100 s
	var a []*session.Run
	for i := 0; i < 20; i++ {
		a = append(a, create(t, m, long, "A"))
	}
	running := func() (n int) {
		for _, r := range a {
			if r.RunStatus() == session.StatusRunning {
				n++
			}
		}
		return n
	}
	waitFor(t, "A's runs on every slot", func() bool { return running() == 4 && a[0].Traces()[0].Len() > 0 })
	start := time.Now()
	b := create(t, m, fakeSpec(20, nil, "fw"), "B")
	select {
	case <-b.Done():
	case <-time.After(20 * time.Second):
		t.Fatalf("B's first run is %s after 20 s while A's runs hold the slots", b.RunStatus())
	}
	if b.RunStatus() != session.StatusDone {
		t.Fatalf("B's run ended %s", b.RunStatus())
	}
	t.Logf("B's 20-iteration run done in %v", time.Since(start))
	// a[0] held its slot longest: it lent it, and has it back now
	waitFor(t, "the lender back on its slot", func() bool { return a[0].RunStatus() == session.StatusRunning && running() == 4 })
	for _, r := range a[4:] {
		if s := r.RunStatus(); s != session.StatusQueued {
			t.Errorf("run %s of A never started is %s", r.ID, s)
		}
	}
	for _, r := range a {
		r.Cancel()
	}
	for _, r := range a {
		waitDone(t, r)
	}
}

// TestLentRunSaysWhyItWaits: while it has lent its slot, a run is queued at
// the head of the queue with the reason; a client holding a slot borrows
// none; the lender has the next free slot, and the lending goes round A's
// runs.
func TestLentRunSaysWhyItWaits(t *testing.T) {
	m := newManager(t, session.Options{MaxActive: 2})
	long := fakeSpec(1_000_000, spec.Params{"delay_us": "1000"}, "fw")
	a1, a2 := create(t, m, long, "A"), create(t, m, long, "A")
	wantStatus(t, a1, session.StatusRunning)
	wantStatus(t, a2, session.StatusRunning)
	b := create(t, m, long, "B")
	wantStatus(t, b, session.StatusRunning)
	s := a1.Status()
	if s.Status != session.StatusQueued || s.QueuePosition != 1 || s.Waiting == "" {
		t.Fatalf("the lender: %s at %d, waiting %q", s.Status, s.QueuePosition, s.Waiting)
	}
	if a2.RunStatus() != session.StatusRunning {
		t.Fatalf("the other run of A is %s", a2.RunStatus())
	}
	// B's second run does not borrow: B holds a slot
	b2 := create(t, m, long, "B")
	if b2.RunStatus() != session.StatusQueued || a2.RunStatus() != session.StatusRunning {
		t.Fatalf("B's second run %s, A's second %s", b2.RunStatus(), a2.RunStatus())
	}
	// once B's run ends, the lender has the free slot first; B, holding
	// none again, borrows from A's run that has held its slot longest
	b.Cancel()
	waitDone(t, b)
	wantStatus(t, a1, session.StatusRunning)
	wantStatus(t, b2, session.StatusRunning)
	if s := a2.Status(); s.Status != session.StatusQueued || s.QueuePosition != 1 || s.Waiting == "" {
		t.Fatalf("A's second run after B's first ended: %s at %d, waiting %q", s.Status, s.QueuePosition, s.Waiting)
	}
	for _, r := range []*session.Run{a1, a2, b2} {
		r.Cancel()
		waitDone(t, r)
	}
}
