package store

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

func openTemp(t testing.TB) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sub", "dir", "fwlab.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func testRun(problem string, algos ...string) *Run {
	r := &Run{
		Spec:     spec.Run{Problem: problem, Replications: 1, Seed: 7, Iters: 100},
		Instance: Instance{Dim: 3, Samples: 20, Blocks: 1, FStar: solver.F(0.25)},
		Version:  "test",
		Status:   StatusRunning,
	}
	for i, a := range algos {
		r.Spec.Algorithms = append(r.Spec.Algorithms, spec.Algo{Algo: a})
		r.Traces = append(r.Traces, Trace{Index: i, Algo: a, Replication: 0, Seed: 7})
	}
	return r
}

func TestDefaultPath(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", "/data/home")
	if p, err := DefaultPath(); err != nil || p != "/data/home/fwlab/fwlab.db" {
		t.Errorf("with XDG_DATA_HOME: %q, %v", p, err)
	}
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("HOME", "/home/u")
	if p, err := DefaultPath(); err != nil || p != "/home/u/.local/share/fwlab/fwlab.db" {
		t.Errorf("without XDG_DATA_HOME: %q, %v", p, err)
	}
	t.Setenv("XDG_DATA_HOME", "relative/dir") // not absolute: ignored, as the XDG rules say
	if p, _ := DefaultPath(); p != "/home/u/.local/share/fwlab/fwlab.db" {
		t.Errorf("relative XDG_DATA_HOME: %q", p)
	}
}

func TestOpenCreatesFileInWALMode(t *testing.T) {
	s, path := openTemp(t)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("file not created: %v", err)
	}
	var mode string
	if err := s.db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal mode %q, %v", mode, err)
	}
	var ps, av int
	s.db.QueryRow("PRAGMA page_size").Scan(&ps)
	s.db.QueryRow("PRAGMA auto_vacuum").Scan(&av)
	if ps != pageSize || av != 2 {
		t.Errorf("page size %d, auto_vacuum %d; want %d, 2 (incremental)", ps, av, pageSize)
	}
	var fk int
	if err := s.db.QueryRow("PRAGMA foreign_keys").Scan(&fk); err != nil || fk != 1 {
		t.Errorf("foreign keys %d, %v", fk, err)
	}
	v, err := schemaVersion(context.Background(), s.db)
	if err != nil || v != SchemaVersion {
		t.Errorf("schema version %d, %v; want %d", v, err, SchemaVersion)
	}
	if err := s.IntegrityCheck(context.Background()); err != nil {
		t.Error(err)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	s, path := openTemp(t)
	if _, err := s.db.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err := Open(path)
	if err == nil || !strings.Contains(err.Error(), "schema version 99 is newer") {
		t.Fatalf("opening a newer schema: %v", err)
	}
}

func TestPathsWithURICharacters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a?b#c%d", "x.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("file not at its path: %v", err)
	}
}

func TestNewIDIsRandomURLSafeAndUnique(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 200_000; i++ {
		id := NewID()
		if !ValidID(id) {
			t.Fatalf("id %q: not 12 characters of a-z, 2-7", id)
		}
		if seen[id] {
			t.Fatalf("id %q drawn twice", id)
		}
		seen[id] = true
	}
	// every character position takes every symbol (the bits are used)
	for pos := 0; pos < IDLen; pos++ {
		syms := map[byte]bool{}
		for id := range seen {
			syms[id[pos]] = true
		}
		if len(syms) != 32 {
			t.Errorf("position %d takes %d of 32 symbols", pos, len(syms))
		}
	}
	for _, bad := range []string{"", "r1", "ABCDEFGHIJKL", "abcdefghijk1", "abcdefghijklm", "abc/efghijkl"} {
		if ValidID(bad) {
			t.Errorf("ValidID(%q) = true", bad)
		}
	}
}

func TestPutRunRefusesTakenID(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	id, err := s.PutRun(ctx, testRun("lasso", "afw"))
	if err != nil {
		t.Fatal(err)
	}
	r := testRun("lasso", "afw")
	r.ID = id
	if _, err := s.PutRun(ctx, r); !errors.Is(err, errExists) {
		t.Fatalf("second run with id %s: %v", id, err)
	}
	r.ID = "R1"
	var fe *spec.FieldError
	if _, err := s.PutRun(ctx, r); !errors.As(err, &fe) || fe.Field != "id" {
		t.Fatalf("malformed id: %v", err)
	}
}

func TestRunLifecycle(t *testing.T) {
	for _, where := range []string{"memory", "file"} {
		t.Run(where, func(t *testing.T) {
			ctx := context.Background()
			var s *Store
			if where == "memory" {
				var err error
				if s, err = Open(Memory); err != nil {
					t.Fatal(err)
				}
				defer s.Close()
			} else {
				s, _ = openTemp(t)
			}
			r := testRun("lasso", "ssfw-as", "fista")
			r.Name, r.Note = "first try", "ρ = 0.1"
			r.Instance.Panels = json.RawMessage(`{"graph":[1,2]}`)
			id, err := s.PutRun(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			if !ValidID(id) || r.ID != id {
				t.Fatalf("id %q, run's %q", id, r.ID)
			}
			rng := rand.New(rand.NewPCG(7, 8))
			var want [2][]solver.Record
			for b := 0; b < 7; b++ {
				for tr := 0; tr < 2; tr++ {
					recs := randRecords(rng, 1+rng.IntN(40))
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
				checkRecords(t, got, want[tr])
				n := len(want[tr])
				// every range, batch boundaries or not
				for _, rg := range [][2]int{{0, 0}, {0, 1}, {5, 6}, {3, 50}, {n - 1, n}, {n / 2, n + 10}, {n, -1}, {n + 5, -1}} {
					got, err := s.Records(ctx, id, tr, rg[0], rg[1])
					if err != nil {
						t.Fatal(err)
					}
					lo, hi := min(rg[0], n), rg[1]
					if hi < 0 || hi > n {
						hi = n
					}
					checkRecords(t, got, want[tr][lo:max(lo, hi)])
				}
			}
			if err := s.AppendRecords(ctx, id, 5, want[0][:1]); !errors.Is(err, ErrNotFound) {
				t.Errorf("append to a trace that does not exist: %v", err)
			}

			sum := &solver.Summary{Objective: math.NaN(), Gap: math.Inf(1), Iters: 99, Passes: 1.5, Time: 0.25, Status: solver.StatusFailed, Message: "diverged"}
			if err := s.SetTrace(ctx, id, 0, TraceResult{Status: solver.StatusFailed, Summary: sum, Panels: json.RawMessage(`{"b":[[1]]}`)}); err != nil {
				t.Fatal(err)
			}
			end := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
			if err := s.SetStatus(ctx, id, StatusFailed, end); err != nil {
				t.Fatal(err)
			}
			got, err := s.Get(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != StatusFailed || !got.Ended.Equal(end) || got.Name != "first try" || got.Note != "ρ = 0.1" ||
				got.Spec.Problem != "lasso" || len(got.Spec.Algorithms) != 2 || got.Version != "test" ||
				got.Instance.Dim != 3 || *got.Instance.FStar != 0.25 || string(got.Instance.Panels) != `{"graph":[1,2]}` ||
				!got.Created.Equal(r.Created.Truncate(time.Microsecond)) {
				t.Fatalf("stored run %+v", got)
			}
			t0, t1 := got.Traces[0], got.Traces[1]
			if t0.Status != solver.StatusFailed || t0.Records != len(want[0]) || string(t0.Panels) != `{"b":[[1]]}` ||
				!math.IsNaN(t0.Summary.Objective) || !math.IsInf(t0.Summary.Gap, 1) || t0.Summary.Message != "diverged" {
				t.Errorf("trace 0: %+v %+v", t0, t0.Summary)
			}
			if t1.Status != StatusFailed || t1.Summary != nil || t1.Algo != "fista" {
				t.Errorf("trace 1 (ended by the run's status): %+v", t1)
			}

			// edits
			name, note, star := "renamed", "", true
			if err := s.Update(ctx, id, Edit{Name: &name, Note: &note, Starred: &star}); err != nil {
				t.Fatal(err)
			}
			long := strings.Repeat("x", MaxName+1)
			var fe *spec.FieldError
			if err := s.Update(ctx, id, Edit{Name: &long}); !errors.As(err, &fe) || fe.Field != "name" {
				t.Errorf("long name: %v", err)
			}
			if err := s.Update(ctx, "nosuchrun222", Edit{Name: &name}); !errors.Is(err, ErrNotFound) {
				t.Errorf("unknown run: %v", err)
			}
			got, _ = s.Get(ctx, id)
			if got.Name != "renamed" || got.Note != "" || !got.Starred {
				t.Errorf("after the edit: %q %q %v", got.Name, got.Note, got.Starred)
			}
			if un, uo, us, err := s.User(ctx, id); err != nil || un != got.Name || uo != got.Note || us != got.Starred {
				t.Errorf("User: %q %q %v %v, Get: %q %q %v", un, uo, us, err, got.Name, got.Note, got.Starred)
			}
			if _, _, _, err := s.User(ctx, "nosuchrun222"); !errors.Is(err, ErrNotFound) {
				t.Errorf("User of an unknown run: %v", err)
			}

			if _, err := s.Get(ctx, "nosuchrun222"); !errors.Is(err, ErrNotFound) {
				t.Errorf("get unknown: %v", err)
			}
			if n, err := s.Delete(ctx, id, "nosuchrun222"); err != nil || n != 1 {
				t.Fatalf("delete: %d, %v", n, err)
			}
			if _, err := s.Records(ctx, id, 0, 0, -1); !errors.Is(err, ErrNotFound) {
				t.Errorf("records of a deleted run: %v", err)
			}
			var left int
			s.db.QueryRow("SELECT COUNT(*) FROM batches").Scan(&left)
			if left != 0 {
				t.Errorf("%d batches left after the delete", left)
			}
		})
	}
}

func TestListFiltersAndPages(t *testing.T) {
	ctx := context.Background()
	s, err := Open(Memory)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	type row struct {
		problem, algo, status, name, note string
	}
	rows := []row{
		{"lasso", "ssfw-as", StatusDone, "Lasso baseline", ""},
		{"lasso", "fista", StatusFailed, "", "diverges at L=1"},
		{"gflasso", "bc-ssfw-as", StatusDone, "100%_done", "paper figure"},
		{"ssvm-ocr", "bcfw", StatusRunning, "", ""},
		{"lasso", "ssfw-as", StatusCancelled, "second LASSO", "note with 50% off"},
	}
	ids := make([]string, len(rows))
	for i, rw := range rows {
		r := testRun(rw.problem, rw.algo)
		r.Status, r.Name, r.Note = rw.status, rw.name, rw.note
		r.Created = base.Add(time.Duration(i) * time.Minute)
		if ids[i], err = s.PutRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		f    Filter
		want []int // indices into rows, newest first
	}{
		{Filter{}, []int{4, 3, 2, 1, 0}},
		{Filter{Problem: "lasso"}, []int{4, 1, 0}},
		{Filter{Algorithm: "ssfw-as"}, []int{4, 0}},
		{Filter{Status: StatusDone}, []int{2, 0}},
		{Filter{Text: "lasso"}, []int{4, 1, 0}}, // name, case-insensitive; 1 by its default name
		{Filter{Text: "L=1"}, []int{1}},         // note
		{Filter{Text: "%"}, []int{4, 2}},        // a literal percent sign, not a wildcard
		{Filter{Text: "_"}, []int{2}},           // a literal underscore
		{Filter{Problem: "lasso", Status: StatusDone}, []int{0}},
		{Filter{Limit: 2}, []int{4, 3}},
		{Filter{Limit: 2, Offset: 2}, []int{2, 1}},
		{Filter{Limit: 2, Offset: 4}, []int{0}},
		{Filter{Problem: "nope"}, nil},
		{Filter{OldestFirst: true, Limit: 3}, []int{0, 1, 2}},
		{Filter{Problem: "lasso", OldestFirst: true}, []int{0, 1, 4}},
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
			if len(r.Traces) != 1 || r.Traces[0].Panels != nil || r.Instance.Panels != nil {
				t.Errorf("listed run %s: traces %+v", r.ID, r.Traces)
			}
		}
		wantTotal := len(c.want)
		if c.f.Limit > 0 {
			wantTotal = len(rows)
		}
		if total != wantTotal || len(gotIdx) != len(c.want) {
			t.Errorf("%+v: runs %v (total %d), want %v (total %d)", c.f, gotIdx, total, c.want, wantTotal)
			continue
		}
		for i := range c.want {
			if gotIdx[i] != c.want[i] {
				t.Errorf("%+v: runs %v, want %v", c.f, gotIdx, c.want)
				break
			}
		}
	}
	var fe *spec.FieldError
	if _, _, err := s.List(ctx, Filter{Limit: MaxLimit + 1}); !errors.As(err, &fe) || fe.Field != "limit" {
		t.Errorf("limit over the maximum: %v", err)
	}
}

// setClock sets the store's clock to t for the rest of the test.
func setClock(t *testing.T, at time.Time) {
	old := now
	now = func() time.Time { return at }
	t.Cleanup(func() { now = old })
}

func TestTrimKeepsNewestUnstarredAndStarredAndLive(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var ids []string
	for i := 0; i < 8; i++ {
		r := testRun("lasso", "afw")
		r.Status = StatusDone
		r.Created = base.Add(time.Duration(i) * time.Second)
		setClock(t, r.Created)
		switch i {
		case 1:
			r.Starred = true
		case 2:
			r.Status = StatusRunning
		}
		id, err := s.PutRun(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AppendRecords(ctx, id, 0, randRecords(rand.New(rand.NewPCG(1, uint64(i))), 2000)); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	before, _ := s.mainUsage(ctx) // the file's pages: the log holds the delete until a checkpoint
	setClock(t, base.Add(time.Hour))
	n, err := s.Trim(ctx, 3) // keeps 7, 6, 5 (newest unstarred), 1 (starred), 2 (live)
	if err != nil || n != 3 {
		t.Fatalf("trim: %d, %v", n, err)
	}
	runs, total, _ := s.List(ctx, Filter{})
	var left []string
	for _, r := range runs {
		left = append(left, r.ID)
	}
	want := []string{ids[7], ids[6], ids[5], ids[2], ids[1]}
	if total != 5 || strings.Join(left, ",") != strings.Join(want, ",") {
		t.Errorf("left %v, want %v", left, want)
	}
	after, _ := s.mainUsage(ctx)
	if !(after < before) {
		t.Errorf("disk usage %d after deleting 3 of 8 runs, %d before", after, before)
	}
}

func TestOwnerMarksLiveRunsInterrupted(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	if !s.Owner() {
		t.Fatal("the first store to open a file does not own it")
	}
	live := map[string]string{}
	for _, st := range Statuses {
		r := testRun("lasso", "afw", "fista")
		r.Status = st
		id, err := s.PutRun(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AppendRecords(ctx, id, 0, randRecords(rand.New(rand.NewPCG(1, 1)), 10)); err != nil {
			t.Fatal(err)
		}
		live[id] = st
	}
	// a finished trace of a running run keeps its own status
	var runningID string
	for id, st := range live {
		if st == StatusRunning {
			runningID = id
		}
	}
	if err := s.SetTrace(ctx, runningID, 1, TraceResult{Status: solver.StatusConverged}); err != nil {
		t.Fatal(err)
	}

	// a second store on the same file while the first is open: not the owner
	s2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if s2.Owner() || s2.Recovered() != 0 {
		t.Errorf("second store: owner %v, recovered %d", s2.Owner(), s2.Recovered())
	}
	if r, _ := s2.Get(ctx, runningID); r.Status != StatusRunning {
		t.Errorf("the second store changed a live run to %s", r.Status)
	}
	s2.Close()
	s.Close()

	s3, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s3.Close()
	if !s3.Owner() || s3.Recovered() != 3 {
		t.Errorf("reopened: owner %v, recovered %d, want 3", s3.Owner(), s3.Recovered())
	}
	for id, st := range live {
		r, err := s3.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		want := st
		if Live(st) {
			want = StatusInterrupted
		}
		if r.Status != want {
			t.Errorf("run %s was %s: now %s, want %s", id, st, r.Status, want)
		}
		if id == runningID && (r.Traces[0].Status != StatusInterrupted || r.Traces[1].Status != solver.StatusConverged) {
			t.Errorf("traces of the interrupted run: %s, %s", r.Traces[0].Status, r.Traces[1].Status)
		}
		if recs, err := s3.Records(ctx, id, 0, 0, -1); err != nil || len(recs) != 10 {
			t.Errorf("run %s kept %d records, %v", id, len(recs), err)
		}
	}
}

func TestSweeps(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	runID, err := s.PutRun(ctx, testRun("lasso", "ssfw-as"))
	if err != nil {
		t.Fatal(err)
	}
	sw := &Sweep{
		Base: spec.Run{Problem: "lasso", Algorithms: []spec.Algo{{Algo: "ssfw-as"}}},
		Axes: json.RawMessage(`[{"param":"algorithms[0].rho","values":[0.05,0.1]}]`),
		Cells: []Cell{
			{Index: 0, Values: json.RawMessage(`{"algorithms[0].rho":0.05}`)},
			{Index: 1, Values: json.RawMessage(`{"algorithms[0].rho":0.1}`)},
		},
	}
	id, err := s.PutSweep(ctx, sw)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetCellRun(ctx, id, 1, runID); err != nil {
		t.Fatal(err)
	}
	if err := s.SetSweepStatus(ctx, id, StatusRunning); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetSweep(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != StatusRunning || got.Base.Problem != "lasso" || string(got.Axes) != string(sw.Axes) ||
		len(got.Cells) != 2 || got.Cells[0].RunID != "" || got.Cells[1].RunID != runID || string(got.Cells[0].Values) != `{"algorithms[0].rho":0.05}` {
		t.Fatalf("stored sweep %+v", got)
	}
	list, total, err := s.ListSweeps(ctx, 0, 0)
	if err != nil || total != 1 || len(list) != 1 || list[0].ID != id {
		t.Fatalf("list: %v %d %v", list, total, err)
	}
	// deleting the cell's run unlinks it
	if _, err := s.Delete(ctx, runID); err != nil {
		t.Fatal(err)
	}
	got, _ = s.GetSweep(ctx, id)
	if got.Cells[1].RunID != "" {
		t.Errorf("cell still links the deleted run %s", got.Cells[1].RunID)
	}
	if err := s.DeleteSweep(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetSweep(ctx, id); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted sweep: %v", err)
	}
	var fe *spec.FieldError
	if _, err := s.PutSweep(ctx, &Sweep{Axes: json.RawMessage(`[`)}); !errors.As(err, &fe) || fe.Field != "axes" {
		t.Errorf("bad axes: %v", err)
	}
}

// A store damaged underneath (a batch gone, a count too high) gives an
// error naming the missing records, never a hang or a short trace.
func TestMissingBatchesAreReported(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	id, err := s.PutRun(ctx, testRun("lasso", "afw"))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for b := 0; b < 5; b++ {
		if err := s.AppendRecords(ctx, id, 0, randRecords(rng, 10)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.db.Exec(`DELETE FROM batches WHERE first_rec = 20`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Records(ctx, id, 0, 0, -1); err == nil || !strings.Contains(err.Error(), "records 20 to 30 are missing") {
		t.Errorf("a batch gone: %v", err)
	}
	if got, err := s.Records(ctx, id, 0, 30, 45); err != nil || len(got) != 15 {
		t.Errorf("the records after the gap: %d, %v", len(got), err)
	}
	if _, err := s.db.Exec(`UPDATE traces SET records = 70`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Records(ctx, id, 0, 30, -1); err == nil || !strings.Contains(err.Error(), "records 50 to 70 are missing") {
		t.Errorf("a count too high: %v", err)
	}
}

// A sweep is named, noted and starred like a run; CellsOf finds the cell
// each run was made for, and Filter.Sweep lists a sweep's runs.
func TestSweepEditsAndCellsOf(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	sp := spec.Run{Problem: "lasso", Algorithms: []spec.Algo{{Algo: "afw"}}, Replications: 1, Iters: 5}
	var runs []string
	for i := 0; i < 3; i++ {
		id, err := s.PutRun(ctx, &Run{Spec: sp, Version: "t", Status: StatusDone})
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, id)
	}
	sw := &Sweep{Base: sp, Axes: []byte(`[{"param":"algorithms[0].L","values":["auto",2]}]`), Name: "L study",
		Cells: []Cell{{Index: 0, Values: []byte(`{"algorithms[0].L":"auto"}`), RunID: runs[0]}, {Index: 1, Values: []byte(`{"algorithms[0].L":2}`), RunID: runs[1]}}}
	id, err := s.PutSweep(ctx, sw)
	if err != nil {
		t.Fatal(err)
	}
	note, star := "the step rule's L", true
	if err := s.UpdateSweep(ctx, id, Edit{Note: &note, Starred: &star}); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetSweep(ctx, id)
	if err != nil || got.Name != "L study" || got.Note != note || !got.Starred {
		t.Fatalf("sweep %+v, %v", got, err)
	}
	long := strings.Repeat("x", MaxName+1)
	if err := s.UpdateSweep(ctx, id, Edit{Name: &long}); err == nil || !strings.Contains(err.Error(), "name") {
		t.Errorf("a long name: %v", err)
	}
	if err := s.UpdateSweep(ctx, "zzzzzzzzzzzz", Edit{Note: &note}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown sweep: %v", err)
	}
	cells, err := s.CellsOf(ctx, runs...)
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 2 || cells[runs[1]].Sweep != id || cells[runs[1]].Index != 1 || cells[runs[1]].SweepName != "L study" || string(cells[runs[0]].Values) != `{"algorithms[0].L":"auto"}` {
		t.Errorf("CellsOf %+v", cells)
	}
	if _, ok := cells[runs[2]]; ok {
		t.Error("a run of no sweep has a cell")
	}
	list, total, err := s.List(ctx, Filter{Sweep: id})
	if err != nil || total != 2 || len(list) != 2 {
		t.Fatalf("Filter.Sweep: %d runs (total %d), %v", len(list), total, err)
	}
	for _, r := range list {
		if r.ID == runs[2] {
			t.Error("Filter.Sweep lists a run of no sweep")
		}
	}
}
