package server

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
)

// The History names a run's algorithms as its traces table does: a variant
// that departs from the paper with what it changes ("bc-ssfw-as + slack
// collapse"), a plain one by its name; filtering by the algorithm still
// finds the variant. A new run is named by its problem and algorithms, and
// the name stays editable.
func TestHistoryNamesTracesAsTheTracesTable(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "fwlab.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	o := Options{}
	o.Session = session.Options{Store: st}
	srv, ts := newTestServer(t, o)
	id := create(t, ts, spec.Run{Problem: "gflasso", Params: spec.Params{"n": "30", "j": "6", "k": "4"},
		Algorithms: []spec.Algo{{Algo: "bc-ssfw-as"}, {Algo: "bcfw"}}, Replications: 2, Seed: 2, Iters: 20})
	waitFinished(t, srv, id)
	want := []string{"bc-ssfw-as + slack collapse", "bcfw"}
	var labels []string
	for i, tr := range status(t, ts, id).Traces {
		if tr.Replication == 0 {
			labels = append(labels, tr.Algo)
		}
		_ = i
	}
	if len(labels) != 2 || labels[0] != want[0] || labels[1] != want[1] {
		t.Fatalf("the traces table names %v, want %v", labels, want)
	}
	for _, q := range []string{"", "?algo=bc-ssfw-as"} {
		code, body := do(t, "GET", ts.URL+"/api/runs"+q, nil)
		if code != 200 {
			t.Fatalf("GET /api/runs%s: %d %s", q, code, body)
		}
		var list struct{ Runs []RunRow }
		if err := json.Unmarshal(body, &list); err != nil || len(list.Runs) != 1 {
			t.Fatalf("GET /api/runs%s: %v %s", q, err, body)
		}
		if name := "gflasso: bc-ssfw-as + slack collapse, bcfw"; list.Runs[0].Name != name {
			t.Errorf("the run is named %q, want the default %q from its problem and algorithms", list.Runs[0].Name, name)
		}
		got := list.Runs[0].Algorithms
		if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Errorf("GET /api/runs%s names the algorithms %q, want %q as the traces table", q, got, want)
		}
	}
	// the name the user gives replaces the default
	if code, body := do(t, "PATCH", ts.URL+"/api/runs/"+id, []byte(`{"name":"mine"}`)); code != 200 || !strings.Contains(string(body), `"name":"mine"`) {
		t.Errorf("renaming the run: %d %s", code, body)
	}
	if st := status(t, ts, id); st.Name != "mine" {
		t.Errorf("the renamed run's status names it %q", st.Name)
	}
}
