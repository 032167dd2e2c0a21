package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/bundle"
	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
)

// lassoRun is a small real run with a fixed evaluation cadence (a short
// run evaluated often; the default cadence reproduces too).
func lassoRun(seed int64) spec.Run {
	return spec.Run{Problem: "lasso", Algorithms: []spec.Algo{{Algo: "ssfw-as"}, {Algo: "afw"}}, Iters: 80, EvalEvery: 3, Seed: seed, Replications: 2}
}

func verifications(t *testing.T, base, id string) []VerificationRow {
	t.Helper()
	code, body := do(t, "GET", base+"/api/runs/"+id+"/verifications", nil)
	var out struct{ Verifications []VerificationRow }
	if err := json.Unmarshal(body, &out); code != 200 || err != nil || out.Verifications == nil {
		t.Fatalf("GET verifications: %d %s", code, body)
	}
	return out.Verifications
}

// verifyRun posts a verification, waits for its outcome and returns it
// with the re-run's id.
func verifyRun(t *testing.T, srv *Server, base, id string) (VerificationRow, string) {
	t.Helper()
	before := len(verifications(t, base, id))
	code, body := do(t, "POST", base+"/api/runs/"+id+"/verify", nil)
	var out struct{ ID string }
	if err := json.Unmarshal(body, &out); code != http.StatusAccepted || err != nil || !store.ValidID(out.ID) {
		t.Fatalf("POST verify: %d %s", code, body)
	}
	waitFinished(t, srv, out.ID)
	var vs []VerificationRow
	waitFor(t, "the verification to be recorded", func() bool {
		vs = verifications(t, base, id)
		return len(vs) > before
	})
	return vs[0], out.ID
}

func storedRecords(t *testing.T, srv *Server, id string) int {
	t.Helper()
	r, err := srv.st.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tr := range r.Traces {
		n += tr.Records
	}
	return n
}

// The Verify action re-runs a stored run through the queue as a run of its
// own, compares it and records the outcome, which History shows; a run
// whose records differ is found and named.
func TestVerifyAction(t *testing.T) {
	srv, ts := newTestServer(t, Options{})
	id := create(t, ts, lassoRun(4))
	waitFinished(t, srv, id)
	if vs := verifications(t, ts.URL, id); len(vs) != 0 {
		t.Fatalf("a new run has verifications: %+v", vs)
	}
	if l := list(t, ts.URL, ""); l.Runs[0].Verified != nil {
		t.Fatalf("History shows an unverified run as verified: %+v", l.Runs[0].Verified)
	}

	v, rerun := verifyRun(t, srv, ts.URL, id)
	n := storedRecords(t, srv, id)
	if v.Outcome != store.VerifyReproduced || v.Records != n || v.RerunID != rerun || v.Version == "" || v.At.IsZero() || v.Detail != "" {
		t.Fatalf("verification %+v, want reproduced with %d records and re-run %s", v, n, rerun)
	}
	if storedRecords(t, srv, rerun) != n {
		t.Fatalf("the re-run has %d records, the run %d", storedRecords(t, srv, rerun), n)
	}
	l := list(t, ts.URL, "")
	rows := map[string]RunRow{}
	for _, r := range l.Runs {
		rows[r.ID] = r
	}
	if r := rows[id]; r.Verified == nil || r.Verified.Outcome != store.VerifyReproduced || !r.Verified.At.Equal(v.At) {
		t.Errorf("History's row of the run: %+v", r.Verified)
	}
	if r := rows[rerun]; r.Name != "verification of run "+id || r.Status != store.StatusDone {
		t.Errorf("History's row of the re-run: name %q, status %s", r.Name, r.Status)
	}

	// the run exported, one number changed, imported: a run that differs
	code, body := do(t, "GET", ts.URL+"/api/runs/"+id+"/bundle", nil)
	if code != 200 {
		t.Fatalf("bundle: %d", code)
	}
	b, err := bundle.Decode(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	r := &b.Traces[3].Records[40]
	if r.Gap == nil {
		r = &b.Traces[3].Records[42]
	}
	old := *r.Gap
	r.Gap = solver.F(old * 1.0001)
	var buf bytes.Buffer
	if err := bundle.Encode(&buf, b); err != nil {
		t.Fatal(err)
	}
	code, body = do(t, "POST", ts.URL+"/api/runs/import", buf.Bytes())
	var imp struct{ ID string }
	if err := json.Unmarshal(body, &imp); code != 201 || err != nil {
		t.Fatalf("import: %d %s", code, body)
	}
	v, _ = verifyRun(t, srv, ts.URL, imp.ID)
	want := "trace 3 (afw + slack collapse #1) record " // the record and its k, the field, both values
	if v.Outcome != store.VerifyDiffers || !strings.Contains(v.Detail, want) || !strings.Contains(v.Detail, "field gap: stored ") ||
		!strings.Contains(v.Detail, ", re-run "+strings.TrimSpace(formatG(old))) {
		t.Fatalf("verification of the changed run: %+v", v)
	}
	// the earlier outcome stays; the latest shows
	if vs := verifications(t, ts.URL, id); len(vs) != 1 {
		t.Errorf("the first run has %d verifications", len(vs))
	}
}

func formatG(v float64) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestVerifyRefusals(t *testing.T) {
	srv, ts := newTestServer(t, Options{})
	sp := lassoRun(5)
	sp.StartPaused = true
	id := create(t, ts, sp)
	code, body := do(t, "POST", ts.URL+"/api/runs/"+id+"/verify", nil)
	wantError(t, code, body, http.StatusConflict, "id")
	if !strings.Contains(string(body), "paused") {
		t.Errorf("the refusal does not say the run is paused: %s", body)
	}
	do(t, "DELETE", ts.URL+"/api/runs/"+id, nil)
	waitFinished(t, srv, id)
	code, body = do(t, "POST", ts.URL+"/api/runs/aaaaaaaaaaaa/verify", nil)
	wantError(t, code, body, http.StatusNotFound, "id")
	code, body = do(t, "GET", ts.URL+"/api/runs/aaaaaaaaaaaa/verifications", nil)
	wantError(t, code, body, http.StatusNotFound, "id")
	code, body = do(t, "POST", ts.URL+"/api/sweeps/aaaaaaaaaaaa/verify", nil)
	wantError(t, code, body, http.StatusNotFound, "id")
	// a cancelled run is verified as far as it went
	v, _ := verifyRun(t, srv, ts.URL, id)
	if v.Outcome != store.VerifyReproduced {
		t.Errorf("a run cancelled at its start: %+v", v)
	}
}

// Verifying a sweep verifies each of its cells.
func TestVerifySweep(t *testing.T) {
	srv, ts := newTestServer(t, Options{Session: session.Options{MaxActive: 2}})
	base := lassoRun(1)
	base.Replications = 1
	doc := map[string]any{"base": base, "axes": []map[string]any{{"param": "seed", "values": []any{1, 2, 3}}}}
	code, body := do(t, "POST", ts.URL+"/api/sweeps", mustJSON(t, doc))
	var created struct{ ID string }
	if err := json.Unmarshal(body, &created); code != 201 || err != nil {
		t.Fatalf("POST sweep: %d %s", code, body)
	}
	var sw sweepOut
	waitFor(t, "the sweep to finish", func() bool {
		_, body := do(t, "GET", ts.URL+"/api/sweeps/"+created.ID, nil)
		sw = sweepOut{}
		return json.Unmarshal(body, &sw) == nil && sw.Status == "done"
	})
	code, body = do(t, "POST", ts.URL+"/api/sweeps/"+created.ID+"/verify", nil)
	if code != http.StatusAccepted || !strings.Contains(string(body), `"cells":3`) {
		t.Fatalf("POST sweep verify: %d %s", code, body)
	}
	for i, c := range sw.Cells {
		var vs []VerificationRow
		waitFor(t, "the cell's verification", func() bool {
			vs = verifications(t, ts.URL, c.Run)
			return len(vs) > 0
		})
		if vs[0].Outcome != store.VerifyReproduced || vs[0].Records != storedRecords(t, srv, c.Run) || vs[0].RerunID == "" {
			t.Errorf("cell %d: %+v", i, vs[0])
		}
	}
}
