package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/pgtest"
	"github.com/fwlab/fwlab/internal/session/sessiontest"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
)

// TestServeOnPostgreSQL: `dashboard serve -db postgres://…` keeps its runs
// in PostgreSQL: a run made in the browser's API is there with every
// record; a server started again on the same database shows the same
// traces byte for byte; and a run queued with `dashboard submit` and run by
// a worker process is listed, read and renamed through the server.
func TestServeOnPostgreSQL(t *testing.T) {
	sessiontest.Register()
	c := pgtest.Start(t)
	db := c.NewDB(t)
	srv := startChild(t, "-db", db)
	id := post(t, srv.url+"/api/runs", `{"problem":"test-fake","params":{"n":700},"algorithms":[{"algo":"fw"},{"algo":"afw"}],"replications":2,"iters":700}`)
	waitDone(t, srv.url, id)
	trace := get(t, srv.url+"/api/runs/"+id+"/trace")

	ctx := context.Background()
	st, err := pgstore.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
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
		Runs []struct{ ID, Status string }
	}
	if err := json.Unmarshal(get(t, srv.url+"/api/runs"), &l); err != nil {
		t.Fatal(err)
	}
	if len(l.Runs) != 2 || l.Runs[0].ID != wid || l.Runs[0].Status != "done" {
		t.Fatalf("the server lists %+v, want the worker's run %s first, done", l.Runs, wid)
	}
	var recs []json.RawMessage
	for _, line := range bytes.Split(bytes.TrimSpace(get(t, srv.url+"/api/runs/"+wid+"/trace")), []byte("\n")) {
		recs = append(recs, line)
	}
	if len(recs) < 301 {
		t.Errorf("the worker's run's trace through the server: %d lines", len(recs))
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
