package server

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
)

// storedPanelsRun puts a finished run of three traces in the store: trace 0
// with the panels given, trace 1 with panels over MaxTracePanels, trace 2
// with none.
func storedPanelsRun(t *testing.T, st *store.Store, pan json.RawMessage) string {
	t.Helper()
	ctx := context.Background()
	sp := spec.Run{Problem: "lasso", Algorithms: []spec.Algo{{Algo: "fw"}, {Algo: "afw"}, {Algo: "pfw"}}, Replications: 1, Seed: 1, Iters: 5}
	var traces []store.Trace
	for i, a := range sp.Algorithms {
		traces = append(traces, store.Trace{Index: i, Algo: a.Algo, Seed: 1, Status: store.StatusRunning})
	}
	id, err := st.PutRun(ctx, &store.Run{Spec: sp, Version: "test", Status: store.StatusRunning, Traces: traces})
	if err != nil {
		t.Fatal(err)
	}
	big := json.RawMessage(`{"b":"` + strings.Repeat("x", MaxTracePanels) + `"}`)
	for i, p := range []json.RawMessage{pan, big, nil} {
		sum := &solver.Summary{Status: solver.StatusMaxIters, Iters: 5}
		if err := st.SetTrace(ctx, id, i, store.TraceResult{Status: solver.StatusMaxIters, Summary: sum, Panels: p}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.SetStatus(ctx, id, store.StatusDone, time.Now()); err != nil {
		t.Fatal(err)
	}
	return id
}

// rawTraces returns the traces of GET /api/runs/{id} as raw JSON objects.
func rawTraces(t *testing.T, url string) []map[string]json.RawMessage {
	t.Helper()
	code, body := do(t, "GET", url, nil)
	if code != 200 {
		t.Fatalf("GET %s: %d %s", url, code, body)
	}
	var st struct{ Traces []map[string]json.RawMessage }
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatal(err)
	}
	return st.Traces
}

// A run's status, stored or live, says which traces have panels but never
// carries them; GET /api/runs/{id}/traces/{t}/panels answers them byte for
// byte, {} for a trace without, 404 for an unknown trace and 413 over
// MaxTracePanels.
func TestTracePanelsOutsideTheStatus(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "panels.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	pan := json.RawMessage(`{"b": [[1, 2.50], [-3e-7, 4]], "title": "B \u00e9", "n":12345678901234567890}`)
	id := storedPanelsRun(t, st, pan)
	o := Options{}
	o.Session = session.Options{Store: st}
	srv, ts := newTestServer(t, o)

	traces := rawTraces(t, ts.URL+"/api/runs/"+id)
	for i, want := range []string{"true", "true", ""} {
		if len(traces) != 3 || string(traces[i]["has_panels"]) != want || traces[i]["panels"] != nil {
			t.Fatalf("stored status, trace %d: has_panels %s, panels %.80s; want has_panels %q and no panels", i, traces[i]["has_panels"], traces[i]["panels"], want)
		}
	}
	code, body := do(t, "GET", ts.URL+"/api/runs/"+id+"/traces/0/panels", nil)
	if code != 200 || string(body) != string(pan)+"\n" {
		t.Errorf("trace 0's panels: %d %q, want %q", code, body, pan)
	}
	code, body = do(t, "GET", ts.URL+"/api/runs/"+id+"/traces/1/panels", nil)
	if code != 413 || !strings.Contains(string(body), fmt.Sprint(MaxTracePanels)) || !strings.Contains(string(body), "MaxPanelBytes") ||
		!strings.Contains(string(body), fmt.Sprint(MaxTracePanels+8)) {
		t.Errorf("trace 1's panels over the cap: %d %.300s, want 413 naming the size and the cap", code, body)
	}
	code, body = do(t, "GET", ts.URL+"/api/runs/"+id+"/traces/2/panels", nil)
	if code != 200 || string(body) != "{}\n" {
		t.Errorf("trace 2 without panels: %d %s, want {}", code, body)
	}
	for _, p := range []string{id + "/traces/3/panels", id + "/traces/-1/panels", id + "/traces/x/panels", "r99999/traces/0/panels"} {
		if code, body := do(t, "GET", ts.URL+"/api/runs/"+p, nil); code != 404 {
			t.Errorf("GET %s: %d %s, want 404", p, code, body)
		}
	}

	// a run made here: the same (from memory while it is held, else from
	// the store); the test instance's panels are {"final": [iterations, seed]}
	made := create(t, ts, fakeRun(10, "fw", "afw"))
	waitFinished(t, srv, made)
	for i, tr := range rawTraces(t, ts.URL+"/api/runs/"+made) {
		if string(tr["has_panels"]) != "true" || tr["panels"] != nil {
			t.Fatalf("status of a run made here, trace %d: has_panels %s, panels %.80s", i, tr["has_panels"], tr["panels"])
		}
		code, body := do(t, "GET", fmt.Sprintf("%s/api/runs/%s/traces/%d/panels", ts.URL, made, i), nil)
		if want := fmt.Sprintf(`{"final":[10,%s]}`+"\n", tr["seed"]); code != 200 || string(body) != want {
			t.Errorf("trace %d's panels of a run made here: %d %s, want %s", i, code, body, want)
		}
	}
}

// A run's status never carries its instance's panels, however large (a
// bundle may bring up to MaxPanelBytes): GET /api/runs/{id}, the stream's
// hello and done say "has_panels" and GET /api/runs/{id}/panels answers
// them, byte for byte the same JSON object.
func TestInstancePanelsOutsideTheStatus(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "panels.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	id := storedPanelsRun(t, st, nil)
	const size = 3 << 20
	pan := json.RawMessage(`{"geometry":{"v":[[0,1],[1,0]]},"big":"` + strings.Repeat("y", size) + `"}`)
	if err := st.SetInstance(context.Background(), id, store.Instance{Dim: 2, Samples: 3, Blocks: 1, Panels: pan}); err != nil {
		t.Fatal(err)
	}
	o := Options{}
	o.Session = session.Options{Store: st}
	_, ts := newTestServer(t, o)

	code, body := do(t, "GET", ts.URL+"/api/runs/"+id, nil)
	var got struct {
		HasPanels bool                       `json:"has_panels"`
		Info      map[string]json.RawMessage `json:"info"`
	}
	if code != 200 || json.Unmarshal(body, &got) != nil {
		t.Fatalf("GET status: %d %.200s", code, body)
	}
	if !got.HasPanels || got.Info["panels"] != nil || len(body) > 64<<10 {
		t.Fatalf("status: has_panels %v, info.panels %.80s, %d bytes; want true, none and a small answer", got.HasPanels, got.Info["panels"], len(body))
	}
	code, body = do(t, "GET", ts.URL+"/api/runs/"+id+"/panels", nil)
	var p, want map[string]any
	if code != 200 || json.Unmarshal(body, &p) != nil || json.Unmarshal(pan, &want) != nil {
		t.Fatalf("GET panels: %d %.200s", code, body)
	}
	if p["big"] != want["big"] || p["geometry"] == nil {
		t.Fatalf("GET panels answered %d bytes without the stored panels", len(body))
	}

	c := dial(t, ts, id)
	defer c.Close()
	ch, errc := make(chan wsMessage, 16), make(chan error, 1)
	go readStream(c, ch, errc)
	n := 0
	for m := range ch {
		if m.Type == "hello" || m.Type == "done" || m.Type == "status" {
			n++
			if !m.Run.HasPanels || m.Run.Info.Panels != nil {
				t.Fatalf("%s over the stream: has_panels %v, panels %v", m.Type, m.Run.HasPanels, m.Run.Info.Panels != nil)
			}
		}
	}
	<-errc
	if n == 0 {
		t.Fatal("no status over the stream")
	}

	// a run without instance panels says it has none
	plain := storedPanelsRun(t, st, nil)
	var none map[string]json.RawMessage
	if code, body := do(t, "GET", ts.URL+"/api/runs/"+plain, nil); code != 200 || json.Unmarshal(body, &none) != nil || none["has_panels"] != nil {
		t.Fatalf("status of a run without instance panels: %d has_panels %s", code, none["has_panels"])
	}
}
