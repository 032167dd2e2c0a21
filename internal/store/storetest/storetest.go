// Package storetest is the conformance suite of store.Backend: one set of
// checks that every implementation of the run store passes, run against
// the SQLite store (internal/store) and the PostgreSQL one
// (internal/store/pgstore) on real databases. It covers every behaviour
// the layers above the store rely on: runs and their traces, records in
// batches (bit-exact), summaries and panels, status changes, names, notes
// and stars, history filters, search and pages, delete and keep (Trim),
// sweeps, and runs streaming in (imports, one run per content digest).
//
// An implementation's test calls Run with an Opener that gives a fresh,
// empty store for each check.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
)

// Opener returns a new, empty store; the test's cleanup closes it.
type Opener func(t *testing.T) store.Backend

// Check is one behaviour of the store.
type Check struct {
	Name string
	Fn   func(t *testing.T, s store.Backend)
}

// Checks lists the suite's checks.
var Checks = []Check{
	{"RunLifecycle", checkRunLifecycle},
	{"PutRunValidates", checkPutRunValidates},
	{"RecordsBitExactAndRanges", checkRecords},
	{"RecordsLargeBatches", checkLargeBatches},
	{"EachRecordStopsOnError", checkEachRecord},
	{"StatusReachesLiveTracesOnly", checkStatus},
	{"MessageAndInstance", checkMessageAndInstance},
	{"EditsAndUser", checkEdits},
	{"DefaultNames", checkDefaultNames},
	{"ImportNames", checkImportNames},
	{"UploadNames", checkUploadNames},
	{"ListFiltersSearchAndPages", checkList},
	{"KeysetPagesOnceInOrder", checkKeyset},
	{"Delete", checkDelete},
	{"Verifications", checkVerifications},
	{"TrimKeepsNewestStarredAndLive", checkTrim},
	{"Sweeps", checkSweeps},
	{"SweepsListAndValidate", checkSweepsList},
	{"SweepEditsCellsOfAndFilter", checkSweepEdits},
	{"ConcurrentWritersAndReaders", checkConcurrent},
	{"IntegrityAndDiskUsage", checkIntegrity},
	{"AppenderStreamsInBatches", checkAppender},
	{"ImportsStreamInvisiblyOncePerDigest", checkImports},
	{"UnreadableValuesRefused", checkUnreadableValues},
	{"TrimSparesRunsBeingRead", checkTrimReading},
	{"LeanGetAndTracePanels", checkTracePanels},
	{"OutsideRunsMarked", checkOutside},
}

// Clock makes a store read the time from f until restore is called
// (store.SetClock, pgstore.SetClock); nil skips the checks that need it.
type Clock func(f func() time.Time) (restore func())

// clock is the Clock of the store being checked.
var clock Clock

// Run runs every check as a subtest, each on a store of its own; clock
// sets the store's clock.
func Run(t *testing.T, open Opener, c Clock) {
	clock = c
	defer func() { clock = nil }()
	for _, c := range Checks {
		t.Run(c.Name, func(t *testing.T) {
			c.Fn(t, open(t))
		})
	}
}

// TestRun is a run of problem with one trace per algorithm, status running.
func TestRun(problem string, algos ...string) *store.Run {
	r := &store.Run{
		Spec:     spec.Run{Problem: problem, Replications: 1, Seed: 7, Iters: 100},
		Instance: store.Instance{Dim: 3, Samples: 20, Blocks: 1, FStar: solver.F(0.25)},
		Version:  "test",
		Status:   store.StatusRunning,
	}
	for i, a := range algos {
		r.Spec.Algorithms = append(r.Spec.Algorithms, spec.Algo{Algo: a})
		r.Traces = append(r.Traces, store.Trace{Index: i, Algo: a, Replication: 0, Seed: 7 + int64(i)})
	}
	return r
}

func put(t *testing.T, s store.Backend, r *store.Run) string {
	t.Helper()
	id, err := s.PutRun(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func fieldErr(err error, field string) bool {
	var fe *spec.FieldError
	return errors.As(err, &fe) && fe.Field == field
}

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

func checkRecords(t *testing.T, s store.Backend) {
	ctx := context.Background()
	id := put(t, s, TestRun("lasso", "ssfw-as", "fista"))
	rng := rand.New(rand.NewPCG(7, 8))
	var want [2][]solver.Record
	for b := 0; b < 7; b++ {
		for tr := 0; tr < 2; tr++ {
			recs := RandRecords(rng, 1+rng.IntN(40))
			if err := s.AppendRecords(ctx, id, tr, recs); err != nil {
				t.Fatal(err)
			}
			want[tr] = append(want[tr], recs...)
		}
	}
	for tr := 0; tr < 2; tr++ {
		got, err := s.Records(ctx, id, tr, 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		CheckRecords(t, got, want[tr])
		n := len(want[tr])
		for _, rg := range [][2]int{{0, 0}, {0, 1}, {5, 6}, {3, 50}, {n - 1, n}, {n / 2, n + 10}, {n, -1}, {n + 5, -1}} {
			got, err := s.Records(ctx, id, tr, rg[0], rg[1])
			if err != nil {
				t.Fatal(err)
			}
			lo, hi := min(rg[0], n), rg[1]
			if hi < 0 || hi > n {
				hi = n
			}
			CheckRecords(t, got, want[tr][lo:max(lo, hi)])
		}
	}
	if r, _ := s.Get(ctx, id); r.Traces[0].Records != len(want[0]) || r.Traces[1].Records != len(want[1]) {
		t.Errorf("record counts %d, %d; want %d, %d", r.Traces[0].Records, r.Traces[1].Records, len(want[0]), len(want[1]))
	}
	if _, err := s.Records(ctx, id, 0, -1, -1); !fieldErr(err, "from") {
		t.Errorf("a negative from: %v", err)
	}
	if _, err := s.Records(ctx, id, 9, 0, -1); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("records of an unknown trace: %v", err)
	}
	// an empty Extra map reads as nil, the only normalisation
	id2 := put(t, s, TestRun("lasso", "afw"))
	if err := s.AppendRecords(ctx, id2, 0, []solver.Record{{K: 1, Step: "fw", Extra: map[string]float64{}}}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Records(ctx, id2, 0, 0, -1); err != nil || len(got) != 1 || got[0].Extra != nil {
		t.Errorf("an empty Extra: %+v, %v", got, err)
	}
}

func checkLargeBatches(t *testing.T, s store.Backend) {
	ctx := context.Background()
	id := put(t, s, TestRun("lasso", "afw"))
	rng := rand.New(rand.NewPCG(1, 9))
	want := RandRecords(rng, store.MaxBatchRecords)
	want = append(want, RandRecords(rng, 3)...)
	if err := s.AppendRecords(ctx, id, 0, want[:store.MaxBatchRecords]); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendRecords(ctx, id, 0, want[store.MaxBatchRecords:]); err != nil {
		t.Fatal(err)
	}
	got, err := s.Records(ctx, id, 0, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	CheckRecords(t, got, want)
	got, err = s.Records(ctx, id, 0, store.MaxBatchRecords-2, store.MaxBatchRecords+2)
	if err != nil {
		t.Fatal(err)
	}
	CheckRecords(t, got, want[store.MaxBatchRecords-2:store.MaxBatchRecords+2])
}

func checkEachRecord(t *testing.T, s store.Backend) {
	ctx := context.Background()
	id := put(t, s, TestRun("lasso", "afw"))
	rng := rand.New(rand.NewPCG(5, 5))
	var want []solver.Record
	for b := 0; b < 40; b++ { // more batches than one read takes
		recs := RandRecords(rng, 3)
		if err := s.AppendRecords(ctx, id, 0, recs); err != nil {
			t.Fatal(err)
		}
		want = append(want, recs...)
	}
	var idx []int
	stop := errors.New("enough")
	err := s.EachRecord(ctx, id, 0, 10, -1, func(i int, r *solver.Record) error {
		if d := RecordDiff(r, &want[i]); d != "" {
			t.Fatalf("record %d: %s", i, d)
		}
		idx = append(idx, i)
		if i == 100 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || len(idx) != 91 || idx[0] != 10 || idx[90] != 100 {
		t.Errorf("EachRecord from 10 stopped at 100: %v, %d records from %v", err, len(idx), idx[:1])
	}
	// the callback may use the store (a reader inside a walk)
	n := 0
	err = s.EachRecord(ctx, id, 0, 0, -1, func(i int, r *solver.Record) error {
		n++
		if i%50 == 0 {
			_, err := s.Get(ctx, id)
			return err
		}
		return nil
	})
	if err != nil || n != len(want) {
		t.Errorf("a walk that reads the store: %d records, %v", n, err)
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

func checkList(t *testing.T, s store.Backend) {
	ctx := context.Background()
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	type row struct {
		problem, algo, status, name, note string
	}
	rows := []row{
		{"lasso", "ssfw-as + slack collapse", store.StatusDone, "Lasso baseline", ""},
		{"lasso", "fista", store.StatusFailed, "", "diverges at L=1"},
		{"gflasso", "bc-ssfw-as", store.StatusDone, "100%_done", "paper figure"},
		{"ssvm-ocr", "bcfw", store.StatusRunning, "", `back\slash`},
		{"lasso", "ssfw-as", store.StatusCancelled, "second LASSO", "note with 50% off"},
	}
	ids := make([]string, len(rows))
	for i, rw := range rows {
		r := TestRun(rw.problem, rw.algo)
		if i == 2 {
			r = TestRun(rw.problem, "afw", rw.algo)
		}
		r.Status, r.Name, r.Note = rw.status, rw.name, rw.note
		r.Created = base.Add(time.Duration(i) * time.Minute)
		ids[i] = put(t, s, r)
	}
	for _, c := range []struct {
		f    store.Filter
		want []int // indices into rows, newest first
	}{
		{store.Filter{}, []int{4, 3, 2, 1, 0}},
		{store.Filter{Problem: "lasso"}, []int{4, 1, 0}},
		{store.Filter{Algorithm: "ssfw-as"}, []int{4, 0}},
		{store.Filter{Algorithm: "bc-ssfw-as"}, []int{2}}, // its second trace
		{store.Filter{Algorithm: "ssfw-as + slack collapse"}, []int{0}},
		{store.Filter{Algorithm: "ssfw"}, nil},
		{store.Filter{Algorithm: "ssfw-as +"}, nil},
		{store.Filter{Status: store.StatusDone}, []int{2, 0}},
		{store.Filter{Text: "lasso"}, []int{4, 1, 0}}, // 1 by its default name, "lasso: fista"
		{store.Filter{Text: "LaSsO bAs"}, []int{0}},
		{store.Filter{Text: "L=1"}, []int{1}},
		{store.Filter{Text: "%"}, []int{4, 2}},
		{store.Filter{Text: "_"}, []int{2}},
		{store.Filter{Text: `\`}, []int{3}},
		{store.Filter{Text: "Paper"}, []int{2}},
		{store.Filter{Problem: "lasso", Status: store.StatusDone}, []int{0}},
		{store.Filter{Problem: "lasso", Algorithm: "fista", Text: "diverges"}, []int{1}},
		{store.Filter{Limit: 2}, []int{4, 3}},
		{store.Filter{Limit: 2, Offset: 2}, []int{2, 1}},
		{store.Filter{Limit: 2, Offset: 4}, []int{0}},
		{store.Filter{Offset: 9}, nil},
		{store.Filter{Problem: "nope"}, nil},
		{store.Filter{OldestFirst: true, Limit: 3}, []int{0, 1, 2}},
		{store.Filter{Problem: "lasso", OldestFirst: true}, []int{0, 1, 4}},
	} {
		got, total, err := s.List(ctx, c.f)
		if err != nil {
			t.Fatalf("%+v: %v", c.f, err)
		}
		var gotIdx []int
		for _, r := range got {
			for i, id := range ids {
				if r.ID == id {
					gotIdx = append(gotIdx, i)
				}
			}
			if len(r.Traces) == 0 || r.Traces[0].Panels != nil || r.Instance.Panels != nil || r.Spec.Problem == "" {
				t.Errorf("listed run %s: traces %+v", r.ID, r.Traces)
			}
		}
		wantTotal := len(c.want)
		if c.f.Limit > 0 || c.f.Offset > 0 {
			wantTotal = len(rows)
		}
		if total != wantTotal || fmt.Sprint(gotIdx) != fmt.Sprint(c.want) {
			t.Errorf("%+v: runs %v (total %d), want %v (total %d)", c.f, gotIdx, total, c.want, wantTotal)
		}
	}
	// runs created in the same microsecond come in id order
	same := base.Add(time.Hour)
	var tied []string
	for i := 0; i < 4; i++ {
		r := TestRun("lasso", "afw")
		r.Created = same
		tied = append(tied, put(t, s, r))
	}
	got, _, _ := s.List(ctx, store.Filter{Limit: 4})
	for i := 1; i < len(got); i++ {
		if !got[i].Created.Equal(same) || got[i-1].ID < got[i].ID {
			t.Errorf("tied runs not in descending id order: %s then %s", got[i-1].ID, got[i].ID)
		}
	}
	for _, c := range []struct {
		f     store.Filter
		field string
	}{{store.Filter{Limit: store.MaxLimit + 1}, "limit"}, {store.Filter{Limit: -1}, "limit"}, {store.Filter{Offset: -1}, "offset"}} {
		if _, _, err := s.List(ctx, c.f); !fieldErr(err, c.field) {
			t.Errorf("%+v: %v", c.f, err)
		}
	}
}

func checkDelete(t *testing.T, s store.Backend) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(2, 2))
	var ids []string
	for i := 0; i < 3; i++ {
		id := put(t, s, TestRun("lasso", "afw", "fista"))
		for tr := 0; tr < 2; tr++ {
			if err := s.AppendRecords(ctx, id, tr, RandRecords(rng, 30)); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, id)
	}
	if n, err := s.Delete(ctx); err != nil || n != 0 {
		t.Errorf("deleting nothing: %d, %v", n, err)
	}
	if n, err := s.Delete(ctx, ids[0], "nosuchrun222", ids[2], ids[0]); err != nil || n != 2 {
		t.Fatalf("delete: %d, %v", n, err)
	}
	for _, id := range []string{ids[0], ids[2]} {
		if _, err := s.Get(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a deleted run: %v", err)
		}
		if _, err := s.Records(ctx, id, 0, 0, -1); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("records of a deleted run: %v", err)
		}
	}
	if recs, err := s.Records(ctx, ids[1], 1, 0, -1); err != nil || len(recs) != 30 {
		t.Errorf("the run left: %d records, %v", len(recs), err)
	}
	// an id put again after its delete starts empty
	r := TestRun("lasso", "afw")
	r.ID = ids[0]
	put(t, s, r)
	if recs, err := s.Records(ctx, ids[0], 0, 0, -1); err != nil || len(recs) != 0 {
		t.Errorf("a deleted run's id reused: %d records, %v", len(recs), err)
	}
	// many ids at once
	var many []string
	for i := 0; i < 700; i++ {
		many = append(many, store.NewID())
	}
	many = append(many, ids[1])
	if n, err := s.Delete(ctx, many...); err != nil || n != 1 {
		t.Errorf("deleting among 701 ids: %d, %v", n, err)
	}
}

func checkVerifications(t *testing.T, s store.Backend) {
	ctx := context.Background()
	a := put(t, s, TestRun("lasso", "afw"))
	b := put(t, s, TestRun("lasso", "fista"))
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	add := func(run, outcome string, at time.Time, detail string) string {
		t.Helper()
		v := &store.Verification{RunID: run, Outcome: outcome, At: at, Records: 7, Detail: detail, Version: "v1", RerunID: ""}
		id, err := s.AddVerification(ctx, v)
		if err != nil || id == "" || v.ID != id {
			t.Fatalf("AddVerification(%s, %s): %q, %v", run, outcome, id, err)
		}
		return id
	}
	add(a, store.VerifyReproduced, t0, "")
	second := add(a, store.VerifyDiffers, t0.Add(time.Hour), "trace 0, k = 3: gap 1 vs 2")
	add(b, store.VerifyFailed, t0, "data file missing")
	got, err := s.Verifications(ctx, a)
	if err != nil || len(got) != 2 || got[0].ID != second || got[0].Outcome != store.VerifyDiffers ||
		!got[0].At.Equal(t0.Add(time.Hour)) || got[0].Records != 7 || got[0].Detail != "trace 0, k = 3: gap 1 vs 2" || got[0].Version != "v1" {
		t.Errorf("Verifications(a), newest first: %+v, %v", got, err)
	}
	last, err := s.LastVerifications(ctx, []string{a, b, "nosuchrun333"})
	if err != nil || len(last) != 2 || last[a].ID != second || last[b].Outcome != store.VerifyFailed {
		t.Errorf("LastVerifications: %+v, %v", last, err)
	}
	for _, tc := range []struct {
		field string
		v     store.Verification
	}{
		{"outcome", store.Verification{RunID: a, Outcome: "maybe"}},
		{"records", store.Verification{RunID: a, Outcome: store.VerifyReproduced, Records: -1}},
		{"detail", store.Verification{RunID: a, Outcome: store.VerifyFailed, Detail: strings.Repeat("d", store.MaxVerifyDetail+1)}},
	} {
		if _, err := s.AddVerification(ctx, &tc.v); !fieldErr(err, tc.field) {
			t.Errorf("a verification with a bad %s: %v", tc.field, err)
		}
	}
	if _, err := s.AddVerification(ctx, &store.Verification{RunID: "nosuchrun444", Outcome: store.VerifyReproduced}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a verification of an unknown run: %v", err)
	}
	// a run's verifications go with it
	if _, err := s.Delete(ctx, a); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Verifications(ctx, a); err != nil || len(got) != 0 {
		t.Errorf("a deleted run's verifications: %+v, %v", got, err)
	}
}

func checkTrim(t *testing.T, s store.Backend) {
	ctx := context.Background()
	if _, err := s.Trim(ctx, -1); !fieldErr(err, "keep") {
		t.Errorf("keep -1: %v", err)
	}
	if clock == nil {
		t.Skip("no clock for this store: trimming by entry time is not checked")
	}
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	at := func(tm time.Time) { t.Cleanup(clock(func() time.Time { return tm })) }
	var ids []string
	for i := 0; i < 8; i++ {
		r := TestRun("lasso", "afw")
		r.Status = store.StatusDone
		// created dates run backwards: Trim goes by when runs entered
		r.Created = base.Add(-time.Duration(i) * time.Hour)
		r.Ended = base.Add(time.Duration(i) * time.Second)
		switch i {
		case 1:
			r.Starred = true
		case 2:
			r.Status, r.Ended = store.StatusRunning, time.Time{}
		case 3:
			r.Status, r.Ended = store.StatusQueued, time.Time{}
		}
		at(base.Add(time.Duration(i) * time.Second))
		id := put(t, s, r)
		if err := s.AppendRecords(ctx, id, 0, RandRecords(rand.New(rand.NewPCG(1, uint64(i))), 200)); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	// every run entered and ended within the grace: none goes
	at(base.Add(10 * time.Second))
	if n, err := s.Trim(ctx, 0); err != nil || n != 0 {
		t.Errorf("trim within the grace: %d, %v", n, err)
	}
	late := base.Add(time.Hour)
	at(late)
	n, err := s.Trim(ctx, 3) // keeps 7, 6, 5 (entered last, unstarred), 1 (starred), 2 and 3 (live)
	if err != nil || n != 2 {
		t.Fatalf("trim: %d, %v", n, err)
	}
	left := map[string]bool{}
	runs, total, _ := s.List(ctx, store.Filter{})
	for _, r := range runs {
		left[r.ID] = true
	}
	for i, id := range ids {
		if want := i != 0 && i != 4; left[id] != want || total != 6 {
			t.Errorf("run %d kept %v (%d left), want %v", i, left[id], total, want)
		}
	}
	// a run that entered just now is spared; the others beyond keep 0 go
	r := TestRun("lasso", "afw")
	r.Status, r.Ended = store.StatusDone, base
	fresh := put(t, s, r)
	if n, err := s.Trim(ctx, 0); err != nil || n != 3 {
		t.Errorf("trim to 0: %d, %v (starred, live and fresh runs stay)", n, err)
	}
	if _, err := s.Get(ctx, fresh); err != nil {
		t.Errorf("the fresh run: %v", err)
	}
}

func testSweep() *store.Sweep {
	return &store.Sweep{
		Base: spec.Run{Problem: "lasso", Algorithms: []spec.Algo{{Algo: "ssfw-as"}}, Replications: 1, Iters: 10},
		Axes: json.RawMessage(`[{"param":"algorithms[0].rho","values":[0.05,0.1]}]`),
		Cells: []store.Cell{
			{Index: 0, Values: json.RawMessage(`{"algorithms[0].rho":0.05}`)},
			{Index: 1, Values: json.RawMessage(`{"algorithms[0].rho":0.1}`)},
		},
	}
}

func checkSweeps(t *testing.T, s store.Backend) {
	ctx := context.Background()
	runID := put(t, s, TestRun("lasso", "ssfw-as"))
	sw := testSweep()
	sw.Created = time.Date(2026, 4, 1, 0, 0, 0, 123000, time.UTC)
	id, err := s.PutSweep(ctx, sw)
	if err != nil {
		t.Fatal(err)
	}
	if !store.ValidID(id) || sw.ID != id || sw.Status != store.StatusQueued {
		t.Fatalf("sweep id %q (%q), status %q", id, sw.ID, sw.Status)
	}
	if err := s.SetCellRun(ctx, id, 1, runID); err != nil {
		t.Fatal(err)
	}
	if err := s.SetSweepStatus(ctx, id, store.StatusRunning); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetSweep(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.StatusRunning || got.Base.Problem != "lasso" || got.Base.Iters != 10 || string(got.Axes) != string(sw.Axes) ||
		!got.Created.Equal(sw.Created) || len(got.Cells) != 2 || got.Cells[0].RunID != "" || got.Cells[1].RunID != runID ||
		string(got.Cells[0].Values) != `{"algorithms[0].rho":0.05}` || got.Cells[1].Index != 1 {
		t.Fatalf("stored sweep %+v", got)
	}
	if err := s.SetCellRun(ctx, id, 2, runID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a cell that does not exist: %v", err)
	}
	if err := s.SetCellRun(ctx, id, 0, runID); err != nil {
		t.Fatal(err)
	}
	if err := s.SetCellRun(ctx, id, 0, ""); err != nil { // unlinks
		t.Fatal(err)
	}
	// deleting the cell's run unlinks it
	if _, err := s.Delete(ctx, runID); err != nil {
		t.Fatal(err)
	}
	got, _ = s.GetSweep(ctx, id)
	if got.Cells[0].RunID != "" || got.Cells[1].RunID != "" {
		t.Errorf("cells still link %q, %q", got.Cells[0].RunID, got.Cells[1].RunID)
	}
	if err := s.SetSweepStatus(ctx, id, "sleeping"); !fieldErr(err, "status") {
		t.Errorf("an unknown status: %v", err)
	}
	if err := s.SetSweepStatus(ctx, "nosuchswp222", store.StatusDone); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the status of an unknown sweep: %v", err)
	}
	if err := s.DeleteSweep(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetSweep(ctx, id); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a deleted sweep: %v", err)
	}
	if err := s.DeleteSweep(ctx, id); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleting it again: %v", err)
	}
	// the sweep's id, given, is refused when taken
	sw2 := testSweep()
	sw2.ID = "swp2abcdefgh"
	if _, err := s.PutSweep(ctx, sw2); err != nil {
		t.Fatal(err)
	}
	sw3 := testSweep()
	sw3.ID = "swp2abcdefgh"
	if _, err := s.PutSweep(ctx, sw3); !errors.Is(err, store.ErrExists) {
		t.Errorf("a taken sweep id: %v", err)
	}
}

func checkSweepsList(t *testing.T, s store.Backend) {
	ctx := context.Background()
	base := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	var ids []string
	for i := 0; i < 5; i++ {
		sw := testSweep()
		sw.Created = base.Add(time.Duration(i) * time.Minute)
		id, err := s.PutSweep(ctx, sw)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	for _, c := range []struct {
		offset, limit int
		want          []int
	}{{0, 0, []int{4, 3, 2, 1, 0}}, {0, 2, []int{4, 3}}, {3, 2, []int{1, 0}}, {5, 2, nil}} {
		got, total, err := s.ListSweeps(ctx, c.offset, c.limit)
		if err != nil || total != 5 {
			t.Fatalf("list %d/%d: total %d, %v", c.offset, c.limit, total, err)
		}
		var idx []int
		for _, sw := range got {
			if sw.Cells != nil || sw.Base.Problem != "lasso" {
				t.Errorf("listed sweep %+v", sw)
			}
			for i, id := range ids {
				if sw.ID == id {
					idx = append(idx, i)
				}
			}
		}
		if fmt.Sprint(idx) != fmt.Sprint(c.want) {
			t.Errorf("list %d/%d: %v, want %v", c.offset, c.limit, idx, c.want)
		}
	}
	if _, _, err := s.ListSweeps(ctx, -1, 0); !fieldErr(err, "offset") {
		t.Errorf("a negative offset: %v", err)
	}
	if _, _, err := s.ListSweeps(ctx, 0, store.MaxLimit+1); !fieldErr(err, "limit") {
		t.Errorf("a limit over the maximum: %v", err)
	}
	for _, c := range []struct {
		field string
		edit  func(*store.Sweep)
	}{
		{"axes", func(sw *store.Sweep) { sw.Axes = json.RawMessage(`[`) }},
		{"axes", func(sw *store.Sweep) { sw.Axes = nil }},
		{"status", func(sw *store.Sweep) { sw.Status = "sleeping" }},
		{"id", func(sw *store.Sweep) { sw.ID = "Bad" }},
		{"cells[1].index", func(sw *store.Sweep) { sw.Cells[1].Index = 3 }},
		{"cells[0].values", func(sw *store.Sweep) { sw.Cells[0].Values = json.RawMessage(`{`) }},
	} {
		sw := testSweep()
		c.edit(sw)
		if _, err := s.PutSweep(ctx, sw); !fieldErr(err, c.field) {
			t.Errorf("%s: %v", c.field, err)
		}
	}
	if _, total, _ := s.ListSweeps(ctx, 0, 0); total != 5 {
		t.Errorf("%d sweeps after refused ones, want 5", total)
	}
}

func checkConcurrent(t *testing.T, s store.Backend) {
	ctx := context.Background()
	const runs, traces, batches = 4, 2, 15
	ids := make([]string, runs)
	for i := range ids {
		ids[i] = put(t, s, TestRun("lasso", "afw", "fista"))
	}
	want := make([][traces][]solver.Record, runs)
	var wg sync.WaitGroup
	errs := make(chan error, runs*traces+4)
	for i := range ids {
		for tr := 0; tr < traces; tr++ {
			recs := RandRecords(rand.New(rand.NewPCG(uint64(i), uint64(tr))), batches*5)
			want[i][tr] = recs
			wg.Add(1)
			go func() {
				defer wg.Done()
				for b := 0; b < batches; b++ {
					if err := s.AppendRecords(ctx, ids[i], tr, recs[b*5:(b+1)*5]); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
	}
	stop := make(chan struct{})
	var rwg sync.WaitGroup
	for g := 0; g < 3; g++ {
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				id := ids[g%runs]
				recs, err := s.Records(ctx, id, 0, 0, -1)
				if err != nil {
					errs <- err
					return
				}
				if len(recs)%5 != 0 { // batches are whole or absent
					errs <- fmt.Errorf("a reader saw %d records: part of a batch", len(recs))
					return
				}
				if _, _, err := s.List(ctx, store.Filter{}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	rwg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i, id := range ids {
		for tr := 0; tr < traces; tr++ {
			got, err := s.Records(ctx, id, tr, 0, -1)
			if err != nil {
				t.Fatal(err)
			}
			CheckRecords(t, got, want[i][tr])
		}
	}
}

func checkIntegrity(t *testing.T, s store.Backend) {
	ctx := context.Background()
	if err := s.IntegrityCheck(ctx); err != nil {
		t.Errorf("an empty store: %v", err)
	}
	id := put(t, s, TestRun("lasso", "afw"))
	if err := s.AppendRecords(ctx, id, 0, RandRecords(rand.New(rand.NewPCG(4, 4)), 500)); err != nil {
		t.Fatal(err)
	}
	if err := s.IntegrityCheck(ctx); err != nil {
		t.Errorf("a store with a run: %v", err)
	}
	if n, err := s.DiskUsage(ctx); err != nil || n <= 0 {
		t.Errorf("disk usage %d, %v", n, err)
	}
}

// checkSweepEdits: a sweep is named, noted and starred like a run; CellsOf
// finds the cell each run was made for; Filter.Sweep lists a sweep's runs.
func checkSweepEdits(t *testing.T, s store.Backend) {
	ctx := context.Background()
	var runs []string
	for i := 0; i < 3; i++ {
		runs = append(runs, put(t, s, TestRun("lasso", "ssfw-as")))
	}
	sw := testSweep()
	sw.Name = "ρ study"
	sw.Cells[0].RunID, sw.Cells[1].RunID = runs[0], runs[1]
	id, err := s.PutSweep(ctx, sw)
	if err != nil {
		t.Fatal(err)
	}
	note, star := "does ρ matter?", true
	if err := s.UpdateSweep(ctx, id, store.Edit{Note: &note, Starred: &star}); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetSweep(ctx, id)
	if err != nil || got.Name != "ρ study" || got.Note != note || !got.Starred {
		t.Fatalf("sweep %+v, %v", got, err)
	}
	long := strings.Repeat("x", store.MaxName+1)
	if err := s.UpdateSweep(ctx, id, store.Edit{Name: &long}); !fieldErr(err, "name") {
		t.Errorf("a long name: %v", err)
	}
	if err := s.UpdateSweep(ctx, "zzzzzzzzzzzz", store.Edit{Note: &note}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an unknown sweep: %v", err)
	}
	cells, err := s.CellsOf(ctx, runs...)
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 2 || cells[runs[1]].Sweep != id || cells[runs[1]].Index != 1 || cells[runs[1]].SweepName != "ρ study" ||
		string(cells[runs[0]].Values) != `{"algorithms[0].rho":0.05}` {
		t.Errorf("CellsOf %+v", cells)
	}
	list, total, err := s.List(ctx, store.Filter{Sweep: id})
	if err != nil || total != 2 || len(list) != 2 {
		t.Fatalf("Filter.Sweep: %d runs (total %d), %v", len(list), total, err)
	}
	for _, r := range list {
		if r.ID == runs[2] {
			t.Error("Filter.Sweep lists a run of no sweep")
		}
	}
}

func checkAppender(t *testing.T, s store.Backend) {
	ctx := context.Background()
	id := put(t, s, TestRun("lasso", "afw", "fista"))
	a := store.NewAppenderFor(s, id, 5*time.Millisecond)
	rng := rand.New(rand.NewPCG(6, 6))
	var want [2][]solver.Record
	for i := 0; i < 300; i++ {
		tr := i % 2
		rec := RandRecords(rng, 1)[0]
		a.Add(tr, rec)
		want[tr] = append(want[tr], rec)
		if i == 150 {
			time.Sleep(20 * time.Millisecond) // a few flushes mid-stream
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	a.Add(0, want[0][0]) // after Close: nothing
	for tr := 0; tr < 2; tr++ {
		got, err := s.Records(ctx, id, tr, 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		CheckRecords(t, got, want[tr])
	}
	// a failed write is reported
	b := store.NewAppenderFor(s, "nosuchrun222", time.Hour)
	b.Add(0, want[0][0])
	if err := b.Close(); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an appender for an unknown run: %v", err)
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
