package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/store"
)

type runList struct {
	Runs      []RunRow `json:"runs"`
	Total     int      `json:"total"`
	Offset    int      `json:"offset"`
	Limit     int      `json:"limit"`
	DiskBytes int64    `json:"disk_bytes"`
}

func list(t testing.TB, base, query string) runList {
	t.Helper()
	code, body := do(t, "GET", base+"/api/runs"+query, nil)
	var l runList
	if err := json.Unmarshal(body, &l); code != 200 || err != nil {
		t.Fatalf("GET /api/runs%s: %d %s", query, code, body)
	}
	return l
}

func wantError(t testing.TB, code int, body []byte, wantCode int, field string) {
	t.Helper()
	var e apiError
	if err := json.Unmarshal(body, &e); code != wantCode || err != nil || e.Field != field || e.Error == "" {
		t.Errorf("got %d %s, want %d naming %q", code, body, wantCode, field)
	}
}

func TestHistoryAPI(t *testing.T) {
	srv, ts := newTestServer(t, Options{})
	a := create(t, ts, fakeRun(20, "fw"))
	b := create(t, ts, fakeRun(20, "fw", "afw"))
	c := create(t, ts, fakeRun(20, "fw"))
	for _, id := range []string{a, b, c} {
		waitFinished(t, srv, id)
		if !store.ValidID(id) {
			t.Fatalf("id %q", id)
		}
	}
	l := list(t, ts.URL, "")
	if l.Total != 3 || len(l.Runs) != 3 || l.Runs[0].ID != c || l.Runs[2].ID != a || l.DiskBytes <= 0 || l.Limit != store.DefaultLimit {
		t.Fatalf("list %+v", l)
	}
	if l := list(t, ts.URL, "?algo=afw"); l.Total != 1 || l.Runs[0].ID != b || len(l.Runs[0].Algorithms) != 2 {
		t.Errorf("algo filter: %+v", l)
	}
	if l := list(t, ts.URL, "?limit=1&offset=1"); l.Total != 3 || len(l.Runs) != 1 || l.Runs[0].ID != b {
		t.Errorf("page 2: %+v", l)
	}
	if l := list(t, ts.URL, "?status=running"); l.Total != 0 {
		t.Errorf("status filter: %+v", l)
	}
	// Rename, note, star.
	code, body := do(t, "PATCH", ts.URL+"/api/runs/"+a, []byte(`{"name":"Baseline","note":"step size 0.1","starred":true}`))
	var row RunRow
	if err := json.Unmarshal(body, &row); code != 200 || err != nil || row.Name != "Baseline" || row.Note != "step size 0.1" || !row.Starred {
		t.Fatalf("PATCH: %d %s", code, body)
	}
	if l := list(t, ts.URL, "?q=baseline"); l.Total != 1 || l.Runs[0].ID != a {
		t.Errorf("search: %+v", l)
	}
	if st := status(t, ts, a); st.Name != "Baseline" || !st.Starred || st.Ended == nil {
		t.Errorf("status after PATCH: %+v", st)
	}
	code, body = do(t, "PATCH", ts.URL+"/api/runs/"+a, []byte(`{"titel":"x"}`))
	wantError(t, code, body, 400, "titel")
	code, body = do(t, "PATCH", ts.URL+"/api/runs/"+a, []byte(`{"name":"`+strings.Repeat("x", store.MaxName+1)+`"}`))
	wantError(t, code, body, 400, "name")
	code, body = do(t, "PATCH", ts.URL+"/api/runs/aaaaaaaaaaaa", []byte(`{"name":"x"}`))
	wantError(t, code, body, 404, "id")
	code, body = do(t, "GET", ts.URL+"/api/runs?limit=x", nil)
	wantError(t, code, body, 400, "limit")
	code, body = do(t, "GET", ts.URL+"/api/runs?status=finished", nil)
	wantError(t, code, body, 400, "status")

	// Bulk delete: a live run is refused, naming it; finished ones go.
	slow := fakeRun(1_000_000, "fw")
	slow.Params["delay_us"] = "100"
	live := create(t, ts, slow)
	code, body = do(t, "POST", ts.URL+"/api/runs/delete", mustJSON(t, map[string]any{"ids": []string{a, live}}))
	wantError(t, code, body, 409, "ids[1]")
	code, body = do(t, "POST", ts.URL+"/api/runs/delete", []byte(`{"ids":["r1"]}`))
	wantError(t, code, body, 400, "ids[0]")
	code, body = do(t, "POST", ts.URL+"/api/runs/delete", mustJSON(t, map[string]any{"ids": []string{a, b}}))
	if code != 200 || strings.TrimSpace(string(body)) != `{"deleted":2}` {
		t.Errorf("delete: %d %s", code, body)
	}
	if code, _ := do(t, "GET", ts.URL+"/api/runs/"+a, nil); code != 404 {
		t.Errorf("deleted run: %d", code)
	}
	if l := list(t, ts.URL, ""); l.Total != 2 || l.Runs[0].ID != live || l.Runs[0].Status != "running" || l.Runs[0].Ended != nil {
		t.Errorf("after delete: %+v", l)
	}
	do(t, "DELETE", ts.URL+"/api/runs/"+live, nil)
	waitFinished(t, srv, live)
}

// A stored run exports as a bundle that imports as a new run with the same
// trace; a truncated bundle is refused naming the field where it stops.
func TestBundleExportImport(t *testing.T) {
	srv, ts := newTestServer(t, Options{})
	sp := fakeRun(300, "ssfw-as", "fista")
	sp.Replications = 2
	id := create(t, ts, sp)
	waitFinished(t, srv, id)
	req, _ := http.NewRequest("GET", ts.URL+"/api/runs/"+id+"/bundle", nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var bundleBody bytes.Buffer
	_, _ = bundleBody.ReadFrom(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Disposition") != `attachment; filename="fwlab-`+id+`.json"` {
		t.Fatalf("bundle: %d %v", resp.StatusCode, resp.Header)
	}
	code, body := do(t, "POST", ts.URL+"/api/runs/import", bundleBody.Bytes())
	var out struct{ ID string }
	if err := json.Unmarshal(body, &out); code != 201 || err != nil || out.ID == id || !store.ValidID(out.ID) {
		t.Fatalf("import: %d %s", code, body)
	}
	_, want := do(t, "GET", ts.URL+"/api/runs/"+id+"/trace", nil)
	_, got := do(t, "GET", ts.URL+"/api/runs/"+out.ID+"/trace", nil)
	if len(want) == 0 || !bytes.Equal(got, want) {
		t.Errorf("the imported trace differs (%d bytes, want %d)", len(got), len(want))
	}
	if st := status(t, ts, out.ID); st.Status != "done" || len(st.Traces) != 4 || st.Traces[3].Records != 301 {
		t.Errorf("imported status %+v", st)
	}
	cut := bundleBody.Bytes()[:bundleBody.Len()*2/3]
	code, body = do(t, "POST", ts.URL+"/api/runs/import", cut)
	var e apiError
	if err := json.Unmarshal(body, &e); code != 400 || err != nil || !strings.HasPrefix(e.Field, "traces[") {
		t.Errorf("truncated bundle: %d %s", code, body)
	}
	// Over the size limit: 413 naming the flag.
	small, ts2 := newTestServer(t, Options{MaxImport: 1000, Flags: map[string]string{"MaxImport": "-max-import"}})
	_ = small
	code, body = do(t, "POST", ts2.URL+"/api/runs/import", bundleBody.Bytes())
	if code != 413 || !strings.Contains(string(body), "-max-import") {
		t.Errorf("over -max-import: %d %s", code, body)
	}
}

func TestFigureExport(t *testing.T) {
	srv, ts := newTestServer(t, Options{})
	sp := fakeRun(200, "fw", "afw")
	sp.Replications = 2
	id := create(t, ts, sp)
	waitFinished(t, srv, id)
	for _, f := range []struct{ ext, ctype, head string }{
		{"svg", "image/svg+xml", "<?xml"}, {"png", "image/png", "\x89PNG"}, {"pdf", "application/pdf", "%PDF"},
	} {
		req, _ := http.NewRequest("GET", ts.URL+"/api/runs/"+id+"/figure."+f.ext, nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != f.ctype || !bytes.HasPrefix(b.Bytes(), []byte(f.head)) {
			t.Errorf("%s: %d %s %q", f.ext, resp.StatusCode, resp.Header.Get("Content-Type"), b.Bytes()[:min(b.Len(), 20)])
		}
		if f.ext == "svg" && (!bytes.Contains(b.Bytes(), []byte("afw")) || !bytes.Contains(b.Bytes(), []byte("fw"))) {
			t.Error("the svg lacks the algorithms' names")
		}
	}
	if code, _ := do(t, "GET", ts.URL+"/api/runs/aaaaaaaaaaaa/figure.svg", nil); code != 404 {
		t.Errorf("figure of an unknown run: %d", code)
	}
}

type sweepOut struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Cells  []struct {
		Values  map[string]any `json:"values"`
		Run     string         `json:"run"`
		Status  string         `json:"status"`
		Summary *struct {
			FinalObjective *float64                   `json:"final_objective"`
			FinalGap       *float64                   `json:"final_gap"`
			PassesToGap    *float64                   `json:"passes_to_gap"`
			PerAlgo        map[string]json.RawMessage `json:"per_algo"`
		} `json:"summary"`
	} `json:"cells"`
}

// A 2 × 2 sweep with 2 replications finishes, each cell linked to a done
// run with its medians.
func TestSweepAPI(t *testing.T) {
	_, ts := newTestServer(t, Options{Session: session.Options{MaxActive: 2}})
	base := fakeRun(50, "fw", "afw")
	base.Replications = 2
	doc := map[string]any{"base": base, "axes": []map[string]any{
		{"param": "params.n", "values": []any{20, 40}},
		{"param": "seed", "values": []any{1, 2}},
	}}
	code, body := do(t, "POST", ts.URL+"/api/sweeps", mustJSON(t, doc))
	var created struct{ ID string }
	if err := json.Unmarshal(body, &created); code != 201 || err != nil {
		t.Fatalf("POST sweep: %d %s", code, body)
	}
	var sw sweepOut
	waitFor(t, "the sweep to finish", func() bool {
		_, body := do(t, "GET", ts.URL+"/api/sweeps/"+created.ID+"?gap=0.01", nil)
		sw = sweepOut{}
		return json.Unmarshal(body, &sw) == nil && sw.Status == "done"
	})
	if len(sw.Cells) != 4 {
		t.Fatalf("%d cells", len(sw.Cells))
	}
	seen := map[string]bool{}
	for i, c := range sw.Cells {
		if c.Status != "done" || c.Run == "" || seen[c.Run] || c.Summary == nil || c.Summary.FinalGap == nil || len(c.Summary.PerAlgo) != 2 {
			t.Errorf("cell %d: %+v", i, c)
			continue
		}
		seen[c.Run] = true
		if n := []float64{20, 20, 40, 40}[i]; c.Values["params.n"] != n {
			t.Errorf("cell %d values %v", i, c.Values)
		}
		st := status(t, ts, c.Run)
		if st.Status != "done" || st.Spec.Params["n"] != fmt.Sprint(c.Values["params.n"]) || st.Spec.Replications != 2 {
			t.Errorf("cell %d run %+v", i, st)
		}
	}
	code, body = do(t, "GET", ts.URL+"/api/sweeps", nil)
	if code != 200 || !strings.Contains(string(body), `"cells_total":4,"cells_done":4`) {
		t.Errorf("sweep list: %d %s", code, body)
	}
	// Faults are named.
	bad := map[string]any{"base": base, "axes": []map[string]any{{"param": "params.nope", "values": []any{1}}}}
	code, body = do(t, "POST", ts.URL+"/api/sweeps", mustJSON(t, bad))
	wantError(t, code, body, 400, "axes[0].param")
	bad = map[string]any{"base": base, "axes": []map[string]any{{"param": "params.n", "values": []any{10, 0}}}}
	code, body = do(t, "POST", ts.URL+"/api/sweeps", mustJSON(t, bad))
	wantError(t, code, body, 400, "axes[0].values[1]")
	code, body = do(t, "GET", ts.URL+"/api/sweeps/"+created.ID+"?gap=-1", nil)
	wantError(t, code, body, 400, "gap")

	// Cancelling a sweep cancels its cells.
	slow := fakeRun(1_000_000, "fw")
	slow.Params["delay_us"] = "100"
	doc = map[string]any{"base": slow, "axes": []map[string]any{{"param": "seed", "values": []any{1, 2, 3, 4, 5}}}}
	_, body = do(t, "POST", ts.URL+"/api/sweeps", mustJSON(t, doc))
	_ = json.Unmarshal(body, &created)
	waitFor(t, "cells to start", func() bool {
		_, body := do(t, "GET", ts.URL+"/api/sweeps/"+created.ID, nil)
		sw = sweepOut{}
		return json.Unmarshal(body, &sw) == nil && len(sw.Cells) == 5 && sw.Cells[0].Run != ""
	})
	code, body = do(t, "DELETE", ts.URL+"/api/sweeps/"+created.ID, nil)
	if code != 202 || !strings.Contains(string(body), "cancelled") {
		t.Errorf("cancel sweep: %d %s", code, body)
	}
	waitFor(t, "cells cancelled", func() bool {
		_, body := do(t, "GET", ts.URL+"/api/sweeps/"+created.ID, nil)
		sw = sweepOut{}
		if json.Unmarshal(body, &sw) != nil {
			return false
		}
		for _, c := range sw.Cells {
			if c.Status != "cancelled" {
				return false
			}
		}
		return true
	})
}

// Four runs stream to the store while eight readers page through the
// history and read traces (run under -race by make test).
func TestStoreStreamingWithReaders(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv, ts := newTestServer(t, Options{Session: session.Options{Store: st, MaxActive: 4}})
	var ids []string
	for i := 0; i < 4; i++ {
		sp := fakeRun(300, "fw", "afw")
		sp.Params["delay_us"] = "500"
		ids = append(ids, create(t, ts, sp))
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	get := func(url string) (int, []byte, error) {
		resp, err := client.Get(url)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, err = b.ReadFrom(resp.Body)
		return resp.StatusCode, b.Bytes(), err
	}
	for r := 0; r < 8; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
				code, body, err := get(fmt.Sprintf("%s/api/runs?limit=2&offset=%d", ts.URL, (r+i)%3))
				if err != nil || code != 200 {
					errs <- fmt.Errorf("list: %d %s %v", code, body, err)
					return
				}
				code, body, err = get(ts.URL + "/api/runs/" + ids[(r+i)%4] + "/trace")
				if err != nil || code != 200 {
					errs <- fmt.Errorf("trace: %d %s %v", code, body, err)
					return
				}
				// Records come whole, in order within each trace.
				lastK := map[float64]float64{}
				for _, l := range bytes.Split(bytes.TrimSpace(body), []byte("\n")) {
					var rec struct{ Trace, K float64 }
					if len(l) == 0 {
						continue
					}
					if err := json.Unmarshal(l, &rec); err != nil {
						errs <- fmt.Errorf("a torn trace line %q", l)
						return
					}
					if k, seen := lastK[rec.Trace]; (seen && rec.K != k+1) || (!seen && rec.K != 0) {
						errs <- fmt.Errorf("trace %v: k %v after %v", rec.Trace, rec.K, k)
						return
					}
					lastK[rec.Trace] = rec.K
				}
			}
		}(r)
	}
	for _, id := range ids {
		r, ok := srv.Manager().Get(id)
		if !ok {
			t.Fatalf("no run %s", id)
		}
		select {
		case <-r.Done():
		case <-time.After(3 * time.Minute):
			close(stop)
			wg.Wait()
			t.Fatalf("run %s did not finish", id)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, id := range ids {
		if s := status(t, ts, id); s.Status != "done" || s.Records != 2*301 {
			t.Errorf("%s: %s with %d records", id, s.Status, s.Records)
		}
		if _, live := srv.Manager().Live(id); live {
			t.Errorf("%s stays in memory", id)
		}
	}
	if err := st.IntegrityCheck(t.Context()); err != nil {
		t.Error(err)
	}
}

// A sweep running when the server closes ends interrupted, its live cells
// too; a server opening the file later finds nothing left running.
func TestSweepInterruptedByClose(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv, err := New(Options{Session: session.Options{Store: st, MaxActive: 1}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	slow := fakeRun(1_000_000, "fw")
	slow.Params["delay_us"] = "100"
	code, body := do(t, "POST", ts.URL+"/api/sweeps", mustJSON(t, map[string]any{"base": slow, "axes": []map[string]any{{"param": "seed", "values": []any{1, 2, 3}}}}))
	var created struct{ ID string }
	if err := json.Unmarshal(body, &created); code != 201 || err != nil {
		t.Fatalf("POST sweep: %d %s", code, body)
	}
	var sw *store.Sweep
	waitFor(t, "a cell to start", func() bool {
		sw, err = st.GetSweep(t.Context(), created.ID)
		return err == nil && sw.Cells[0].RunID != ""
	})
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	sw, err = st.GetSweep(t.Context(), created.ID)
	if err != nil || sw.Status != store.StatusInterrupted {
		t.Fatalf("sweep after close: %+v %v", sw, err)
	}
	r, err := st.Get(t.Context(), sw.Cells[0].RunID)
	if err != nil || r.Status != store.StatusInterrupted {
		t.Errorf("its running cell after close: %v %v", r.Status, err)
	}
}

// A done sweep's cell whose run was deleted says so.
func TestSweepCellOfADeletedRun(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	base := fakeRun(10, "fw")
	_, body := do(t, "POST", ts.URL+"/api/sweeps", mustJSON(t, map[string]any{"base": base, "axes": []map[string]any{{"param": "seed", "values": []any{1, 2}}}}))
	var created struct{ ID string }
	_ = json.Unmarshal(body, &created)
	var sw sweepOut
	waitFor(t, "the sweep to finish", func() bool {
		_, body := do(t, "GET", ts.URL+"/api/sweeps/"+created.ID, nil)
		sw = sweepOut{}
		return json.Unmarshal(body, &sw) == nil && sw.Status == "done"
	})
	if code, body := do(t, "POST", ts.URL+"/api/runs/delete", mustJSON(t, map[string]any{"ids": []string{sw.Cells[0].Run}})); code != 200 {
		t.Fatalf("delete: %d %s", code, body)
	}
	_, body = do(t, "GET", ts.URL+"/api/sweeps/"+created.ID, nil)
	sw = sweepOut{}
	_ = json.Unmarshal(body, &sw)
	if sw.Cells[0].Status != "deleted" || sw.Cells[0].Run != "" || sw.Cells[1].Status != "done" {
		t.Errorf("cells after deleting the first's run: %s", body)
	}
}
