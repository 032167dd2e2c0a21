package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/store"
)

func checkRunLifecycle(t *testing.T, s store.Backend) {
	ctx := context.Background()
	r := TestRun("lasso", "ssfw-as", "fista")
	r.Name, r.Note = "first try", "ρ = 0.1"
	r.Instance.Panels = json.RawMessage(`{"graph":[1,2]}`)
	r.Created = time.Date(2026, 2, 3, 4, 5, 6, 7891, time.UTC)
	id := put(t, s, r)
	if !store.ValidID(id) || r.ID != id {
		t.Fatalf("id %q, run's %q", id, r.ID)
	}
	got, err := s.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.StatusRunning || !got.Ended.IsZero() || got.Traces[0].Status != store.StatusRunning ||
		got.Traces[1].Seed != 8 || got.Traces[1].Records != 0 || got.Traces[0].Summary != nil || got.Message != "" {
		t.Fatalf("new run %+v", got)
	}
	if !got.Created.Equal(r.Created.Truncate(time.Microsecond)) || got.Created.Location() != time.UTC {
		t.Errorf("created %v, want %v in UTC", got.Created, r.Created.Truncate(time.Microsecond))
	}
	recs := RandRecords(rand.New(rand.NewPCG(3, 4)), 25)
	if err := s.AppendRecords(ctx, id, 0, recs); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendRecords(ctx, id, 0, nil); err != nil {
		t.Errorf("appending nothing: %v", err)
	}
	if err := s.AppendRecords(ctx, id, 5, recs[:1]); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("append to a trace that does not exist: %v", err)
	}
	if err := s.AppendRecords(ctx, "nosuchrun222", 0, recs[:1]); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("append to a run that does not exist: %v", err)
	}
	sum := &solver.Summary{Objective: math.NaN(), Gap: math.Inf(1), Iters: 99, Passes: 1.5, Time: 0.25, Status: solver.StatusFailed, Message: "diverged"}
	if err := s.SetTrace(ctx, id, 0, store.TraceResult{Status: solver.StatusFailed, Summary: sum, Panels: json.RawMessage(`{"b":[[1]]}`)}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetTrace(ctx, id, 7, store.TraceResult{Status: solver.StatusConverged}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SetTrace of a trace that does not exist: %v", err)
	}
	if err := s.SetTrace(ctx, id, 1, store.TraceResult{}); !fieldErr(err, "status") {
		t.Errorf("SetTrace without a status: %v", err)
	}
	if err := s.SetTrace(ctx, id, 1, store.TraceResult{Status: "x", Panels: json.RawMessage(`{`)}); !fieldErr(err, "panels") {
		t.Errorf("SetTrace with broken panels: %v", err)
	}
	end := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	if err := s.SetStatus(ctx, id, store.StatusFailed, end); err != nil {
		t.Fatal(err)
	}
	got, err = s.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.StatusFailed || !got.Ended.Equal(end) || got.Name != "first try" || got.Note != "ρ = 0.1" ||
		got.Spec.Problem != "lasso" || len(got.Spec.Algorithms) != 2 || got.Spec.Iters != 100 || got.Version != "test" ||
		got.Instance.Dim != 3 || got.Instance.Samples != 20 || got.Instance.Blocks != 1 || got.Instance.FStar == nil || *got.Instance.FStar != 0.25 ||
		string(got.Instance.Panels) != `{"graph":[1,2]}` {
		t.Fatalf("stored run %+v", got)
	}
	t0, t1 := got.Traces[0], got.Traces[1]
	if t0.Status != solver.StatusFailed || t0.Records != 25 || string(t0.Panels) != `{"b":[[1]]}` || t0.Summary == nil ||
		!math.IsNaN(t0.Summary.Objective) || !math.IsInf(t0.Summary.Gap, 1) || t0.Summary.Iters != 99 ||
		t0.Summary.Passes != 1.5 || t0.Summary.Time != 0.25 || t0.Summary.Message != "diverged" || t0.Summary.Status != solver.StatusFailed {
		t.Errorf("trace 0: %+v %+v", t0, t0.Summary)
	}
	if t1.Status != store.StatusFailed || t1.Summary != nil || t1.Algo != "fista" || t1.Panels != nil {
		t.Errorf("trace 1 (ended by the run's status): %+v", t1)
	}
	// a trace's panels may be missing with a reason
	if err := s.SetTrace(ctx, id, 1, store.TraceResult{Status: solver.StatusMaxIters, PanelsError: "too large"}); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Get(ctx, id)
	if got.Traces[1].PanelsError != "too large" || got.Traces[1].Status != solver.StatusMaxIters {
		t.Errorf("trace 1 after SetTrace: %+v", got.Traces[1])
	}
	if _, err := s.Get(ctx, "nosuchrun222"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get of an unknown run: %v", err)
	}
}

func checkPutRunValidates(t *testing.T, s store.Backend) {
	ctx := context.Background()
	id := put(t, s, TestRun("lasso", "afw"))
	r := TestRun("lasso", "afw")
	r.ID = id
	if _, err := s.PutRun(ctx, r); !errors.Is(err, store.ErrExists) {
		t.Errorf("a second run with id %s: %v", id, err)
	}
	given := TestRun("lasso", "afw")
	given.ID = "abcdefgh2345"
	if got, err := s.PutRun(ctx, given); err != nil || got != "abcdefgh2345" {
		t.Errorf("a run with a given id: %q, %v", got, err)
	}
	for _, c := range []struct {
		field string
		edit  func(r *store.Run)
	}{
		{"id", func(r *store.Run) { r.ID = "R1" }},
		{"status", func(r *store.Run) { r.Status = "sleeping" }},
		{"name", func(r *store.Run) { r.Name = strings.Repeat("é", store.MaxName+1) }},
		{"note", func(r *store.Run) { r.Note = strings.Repeat("n", store.MaxNote+1) }},
		{"note", func(r *store.Run) { r.Note = "\xff" }},
		{"version", func(r *store.Run) { r.Version = strings.Repeat("v", store.MaxName+1) }},
		{"instance.panels", func(r *store.Run) { r.Instance.Panels = json.RawMessage(`{"a":`) }},
		{"traces[1].index", func(r *store.Run) { r.Traces[1].Index = 5 }},
	} {
		r := TestRun("lasso", "afw", "fista")
		c.edit(r)
		if _, err := s.PutRun(ctx, r); !fieldErr(err, c.field) {
			t.Errorf("%s: %v, want an error naming the field", c.field, err)
		}
	}
	// the name at its limit is kept whole; no status means queued
	r = TestRun("lasso", "afw")
	r.Status = ""
	r.Name = strings.Repeat("é", store.MaxName)
	id = put(t, s, r)
	got, err := s.Get(ctx, id)
	if err != nil || got.Name != r.Name || got.Status != store.StatusQueued || got.Traces[0].Status != store.StatusQueued {
		t.Errorf("a run at the name limit: %v %v", got, err)
	}
	if _, total, _ := s.List(ctx, store.Filter{}); total != 3 {
		t.Errorf("%d runs stored, want 3 (refused runs leave nothing)", total)
	}
}

func checkStatus(t *testing.T, s store.Backend) {
	ctx := context.Background()
	id := put(t, s, TestRun("lasso", "afw", "fista", "pfw"))
	if err := s.SetTrace(ctx, id, 1, store.TraceResult{Status: solver.StatusConverged}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetStatus(ctx, id, store.StatusPaused, time.Time{}); err != nil {
		t.Fatal(err)
	}
	r, _ := s.Get(ctx, id)
	if r.Status != store.StatusPaused || !r.Ended.IsZero() || r.Traces[0].Status != store.StatusPaused ||
		r.Traces[1].Status != solver.StatusConverged || r.Traces[2].Status != store.StatusPaused {
		t.Fatalf("paused: %s %v %s %s %s", r.Status, r.Ended, r.Traces[0].Status, r.Traces[1].Status, r.Traces[2].Status)
	}
	end := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	if err := s.SetStatus(ctx, id, store.StatusCancelled, end); err != nil {
		t.Fatal(err)
	}
	// a finished run's traces keep their status when the run's changes again
	if err := s.SetStatus(ctx, id, store.StatusInterrupted, end); err != nil {
		t.Fatal(err)
	}
	r, _ = s.Get(ctx, id)
	if r.Status != store.StatusInterrupted || !r.Ended.Equal(end) || r.Traces[0].Status != store.StatusCancelled || r.Traces[1].Status != solver.StatusConverged {
		t.Errorf("after cancel then interrupted: %s %s %s", r.Status, r.Traces[0].Status, r.Traces[1].Status)
	}
	if err := s.SetStatus(ctx, id, "finished", end); !fieldErr(err, "status") {
		t.Errorf("an unknown status: %v", err)
	}
	if err := s.SetStatus(ctx, "nosuchrun222", store.StatusDone, end); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the status of an unknown run: %v", err)
	}
	for _, st := range store.Statuses {
		if store.Live(st) != (st == store.StatusQueued || st == store.StatusRunning || st == store.StatusPaused) {
			t.Errorf("Live(%s) = %v", st, store.Live(st))
		}
	}
}

func checkMessageAndInstance(t *testing.T, s store.Backend) {
	ctx := context.Background()
	r := TestRun("gflasso", "bc-ssfw-as")
	r.Instance = store.Instance{}
	r.Message = "ignored by PutRun"
	id := put(t, s, r)
	got, _ := s.Get(ctx, id)
	if got.Message != "" || got.Instance.FStar != nil || got.Instance.Panels != nil || got.Instance.Dim != 0 {
		t.Errorf("a new run without an instance: %+v", got)
	}
	if err := s.SetInstance(ctx, id, store.Instance{Dim: 50, Samples: 200, Blocks: 10, FStar: solver.F(-1.5), Panels: json.RawMessage(`{"g":"x"}`)}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetMessage(ctx, id, "cancelled: paused longer than 10m0s"); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Get(ctx, id)
	if got.Instance.Dim != 50 || got.Instance.Samples != 200 || got.Instance.Blocks != 10 || got.Instance.FStar == nil ||
		*got.Instance.FStar != -1.5 || string(got.Instance.Panels) != `{"g":"x"}` || got.Message != "cancelled: paused longer than 10m0s" {
		t.Errorf("after SetInstance and SetMessage: %+v", got)
	}
	// JSON null panels are no panels
	if err := s.SetInstance(ctx, id, store.Instance{Dim: 1, Panels: json.RawMessage(`null`)}); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Get(ctx, id)
	if got.Instance.Panels != nil || got.Instance.FStar != nil {
		t.Errorf("null panels read as %q, f* %v", got.Instance.Panels, got.Instance.FStar)
	}
	if err := s.SetInstance(ctx, id, store.Instance{Panels: json.RawMessage(`[`)}); !fieldErr(err, "instance.panels") {
		t.Errorf("broken panels: %v", err)
	}
	if err := s.SetInstance(ctx, "nosuchrun222", store.Instance{}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the instance of an unknown run: %v", err)
	}
	if err := s.SetMessage(ctx, "nosuchrun222", "x"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the message of an unknown run: %v", err)
	}
	if err := s.SetMessage(ctx, id, strings.Repeat("m", store.MaxNote+1)); !fieldErr(err, "message") {
		t.Errorf("a long message: %v", err)
	}
}

func checkEdits(t *testing.T, s store.Backend) {
	ctx := context.Background()
	id := put(t, s, TestRun("lasso", "afw"))
	name, note, star := "renamed ✓", "a note\non two lines", true
	if err := s.Update(ctx, id, store.Edit{Name: &name, Note: &note, Starred: &star}); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Get(ctx, id)
	if got.Name != name || got.Note != note || !got.Starred {
		t.Errorf("after the edit: %q %q %v", got.Name, got.Note, got.Starred)
	}
	// nil fields stay; an empty edit only checks the run exists
	unstar := false
	if err := s.Update(ctx, id, store.Edit{Starred: &unstar}); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(ctx, id, store.Edit{}); err != nil {
		t.Errorf("an empty edit: %v", err)
	}
	if un, uo, us, err := s.User(ctx, id); err != nil || un != name || uo != note || us {
		t.Errorf("User: %q %q %v %v", un, uo, us, err)
	}
	long := strings.Repeat("x", store.MaxName+1)
	if err := s.Update(ctx, id, store.Edit{Name: &long}); !fieldErr(err, "name") {
		t.Errorf("a long name: %v", err)
	}
	bad := "\xc3\x28"
	if err := s.Update(ctx, id, store.Edit{Note: &bad}); !fieldErr(err, "note") {
		t.Errorf("a note that is not UTF-8: %v", err)
	}
	if un, _, _, _ := s.User(ctx, id); un != name {
		t.Errorf("a refused edit changed the name to %q", un)
	}
	// a NUL character is kept, or refused with an error naming the field
	// (PostgreSQL's text cannot hold it); never a bare database error
	nul := "a\x00b"
	switch err := s.Update(ctx, id, store.Edit{Name: &nul}); {
	case err == nil:
		if un, _, _, _ := s.User(ctx, id); un != nul {
			t.Errorf("a name with NUL read back as %q", un)
		}
	case !fieldErr(err, "name"):
		t.Errorf("a name with NUL: %v", err)
	}
	for _, e := range []store.Edit{{Name: &name}, {}} {
		if err := s.Update(ctx, "nosuchrun222", e); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("editing an unknown run: %v", err)
		}
	}
	if _, _, _, err := s.User(ctx, "nosuchrun222"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("User of an unknown run: %v", err)
	}
}

// checkTracePanels: GetLean leaves the traces' panels out but says which
// have some; TracePanels returns one trace's panels byte for byte, nil for a
// trace without, ErrNotFound for an unknown run or trace, and ErrTooLarge
// over its cap.
func checkTracePanels(t *testing.T, s store.Backend) {
	ctx := context.Background()
	id := put(t, s, TestRun("lasso", "afw", "fista"))
	pan := json.RawMessage(`{"b":[[1,2.5e-300],[3,-4]],"t":"é"}`)
	if err := s.SetTrace(ctx, id, 0, store.TraceResult{Status: solver.StatusConverged, Panels: pan}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetTrace(ctx, id, 1, store.TraceResult{Status: solver.StatusConverged}); err != nil {
		t.Fatal(err)
	}
	lean, err := s.GetLean(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(lean.Traces) != 2 || lean.Traces[0].Panels != nil || !lean.Traces[0].HasPanels || lean.Traces[1].HasPanels {
		t.Errorf("GetLean traces: %+v", lean.Traces)
	}
	full, err := s.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if string(full.Traces[0].Panels) != string(pan) || !full.Traces[0].HasPanels {
		t.Errorf("Get trace 0: %+v", full.Traces[0])
	}
	got, err := s.TracePanels(ctx, id, 0, int64(len(pan)))
	if err != nil || string(got) != string(pan) {
		t.Errorf("TracePanels at its cap: %s, %v", got, err)
	}
	if got, err := s.TracePanels(ctx, id, 1, 1<<20); err != nil || got != nil {
		t.Errorf("TracePanels of a trace without: %s, %v", got, err)
	}
	if _, err := s.TracePanels(ctx, id, 0, int64(len(pan))-1); !errors.Is(err, store.ErrTooLarge) {
		t.Errorf("TracePanels over its cap: %v", err)
	}
	if _, err := s.TracePanels(ctx, id, 2, 1<<20); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("TracePanels of an unknown trace: %v", err)
	}
	if _, err := s.TracePanels(ctx, "nosuchrun222", 0, 1<<20); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("TracePanels of an unknown run: %v", err)
	}
	if _, err := s.GetLean(ctx, "nosuchrun222"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetLean of an unknown run: %v", err)
	}
}

// checkEndRun: a run's end is one write. Every trace's result, the message
// and the status land together; an ending that cannot be written whole
// (a trace that does not exist) leaves the run as it was; bad input is
// refused naming the field.
func checkEndRun(t *testing.T, s store.Backend) {
	ctx := context.Background()
	id := put(t, s, TestRun("lasso", "ssfw-as", "fista", "afw"))
	end := time.Date(2026, 3, 4, 5, 6, 7, 8000, time.UTC)
	sum := &solver.Summary{Objective: 0.5, Gap: 1e-7, Iters: 12, Status: solver.StatusConverged}
	bad := store.Ending{
		Traces: map[int]store.TraceResult{
			0: {Status: solver.StatusConverged, Summary: sum},
			9: {Status: solver.StatusConverged},
		},
		Message: "failed: half an ending", Status: store.StatusFailed, Ended: end,
	}
	if err := s.EndRun(ctx, id, bad); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an ending naming a trace that does not exist: %v, want ErrNotFound", err)
	}
	got, err := s.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.StatusRunning || got.Message != "" || !got.Ended.IsZero() || got.Traces[0].Status != store.StatusRunning || got.Traces[0].Summary != nil {
		t.Fatalf("after an ending that failed, the run changed: %+v %+v", got, got.Traces[0])
	}
	for _, c := range []struct {
		field string
		e     store.Ending
	}{
		{"status", store.Ending{Status: "finished", Ended: end}},
		{"message", store.Ending{Status: store.StatusDone, Ended: end, Message: strings.Repeat("m", store.MaxNote+1)}},
		{"status", store.Ending{Status: store.StatusDone, Ended: end, Traces: map[int]store.TraceResult{1: {}}}},
		{"panels", store.Ending{Status: store.StatusDone, Ended: end, Traces: map[int]store.TraceResult{1: {Status: "x", Panels: json.RawMessage(`{`)}}}},
	} {
		if err := s.EndRun(ctx, id, c.e); !fieldErr(err, c.field) {
			t.Errorf("ending %+v: %v, want an error naming %s", c.e, err, c.field)
		}
	}
	if err := s.EndRun(ctx, "nosuchrun222", store.Ending{Status: store.StatusDone, Ended: end}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ending a run that does not exist: %v", err)
	}
	good := store.Ending{
		Traces: map[int]store.TraceResult{
			0: {Status: solver.StatusConverged, Summary: sum, Panels: json.RawMessage(`{"p":[1]}`)},
			2: {Status: solver.StatusFailed, PanelsError: "too large"},
		},
		Message: "failed: the run store could not write", Status: store.StatusFailed, Ended: end,
	}
	if err := s.EndRun(ctx, id, good); err != nil {
		t.Fatal(err)
	}
	if got, err = s.Get(ctx, id); err != nil {
		t.Fatal(err)
	}
	if got.Status != store.StatusFailed || got.Message != good.Message || !got.Ended.Equal(end) {
		t.Errorf("ended run: %s %q %v", got.Status, got.Message, got.Ended)
	}
	t0, t1, t2 := got.Traces[0], got.Traces[1], got.Traces[2]
	if t0.Status != solver.StatusConverged || t0.Summary == nil || t0.Summary.Iters != 12 || string(t0.Panels) != `{"p":[1]}` {
		t.Errorf("trace 0: %+v", t0)
	}
	if t1.Status != store.StatusFailed || t1.Summary != nil {
		t.Errorf("trace 1 (no result: it takes the run's status): %+v", t1)
	}
	if t2.Status != solver.StatusFailed || t2.PanelsError != "too large" {
		t.Errorf("trace 2: %+v", t2)
	}
}
