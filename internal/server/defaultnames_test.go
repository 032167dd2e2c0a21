package server

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/fwlab/fwlab/internal/pgtest"
	"github.com/fwlab/fwlab/internal/queue"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store/pgstore"
)

// Every run is named readably where it enters the store, whoever puts it:
// History (GET /api/runs) lists a sweep's cells, a run of the API and, on
// PostgreSQL, a run queued by `dashboard submit` (the queue's SubmitFor
// from the command's client) by their problem and algorithms, not by
// their random ids. A run the server makes names the variant as its
// traces do ("+ slack collapse"); a run queued for a worker is named by
// its algorithms until the worker names its traces (pgstore.SetLabels).
func TestHistoryNamesEveryRunByDefault(t *testing.T) {
	for _, qs := range quotaStores {
		t.Run(qs.name, func(t *testing.T) {
			if qs.name == "postgres" {
				pgtest.Require(t)
			}
			testHistoryNamesEveryRunByDefault(t, qs.name, qs.options(t))
		})
	}
}

func testHistoryNamesEveryRunByDefault(t *testing.T, name string, on func(Options) Options) {
	srv, ts := newTestServer(t, on(Options{UploadDir: t.TempDir()}))
	base := spec.Run{Problem: "gflasso", Params: spec.Params{"n": "30", "j": "6", "k": "4"},
		Algorithms: []spec.Algo{{Algo: "bc-ssfw-as"}, {Algo: "bcfw"}}, Replications: 1, Seed: 2, Iters: 20}
	const made, queued = "gflasso: bc-ssfw-as + slack collapse, bcfw", "gflasso: bc-ssfw-as, bcfw"
	code, body := do(t, "POST", ts.URL+"/api/sweeps", mustJSON(t, map[string]any{"base": base,
		"axes": []map[string]any{{"param": "seed", "values": []int{1, 2}}}}))
	var sw struct{ ID string }
	if err := json.Unmarshal(body, &sw); code != 201 || err != nil {
		t.Fatalf("POST /api/sweeps: %d %s", code, body)
	}
	waitFor(t, "the sweep to finish", func() bool {
		_, body := do(t, "GET", ts.URL+"/api/sweeps/"+sw.ID, nil)
		var got struct{ Status string }
		return json.Unmarshal(body, &got) == nil && got.Status == "done"
	})
	ids := map[string]string{create(t, ts, base): "the API's run"}
	want := map[string]string{"a sweep cell": made, "the API's run": made, "a submitted run": queued}
	if name == "postgres" {
		want["the API's run"] = queued // queued for a worker, as `serve -slots 0` does
		// what `dashboard submit` does: a run queued from its own client
		st, ok := srv.st.(*pgstore.Store)
		if !ok {
			t.Fatalf("the postgres server's store is a %T", srv.st)
		}
		ctx := context.Background()
		q, err := queue.New(ctx, st)
		if err != nil {
			t.Fatal(err)
		}
		id, err := q.SubmitFor(ctx, base, queue.From{Client: "submit@host"})
		if err != nil {
			t.Fatal(err)
		}
		ids[id] = "a submitted run"
	}
	code, body = do(t, "GET", ts.URL+"/api/runs", nil)
	var list struct{ Runs []RunRow }
	if err := json.Unmarshal(body, &list); code != 200 || err != nil {
		t.Fatalf("GET /api/runs: %d %s", code, body)
	}
	cells := 0
	for _, r := range list.Runs {
		what := ids[r.ID]
		if r.Sweep != nil && r.Sweep.ID == sw.ID {
			what = "a sweep cell"
			cells++
		}
		if what == "" {
			t.Errorf("History lists an unexpected run %s %q", r.ID, r.Name)
			continue
		}
		if r.Name != want[what] {
			t.Errorf("History lists %s (%s) as %q, want %q", what, r.ID, r.Name, want[what])
		}
	}
	if cells != 2 || len(list.Runs) != 2+len(ids) {
		t.Errorf("History lists %d runs, %d of them the sweep's cells; want the 2 cells and %d more", len(list.Runs), cells, len(ids))
	}
}
