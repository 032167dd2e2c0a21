package queue

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
	"github.com/fwlab/fwlab/internal/store/storetest"
)

// jobOf returns the attempt and the errors of run id's job.
func jobOf(t *testing.T, q *Queue, id string) (attempt int, errs []string) {
	t.Helper()
	err := q.st.Pool().QueryRow(context.Background(), `SELECT attempt, COALESCE(errors::text[], '{}') FROM river_job WHERE args->>'run_id' = $1`, id).Scan(&attempt, &errs)
	if err != nil {
		t.Fatal(err)
	}
	return attempt, errs
}

// TestLongRunOnALiveWorkerIsNotRescued: a run lasting several times
// RescueAfter on a live worker (which beats) runs to its end in one
// attempt, never rescued.
func TestLongRunOnALiveWorkerIsNotRescued(t *testing.T) {
	t.Parallel()
	url, st, q := newQueue(t)
	ctx := context.Background()
	w := startWorkerWith(t, url, Config{Name: "w1", Slots: 1, BeatEvery: 200 * time.Millisecond, RescueAfter: time.Second})
	const n = 4000 // about 4 s at 1 ms a record: four times RescueAfter
	start := time.Now()
	id, err := q.Submit(ctx, fakeSpec(n, 1000, "fw"))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Minute, "the run to end", func() bool {
		r, err := st.Get(ctx, id)
		return err == nil && !store.Live(r.Status)
	})
	took := time.Since(start)
	r, _ := st.Get(ctx, id)
	if r.Status != store.StatusDone {
		t.Fatalf("run %s (%q)", r.Status, r.Message)
	}
	checkWhole(t, st, id, n)
	attempt, errs := jobOf(t, q, id)
	if attempt != 1 || len(errs) != 0 || w.m.rescued.Load() != 0 {
		t.Errorf("a run of %v on a live worker: attempt %d, errors %v, %d rescued", took, attempt, errs, w.m.rescued.Load())
	}
	if took < 2*time.Second {
		t.Errorf("the run took %v: not longer than RescueAfter as the test needs", took)
	}
}

// TestDeadWorkersRunIsRescued: a run whose worker died mid-run (its job
// running, its run claimed with partial records, its heartbeat stopped) is
// given back to the queue by a live worker about RescueAfter after its
// last heartbeat, however long the run has lasted, and run again from the
// start: done, its records whole and stored once.
func TestDeadWorkersRunIsRescued(t *testing.T) {
	t.Parallel()
	url, st, q := newQueue(t)
	ctx := context.Background()
	const n = 300
	id, err := q.Submit(ctx, fakeSpec(n, 1000, "fw"))
	if err != nil {
		t.Fatal(err)
	}
	// a worker took the job an hour ago, claimed the run, stored part of
	// it, and died
	var job int64
	if err := st.Pool().QueryRow(ctx, `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now() - interval '1 hour',
		attempted_by = '{dead}' WHERE args->>'run_id' = $1 RETURNING id`, id).Scan(&job); err != nil {
		t.Fatal(err)
	}
	claim := "dead/" + "1/1"
	if err := st.Claim(ctx, id, claim); err != nil {
		t.Fatal(err)
	}
	if err := st.AppendClaimed(ctx, id, claim, 0, storetest.RandRecords(rand.New(rand.NewPCG(1, 2)), 40)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Beat(ctx, id, claim); err != nil {
		t.Fatal(err)
	}
	lastBeat := time.Now()
	const after = 2 * time.Second
	startWorkerWith(t, url, Config{Name: "w1", Slots: 1, BeatEvery: 200 * time.Millisecond, RescueAfter: after})
	var rescued time.Duration
	waitFor(t, time.Minute, "the run to be taken over", func() bool {
		got, _, err := st.Runner(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		rescued = time.Since(lastBeat)
		return strings.HasPrefix(got, "w1/")
	})
	t.Logf("taken over %v after the dead worker's last heartbeat (RescueAfter %v)", rescued, after)
	if rescued < after || rescued > after+3*time.Second { // a rescue looks every after/4, a worker polls every second
		t.Errorf("taken over %v after the last heartbeat, want about RescueAfter (%v)", rescued, after)
	}
	waitFor(t, time.Minute, "the run to end", func() bool {
		r, err := st.Get(ctx, id)
		return err == nil && !store.Live(r.Status)
	})
	if r, _ := st.Get(ctx, id); r.Status != store.StatusDone {
		t.Fatalf("rescued run %s (%q)", r.Status, r.Message)
	}
	checkWhole(t, st, id, n)
	attempt, errs := jobOf(t, q, id)
	if attempt != 2 || len(errs) != 1 || !strings.Contains(errs[0], "heartbeat is older than -rescue-after (2s)") {
		t.Errorf("the rescued job: attempt %d, errors %v", attempt, errs)
	}
	if err := st.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
}

// TestSkewedClockChangesNoRescue: the heartbeats and the rescue go by the
// database's clock, so a worker whose own clock is minutes ahead or behind
// (pgstore.SetClock) runs a run lasting longer than RescueAfter to its end
// in one attempt, never rescued.
func TestSkewedClockChangesNoRescue(t *testing.T) {
	for _, skew := range []time.Duration{-10 * time.Minute, 10 * time.Minute} {
		t.Run(skew.String(), func(t *testing.T) {
			restore := pgstore.SetClock(func() time.Time { return time.Now().Add(skew) })
			defer restore()
			url, st, q := newQueue(t)
			ctx := context.Background()
			w := startWorkerWith(t, url, Config{Name: "w1", Slots: 1, BeatEvery: 200 * time.Millisecond, RescueAfter: time.Second})
			const n = 3000 // about 3 s at 1 ms a record: three times RescueAfter
			id, err := q.Submit(ctx, fakeSpec(n, 1000, "fw"))
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, 2*time.Minute, "the run to end", func() bool {
				r, err := st.Get(ctx, id)
				return err == nil && !store.Live(r.Status)
			})
			if r, _ := st.Get(ctx, id); r.Status != store.StatusDone {
				t.Fatalf("run %s (%q)", r.Status, r.Message)
			}
			checkWhole(t, st, id, n)
			if attempt, errs := jobOf(t, q, id); attempt != 1 || len(errs) != 0 || w.m.rescued.Load() != 0 {
				t.Errorf("a worker whose clock is %v off: attempt %d, errors %v, %d rescued", skew, attempt, errs, w.m.rescued.Load())
			}
		})
	}
}
