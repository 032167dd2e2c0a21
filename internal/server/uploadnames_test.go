package server

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
)

// The names uploads were sent with live in the run store, not in the
// server that took them: after that server has stopped (its uploads gone
// with it), a server started on the same SQLite store still names the
// files as the user did, in the refusal of a run that names them and in a
// stored run's message that quotes a copy's path and the hash. A file
// name the store cannot keep is refused before anything is stored.
func TestUploadNamesOutliveTheServer(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	on := func() Options {
		o := Options{UploadDir: t.TempDir()}
		o.Session = session.Options{Store: st}
		return o
	}
	first, err := New(on())
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(first)
	paths := map[string]string{}
	for name, data := range map[string][]byte{"my_x.csv": []byte("1,2\n3,4\n5,6\n"), "y_short.csv": []byte("1\n2\n")} {
		code, out := upload(t, ts, "file", name, data, nil)
		if code != 201 {
			t.Fatalf("uploading %s: %d %v", name, code, out)
		}
		paths[name] = out["path"].(string)
	}
	code, out := upload(t, ts, "file", strings.Repeat("n", store.MaxUploadName+1)+".csv", []byte("1\n"), nil)
	if code != 400 || out["field"] != "file" || !strings.Contains(out["error"].(string), "at most 255 characters") {
		t.Errorf("a file name of %d characters: %d %v, want 400 naming file", store.MaxUploadName+5, code, out)
	}
	ts.Close()
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}

	_, ts2 := newTestServer(t, on())
	sumX := strings.TrimPrefix(paths["my_x.csv"], "upload:")
	sumY := strings.TrimPrefix(paths["y_short.csv"], "upload:")
	body, _ := json.Marshal(spec.Run{Problem: "lasso", Params: spec.Params{"x": paths["my_x.csv"], "y": paths["y_short.csv"], "lambda": "1"},
		Algorithms: []spec.Algo{{Algo: "fw"}}, Replications: 1, Iters: 10})
	code, b := do(t, "POST", ts2.URL+"/api/runs", body)
	var e apiError
	if err := json.Unmarshal(b, &e); code != 400 || err != nil || !strings.Contains(e.Error, "my_x.csv") || strings.Contains(e.Error, sumX[:12]) {
		t.Errorf("a run naming the first server's uploads: %d %s; want 400 naming my_x.csv, not its hash", code, b)
	}

	// a run that failed on a copy of the file (as a worker reports it)
	r := &store.Run{Spec: spec.Run{Problem: "lasso", Params: spec.Params{"y": paths["y_short.csv"]}, Algorithms: []spec.Algo{{Algo: "fw"}}, Replications: 1},
		Status: store.StatusFailed, Traces: []store.Trace{{Algo: "fw"}}}
	ctx := context.Background()
	id, err := st.PutRun(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	msg := "building the instance: params.y: /var/cache/fwlab/" + sumY + "/y: 2 responses, X has 3 rows (upload:" + sumY + ", " + sumY[:12] + "…)"
	if err := st.SetMessage(ctx, id, msg); err != nil {
		t.Fatal(err)
	}
	code, b = do(t, "GET", ts2.URL+"/api/runs/"+id, nil)
	var got struct{ Message string }
	if err := json.Unmarshal(b, &got); code != 200 || err != nil {
		t.Fatalf("GET the run: %d %s", code, b)
	}
	if want := "building the instance: params.y: y_short.csv: 2 responses, X has 3 rows (y_short.csv, y_short.csv)"; got.Message != want {
		t.Errorf("the run's message reads\n%q\nwant\n%q", got.Message, want)
	}
}
