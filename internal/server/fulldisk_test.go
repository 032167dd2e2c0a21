package server

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/fulldisk"
	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/store"
)

// A store on an 8 MiB file system that fills up: no run reports done
// with a record missing, each ends failed naming the store and the cause,
// /healthz is degraded and new runs get 503 until space is freed; after a
// restart every run reports the records the store holds, whole prefixes of
// what was made.
func TestFullDisk(t *testing.T) {
	dir := fulldisk.Dir(t, "8m")
	path := filepath.Join(dir, "fwlab.db")
	filler := filepath.Join(dir, "filler")
	// what is freed later: room for the store's reserve of runs' endings
	// (store.ReserveBytes, kept again before the store heals) and for new runs
	if err := os.WriteFile(filler, make([]byte, 3<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	srv, ts := newTestServer(t, Options{Session: session.Options{Store: st, MaxRecords: 4_000_000, MaxTotalRecords: 10_000_000}})

	const n = 1_500_000 // about 50 MB each in the store: far beyond 8 MiB
	ids := []string{create(t, ts, fakeRun(n, "fw")), create(t, ts, fakeRun(n, "afw"))}
	for _, id := range ids {
		r := waitFinishedWithin(t, srv, id, 3*time.Minute)
		s := r.Status()
		if s.Status == session.StatusDone {
			t.Errorf("run %s reports done with %d records on a full disk", id, s.Records)
		}
		if s.Status != session.StatusFailed || !strings.Contains(s.Message, path) || !strings.Contains(s.Message, "full") {
			t.Errorf("run %s: status %s, message %q; want failed naming %s and the full disk", id, s.Status, s.Message, path)
		}
	}
	code, body := do(t, "GET", ts.URL+"/healthz", nil)
	if code != http.StatusServiceUnavailable || !strings.Contains(string(body), "degraded") || !strings.Contains(string(body), path) {
		t.Errorf("/healthz on a full store: %d %s", code, body)
	}
	code, body = do(t, "POST", ts.URL+"/api/runs", mustJSON(t, fakeRun(10, "fw")))
	if code != http.StatusServiceUnavailable || !strings.Contains(string(body), path) {
		t.Errorf("a new run on a full store: %d %s; want 503 naming the store", code, body)
	}
	sw := map[string]any{"base": fakeRun(10, "fw"), "axes": []any{map[string]any{"param": "seed", "values": []int{1, 2}}}}
	code, body = do(t, "POST", ts.URL+"/api/sweeps", mustJSON(t, sw))
	if code != http.StatusServiceUnavailable || !strings.Contains(string(body), path) {
		t.Errorf("a new sweep on a full store: %d %s; want 503 naming the store", code, body)
	}

	// space comes back: the store heals and takes runs again
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	time.Sleep(store.ProbeInterval + 100*time.Millisecond)
	if code, body := do(t, "GET", ts.URL+"/healthz", nil); code != http.StatusOK {
		t.Errorf("/healthz once space was freed: %d %s", code, body)
	}
	// the failed runs' ends, refused while the disk was full, are written
	for _, id := range ids {
		waitFor(t, "run "+id+"'s end in the store", func() bool {
			r, err := st.Get(context.Background(), id)
			return err == nil && r.Status == store.StatusFailed && strings.Contains(r.Message, path)
		})
	}
	small := create(t, ts, fakeRun(10, "fw"))
	if r := waitFinished(t, srv, small); r.RunStatus() != session.StatusDone {
		t.Errorf("a run once space was freed: %s %s", r.RunStatus(), r.Status().Message)
	}

	// restart: what each run reports is what the store holds
	srv.Close()
	ts.Close()
	if err := st.Close(); err != nil {
		t.Logf("closing the full store: %v", err)
	}
	st2, err := store.Open(path)
	if err != nil {
		t.Fatalf("reopening the store after the disk filled: %v", err)
	}
	defer st2.Close()
	ctx := context.Background()
	kept := 0
	for _, id := range ids {
		r, err := st2.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != store.StatusFailed || !strings.Contains(r.Message, path) {
			t.Errorf("run %s is %s (%q) in the store after a full disk and a restart; want failed naming the store", id, r.Status, r.Message)
		}
		for _, tr := range r.Traces {
			n := 0
			err := st2.EachRecord(ctx, id, tr.Index, 0, -1, func(i int, rec *solver.Record) error {
				if rec.K != i {
					t.Fatalf("run %s trace %d: record %d has k %d: the stored records are not a prefix", id, tr.Index, i, rec.K)
				}
				n++
				return nil
			})
			// A run that started after the disk was already full keeps
			// none; what counts is that it says so.
			if err != nil || n != tr.Records {
				t.Errorf("run %s trace %d reports %d records, %d read (%v)", id, tr.Index, tr.Records, n, err)
			}
			kept += n
			t.Logf("run %s trace %d: %s, %d records kept (%s)", id, tr.Index, r.Status, n, r.Message)
		}
	}
	if kept == 0 {
		t.Errorf("no run kept a record before the disk filled: the prefix check saw nothing")
	}
	if r, err := st2.Get(ctx, small); err != nil || r.Status != store.StatusDone || r.Traces[0].Records != 11 {
		t.Errorf("the run made after the disk was freed: %+v %v", r, err)
	}
}

func waitFinishedWithin(t *testing.T, srv *Server, id string, d time.Duration) *session.Run {
	t.Helper()
	r, ok := srv.Manager().Get(id)
	if !ok {
		t.Fatalf("no run %s", id)
	}
	select {
	case <-r.Done():
	case <-time.After(d):
		t.Fatalf("run %s did not finish in %v", id, d)
	}
	return r
}
