package storetest

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/store"
)

// checkOutside: a run opened from outside (its spec's Outside) is marked so
// by Get and List, whether it was put or imported, and its token's hash is
// never read back; a catalogue run is not marked.
func checkOutside(t *testing.T, s store.Backend) {
	ctx := context.Background()
	plain := put(t, s, TestRun("lasso", "afw"))
	r := TestRun("my problem", "pgd")
	r.Spec.Outside = true
	r.TokenHash = []byte("0123456789abcdef0123456789abcdef")
	outside := put(t, s, r)
	for id, want := range map[string]bool{plain: false, outside: true} {
		got, err := s.Get(ctx, id)
		if err != nil || got.Outside != want || got.Spec.Outside != want || got.TokenHash != nil {
			t.Errorf("Get %s: %v, outside %v (spec %v), token hash %q; want outside %v and no hash", id, err, got.Outside, got.Spec.Outside, got.TokenHash, want)
		}
	}
	runs, _, err := s.List(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range runs {
		if run.Outside != (run.ID == outside) {
			t.Errorf("List: run %s outside %v", run.ID, run.Outside)
		}
	}
	imp, ok := s.(store.Importer)
	if !ok {
		t.Fatalf("%T does not take runs as streams (store.Importer)", s)
	}
	im, err := imp.StreamImport(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := im.AddTrace(ctx, store.Trace{Index: 0}); err != nil {
		t.Fatal(err)
	}
	if err := im.AppendRecords(ctx, 0, RandRecords(rand.New(rand.NewPCG(1, 2)), 3)); err != nil {
		t.Fatal(err)
	}
	sum := &solver.Summary{Objective: 1, Iters: 2, Status: solver.StatusConverged}
	if err := im.EndTrace(ctx, store.Trace{Index: 0, Algo: "pgd"}, store.TraceResult{Status: solver.StatusConverged, Summary: sum}); err != nil {
		t.Fatal(err)
	}
	ir := TestRun("my problem", "pgd")
	ir.Spec.Outside, ir.Status = true, store.StatusDone
	id, _, err := im.Commit(ctx, ir, "")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, id); err != nil || !got.Outside {
		t.Errorf("an imported run opened from outside: %v %+v", err, got)
	}
}
