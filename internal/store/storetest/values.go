package storetest

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/store"
)

// checkUnreadableValues: nothing a run, an import, an edit or a sweep can
// carry is stored in a form a page cannot read. F* that is NaN or
// infinite (JSON cannot carry it: a list holding the run could not be
// answered) and texts holding a NUL character or of a megabyte are
// refused naming the field, on every store alike; nothing refused is
// stored, and every run and sweep that is stored encodes as JSON.
func checkUnreadableValues(t *testing.T, s store.Backend) {
	ctx := context.Background()
	nul, huge := "a\x00b", strings.Repeat("x", 1<<20)
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		r := TestRun("lasso", "afw")
		r.Instance.FStar = &v
		if _, err := s.PutRun(ctx, r); !fieldErr(err, "instance.fstar") {
			t.Errorf("a run with F* = %v: %v, want an error naming instance.fstar", v, err)
		}
		id := put(t, s, TestRun("lasso", "afw"))
		if err := s.SetInstance(ctx, id, store.Instance{Dim: 3, FStar: &v}); !fieldErr(err, "instance.fstar") {
			t.Errorf("setting F* = %v: %v, want an error naming instance.fstar", v, err)
		}
		if imp, ok := s.(store.Importer); ok {
			im, err := imp.StreamImport(ctx)
			if err != nil {
				t.Fatal(err)
			}
			r := TestRun("lasso")
			r.Status, r.Instance.FStar = store.StatusDone, &v
			if _, _, err := im.Commit(ctx, r, ""); !fieldErr(err, "instance.fstar") {
				t.Errorf("importing a run with F* = %v: %v, want an error naming instance.fstar", v, err)
			}
			if err := im.Abort(ctx); err != nil {
				t.Error(err)
			}
		}
	}
	for _, c := range []struct {
		field string
		edit  func(r *store.Run)
	}{
		{"name", func(r *store.Run) { r.Name = nul }},
		{"note", func(r *store.Run) { r.Note = nul }},
		{"name", func(r *store.Run) { r.Name = huge }},
		{"note", func(r *store.Run) { r.Note = huge }},
	} {
		r := TestRun("lasso", "afw")
		c.edit(r)
		if _, err := s.PutRun(ctx, r); !fieldErr(err, c.field) {
			t.Errorf("a run with a %d-byte %s: %v, want an error naming %s", len(r.Name)+len(r.Note), c.field, err, c.field)
		}
	}
	id := put(t, s, TestRun("lasso", "afw"))
	for _, v := range []string{nul, huge} {
		if err := s.Update(ctx, id, store.Edit{Name: &v}); !fieldErr(err, "name") {
			t.Errorf("renaming a run to %d bytes with NUL %v: %v", len(v), strings.Contains(v, "\x00"), err)
		}
		if err := s.Update(ctx, id, store.Edit{Note: &v}); !fieldErr(err, "note") {
			t.Errorf("a run's note of %d bytes: %v", len(v), err)
		}
		if err := s.SetMessage(ctx, id, v); !fieldErr(err, "message") {
			t.Errorf("a run's message of %d bytes: %v", len(v), err)
		}
		sw := testSweep()
		sw.Name = v
		if _, err := s.PutSweep(ctx, sw); !fieldErr(err, "name") {
			t.Errorf("a sweep named with %d bytes: %v", len(v), err)
		}
		sw = testSweep()
		sw.Note = v
		if _, err := s.PutSweep(ctx, sw); !fieldErr(err, "note") {
			t.Errorf("a sweep's note of %d bytes: %v", len(v), err)
		}
	}
	swID, err := s.PutSweep(ctx, testSweep())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateSweep(ctx, swID, store.Edit{Name: &nul}); !fieldErr(err, "name") {
		t.Errorf("renaming a sweep with a NUL: %v", err)
	}
	// what is stored reads back whole and encodes for a page
	if err := s.SetInstance(ctx, id, store.Instance{Dim: 3, FStar: solver.F(-0.0)}); err != nil {
		t.Fatal(err)
	}
	runs, total, err := s.List(ctx, store.Filter{})
	if err != nil || total != 4 {
		t.Fatalf("after the refusals: %d runs, %v; want the 4 stored (nothing refused)", total, err)
	}
	if _, err := json.Marshal(runs); err != nil {
		t.Errorf("the runs listed do not encode as JSON: %v", err)
	}
	sws, n, err := s.ListSweeps(ctx, 0, 10)
	if err != nil || n != 1 {
		t.Fatalf("after the refusals: %d sweeps, %v; want only the one stored", n, err)
	}
	if _, err := json.Marshal(sws); err != nil {
		t.Errorf("the sweeps listed do not encode as JSON: %v", err)
	}
	r, err := s.Get(ctx, id)
	if err != nil || r.Name != "lasso: afw" || r.Message != "" || r.Instance.FStar == nil || *r.Instance.FStar != 0 {
		t.Errorf("the run after the refused edits: %+v, %v", r, err)
	}
}
