package pgstore

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fwlab/fwlab/internal/pgtest"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/storetest"
)

// TestClaimFencesAStaleWorker: a run claimed again (its job rescued from a
// worker presumed dead) starts afresh, and the first worker can neither
// append, beat nor finish any more: every record is stored once.
func TestClaimFencesAStaleWorker(t *testing.T) {
	ctx := context.Background()
	s := openShared(t)
	r := storetest.TestRun("lasso", "afw", "fista")
	r.Status = store.StatusQueued
	id, err := s.PutRun(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	if err := s.Claim(ctx, id, "w1/7/1"); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendClaimed(ctx, id, "w1/7/1", 0, storetest.RandRecords(rng, 20)); err != nil {
		t.Fatal(err)
	}
	// w1 is presumed dead; w2 takes the run over and starts it afresh
	if err := s.Claim(ctx, id, "w2/7/2"); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Get(ctx, id)
	if got.Traces[0].Records != 0 || got.Status != store.StatusRunning {
		t.Fatalf("after the second claim: %d records, %s", got.Traces[0].Records, got.Status)
	}
	want := storetest.RandRecords(rng, 30)
	if err := s.AppendClaimed(ctx, id, "w2/7/2", 0, want); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendClaimed(ctx, id, "w1/7/1", 0, storetest.RandRecords(rng, 5)); !errors.Is(err, ErrClaimLost) {
		t.Errorf("an append by the stale worker: %v", err)
	}
	if _, err := s.Beat(ctx, id, "w1/7/1"); !errors.Is(err, ErrClaimLost) {
		t.Errorf("a heartbeat of the stale worker: %v", err)
	}
	if err := s.Finish(ctx, id, "w1/7/1", nil, store.StatusFailed, "stale", time.Now()); !errors.Is(err, ErrClaimLost) {
		t.Errorf("the stale worker finishing: %v", err)
	}
	recs, err := s.Records(ctx, id, 0, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	storetest.CheckRecords(t, recs, want)

	// a cancel through the store reaches the worker on its next beat
	if err := s.SetStatus(ctx, id, store.StatusCancelled, time.Now()); err != nil {
		t.Fatal(err)
	}
	if c, err := s.Beat(ctx, id, "w2/7/2"); err != nil || c.Status != store.StatusCancelled {
		t.Errorf("the beat after a cancel: %+v, %v", c, err)
	}
	sum := &solver.Summary{Objective: 1, Iters: 30, Status: solver.StatusCancelled}
	end := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	if err := s.Finish(ctx, id, "w2/7/2", []store.TraceResult{{Status: solver.StatusCancelled, Summary: sum}, {Status: store.StatusCancelled}},
		store.StatusCancelled, "cancelled by the user", end); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Get(ctx, id)
	if got.Status != store.StatusCancelled || !got.Ended.Equal(end) || got.Message != "cancelled by the user" || got.Traces[0].Summary.Iters != 30 {
		t.Errorf("finished run %+v", got)
	}
	// an ended run is not claimed again
	if err := s.Claim(ctx, id, "w3/7/3"); !errors.Is(err, ErrNotLive) {
		t.Errorf("claiming an ended run: %v", err)
	}
	if err := s.Claim(ctx, "nosuchrun222", "w3/7/3"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("claiming an unknown run: %v", err)
	}
}

// TestAppendNotifies: each appended batch wakes a listener with its run id.
func TestAppendNotifies(t *testing.T) {
	c := pgtest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	url := c.NewDB(t)
	s, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id, err := s.PutRun(ctx, storetest.TestRun("lasso", "afw"))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "LISTEN "+Channel); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendRecords(ctx, id, 0, storetest.RandRecords(rand.New(rand.NewPCG(1, 1)), 3)); err != nil {
		t.Fatal(err)
	}
	n, err := conn.WaitForNotification(ctx)
	if err != nil || n.Payload != id || n.Channel != Channel {
		t.Fatalf("notification %+v, %v", n, err)
	}
}

// TestWakeOnAppend: a subscriber of a run is woken when its records are
// committed, not by another run's, and again after PostgreSQL restarted.
func TestWakeOnAppend(t *testing.T) {
	c := pgtest.Start(t) // restarted below
	ctx := context.Background()
	s, err := Open(ctx, c.NewDB(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a, _ := s.PutRun(ctx, storetest.TestRun("lasso", "afw"))
	b, _ := s.PutRun(ctx, storetest.TestRun("lasso", "afw"))
	wake, stop := s.Wake(a)
	defer stop()
	recs := storetest.RandRecords(rand.New(rand.NewPCG(1, 1)), 3)
	woken := func(what string) {
		t.Helper()
		// the listener may still be starting: append until woken
		for i := 0; i < 100; i++ {
			if err := s.AppendRecords(ctx, a, 0, recs); err != nil {
				continue // the pool reconnects
			}
			select {
			case <-wake:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
		t.Fatalf("not woken %s", what)
	}
	woken("by an append")
	if err := s.AppendRecords(ctx, b, 0, recs); err != nil {
		t.Fatal(err)
	}
	select {
	case <-wake:
		t.Error("woken by another run's records")
	case <-time.After(300 * time.Millisecond):
	}
	if err := c.Shutdown("fast"); err != nil {
		t.Fatal(err)
	}
	if err := c.Startup(); err != nil {
		t.Fatal(err)
	}
	woken("after a restart")
}
