package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
)

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
