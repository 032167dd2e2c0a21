package storetest

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/store"
)

// importRun streams one run of n records into s under digest, checking on
// the way that the run is invisible until Commit; commit false aborts it
// instead.
func importRun(t *testing.T, s store.Backend, digest string, recs []solver.Record, commit bool) (id string, existing bool) {
	t.Helper()
	ctx := context.Background()
	imp, ok := s.(store.Importer)
	if !ok {
		t.Fatalf("%T does not take runs as streams (store.Importer)", s)
	}
	_, before, err := s.List(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	im, err := imp.StreamImport(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := im.AddTrace(ctx, store.Trace{Index: 1}); !fieldErr(err, "traces[0].index") {
		t.Errorf("a trace out of order: %v", err)
	}
	if err := im.AddTrace(ctx, store.Trace{Index: 0}); err != nil {
		t.Fatal(err)
	}
	for lo := 0; lo < len(recs); lo += 40 {
		if err := im.AppendRecords(ctx, 0, recs[lo:min(lo+40, len(recs))]); err != nil {
			t.Fatal(err)
		}
	}
	sum := &solver.Summary{Objective: 1.5, Iters: len(recs), Status: store.StatusDone}
	if err := im.EndTrace(ctx, store.Trace{Index: 0, Algo: "afw", Seed: 7}, store.TraceResult{Summary: sum}); err != nil {
		t.Fatal(err)
	}
	// still streaming in: nobody sees it, and Trim cannot take it
	if _, total, err := s.List(ctx, store.Filter{}); err != nil || total != before {
		t.Errorf("an unfinished import is listed: %d runs (was %d), %v", total, before, err)
	}
	if _, err := s.Get(ctx, im.ID()); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get of an unfinished import: %v", err)
	}
	if _, err := s.Trim(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if !commit {
		if err := im.Abort(ctx); err != nil {
			t.Fatal(err)
		}
		return im.ID(), false
	}
	r := TestRun("lasso", "afw")
	r.Status = store.StatusRunning
	if _, _, err := im.Commit(ctx, r, digest); !fieldErr(err, "status") {
		t.Errorf("committing a live run: %v", err)
	}
	r.Status, r.Ended, r.Name = store.StatusDone, r.Created.Add(time.Minute), "imported"
	id, existing, err = im.Commit(ctx, r, digest)
	if err != nil {
		t.Fatal(err)
	}
	if existing && id == im.ID() || !existing && id != im.ID() {
		t.Errorf("commit answered %s (existing %v) for import %s", id, existing, im.ID())
	}
	if err := im.Abort(ctx); err != nil {
		t.Errorf("abort after commit: %v", err)
	}
	return id, existing
}

// checkImports: a run streams in invisibly, becomes whole at Commit, and a
// second import of the same content digest answers the first run and
// stores nothing; an aborted import leaves nothing.
func checkImports(t *testing.T, s store.Backend) {
	ctx := context.Background()
	recs := RandRecords(rand.New(rand.NewPCG(5, 6)), 150)
	first, existing := importRun(t, s, "sha256:aa", recs, true)
	if existing {
		t.Fatal("the first import found an earlier run")
	}
	r, err := s.Get(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	tr := r.Traces[0]
	if r.Status != store.StatusDone || r.Name != "imported" || len(r.Traces) != 1 || tr.Records != 150 || tr.Algo != "afw" || tr.Seed != 7 ||
		tr.Status != store.StatusDone || tr.Summary == nil || tr.Summary.Objective != 1.5 {
		t.Errorf("imported run: %+v, trace %+v", r, tr)
	}
	got, err := s.Records(ctx, first, 0, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	CheckRecords(t, got, recs)

	// the same bundle again, and again begun before the other commits
	if again, existing := importRun(t, s, "sha256:aa", recs, true); !existing || again != first {
		t.Errorf("a second import: %s (existing %v), want %s", again, existing, first)
	}
	imp := s.(store.Importer)
	a, err := imp.StreamImport(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := imp.StreamImport(ctx)
	if err != nil {
		t.Fatal(err)
	}
	run := func() *store.Run { r := TestRun("lasso"); r.Status = store.StatusDone; return r }
	ida, exa, erra := a.Commit(ctx, run(), "sha256:bb")
	idb, exb, errb := b.Commit(ctx, run(), "sha256:bb")
	if erra != nil || errb != nil || exa || !exb || ida != idb {
		t.Errorf("two imports of one digest: %s %v %v, %s %v %v", ida, exa, erra, idb, exb, errb)
	}
	// an aborted import and one without a digest
	gone, _ := importRun(t, s, "sha256:cc", recs, false)
	if _, err := s.Get(ctx, gone); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an aborted import: %v", err)
	}
	if plain, existing := importRun(t, s, "", recs[:10], true); existing || plain == first {
		t.Errorf("an import without a digest: %s, existing %v", plain, existing)
	}
	if _, total, err := s.List(ctx, store.Filter{}); err != nil || total != 3 {
		t.Errorf("%d runs stored, %v; want 3", total, err)
	}
	if err := s.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
}

// checkTrimReading: a run whose records are being read is not trimmed,
// however old; once the read ends it goes.
func checkTrimReading(t *testing.T, s store.Backend) {
	if clock == nil {
		t.Skip("no clock for this store: trimming by entry time is not checked")
	}
	ctx := context.Background()
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	t.Cleanup(clock(func() time.Time { return base }))
	r := TestRun("lasso", "afw")
	r.Status, r.Ended = store.StatusDone, base
	id := put(t, s, r)
	if err := s.AppendRecords(ctx, id, 0, RandRecords(rand.New(rand.NewPCG(2, 3)), 50)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(clock(func() time.Time { return base.Add(time.Hour) }))
	reads := 0
	err := s.EachRecord(ctx, id, 0, 0, -1, func(i int, _ *solver.Record) error {
		if i == 10 {
			if n, err := s.Trim(ctx, 0); err != nil || n != 0 {
				t.Errorf("trim while the run is read: %d, %v", n, err)
			}
		}
		reads++
		return nil
	})
	if err != nil || reads != 50 {
		t.Errorf("read %d records, %v", reads, err)
	}
	if n, err := s.Trim(ctx, 0); err != nil || n != 1 {
		t.Errorf("trim after the read: %d, %v", n, err)
	}
}
