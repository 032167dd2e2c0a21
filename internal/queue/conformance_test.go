package queue

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/storetest"
)

// TestRunsReadTheSameOnBothStores: the same specs run by a server on
// SQLite (its sessions) and by a worker on PostgreSQL (River) read the same
// through every field the pages show (storetest.SameRun): names (the slack
// collapse variant's included), statuses, summaries, panels and records
// after the end, for runs that end done, failed (a method's error, a panic)
// or without panels.
func TestRunsReadTheSameOnBothStores(t *testing.T) {
	t.Parallel()
	url, pg, q := newQueue(t)
	startWorker(t, url, "w1", 2)
	sq, err := store.Open(filepath.Join(t.TempDir(), "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sq.Close() })
	m := session.NewManager(session.Options{Store: sq})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		m.Close(ctx)
	})
	fake := fakeSpec(300, 0, "fw", "afw")
	fake.Replications = 2
	lasso := spec.Run{Problem: "lasso", Iters: 40, EvalEvery: 4, Seed: 3, Replications: 2,
		Algorithms: []spec.Algo{{Algo: "ssfw-as"}, {Algo: "ssfw-as", Slack: "keep"}, {Algo: "fista"}}}
	// a method that fails, one that panics, panels that fail
	failing := fakeSpec(50, 0, "fw", "afw")
	failing.Params["fail"] = "the method gave up"
	panicking := fakeSpec(50, 0, "fw")
	panicking.Params["panic_at"] = "7"
	panels := fakeSpec(50, 0, "fw")
	panels.Params["panel_err"] = "no view of this estimate"
	for i, sp := range []spec.Run{fake, lasso, failing, panicking, panels} {
		want := []string{store.StatusDone, store.StatusDone, store.StatusFailed, store.StatusFailed, store.StatusDone}[i]
		ctx := context.Background()
		local, err := m.Create(ctx, sp)
		if err != nil {
			t.Fatal(err)
		}
		<-local.Done()
		id, err := q.Submit(ctx, sp)
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, 2*time.Minute, "the worker's run "+id, func() bool {
			r, err := pg.GetLean(ctx, id)
			return err == nil && !store.Live(r.Status)
		})
		storetest.SameRun(t, sq, local.ID, pg, id)
		r, err := pg.GetLean(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != want {
			t.Errorf("spec %d ended %s; want %s", i, r.Status, want)
		}
	}
}
