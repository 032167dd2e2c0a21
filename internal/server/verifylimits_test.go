package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/store"
)

// Verifications are runs of their client: a run's re-run counts in the
// client's -max-client-runs, a sweep's verification in its -max-sweeps;
// one verification at a time per run or sweep (a second request answers
// the first), and each can be cancelled.
func TestVerificationsAreRunsOfTheirClient(t *testing.T) {
	srv, ts := newTestServer(t, Options{MaxSweeps: 1, Session: session.Options{MaxClientRuns: 2},
		Flags: map[string]string{"MaxClientRuns": "-max-client-runs", "MaxSweeps": "-max-sweeps"}})
	// runs cancelled after a record, whose re-runs (of the whole spec)
	// last the whole test: the fake sleeps 0.1 s after each of 5000
	// records
	var ids []string
	for range 3 {
		sp := fakeRun(5000, "fw")
		sp.Params["delay_us"] = "100000"
		id := create(t, ts, sp)
		waitFor(t, "a record", func() bool { return status(t, ts, id).Records > 0 })
		do(t, "DELETE", ts.URL+"/api/runs/"+id, nil)
		waitFinished(t, srv, id)
		ids = append(ids, id)
	}
	// the re-runs are the run's spec: make them long by storing long specs
	for _, id := range ids {
		r, err := srv.st.Get(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Spec.Params["delay_us"] != "100000" {
			t.Fatalf("stored spec %+v", r.Spec)
		}
	}
	post := func(path string) (int, map[string]any) {
		t.Helper()
		code, body := do(t, "POST", ts.URL+path, nil)
		var out map[string]any
		if err := json.Unmarshal(body, &out); err != nil {
			t.Fatalf("POST %s: %d %s", path, code, body)
		}
		return code, out
	}
	code, first := post("/api/runs/" + ids[0] + "/verify")
	if code != http.StatusAccepted {
		t.Fatalf("verify: %d %v", code, first)
	}
	// a second request answers the first
	for range 5 {
		code, again := post("/api/runs/" + ids[0] + "/verify")
		if code != http.StatusAccepted || again["id"] != first["id"] || again["already"] != true {
			t.Fatalf("verify again: %d %v, want the first re-run %v", code, again, first["id"])
		}
	}
	if code, out := post("/api/runs/" + ids[1] + "/verify"); code != http.StatusAccepted {
		t.Fatalf("a second run's verification: %d %v", code, out)
	}
	// the client's two live runs are its two re-runs: a third is refused
	code, out := post("/api/runs/" + ids[2] + "/verify")
	if code != http.StatusTooManyRequests || !strings.Contains(out["error"].(string), "-max-client-runs") {
		t.Fatalf("a third verification beyond -max-client-runs 2: %d %v", code, out)
	}
	// the run's page shows the verification in progress and cancels it
	_, body := do(t, "GET", ts.URL+"/api/runs/"+ids[0]+"/verifications", nil)
	if !strings.Contains(string(body), `"verifying":"`+first["id"].(string)+`"`) {
		t.Errorf("verifications in progress not shown: %s", body)
	}
	if code, body := do(t, "DELETE", ts.URL+"/api/runs/"+ids[0]+"/verify", nil); code != http.StatusAccepted {
		t.Fatalf("cancel the verification: %d %s", code, body)
	}
	waitFinished(t, srv, first["id"].(string))
	if st := status(t, ts, first["id"].(string)); st.Status != "cancelled" {
		t.Errorf("the cancelled verification's re-run: %s", st.Status)
	}
	waitFor(t, "the cancelled verification to end", func() bool {
		_, body := do(t, "GET", ts.URL+"/api/runs/"+ids[0]+"/verifications", nil)
		return !strings.Contains(string(body), `"verifying"`)
	})
	if code, body := do(t, "DELETE", ts.URL+"/api/runs/"+ids[0]+"/verify", nil); code != http.StatusNotFound {
		t.Errorf("cancel with none in progress: %d %s", code, body)
	}
	// room again: the third run's verification is taken
	if code, out := post("/api/runs/" + ids[2] + "/verify"); code != http.StatusAccepted {
		t.Fatalf("after the cancel: %d %v", code, out)
	}
}

// A sweep's verification is one sweep of its client: a second request
// answers the first, another sweep's verification beyond -max-sweeps is
// refused naming the flag, and a cancel stops it (its current re-run
// cancelled, no further cell started) and gives the room back.
func TestSweepVerificationIsASweepOfItsClient(t *testing.T) {
	srv, ts := newTestServer(t, Options{MaxSweeps: 1, Flags: map[string]string{"MaxSweeps": "-max-sweeps"}})
	mk := func() string {
		// cells whose re-runs last the test (the sweep is cancelled once
		// its first cell has a record)
		base := fakeRun(5000, "fw")
		base.Params["delay_us"] = "100000"
		doc := map[string]any{"base": base, "axes": []map[string]any{{"param": "seed", "values": []int{1, 2, 3}}}}
		code, body := do(t, "POST", ts.URL+"/api/sweeps", mustJSON(t, doc))
		var c struct{ ID string }
		if code != 201 || json.Unmarshal(body, &c) != nil {
			t.Fatalf("a sweep: %d %s", code, body)
		}
		waitFor(t, "a cell with a record", func() bool {
			sw, err := srv.st.GetSweep(t.Context(), c.ID)
			if err != nil || len(sw.Cells) == 0 || sw.Cells[0].RunID == "" {
				return false
			}
			return status(t, ts, sw.Cells[0].RunID).Records > 0
		})
		do(t, "DELETE", ts.URL+"/api/sweeps/"+c.ID, nil)
		waitFor(t, "the sweep to end", func() bool {
			_, body := do(t, "GET", ts.URL+"/api/sweeps/"+c.ID, nil)
			var got struct{ Status string }
			return json.Unmarshal(body, &got) == nil && got.Status != "" && got.Status != "queued" && got.Status != "running"
		})
		return c.ID
	}
	a, b := mk(), mk()
	code, body := do(t, "POST", ts.URL+"/api/sweeps/"+a+"/verify", nil)
	if code != http.StatusAccepted || !strings.Contains(string(body), `"cells":`) {
		t.Fatalf("verify a sweep: %d %s", code, body)
	}
	code, body = do(t, "POST", ts.URL+"/api/sweeps/"+a+"/verify", nil)
	if code != http.StatusAccepted || !strings.Contains(string(body), `"already":true`) {
		t.Fatalf("verify the sweep again: %d %s", code, body)
	}
	code, body = do(t, "POST", ts.URL+"/api/sweeps/"+b+"/verify", nil)
	if code != http.StatusTooManyRequests || !strings.Contains(string(body), "-max-sweeps") {
		t.Fatalf("another sweep's verification beyond -max-sweeps 1: %d %s", code, body)
	}
	if code, body := do(t, "DELETE", ts.URL+"/api/sweeps/"+a+"/verify", nil); code != http.StatusAccepted {
		t.Fatalf("cancel the sweep's verification: %d %s", code, body)
	}
	waitFor(t, "the room back", func() bool {
		code, _ := do(t, "POST", ts.URL+"/api/sweeps/"+b+"/verify", nil)
		return code == http.StatusAccepted
	})
	// the cancelled verification started no further cell: at most one
	// re-run of sweep a's cells was made
	list, _, err := srv.st.List(t.Context(), store.Filter{Text: "verification of run", Limit: store.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	reruns := 0
	for _, r := range list {
		if strings.HasPrefix(r.Name, "verification of run ") {
			reruns++
		}
	}
	if reruns > 2 { // one of a's cells, one of b's
		t.Errorf("%d re-runs after the cancel, want at most 2", reruns)
	}
	do(t, "DELETE", ts.URL+"/api/sweeps/"+b+"/verify", nil)
}
