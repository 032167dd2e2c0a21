package server

import (
	"context"
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

// A run's ending is durable: on a store whose disk fills up, a run that
// ended failed is failed after a restart too, the disk still full, naming
// the store, with the records the store kept (a whole prefix), not
// interrupted.
func TestEndingSurvivesARestartOnAFullDisk(t *testing.T) {
	dir := fulldisk.Dir(t, "8m")
	path := filepath.Join(dir, "fwlab.db")
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	srv, ts := newTestServer(t, Options{Session: session.Options{Store: st, MaxRecords: 4_000_000, MaxTotalRecords: 10_000_000}})
	const n = 1_500_000 // far beyond 8 MiB in the store
	ids := []string{create(t, ts, fakeRun(n, "fw")), create(t, ts, fakeRun(n, "afw"))}
	for _, id := range ids {
		r := waitFinishedWithin(t, srv, id, 3*time.Minute)
		if s := r.Status(); s.Status != session.StatusFailed {
			t.Fatalf("run %s on a full disk: %s %q", id, s.Status, s.Message)
		}
	}
	// the disk stays full: the server stops, and starts again
	srv.Close()
	ts.Close()
	st.Close()
	st2, err := store.Open(path)
	if err != nil {
		t.Fatalf("reopening the store on the full disk: %v", err)
	}
	defer st2.Close()
	ctx := context.Background()
	for _, id := range ids {
		r, err := st2.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != store.StatusFailed || !strings.Contains(r.Message, path) {
			t.Errorf("run %s is %s (%q) after a restart on the full disk; want failed naming the store", id, r.Status, r.Message)
		}
		for _, tr := range r.Traces {
			got := 0
			err := st2.EachRecord(ctx, id, tr.Index, 0, -1, func(i int, rec *solver.Record) error {
				if rec.K != i {
					t.Fatalf("run %s trace %d: record %d has k %d", id, tr.Index, i, rec.K)
				}
				got++
				return nil
			})
			if err != nil || got != tr.Records || tr.Status != solver.StatusFailed {
				t.Errorf("run %s trace %d: %s, reports %d records, %d read (%v)", id, tr.Index, tr.Status, tr.Records, got, err)
			}
		}
	}
	_ = os.Remove
}
