package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/store"
)

func openStore(t *testing.T, path string) *store.Store {
	t.Helper()
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// With a store, a run gets a store id, streams its records there, and once
// finished leaves memory: Get reads it back from the store, records and
// results equal to what the live run held.
func TestStoredRunLeavesMemory(t *testing.T) {
	st := openStore(t, filepath.Join(t.TempDir(), "runs.db"))
	defer st.Close()
	m := newManager(t, session.Options{Store: st})
	sp := fakeSpec(3000, nil, "ssfw-as", "fista")
	sp.Replications = 2
	sp.EvalEvery = 7
	r, err := m.Create(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	if !store.ValidID(r.ID) {
		t.Fatalf("id %q is not a store id", r.ID)
	}
	waitDone(t, r)
	if _, ok := m.Live(r.ID); ok {
		t.Error("a finished run stays in memory")
	}
	got, ok := m.Get(r.ID)
	if !ok {
		t.Fatal("the finished run is not found in the store")
	}
	if got.RunStatus() != session.StatusDone || got.Status().Ended == nil {
		t.Errorf("stored status %q, ended %v", got.RunStatus(), got.Status().Ended)
	}
	want := r.Status().WithoutPanels() // the released run reads the store too
	gs := got.Status()
	gj, _ := json.Marshal(gs.Traces)
	wj, _ := json.Marshal(want.Traces)
	if len(gs.Traces) != 4 || string(gj) != string(wj) {
		t.Fatalf("stored traces differ:\n%+v\n%+v", gs.Traces, want.Traces)
	}
	// the stored run is read without its traces' panels; Panels reads them
	for i, tr := range got.Traces() {
		if gs.Traces[i].Panels != nil || !gs.Traces[i].HasPanels {
			t.Fatalf("stored trace %d: panels %v, has_panels %v", i, gs.Traces[i].Panels, gs.Traces[i].HasPanels)
		}
		gp, err := tr.Panels(context.Background(), 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		wp, err := r.Traces()[i].Panels(context.Background(), 1<<20)
		if want := fmt.Sprintf(`{"final":[3000,%d]}`, tr.Seed); err != nil || string(gp) != want || string(wp) != want {
			t.Fatalf("trace %d's panels: stored %s, in memory %s (%v), want %s", i, gp, wp, err, want)
		}
		if _, err := tr.Panels(context.Background(), int64(len(gp))-1); !errors.Is(err, session.ErrPanelsTooLarge) {
			t.Fatalf("stored trace %d's panels over the cap: %v", i, err)
		}
		if _, err := r.Traces()[i].Panels(context.Background(), int64(len(gp))-1); !errors.Is(err, session.ErrPanelsTooLarge) {
			t.Fatalf("trace %d's panels in memory over the cap: %v", i, err)
		}
	}
	for i, tr := range got.Traces() {
		if tr.Len() != 3001 {
			t.Fatalf("trace %d: %d records", i, tr.Len())
		}
		recs := tr.Records(0, 1<<30)
		for k, rec := range recs {
			if rec.K != k || (rec.K%7 == 0) != rec.Evaluated() && rec.K != 3000 {
				t.Fatalf("trace %d record %d: %+v", i, k, rec)
			}
		}
		n := tr.Each(10, 20, func(j int, rec *solver.Record) bool { return j < 14 })
		if n != 5 {
			t.Errorf("Each stopped after %d records, want 5", n)
		}
	}
	sr, err := st.Get(context.Background(), r.ID)
	if err != nil || sr.Status != store.StatusDone || sr.Traces[0].Summary == nil || sr.Instance.Dim == 0 && sr.Instance.Samples == 0 && sr.Instance.Blocks == 0 {
		t.Fatalf("stored run %+v, %v", sr, err)
	}
}

// Closing the manager writes the live runs as interrupted, records kept.
func TestStoredRunsInterruptedOnClose(t *testing.T) {
	st := openStore(t, filepath.Join(t.TempDir(), "runs.db"))
	defer st.Close()
	m := session.NewManager(session.Options{Store: st, MaxActive: 1})
	live := create(t, m, slowSpec(), "")
	queued := create(t, m, slowSpec(), "")
	waitFor(t, "records", func() bool { return live.Status().Records > 10 })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, r := range []*session.Run{live, queued} {
		sr, err := st.Get(context.Background(), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if sr.Status != store.StatusInterrupted || sr.Ended.IsZero() {
			t.Errorf("%s stored as %s, ended %v", r.ID, sr.Status, sr.Ended)
		}
		n := 0
		for _, tr := range sr.Traces {
			n += tr.Records
		}
		if want := r.Status().Records; n != want || (r == live && n == 0) {
			t.Errorf("%s: %d records stored, %d made", r.ID, n, want)
		}
	}
}

// A run's status changes reach the store while it lives.
func TestStoredStatusFollowsTheRun(t *testing.T) {
	st := openStore(t, store.Memory)
	defer st.Close()
	m := newManager(t, session.Options{Store: st})
	sp := slowSpec()
	sp.StartPaused = true
	r := create(t, m, sp, "")
	stored := func(want string) func() bool {
		return func() bool {
			sr, err := st.Get(context.Background(), r.ID)
			return err == nil && sr.Status == want
		}
	}
	waitFor(t, "paused in the store", stored(store.StatusPaused))
	r.Resume()
	waitFor(t, "running in the store", stored(store.StatusRunning))
	r.Cancel()
	waitDone(t, r)
	waitFor(t, "cancelled in the store", stored(store.StatusCancelled))
}

// Keep trims the oldest unstarred runs as runs end; starred runs stay.
// (Runs that ended within store.TrimGrace are spared; the test sets it to
// zero so that trimming is seen at once.)
func TestKeepTrimsOldUnstarredRuns(t *testing.T) {
	grace := store.TrimGrace
	store.TrimGrace = 0
	defer func() { store.TrimGrace = grace }()
	st := openStore(t, store.Memory)
	defer st.Close()
	m := newManager(t, session.Options{Store: st, Keep: 1})
	var ids []string
	for i := 0; i < 4; i++ {
		r := create(t, m, fakeSpec(10, nil, "fw"), "")
		waitDone(t, r)
		ids = append(ids, r.ID)
		if i == 0 {
			starred := true
			if err := st.Update(context.Background(), r.ID, store.Edit{Starred: &starred}); err != nil {
				t.Fatal(err)
			}
		}
	}
	runs, total, err := st.List(context.Background(), store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if total != 2 || runs[0].ID != ids[3] || runs[1].ID != ids[0] {
		t.Errorf("kept %d runs, want the newest and the starred one", total)
	}
	if _, ok := m.Get(ids[1]); ok {
		t.Error("a trimmed run is still found")
	}
}

// Walk says why it stopped: records held in memory and whole stored ones
// walk without error; stored records that are missing (a damaged store, a
// run deleted while read) give the store's error, where Each stops quietly.
func TestWalkReportsMissingRecords(t *testing.T) {
	st := openStore(t, filepath.Join(t.TempDir(), "runs.db"))
	defer st.Close()
	m := newManager(t, session.Options{Store: st})
	r, err := m.Create(context.Background(), fakeSpec(5000, nil, "fw"))
	if err != nil {
		t.Fatal(err)
	}
	waitDone(t, r)
	tr := r.Traces()[0]
	n, err := tr.Walk(0, tr.Len(), func(int, *solver.Record) bool { return true })
	if err != nil || n != 5001 {
		t.Fatalf("a whole stored trace: %d records, %v", n, err)
	}
	stopped, err := tr.Walk(0, tr.Len(), func(i int, _ *solver.Record) bool { return i < 9 })
	if err != nil || stopped != 10 {
		t.Fatalf("a walk its callback stopped: %d records, %v", stopped, err)
	}
	if _, err := st.Delete(context.Background(), r.ID); err != nil {
		t.Fatal(err)
	}
	n, err = tr.Walk(0, tr.Len(), func(int, *solver.Record) bool { return true })
	if err == nil || n != 0 {
		t.Fatalf("a deleted run's trace: %d records and no error", n)
	}
	if each := tr.Each(0, tr.Len(), func(int, *solver.Record) bool { return true }); each != 0 {
		t.Fatalf("Each read %d records of a deleted run", each)
	}
}
