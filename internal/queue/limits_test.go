package queue

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/sweep"
)

// TestClientLimits: with no worker, a client's live runs and sweeps are
// bounded by From.MaxRuns and From.MaxSweeps, counted from the store: the
// next one is refused with ErrClientLimit and nothing of it is stored;
// another client is not affected; a sweep's cells do not count as runs; a
// run that ends makes room; and requests at once never pass the limit.
func TestClientLimits(t *testing.T) {
	t.Parallel()
	_, st, q := newQueue(t)
	ctx := context.Background()
	a := From{Client: "10.0.0.1", MaxRuns: 2, MaxSweeps: 1}
	stored := func() (runs, sweeps int) {
		_, n, err := st.List(ctx, store.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		_, m, err := st.ListSweeps(ctx, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		return n, m
	}
	doc := &sweep.Doc{Base: fakeSpec(10, 0, "fw"), Axes: []sweep.Axis{{Param: "seed", Values: []json.RawMessage{json.RawMessage("1"), json.RawMessage("2"), json.RawMessage("3")}}}}
	// a sweep's three cells leave room for two runs
	if _, err := q.SubmitSweepFor(ctx, doc, a); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := 0; i < 2; i++ {
		id, err := q.SubmitFor(ctx, fakeSpec(10, 0, "fw"), a)
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		ids = append(ids, id)
	}
	runs, sweeps := stored()
	var le *LimitError
	if _, err := q.SubmitFor(ctx, fakeSpec(10, 0, "fw"), a); !errors.As(err, &le) || le.Sweeps || le.Max != 2 || !errors.Is(err, ErrClientLimit) {
		t.Errorf("a third run: %v; want the runs' limit of 2", err)
	}
	if _, err := q.SubmitSweepFor(ctx, doc, a); !errors.As(err, &le) || !le.Sweeps || le.Max != 1 {
		t.Errorf("a second sweep: %v; want the sweeps' limit of 1", err)
	}
	if r, s := stored(); r != runs || s != sweeps {
		t.Errorf("after the refusals the store holds %d runs and %d sweeps, before %d and %d", r, s, runs, sweeps)
	}
	// another client has its own room
	b := From{Client: "10.0.0.2", MaxRuns: 2, MaxSweeps: 1}
	if _, err := q.SubmitFor(ctx, fakeSpec(10, 0, "fw"), b); err != nil {
		t.Errorf("another client's run: %v", err)
	}
	if _, err := q.SubmitSweepFor(ctx, doc, b); err != nil {
		t.Errorf("another client's sweep: %v", err)
	}
	// a run that ended is not counted
	if err := st.SetStatus(ctx, ids[0], store.StatusCancelled, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := q.SubmitFor(ctx, fakeSpec(10, 0, "fw"), a); err != nil {
		t.Errorf("a run after one ended: %v", err)
	}

	// eight requests at once from a new client with room for three
	d := From{Client: "10.0.0.4", MaxRuns: 3}
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, refused := 0, 0
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := q.SubmitFor(ctx, fakeSpec(10, 0, "fw"), d)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, ErrClientLimit):
				refused++
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if ok != 3 || refused != 5 {
		t.Errorf("eight at once with room for three: %d queued, %d refused", ok, refused)
	}
	var n int
	if err := st.Pool().QueryRow(ctx, liveRunsSQL, RunArgs{}.Kind(), d.Client, store.StatusQueued, store.StatusRunning, store.StatusPaused).Scan(&n); err != nil || n != 3 {
		t.Errorf("the client's live runs in the store: %d, %v; want 3", n, err)
	}
}
