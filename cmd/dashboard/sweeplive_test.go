package main

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/pgtest"
	"github.com/fwlab/fwlab/internal/session/sessiontest"
)

// TestSweepPageFollowsCellsOnWorkers: on PostgreSQL, a sweep's cells run on
// a worker process; the sweep page and the cells export read them while
// they run, and once they end both show every cell done with its outcomes
// (the final gap of its last record), never a summary of the records a
// running cell had when first read; the sweep list counts a running cell
// as not done.
func TestSweepPageFollowsCellsOnWorkers(t *testing.T) {
	t.Parallel()
	sessiontest.Register()
	db := pgtest.Shared(t).NewDB(t)
	srv := startChild(t, "-db", db, "-slots", "0")
	startWorkerProc(t, db, "w0", "-slots", "2")
	const n = 3000 // about 3 s at 1 ms a record
	id := post(t, srv.url+"/api/sweeps", fmt.Sprintf(`{"base":{"problem":%q,"params":{"n":"%d","delay_us":"1000"},"algorithms":[{"algo":"fw"}],"replications":1,"iters":%d},
		"axes":[{"param":"seed","values":[1,2]}]}`, sessiontest.Name, n, n))
	type summary struct {
		FinalGap *float64 `json:"final_gap"`
	}
	var page struct {
		Status string
		Cells  []struct {
			Run     string
			Status  string
			Summary *summary
		}
	}
	read := func() {
		t.Helper()
		if err := json.Unmarshal(get(t, srv.url+"/api/sweeps/"+id), &page); err != nil {
			t.Fatal(err)
		}
	}
	var list struct {
		Sweeps []struct {
			CellsDone int `json:"cells_done"`
		}
	}
	// read while a cell runs: the page, the cells export and the list
	waitUntil(t, time.Minute, "a running cell", func() bool {
		read()
		for _, c := range page.Cells {
			if c.Status == "running" {
				return true
			}
		}
		return false
	})
	get(t, srv.url+"/api/sweeps/"+id+"/cells")
	get(t, srv.url+"/api/sweeps/"+id+"/cells?format=csv")
	if err := json.Unmarshal(get(t, srv.url+"/api/sweeps"), &list); err != nil || len(list.Sweeps) != 1 {
		t.Fatalf("the sweep list: %+v %v", list, err)
	}
	read()
	running := 0
	for _, c := range page.Cells {
		if c.Status != "done" {
			running++
		}
	}
	if list.Sweeps[0].CellsDone > len(page.Cells)-running {
		t.Errorf("the sweep list counts %d cells done while %d of %d are not", list.Sweeps[0].CellsDone, running, len(page.Cells))
	}
	waitUntil(t, 2*time.Minute, "the sweep's end", func() bool { read(); return page.Status == "done" })
	want := 1 / float64(n+1) // the fake method's gap at its last record
	for i, c := range page.Cells {
		if c.Status != "done" || c.Summary == nil || c.Summary.FinalGap == nil || *c.Summary.FinalGap != want {
			t.Errorf("the sweep page's cell %d after the end: %s, summary %+v; want done with final gap %g", i, c.Status, c.Summary, want)
		}
	}
	var export struct {
		Rows []struct {
			Status   string
			FinalGap *float64 `json:"final_gap"`
		}
	}
	if err := json.Unmarshal(get(t, srv.url+"/api/sweeps/"+id+"/cells"), &export); err != nil {
		t.Fatal(err)
	}
	rows := export.Rows
	if len(rows) != 2 {
		t.Fatalf("the cells export has %d rows, want 2", len(rows))
	}
	for i, r := range rows {
		if r.FinalGap == nil || *r.FinalGap != want {
			t.Errorf("the cells export's row %d after the end: %+v; want final gap %g", i, r, want)
		}
	}
	if err := json.Unmarshal(get(t, srv.url+"/api/sweeps"), &list); err != nil || list.Sweeps[0].CellsDone != 2 {
		t.Errorf("the sweep list after the end: %+v %v", list, err)
	}
}
