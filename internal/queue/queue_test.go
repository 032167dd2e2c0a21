package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/pgtest"
	"github.com/fwlab/fwlab/internal/session/sessiontest"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
	"github.com/fwlab/fwlab/internal/sweep"
)

func TestMain(m *testing.M) {
	sessiontest.Register()
	os.Exit(pgtest.Main(m))
}

// The tests work each in a database of their own and call t.Parallel, so
// that their waits (for heartbeats, rescues, slots lent and given back, a
// restarted server, runs that sleep between records) overlap; a test that
// sets package-wide state (pgstore.SetClock, an environment variable) does
// not, and runs before them.

// newQueue opens a store on a new database of the shared cluster and a
// queue on it; it returns the database's URL too.
func newQueue(t *testing.T) (string, *pgstore.Store, *Queue) {
	t.Helper()
	url := pgtest.Shared(t).NewDB(t)
	st := openStore(t, url)
	q, err := New(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	return url, st, q
}

func openStore(t *testing.T, url string) *pgstore.Store {
	t.Helper()
	st, err := pgstore.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// startWorker starts a worker with a store (a pool) of its own, as a
// worker process has, and stops it at the test's end.
func startWorker(t *testing.T, url, name string, slots int) *Worker {
	t.Helper()
	return startWorkerWith(t, url, Config{Name: name, Slots: slots, BeatEvery: 100 * time.Millisecond})
}

// startWorkerWith is startWorker with a configuration (its store and
// flush interval filled in).
func startWorkerWith(t *testing.T, url string, cfg Config) *Worker {
	t.Helper()
	cfg.Store, cfg.FlushEvery = openStore(t, url), 50*time.Millisecond
	w, err := NewWorker(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		w.Stop(ctx, 10*time.Second)
	})
	return w
}

func fakeSpec(n, delayUS int, algos ...string) spec.Run {
	sp := spec.Run{Problem: sessiontest.Name, Params: spec.Params{"n": fmt.Sprint(n), "delay_us": fmt.Sprint(delayUS)},
		Replications: 1, Seed: 1, Iters: n}
	for _, a := range algos {
		sp.Algorithms = append(sp.Algorithms, spec.Algo{Algo: a})
	}
	return sp
}

// waitFor polls cond until it holds or the time is up.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkWhole checks that every trace of a run holds each record of its
// n+1 exactly once, in order.
func checkWhole(t *testing.T, st *pgstore.Store, id string, n int) {
	t.Helper()
	r, err := st.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range r.Traces {
		recs, err := st.Records(context.Background(), id, tr.Index, 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != n+1 || tr.Records != n+1 {
			t.Fatalf("run %s trace %d: %d records (counted %d), want %d", id, tr.Index, len(recs), tr.Records, n+1)
		}
		for k, rec := range recs {
			if rec.K != k {
				t.Fatalf("run %s trace %d: record %d has k = %d", id, tr.Index, k, rec.K)
			}
		}
		if tr.Summary == nil || tr.Summary.Iters != n {
			t.Errorf("run %s trace %d: summary %+v", id, tr.Index, tr.Summary)
		}
	}
}

// TestSweepOnThreeWorkers: three workers run a 24-cell sweep to its end;
// every record is stored exactly once, and the sweep ends done.
func TestSweepOnThreeWorkers(t *testing.T) {
	t.Parallel()
	url, st, q := newQueue(t)
	ctx := context.Background()
	const n = 300
	seeds := make([]json.RawMessage, 12)
	for i := range seeds {
		seeds[i] = json.RawMessage(fmt.Sprint(i + 1))
	}
	doc := &sweep.Doc{Base: fakeSpec(n, 20, "fw", "afw"), Axes: []sweep.Axis{
		{Param: "seed", Values: seeds},
		{Param: "params.n", Values: []json.RawMessage{json.RawMessage(`"300"`), json.RawMessage(`"300"`)}},
	}}
	names := map[string]bool{}
	for i := 0; i < 3; i++ {
		name := fmt.Sprintf("w%d", i)
		names[name] = true
		startWorker(t, url, name, 2)
	}
	sid, err := q.SubmitSweep(ctx, doc)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 3*time.Minute, "the sweep to end", func() bool {
		sw, err := st.GetSweep(ctx, sid)
		return err == nil && !store.Live(sw.Status)
	})
	sw, _ := st.GetSweep(ctx, sid)
	if sw.Status != store.StatusDone || len(sw.Cells) != 24 {
		t.Fatalf("sweep %s with %d cells", sw.Status, len(sw.Cells))
	}
	ran := map[string]int{}
	for _, cell := range sw.Cells {
		r, err := st.Get(ctx, cell.RunID)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != store.StatusDone || r.Ended.IsZero() {
			t.Errorf("cell %d: run %s", cell.Index, r.Status)
		}
		checkWhole(t, st, r.ID, n)
		claim, _, _ := st.Runner(ctx, r.ID)
		name, _, _ := strings.Cut(claim, "/")
		if !names[name] {
			t.Errorf("cell %d ran under the claim %q", cell.Index, claim)
		}
		ran[name]++
	}
	if len(ran) < 2 {
		t.Errorf("the cells ran on %v: the work was not shared", ran)
	}
	if err := st.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
}

// TestCancelReachesTheWorker: a run cancelled through the store stops on
// its worker within a few heartbeats, its records kept, its traces
// cancelled.
func TestCancelReachesTheWorker(t *testing.T) {
	t.Parallel()
	url, st, q := newQueue(t)
	ctx := context.Background()
	startWorker(t, url, "w1", 1)
	id, err := q.Submit(ctx, fakeSpec(1_000_000, 1000, "fw"))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "records", func() bool {
		r, err := st.Get(ctx, id)
		return err == nil && r.Traces[0].Records > 0
	})
	if err := st.SetStatus(ctx, id, store.StatusCancelled, time.Now()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the worker to stop the run", func() bool {
		r, err := st.Get(ctx, id)
		return err == nil && r.Traces[0].Summary != nil
	})
	r, _ := st.Get(ctx, id)
	if r.Status != store.StatusCancelled || r.Traces[0].Status != solver.StatusCancelled || r.Traces[0].Records == 0 {
		t.Errorf("cancelled run: %s, trace %s with %d records", r.Status, r.Traces[0].Status, r.Traces[0].Records)
	}
}

// TestStopReleasesAndAnotherWorkerFinishes: a worker stopped mid-run with a
// short bound gives its run back; another worker runs it again from the
// start, and its records are whole and not duplicated.
func TestStopReleasesAndAnotherWorkerFinishes(t *testing.T) {
	t.Parallel()
	url, st, q := newQueue(t)
	ctx := context.Background()
	const n = 2000
	w1, err := NewWorker(ctx, Config{Store: openStore(t, url), Name: "w1", Slots: 1, BeatEvery: 100 * time.Millisecond, FlushEvery: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := w1.Start(ctx); err != nil {
		t.Fatal(err)
	}
	id, err := q.Submit(ctx, fakeSpec(n, 1000, "fw"))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "records from w1", func() bool {
		r, err := st.Get(ctx, id)
		return err == nil && r.Traces[0].Records > 0
	})
	sctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	released, err := w1.Stop(sctx, 10*time.Second)
	cancel()
	if err != nil || released != 1 {
		t.Fatalf("stop: %d released, %v", released, err)
	}
	r, _ := st.Get(ctx, id)
	if r.Status != store.StatusQueued {
		t.Fatalf("after the release: %s", r.Status)
	}
	startWorker(t, url, "w2", 1)
	waitFor(t, 2*time.Minute, "w2 to finish the run", func() bool {
		r, err := st.Get(ctx, id)
		return err == nil && r.Status == store.StatusDone
	})
	checkWhole(t, st, id, n)
	if claim, _, _ := st.Runner(ctx, id); !strings.HasPrefix(claim, "w2/") {
		t.Errorf("the run's claim %q, want w2's", claim)
	}
}

// TestSubmitRefusesBadSpecsAndFiles: a spec is checked as a server checks
// it, and a data file (which a worker elsewhere cannot read) is refused;
// nothing is stored.
func TestSubmitRefusesBadSpecsAndFiles(t *testing.T) {
	t.Parallel()
	_, st, q := newQueue(t)
	ctx := context.Background()
	bad := fakeSpec(10, 0, "nope")
	if _, err := q.Submit(ctx, bad); err == nil || !strings.Contains(err.Error(), "algorithms[0]") {
		t.Errorf("an unknown algorithm: %v", err)
	}
	file := fakeSpec(10, 0, "fw")
	file.Params["data"] = "x.csv"
	var fe *spec.FieldError
	if _, err := q.Submit(ctx, file); err == nil || !asField(err, &fe) || fe.Field != "params.data" {
		t.Errorf("a data file: %v", err)
	}
	if _, total, _ := st.List(ctx, store.Filter{}); total != 0 {
		t.Errorf("%d runs stored", total)
	}
}

func asField(err error, fe **spec.FieldError) bool { return errors.As(err, fe) }

// TestConcurrentStartsMigrateOnce: workers and submitters starting at once
// on a new database migrate River's tables one at a time, and all start.
func TestConcurrentStartsMigrateOnce(t *testing.T) {
	t.Parallel()
	c := pgtest.Shared(t)
	url := c.NewDB(t)
	errs := make(chan error, 6)
	for i := 0; i < 6; i++ {
		go func() {
			st, err := pgstore.Open(context.Background(), url)
			if err == nil {
				defer st.Close()
				_, err = New(context.Background(), st)
			}
			errs <- err
		}()
	}
	for i := 0; i < 6; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestPostgreSQLRestartUnderLoad: PostgreSQL restarted while a worker
// streams runs: the store says it cannot be reached while it is down, the
// worker and the queue reconnect, the runs cut short go back to the queue
// and run again from their specs, and each ends done with its records
// whole and not duplicated.
func TestPostgreSQLRestartUnderLoad(t *testing.T) {
	t.Parallel()
	c := pgtest.Start(t) // a cluster of its own: it is restarted
	url := c.NewDB(t)
	ctx := context.Background()
	st := openStore(t, url)
	q, err := New(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	startWorker(t, url, "w1", 2)
	const n = 3000
	var ids []string
	for i := 0; i < 4; i++ {
		id, err := q.Submit(ctx, fakeSpec(n, 1000, "fw"))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	waitFor(t, time.Minute, "records", func() bool {
		r, err := st.Get(ctx, ids[0])
		return err == nil && r.Traces[0].Records > 100
	})
	if err := c.Shutdown("fast"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	if err := st.Health(); err == nil || !strings.Contains(err.Error(), "cannot be reached") {
		t.Errorf("Health while PostgreSQL is down: %v", err)
	}
	time.Sleep(time.Second)
	if err := c.Startup(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 3*time.Minute, "every run to end", func() bool {
		for _, id := range ids {
			r, err := st.Get(ctx, id)
			if err != nil || store.Live(r.Status) {
				return false
			}
		}
		return true
	})
	for _, id := range ids {
		r, _ := st.Get(ctx, id)
		if r.Status != store.StatusDone {
			t.Errorf("run %s: %s (%s)", id, r.Status, r.Message)
			continue
		}
		checkWhole(t, st, id, n)
	}
	time.Sleep(1100 * time.Millisecond)
	if err := st.Health(); err != nil {
		t.Errorf("Health once PostgreSQL is back: %v", err)
	}
}
