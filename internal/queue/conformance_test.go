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
// after the end.
func TestRunsReadTheSameOnBothStores(t *testing.T) {
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
	for _, sp := range []spec.Run{fake, lasso} {
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
	}
}
