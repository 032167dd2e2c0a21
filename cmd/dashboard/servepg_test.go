package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/fwlab/fwlab/internal/pgtest"
	"github.com/fwlab/fwlab/internal/session/sessiontest"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
)

// TestServeOnPostgreSQL: `dashboard serve -db postgres://…` keeps its runs
// in PostgreSQL: a run made in the browser's API is there with every
// record, run by the server's own worker; a server started again on the
// same database shows the same traces byte for byte; and a run queued
// with `dashboard submit` beside a worker process is listed and read
// through the server, naming the worker that ran it.
func TestServeOnPostgreSQL(t *testing.T) {
	t.Parallel()
	sessiontest.Register()
	c := pgtest.Shared(t)
	db := c.NewDB(t)
	srv := startChild(t, "-db", db)
	self := serveWorkerName(t, srv)
	id := post(t, srv.url+"/api/runs", `{"problem":"test-fake","params":{"n":700},"algorithms":[{"algo":"fw"},{"algo":"afw"}],"replications":2,"iters":700}`)
	waitDone(t, srv.url, id)
	trace := get(t, srv.url+"/api/runs/"+id+"/trace")

	ctx := context.Background()
	st, err := pgstore.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// the store has the run's end once the server has written it
	waitUntil(t, 30*time.Second, "the run's end in PostgreSQL", func() bool {
		r, err := st.Get(ctx, id)
		return err == nil && !store.Live(r.Status)
	})
	r, err := st.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != store.StatusDone || len(r.Traces) != 4 {
		t.Fatalf("in PostgreSQL: %s with %d traces", r.Status, len(r.Traces))
	}
	for _, tr := range r.Traces {
		if tr.Records != 701 || tr.Summary == nil {
			t.Errorf("trace %d in PostgreSQL: %d records, summary %v", tr.Index, tr.Records, tr.Summary)
		}
	}

	// a run from a worker, queued beside the server
	w := startWorkerProc(t, db, "w0", "-slots", "1")
	var out, errb bytes.Buffer
	spec := `{"problem":"test-fake","params":{"n":"300"},"algorithms":[{"algo":"fw"}],"replications":1,"iters":300}`
	if code := runSubmit([]string{"-db", db, "-wait", "-"}, strings.NewReader(spec), &out, &errb); code != 0 {
		t.Fatalf("submit: %d %s %s\n%s", code, out.String(), errb.String(), w.output())
	}
	var wid string
	fmt.Sscanf(out.String(), "run %s queued", &wid)
	var l struct {
		Runs []struct{ ID, Status, Worker string }
	}
	if err := json.Unmarshal(get(t, srv.url+"/api/runs"), &l); err != nil {
		t.Fatal(err)
	}
	if len(l.Runs) != 2 || l.Runs[0].ID != wid || l.Runs[0].Status != "done" {
		t.Fatalf("the server lists %+v, want the worker's run %s first, done", l.Runs, wid)
	}
	// History and the run page name the worker of each run: the queued
	// run is taken by w0 or by the server's worker, whichever is free
	// first; the server's own run by the server's worker (no other was
	// there)
	claim, _, _ := st.Runner(ctx, wid)
	ran, _, _ := strings.Cut(claim, "/")
	if (ran != "w0" && ran != self) || l.Runs[0].Worker != ran || l.Runs[1].Worker != self {
		t.Errorf("History's workers: %+v, want %s (w0 or %s) for %s and %s for the server's own run", l.Runs, ran, self, wid, self)
	}
	for run, want := range map[string]string{wid: ran, id: self} {
		var st struct{ Worker string }
		if err := json.Unmarshal(get(t, srv.url+"/api/runs/"+run), &st); err != nil || st.Worker != want {
			t.Errorf("run %s's status names worker %q, %v; want %q", run, st.Worker, err, want)
		}
	}
	var recs []json.RawMessage
	for _, line := range bytes.Split(bytes.TrimSpace(get(t, srv.url+"/api/runs/"+wid+"/trace")), []byte("\n")) {
		recs = append(recs, line)
	}
	if len(recs) < 301 {
		t.Errorf("the worker's run's trace through the server: %d lines", len(recs))
	}

	// a bundle exported and imported again is a new run with the same trace
	bundleJSON := get(t, srv.url+"/api/runs/"+id+"/bundle")
	imp := post(t, srv.url+"/api/runs/import", string(bundleJSON))
	if imp == id || imp == "" {
		t.Fatalf("the import gave %q", imp)
	}
	if got := get(t, srv.url+"/api/runs/"+imp+"/trace"); !bytes.Equal(got, trace) {
		t.Errorf("the imported run's trace differs (%d bytes, want %d)", len(got), len(trace))
	}
	// imported again: the first import's run, nothing new stored
	resp, err := http.Post(srv.url+"/api/runs/import", "application/json", bytes.NewReader(bundleJSON))
	if err != nil {
		t.Fatal(err)
	}
	var again struct {
		ID       string
		Existing bool
	}
	json.NewDecoder(resp.Body).Decode(&again)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || again.ID != imp || !again.Existing {
		t.Errorf("the second import: %s %+v, want 200 and run %s, existing", resp.Status, again, imp)
	}

	// the server stops and starts again on the database
	if err := srv.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	srv.cmd.Wait()
	srv2 := startChild(t, "-db", db)
	if got := get(t, srv2.url+"/api/runs/"+id+"/trace"); !bytes.Equal(got, trace) {
		t.Errorf("the trace differs after the restart (%d bytes, want %d)", len(got), len(trace))
	}
}

// TestServerStreamsAWorkersRunLive: the websocket of a run running on a
// worker process streams it from the store while it runs, every record
// once, then says done (the server, a pure front end, runs nothing).
func TestServerStreamsAWorkersRunLive(t *testing.T) {
	t.Parallel()
	db, st := pgStore(t)
	ctx := context.Background()
	srv := startChild(t, "-db", db, "-slots", "0")
	startWorkerProc(t, db, "w0", "-slots", "1")
	const n = 3000 // about 3 s at 1 ms a record
	var out, errb bytes.Buffer
	spec := fmt.Sprintf(`{"problem":"test-fake","params":{"n":"%d","delay_us":"1000"},"algorithms":[{"algo":"fw"}],"replications":1,"iters":%d}`, n, n)
	if code := runSubmit([]string{"-db", db, "-"}, strings.NewReader(spec), &out, &errb); code != 0 {
		t.Fatalf("submit: %s", errb.String())
	}
	var id string
	fmt.Sscanf(out.String(), "run %s queued", &id)
	waitUntil(t, time.Minute, "the run to start", func() bool {
		r, err := st.Get(ctx, id)
		return err == nil && r.Traces[0].Records > 0
	})
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.url, "http")+"/ws/runs/"+id, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	ws.SetReadDeadline(time.Now().Add(2 * time.Minute))
	got, batches, statuses := 0, 0, []string{}
	for {
		var m struct {
			Type    string
			Run     struct{ Status string }
			Batches []struct {
				Trace, From int
				Records     []json.RawMessage
			}
		}
		if err := ws.ReadJSON(&m); err != nil {
			t.Fatalf("after %d records in %d batches (%v): %v", got, batches, statuses, err)
		}
		switch m.Type {
		case "records":
			for _, b := range m.Batches {
				if b.From != got {
					t.Fatalf("a batch from %d after %d records", b.From, got)
				}
				got += len(b.Records)
			}
			batches++
		case "hello", "status", "done":
			statuses = append(statuses, m.Type+":"+m.Run.Status)
		}
		if m.Type == "done" {
			break
		}
	}
	t.Logf("%d records in %d batches", got, batches)
	if got != n+1 || batches < 3 || statuses[0] != "hello:running" || statuses[len(statuses)-1] != "done:done" {
		t.Errorf("streamed %d records in %d batches, statuses %v; want %d records as they came, hello running, done", got, batches, statuses, n+1)
	}
}
