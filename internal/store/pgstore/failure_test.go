package pgstore

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/storetest"
)

// claimedRun stores a queued run and claims it for claim.
func claimedRun(t *testing.T, s *Store, claim string) string {
	t.Helper()
	ctx := context.Background()
	r := storetest.TestRun("lasso", "afw")
	r.Status = store.StatusQueued
	id, err := s.PutRun(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Claim(ctx, id, claim); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestHeartbeatIsJudgedOnTheDatabaseClock: a worker whose clock is minutes
// ahead or behind (SetClock) beats, and the age of its last beat read by
// another process is that on the database's clock: a fresh beat is fresh,
// and it grows as time passes, whatever either process's clock says.
func TestHeartbeatIsJudgedOnTheDatabaseClock(t *testing.T) {
	ctx := context.Background()
	s := openShared(t)
	for _, skew := range []time.Duration{7 * time.Minute, -7 * time.Minute} {
		restore := SetClock(func() time.Time { return time.Now().Add(skew) })
		id := claimedRun(t, s, "w1/1/1")
		if _, err := s.Beat(ctx, id, "w1/1/1"); err != nil {
			restore()
			t.Fatal(err)
		}
		beats, err := s.Beats(ctx, []string{id})
		restore()
		if err != nil {
			t.Fatal(err)
		}
		age, ok := beats[id]
		if !ok || age < 0 || age > store.SilentAfter/2 {
			t.Errorf("clock skewed by %v: the age of a fresh beat is %v (found %v), want about 0", skew, age, ok)
		}
		time.Sleep(1500 * time.Millisecond)
		beats, err = s.Beats(ctx, []string{id})
		if err != nil {
			t.Fatal(err)
		}
		if got := beats[id]; got < time.Second || got > time.Minute {
			t.Errorf("clock skewed by %v: 1.5 s after the beat its age reads %v", skew, got)
		}
		if b := store.NewWorkerBeat(beats[id], 30*time.Second); b.Silent || b.RescueIn == nil || *b.RescueIn < 20 || *b.RescueIn > 29 {
			t.Errorf("clock skewed by %v: a beat %v old reads %+v", skew, beats[id], b)
		}
	}
}

// TestAStoppedTransactionHoldsNoLockForLong: a connection of the store left
// inside a transaction that holds a run's row (its process stopped between
// two statements) is ended by PostgreSQL after IdleInTransaction, so a
// cancel of that run through another store answers within a few seconds,
// and the stopped connection's transaction wrote nothing.
func TestAStoppedTransactionHoldsNoLockForLong(t *testing.T) {
	ctx := context.Background()
	s := openShared(t)
	id := claimedRun(t, s, "w1/1/1")
	// a worker's append, stopped after it locked the run and wrote a batch
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := lockClaim(ctx, tx, id, "w1/1/1", forShare); err != nil {
		t.Fatal(err)
	}
	if err := appendIn(ctx, tx, id, 0, []store.Batch{{N: 3, Blob: store.EncodeBatch(nil, storetest.RandRecords(rand.New(rand.NewPCG(1, 2)), 3))}}); err != nil {
		t.Fatal(err)
	}
	other, err := Open(ctx, s.url)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	start := time.Now()
	res, err := other.Cancel(cctx, []string{id}, time.Now())
	took := time.Since(start)
	if err != nil || res[0].Err != nil {
		t.Fatalf("cancel after %v: %v %+v", took, err, res)
	}
	if took > IdleInTransaction+2*time.Second {
		t.Errorf("the cancel waited %v on a stopped transaction, want at most about %v", took, IdleInTransaction)
	}
	r, err := other.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != store.StatusCancelled || r.Traces[0].Records != 0 {
		t.Errorf("the run: %s with %d records; want cancelled with none (the stopped transaction wrote nothing)", r.Status, r.Traces[0].Records)
	}
	if err := tx.Commit(ctx); err == nil {
		t.Errorf("the stopped transaction committed after it was ended")
	}
}

// TestReleaseLeavesAnEndedRunAlone: a worker cut off while its run was
// cancelled gives the run back when it stops (Release): the run stays
// cancelled, never queued again.
func TestReleaseLeavesAnEndedRunAlone(t *testing.T) {
	ctx := context.Background()
	s := openShared(t)
	id := claimedRun(t, s, "w1/1/1")
	if err := s.SetStatus(ctx, id, store.StatusCancelled, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, id, "w1/1/1"); err != nil {
		t.Fatal(err)
	}
	r, err := s.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != store.StatusCancelled || r.Traces[0].Status != store.StatusCancelled {
		t.Errorf("a cancelled run released by its worker: %s, trace %s", r.Status, r.Traces[0].Status)
	}
}
