package server

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/session"
)

// A sweep whose cell would be over the per-run record limit is refused at
// POST with 400 naming the axis value, and nothing is stored.
func TestSweepOverTheRunLimitsRefused(t *testing.T) {
	_, ts := newTestServer(t, Options{Session: session.Options{MaxRecords: 10_000}})
	base := fakeRun(50, "fw")
	doc := map[string]any{"base": base, "axes": []map[string]any{{"param": "iters", "values": []any{100, 20_000}}}}
	code, body := do(t, "POST", ts.URL+"/api/sweeps", mustJSON(t, doc))
	wantError(t, code, body, 400, "axes[0].values[1]")
	if !strings.Contains(string(body), "iters = 20000") || !strings.Contains(string(body), "10000") {
		t.Errorf("the refusal does not name the value and the limit: %s", body)
	}
	// a combination over the limit names the cell's values
	base.Replications = 1
	doc = map[string]any{"base": base, "axes": []map[string]any{{"param": "iters", "values": []any{100, 4000}}, {"param": "replications", "values": []any{1, 3}}}}
	code, body = do(t, "POST", ts.URL+"/api/sweeps", mustJSON(t, doc))
	wantError(t, code, body, 400, "axes[1].values[1]")
	if !strings.Contains(string(body), "iters = 4000, replications = 3") {
		t.Errorf("the refusal does not name the combination: %s", body)
	}
	if _, body := do(t, "GET", ts.URL+"/api/sweeps", nil); !strings.Contains(string(body), `"total":0`) {
		t.Errorf("a refused sweep was stored: %s", body)
	}
}

// A client has at most MaxSweeps sweeps live; the next gets 429 naming the
// flag, and one more is taken once one ends.
func TestSweepsPerClientBounded(t *testing.T) {
	_, ts := newTestServer(t, Options{MaxSweeps: 2, Flags: map[string]string{"MaxSweeps": "-max-sweeps"}, Session: session.Options{MaxActive: 1}})
	slow := fakeRun(1_000_000, "fw")
	doc := map[string]any{"base": slow, "axes": []map[string]any{{"param": "seed", "values": []any{1, 2}}}}
	var ids []string
	for i := 0; i < 2; i++ {
		code, body := do(t, "POST", ts.URL+"/api/sweeps", mustJSON(t, doc))
		var c struct{ ID string }
		if code != 201 || json.Unmarshal(body, &c) != nil {
			t.Fatalf("sweep %d: %d %s", i, code, body)
		}
		ids = append(ids, c.ID)
	}
	code, body := do(t, "POST", ts.URL+"/api/sweeps", mustJSON(t, doc))
	if code != 429 || !strings.Contains(string(body), "-max-sweeps") {
		t.Fatalf("a third sweep: %d %s, want 429 naming -max-sweeps", code, body)
	}
	for _, id := range ids {
		do(t, "DELETE", ts.URL+"/api/sweeps/"+id, nil)
	}
	waitFor(t, "room for a sweep", func() bool {
		code, body := do(t, "POST", ts.URL+"/api/sweeps", mustJSON(t, doc))
		if code == 201 {
			var c struct{ ID string }
			_ = json.Unmarshal(body, &c)
			do(t, "DELETE", ts.URL+"/api/sweeps/"+c.ID, nil)
		}
		return code == 201
	})
}

// A sweep over a string axis (L) is named, noted and starred; its cells
// come as JSON and CSV, one row per cell, algorithm and replication, the
// axis values as columns; each cell's run points back to it, the history
// lists the sweep of each run and filters by it, and the sweep is deleted
// with its runs.
func TestSweepStudyAPI(t *testing.T) {
	_, ts := newTestServer(t, Options{Session: session.Options{MaxActive: 2}})
	base := fakeRun(30, "fw", "afw")
	base.Replications = 2
	base.Gap = 0.05
	doc := map[string]any{"base": base, "name": "L study", "axes": []map[string]any{
		{"param": "algorithms[0].L", "values": []any{"auto", 2}},
		{"param": "algorithms[1].caratheodory", "values": []any{true, false}},
	}}
	code, body := do(t, "POST", ts.URL+"/api/sweeps", mustJSON(t, doc))
	var created struct{ ID string }
	if code != 201 || json.Unmarshal(body, &created) != nil {
		t.Fatalf("POST sweep: %d %s", code, body)
	}
	id := created.ID
	var sw struct {
		Status         string   `json:"status"`
		Name           string   `json:"name"`
		Note           string   `json:"note"`
		Starred        bool     `json:"starred"`
		Labels         []string `json:"labels"`
		DefaultOutcome string   `json:"default_outcome"`
		GapTarget      float64  `json:"gap_target"`
		Cells          []struct {
			Run string `json:"run"`
		} `json:"cells"`
	}
	waitFor(t, "the sweep to finish", func() bool {
		_, body := do(t, "GET", ts.URL+"/api/sweeps/"+id, nil)
		return json.Unmarshal(body, &sw) == nil && sw.Status == "done"
	})
	if sw.Name != "L study" || strings.Join(sw.Labels, "|") != "L of fw|Carathéodory bound of afw" || sw.DefaultOutcome != "passes_to_gap" || sw.GapTarget != 0.05 {
		t.Errorf("sweep %+v", sw)
	}
	code, body = do(t, "PATCH", ts.URL+"/api/sweeps/"+id, []byte(`{"note":"does L matter?","starred":true}`))
	if code != 200 {
		t.Fatalf("PATCH: %d %s", code, body)
	}
	code, body = do(t, "PATCH", ts.URL+"/api/sweeps/"+id, []byte(`{"name":"`+strings.Repeat("x", 300)+`"}`))
	wantError(t, code, body, 400, "name")
	_, body = do(t, "GET", ts.URL+"/api/sweeps", nil)
	for _, want := range []string{`"name":"L study"`, `"note":"does L matter?"`, `"starred":true`, `"problem":"` + base.Problem + `"`, `"labels":["L of fw","Carathéodory bound of afw"]`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the sweep list lacks %s: %s", want, body)
		}
	}

	// JSON: 4 cells × 2 algorithms × 2 replications.
	code, body = do(t, "GET", ts.URL+"/api/sweeps/"+id+"/cells?format=json", nil)
	var cj struct {
		Axes []string `json:"axes"`
		Rows []struct {
			Cell        int                        `json:"cell"`
			Values      map[string]json.RawMessage `json:"values"`
			Algorithm   string                     `json:"algorithm"`
			Replication *int                       `json:"replication"`
			FinalGap    *float64                   `json:"final_gap"`
		} `json:"rows"`
	}
	if code != 200 || json.Unmarshal(body, &cj) != nil || len(cj.Rows) != 16 {
		t.Fatalf("cells json: %d %s", code, body)
	}
	if string(cj.Rows[8].Values["algorithms[0].L"]) != "2" || cj.Rows[0].Algorithm != "fw" || cj.Rows[3].Algorithm != "afw" || *cj.Rows[1].Replication != 1 || cj.Rows[0].FinalGap == nil {
		t.Errorf("rows %+v", cj.Rows[:5])
	}
	// CSV: the same rows, the axes as columns.
	code, body = do(t, "GET", ts.URL+"/api/sweeps/"+id+"/cells?format=csv", nil)
	recs, err := csv.NewReader(strings.NewReader(string(body))).ReadAll()
	if code != 200 || err != nil || len(recs) != 17 {
		t.Fatalf("cells csv: %d %v %s", code, err, body)
	}
	if got := strings.Join(recs[0][:6], ","); got != "cell,algorithms[0].L,algorithms[1].caratheodory,run,status,algorithm" {
		t.Errorf("csv header %q", got)
	}
	if recs[1][1] != "auto" || recs[9][1] != "2" || recs[1][2] != "true" || recs[5][2] != "false" {
		t.Errorf("csv axis columns: %v %v %v", recs[1], recs[5], recs[9])
	}
	code, body = do(t, "GET", ts.URL+"/api/sweeps/"+id+"/cells?format=xml", nil)
	wantError(t, code, body, 400, "format")

	// Every cell's run points back; the history shows and filters the sweep.
	run := sw.Cells[2].Run
	code, body = do(t, "GET", ts.URL+"/api/runs/"+run+"/sweep", nil)
	if code != 200 || !strings.Contains(string(body), `"sweep":"`+id+`"`) || !strings.Contains(string(body), `"index":2`) || !strings.Contains(string(body), `"sweep_name":"L study"`) || !strings.Contains(string(body), `"text":"L of fw = 2, Carathéodory bound of afw = true"`) {
		t.Errorf("the run's sweep: %d %s", code, body)
	}
	code, body = do(t, "POST", ts.URL+"/api/runs", mustJSON(t, fakeRun(10, "fw")))
	var lr struct{ ID string }
	if code != 201 || json.Unmarshal(body, &lr) != nil {
		t.Fatalf("POST run: %d %s", code, body)
	}
	lone := lr.ID
	waitFor(t, "the lone run", func() bool { return status(t, ts, lone).Status == "done" })
	if code, body := do(t, "GET", ts.URL+"/api/runs/"+lone+"/sweep", nil); code != 200 || strings.TrimSpace(string(body)) != `{"sweep":null}` {
		t.Errorf("a run of no sweep: %d %s", code, body)
	}
	if code, _ := do(t, "GET", ts.URL+"/api/runs/aaaaaaaaaaaa/sweep", nil); code != 404 {
		t.Errorf("an unknown run's sweep: %d", code)
	}
	_, body = do(t, "GET", ts.URL+"/api/runs?sweep="+id, nil)
	var hist struct {
		Runs []struct {
			ID    string `json:"id"`
			Sweep *struct {
				ID    string `json:"id"`
				Index int    `json:"index"`
			} `json:"sweep"`
		} `json:"runs"`
		Total int `json:"total"`
	}
	if json.Unmarshal(body, &hist) != nil || hist.Total != 4 {
		t.Fatalf("history of the sweep: %s", body)
	}
	for _, r := range hist.Runs {
		if r.Sweep == nil || r.Sweep.ID != id || r.ID == lone {
			t.Errorf("history row %+v", r)
		}
	}
	// Deleting the sweep with its runs.
	code, body = do(t, "POST", ts.URL+"/api/sweeps/delete", []byte(`{"ids":["`+id+`"],"runs":true}`))
	if code != 200 || !strings.Contains(string(body), `"deleted":1`) || !strings.Contains(string(body), `"runs_deleted":4`) {
		t.Errorf("delete: %d %s", code, body)
	}
	if code, _ := do(t, "GET", ts.URL+"/api/sweeps/"+id, nil); code != 404 {
		t.Errorf("a deleted sweep: %d", code)
	}
}

// A sweep over data files is checked as its runs would be, when posted: a
// missing file, or one outside the data folders, is refused with 400
// naming the axis value and the rule, and nothing is stored; files that a
// run may read make a sweep.
func TestSweepOverDataFilesChecked(t *testing.T) {
	data := t.TempDir()
	if err := os.WriteFile(filepath.Join(data, "a.csv"), []byte("1,2,3\n4,5,6\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, ts := newTestServer(t, Options{DataDir: data, UploadDir: t.TempDir()})
	base := fakeRun(20, "fw")
	for _, tc := range []struct{ bad, rule string }{
		{"missing.csv", "no readable file"},
		{"/etc/hostname", "not an absolute path"},
		{filepath.Join(data, "a.csv"), "not an absolute path"},
		{"../a.csv", "climbs out"},
	} {
		doc := map[string]any{"base": base, "axes": []map[string]any{{"param": "params.data", "values": []any{"a.csv", tc.bad}}}}
		code, body := do(t, "POST", ts.URL+"/api/sweeps", mustJSON(t, doc))
		wantError(t, code, body, 400, "axes[0].values[1]")
		if !strings.Contains(string(body), tc.rule) || !strings.Contains(string(body), "params.data") {
			t.Errorf("%s: the refusal does not name the parameter and the rule %q: %s", tc.bad, tc.rule, body)
		}
	}
	if _, body := do(t, "GET", ts.URL+"/api/sweeps", nil); !strings.Contains(string(body), `"total":0`) {
		t.Errorf("a refused sweep was stored: %s", body)
	}
	doc := map[string]any{"base": base, "axes": []map[string]any{{"param": "params.data", "values": []any{"a.csv", "./a.csv"}}}}
	code, body := do(t, "POST", ts.URL+"/api/sweeps", mustJSON(t, doc))
	var c struct{ ID string }
	if code != 201 || json.Unmarshal(body, &c) != nil {
		t.Fatalf("a sweep over readable files: %d %s", code, body)
	}
	do(t, "DELETE", ts.URL+"/api/sweeps/"+c.ID, nil)
}
