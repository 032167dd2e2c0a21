package session_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

func slowSpec() spec.Run {
	return fakeSpec(1_000_000, spec.Params{"delay_us": "100"}, "fw")
}

func create(t *testing.T, m *session.Manager, sp spec.Run, client string) *session.Run {
	t.Helper()
	r, err := m.CreateFor(context.Background(), sp, client)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func wantStatus(t *testing.T, r *session.Run, want string) {
	t.Helper()
	waitFor(t, r.ID+" "+want, func() bool { return r.RunStatus() == want })
}

// Runs of one client beyond the run slots wait in a FIFO queue; a queued run can be
// cancelled and then never starts; the queue's length is bounded.
func TestQueueFIFOAndCancel(t *testing.T) {
	m := newManager(t, session.Options{MaxActive: 1, MaxQueued: 3, MaxStored: 10})
	first := create(t, m, slowSpec(), "")
	a := create(t, m, fakeSpec(20, nil, "fw"), "")
	b := create(t, m, fakeSpec(20, nil, "fw"), "")
	c := create(t, m, slowSpec(), "")
	if got := []string{first.RunStatus(), a.RunStatus(), b.RunStatus(), c.RunStatus()}; !equalS(got, []string{"running", "queued", "queued", "queued"}) {
		t.Fatalf("statuses %v", got)
	}
	if p := []int{a.Status().QueuePosition, b.Status().QueuePosition, c.Status().QueuePosition}; !equal(p, []int{1, 2, 3}) {
		t.Fatalf("queue positions %v", p)
	}
	_, err := m.Create(context.Background(), fakeSpec(20, nil, "fw"))
	if !errors.Is(err, session.ErrBusy) || !strings.Contains(err.Error(), "at most 3 runs may wait in the queue") {
		t.Fatalf("over the queue: %v", err)
	}
	a.Cancel()
	waitDone(t, a)
	if st := a.Status(); st.Status != session.StatusCancelled || st.Records != 0 {
		t.Fatalf("a cancelled queued run: %s with %d records", st.Status, st.Records)
	}
	if b.Status().QueuePosition != 1 {
		t.Errorf("b at %d after a left the queue", b.Status().QueuePosition)
	}
	first.Cancel()
	waitDone(t, b) // b starts when first's slot is free, and finishes
	if b.RunStatus() != session.StatusDone {
		t.Errorf("b %s", b.RunStatus())
	}
	wantStatus(t, c, session.StatusRunning)
	c.Cancel()
	waitDone(t, c)
}

func equalS(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }

// A paused run gives its run slot back to the queue; resumed, it waits for
// a slot (ahead of runs never started) and then continues where it stopped.
func TestPausedRunGivesItsSlotBack(t *testing.T) {
	m := newManager(t, session.Options{MaxActive: 1, MaxStored: 10})
	a := create(t, m, fakeSpec(2000, spec.Params{"delay_us": "200"}, "fw"), "")
	waitFor(t, "records", func() bool { return a.Traces()[0].Len() > 3 })
	b := create(t, m, fakeSpec(300, spec.Params{"delay_us": "200"}, "fw"), "")
	c := create(t, m, fakeSpec(10, nil, "fw"), "")
	if b.RunStatus() != session.StatusQueued {
		t.Fatalf("b %s, want queued", b.RunStatus())
	}
	a.Pause()
	wantStatus(t, b, session.StatusRunning)
	waitFor(t, "a parked", a.Parked)
	a.Resume()
	if st := a.Status(); st.Status != session.StatusQueued || st.QueuePosition != 1 {
		t.Fatalf("a resumed while b runs: %s at %d, want queued first (ahead of c)", st.Status, st.QueuePosition)
	}
	n := a.Traces()[0].Len()
	time.Sleep(20 * time.Millisecond)
	if a.Traces()[0].Len() != n {
		t.Fatal("a queued run kept recording")
	}
	waitDone(t, b)
	waitDone(t, a)
	waitDone(t, c)
	recs := a.Traces()[0].Records(0, 1<<30)
	for k, rec := range recs {
		if rec.K != k {
			t.Fatalf("a's record %d has k = %d", k, rec.K)
		}
	}
	if len(recs) != 2001 || a.RunStatus() != session.StatusDone {
		t.Fatalf("a: %d records, %s", len(recs), a.RunStatus())
	}
}

// A spec with start_paused stops at k = 0, holds no run slot, and each step
// adds one iteration.
func TestStartPausedSteps(t *testing.T) {
	m := newManager(t, session.Options{MaxActive: 1})
	blocker := create(t, m, slowSpec(), "")
	sp := fakeSpec(100, nil, "fw", "afw")
	sp.StartPaused = true
	r := create(t, m, sp, "")
	if s := r.RunStatus(); s != session.StatusPaused {
		t.Fatalf("status %s, want paused", s)
	}
	waitFor(t, "parked at k = 0", r.Parked)
	for k := 0; k <= 3; k++ {
		if k > 0 {
			r.Step()
			waitFor(t, "step", func() bool { return r.Parked() && r.Status().Records == 2*(k+1) })
		}
		for _, tr := range r.Traces() {
			recs := tr.Records(0, 1<<30)
			if len(recs) != k+1 || recs[k].K != k {
				t.Fatalf("after %d steps trace %d has %d records", k, tr.Index, len(recs))
			}
		}
	}
	if blocker.RunStatus() != session.StatusRunning {
		t.Errorf("blocker %s", blocker.RunStatus())
	}
	blocker.Cancel()
	r.Resume()
	waitDone(t, r)
	if st := r.Status(); st.Status != session.StatusDone || st.Records != 202 {
		t.Errorf("%s with %d records", st.Status, st.Records)
	}
}

// A run paused for longer than the pause timeout is cancelled, saying why.
func TestPauseTimeoutCancels(t *testing.T) {
	m := newManager(t, session.Options{PauseTimeout: 50 * time.Millisecond, Flags: map[string]string{"PauseTimeout": "-pause-timeout"}})
	sp := fakeSpec(100, nil, "fw")
	sp.StartPaused = true
	r := create(t, m, sp, "")
	waitDone(t, r)
	st := r.Status()
	if st.Status != session.StatusCancelled || !strings.Contains(st.Message, "pause timeout of 50ms (-pause-timeout)") {
		t.Fatalf("%s %q", st.Status, st.Message)
	}
	if st.Traces[0].Status != solver.StatusCancelled {
		t.Errorf("trace %s", st.Traces[0].Status)
	}
}

// One client may hold at most MaxClientRuns runs queued, running or
// paused; others are not affected, and finished runs do not count.
func TestClientCap(t *testing.T) {
	m := newManager(t, session.Options{MaxActive: 1, MaxClientRuns: 2, Flags: map[string]string{"MaxClientRuns": "-max-client-runs"}})
	a := create(t, m, slowSpec(), "10.0.0.1")
	b := create(t, m, slowSpec(), "10.0.0.1")
	_, err := m.CreateFor(context.Background(), fakeSpec(5, nil, "fw"), "10.0.0.1")
	if !errors.Is(err, session.ErrBusy) || !strings.Contains(err.Error(), "at most 2 runs queued, running or paused (-max-client-runs)") {
		t.Fatalf("third run of a client: %v", err)
	}
	other := create(t, m, fakeSpec(5, nil, "fw"), "10.0.0.2")
	b.Cancel()
	waitDone(t, b)
	c := create(t, m, fakeSpec(5, nil, "fw"), "10.0.0.1")
	a.Cancel()
	waitDone(t, other)
	waitDone(t, c)
}

// The memory budget: a run alone over it is refused as too large; one that
// does not fit beside the unfinished runs is refused as busy; finished runs
// count what their records really hold and are evicted to make room.
func TestMemoryBudget(t *testing.T) {
	// The fake instance counts 16 × 2 × n bytes + 64 KiB; a record a run may
	// still make 128 bytes, a record made what it holds.
	m := newManager(t, session.Options{MaxMemory: 2 << 20, Flags: map[string]string{"MaxMemory": "-mem"}})
	_, err := m.Create(context.Background(), fakeSpec(20_000, nil, "fw"))
	if !errors.Is(err, session.ErrTooLarge) || !strings.Contains(err.Error(), "memory budget of 2.0 MiB (-mem)") {
		t.Fatalf("too large: %v", err)
	}
	// Each run reserves ≈ 1.1 MiB while it runs; once finished its 8001
	// records hold a fraction of that (the compact form), so several
	// finished runs fit beside a new one before the oldest must go.
	first := create(t, m, fakeSpec(8000, nil, "fw"), "")
	waitDone(t, first)
	made := 0
	for !m.Evicted(first.ID) {
		if made == 20 {
			t.Fatal("the oldest finished run was never evicted")
		}
		waitDone(t, create(t, m, fakeSpec(8000, nil, "fw"), ""))
		made++
	}
	if made < 3 {
		t.Errorf("the oldest finished run was evicted by run %d after it: finished runs are counted for more than their records hold", made+1)
	}
	if _, ok := m.Get(first.ID); ok {
		t.Error("the evicted run is still there")
	}
	slow := fakeSpec(8000, spec.Params{"delay_us": "500"}, "fw") // ≈ 1.3 MiB with its instance
	a := create(t, m, slow, "")
	_, err = m.Create(context.Background(), slow)
	if !errors.Is(err, session.ErrBusy) || !strings.Contains(err.Error(), "-mem") {
		t.Fatalf("beside a: %v", err)
	}
	a.Cancel()
	waitDone(t, a)
}

// Closing the manager interrupts the live and queued runs.
func TestCloseInterrupts(t *testing.T) {
	m := session.NewManager(session.Options{MaxActive: 1})
	done := create(t, m, fakeSpec(5, nil, "fw"), "")
	waitDone(t, done)
	live := create(t, m, slowSpec(), "")
	queued := create(t, m, slowSpec(), "")
	sp := slowSpec()
	sp.StartPaused = true
	paused := create(t, m, sp, "")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, r := range []*session.Run{live, queued, paused} {
		if !r.Finished() || r.RunStatus() != session.StatusInterrupted {
			t.Errorf("%s: finished %v, %s", r.ID, r.Finished(), r.RunStatus())
		}
		for _, ts := range r.Status().Traces {
			if ts.Status != session.StatusInterrupted || !strings.Contains(ts.Summary.Message, "server stopped") {
				t.Errorf("%s trace %d: %s %q", r.ID, ts.Trace, ts.Status, ts.Summary.Message)
			}
		}
	}
	if done.RunStatus() != session.StatusDone {
		t.Errorf("finished run became %s", done.RunStatus())
	}
}

// A step restarts the pause timeout: a run stepped more often than the
// timeout stays paused; left alone, it is cancelled.
func TestStepRestartsThePauseTimeout(t *testing.T) {
	m := newManager(t, session.Options{PauseTimeout: 300 * time.Millisecond})
	sp := fakeSpec(100, nil, "fw")
	sp.StartPaused = true
	r := create(t, m, sp, "")
	waitFor(t, "parked", r.Parked)
	for i := 1; i <= 6; i++ {
		time.Sleep(100 * time.Millisecond)
		r.Step()
		if s := r.RunStatus(); s != session.StatusPaused {
			t.Fatalf("after %d steps 100 ms apart: %s", i, s)
		}
	}
	waitDone(t, r)
	if st := r.Status(); st.Status != session.StatusCancelled || st.Records != 7 {
		t.Errorf("%s with %d records, want cancelled with 7", st.Status, st.Records)
	}
}

// The queue takes runs round-robin across clients, first come first served
// within a client; a client's queued runs are interleaved with the others'
// in the queue positions too.
func TestQueueRoundRobinOrder(t *testing.T) {
	m := newManager(t, session.Options{MaxActive: 1, MaxQueued: 20, MaxStored: 20, MaxClientRuns: 20})
	first := create(t, m, slowSpec(), "a") // a was served last
	var runs []*session.Run
	name := map[*session.Run]string{}
	for _, c := range []string{"a", "a", "a", "b", "b", "c", "a"} {
		r := create(t, m, slowSpec(), c)
		name[r] = c + string(rune('0'+len(runs)))
		runs = append(runs, r)
	}
	// b and c were never served: b (queued first), c, then a, then round by round.
	want := []string{"b3", "c5", "a0", "b4", "a1", "a2", "a6"}
	got := make([]string, len(runs))
	for _, r := range runs {
		got[r.Status().QueuePosition-1] = name[r]
	}
	if !equalS(got, want) {
		t.Fatalf("queue order %v, want %v", got, want)
	}
	// The runs start in that order.
	var started []string
	prev := first
	for range runs {
		prev.Cancel()
		waitDone(t, prev)
		waitFor(t, "the next run to start", func() bool {
			for _, r := range runs {
				if r.RunStatus() == session.StatusRunning {
					started = append(started, name[r])
					prev = r
					return true
				}
			}
			return false
		})
	}
	prev.Cancel()
	waitDone(t, prev)
	if !equalS(started, want) {
		t.Fatalf("start order %v, want %v", started, want)
	}
}
