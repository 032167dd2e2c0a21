package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/pgtest"
	"github.com/fwlab/fwlab/internal/queue"
	"github.com/fwlab/fwlab/internal/session/sessiontest"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
)

// serveWorkerName is the name of the worker of a server with slots on
// PostgreSQL, as the server prints it (HOST-PID, like a `dashboard worker`
// by default).
func serveWorkerName(t *testing.T, srv *child) string {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case line, ok := <-srv.out:
			if !ok {
				t.Fatal("the server ended without naming its worker")
			}
			if rest, found := strings.CutPrefix(line, "fwlab worker "); found {
				name, _, _ := strings.Cut(rest, ":")
				host, _ := os.Hostname()
				if want := fmt.Sprintf("%s-%d", host, srv.cmd.Process.Pid); name != want {
					t.Errorf("the server's worker is %q, want %q (HOST-PID)", name, want)
				}
				return name
			}
		case <-timeout:
			t.Fatal("the server has not named its worker")
		}
	}
}

// storedOnce checks that every trace of run id holds n records, each once
// and in order, and that the run is done on worker.
func storedOnce(t *testing.T, st *pgstore.Store, id string, n int, worker string) {
	t.Helper()
	ctx := context.Background()
	r, err := st.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	claim, _, _ := st.Runner(ctx, id)
	if name, _, _ := strings.Cut(claim, "/"); r.Status != store.StatusDone || name != worker {
		t.Errorf("run %s: %s on %q, want done on %s", id, r.Status, name, worker)
	}
	for _, tr := range r.Traces {
		recs, err := st.Records(ctx, id, tr.Index, 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != n || tr.Records != n {
			t.Errorf("run %s trace %d: %d records stored (%d counted), want %d", id, tr.Index, len(recs), tr.Records, n)
		}
		for k, rec := range recs {
			if rec.K != k {
				t.Fatalf("run %s trace %d: record %d has k %d (a duplicate or a gap)", id, tr.Index, k, rec.K)
			}
		}
	}
}

// jobOf is the client recorded in run id's River job ("" and false when it
// has none).
func jobOf(t *testing.T, st *pgstore.Store, id string) (client string, ok bool) {
	t.Helper()
	var n int
	err := st.Pool().QueryRow(context.Background(), `SELECT count(*), COALESCE(max(args->>'client'), '') FROM river_job WHERE kind = $1 AND args->>'run_id' = $2`,
		queue.RunArgs{}.Kind(), id).Scan(&n, &client)
	if err != nil {
		t.Fatal(err)
	}
	return client, n == 1
}

// TestServeWithSlotsIsAWorker: a server with slots on PostgreSQL, alone,
// queues a run started through its API as a pure front end does (a River
// job with its client) and runs it to its end in its own worker, every
// record stored once, its status naming the server's worker; it also runs
// a run queued by `dashboard submit` and one started through another
// server, a pure front end.
func TestServeWithSlotsIsAWorker(t *testing.T) {
	t.Parallel()
	db, st := pgStore(t)
	ctx := context.Background()
	srv := startChild(t, "-db", db, "-slots", "2")
	self := serveWorkerName(t, srv)
	const n = 400
	spec := fmt.Sprintf(`{"problem":"test-fake","params":{"n":"%d","delay_us":"500"},"algorithms":[{"algo":"fw"},{"algo":"afw"}],"replications":1,"iters":%d}`, n, n)
	id := post(t, srv.url+"/api/runs", spec)
	if client, ok := jobOf(t, st, id); !ok || client != "127.0.0.1" {
		t.Errorf("the API's run has a job: %v, from client %q; want one, from 127.0.0.1", ok, client)
	}
	waitDone(t, srv.url, id)
	var status struct{ Status, Worker string }
	if err := json.Unmarshal(get(t, srv.url+"/api/runs/"+id), &status); err != nil || status.Worker != self {
		t.Errorf("the run's status: %+v, %v; want it to name %s", status, err, self)
	}
	storedOnce(t, st, id, n+1, self)

	// a run queued by `dashboard submit`
	var out, errb bytes.Buffer
	if code := runSubmit([]string{"-db", db, "-wait", "-"}, strings.NewReader(spec), &out, &errb); code != 0 {
		t.Fatalf("submit: %d %s %s", code, out.String(), errb.String())
	}
	var sid string
	fmt.Sscanf(out.String(), "run %s queued", &sid)
	storedOnce(t, st, sid, n+1, self)

	// a run started through a pure front end
	fe := startChild(t, "-db", db, "-slots", "0")
	fid := post(t, fe.url+"/api/runs", spec)
	waitDone(t, fe.url, fid)
	storedOnce(t, st, fid, n+1, self)
	if err := st.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
}

// TestServeWithSlotsStopsLikeAWorker: on SIGTERM a server with slots on
// PostgreSQL stops as a `dashboard worker` does: it takes no new job, its
// running run gets -drain and is then given back to the queue, and the
// server exits 0 within the bound; a worker process then runs the run from
// the start to its end, every record once.
func TestServeWithSlotsStopsLikeAWorker(t *testing.T) {
	t.Parallel()
	db, st := pgStore(t)
	ctx := context.Background()
	srv := startChild(t, "-db", db, "-slots", "1", "-drain", "300ms")
	self := serveWorkerName(t, srv)
	const n = 4000 // about 4 s at 1 ms a record
	id := post(t, srv.url+"/api/runs", fmt.Sprintf(`{"problem":"test-fake","params":{"n":"%d","delay_us":"1000"},"algorithms":[{"algo":"fw"}],"replications":1,"iters":%d}`, n, n))
	waitUntil(t, time.Minute, "the run's first records on the server's worker", func() bool {
		r, err := st.Get(ctx, id)
		return err == nil && r.Traces[0].Records > 0
	})
	if claim, _, _ := st.Runner(ctx, id); !strings.HasPrefix(claim, self+"/") {
		t.Fatalf("the run is claimed by %q, want the server's worker %s", claim, self)
	}
	start := time.Now()
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var lines []string
	timeout := time.After(20 * time.Second)
	for ended := false; !ended; {
		select {
		case line, ok := <-srv.out:
			if !ok {
				ended = true
				break
			}
			lines = append(lines, line)
		case <-timeout:
			t.Fatalf("the server still runs 20 s after SIGTERM: %q", lines)
		}
	}
	if err := srv.cmd.Wait(); err != nil {
		t.Errorf("the server exited: %v; output %q", err, lines)
	}
	t.Logf("stopped %v after SIGTERM: %q", time.Since(start).Round(time.Millisecond), lines)
	if !strings.Contains(strings.Join(lines, "\n"), "1 runs given back to the queue") {
		t.Errorf("the server's output %q does not say the run was given back", lines)
	}
	if r, err := st.Get(ctx, id); err != nil || r.Status != store.StatusQueued {
		t.Fatalf("after the stop the run is %v (%v), want queued", r.Status, err)
	}
	startWorkerProc(t, db, "w0", "-slots", "1")
	waitUntil(t, time.Minute, "the run's end on w0", func() bool {
		r, err := st.Get(ctx, id)
		return err == nil && !store.Live(r.Status)
	})
	storedOnce(t, st, id, n+1, "w0")
}

// TestFrontEndClientLimits: a server on PostgreSQL bounds what each client
// queues as a server running its runs itself does: at most -max-client-runs
// live runs and -max-sweeps live sweeps, counted from the store, the next
// refused with 429 naming the flag; a run that ends makes room again.
func TestFrontEndClientLimits(t *testing.T) {
	t.Parallel()
	sessiontest.Register()
	c := pgtest.Shared(t)
	db := c.NewDB(t)
	srv := startChild(t, "-db", db, "-slots", "0", "-max-client-runs", "2", "-max-sweeps", "1")
	run := `{"problem":"test-fake","params":{"n":"50"},"algorithms":[{"algo":"fw"}],"replications":1,"iters":50}`
	sweepDoc := `{"base":` + run + `,"axes":[{"param":"seed","values":[1,2,3]}]}`
	refused := func(path, body, flag string) {
		t.Helper()
		resp, err := http.Post(srv.url+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var e struct{ Error string }
		json.Unmarshal(b, &e)
		if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(e.Error, flag) {
			t.Errorf("POST %s over the limit: %s %s; want 429 naming %s", path, resp.Status, b, flag)
		}
	}
	// the sweep's three cells are not counted as the client's runs
	post(t, srv.url+"/api/sweeps", sweepDoc)
	a := post(t, srv.url+"/api/runs", run)
	post(t, srv.url+"/api/runs", run)
	refused("/api/runs", run, "-max-client-runs")
	refused("/api/sweeps", sweepDoc, "-max-sweeps")
	var l struct{ Total int }
	if err := json.Unmarshal(get(t, srv.url+"/api/runs"), &l); err != nil || l.Total != 5 {
		t.Errorf("the store lists %d runs (%v), want 5: nothing of the refused ones", l.Total, err)
	}
	req, _ := http.NewRequest(http.MethodDelete, srv.url+"/api/runs/"+a, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	post(t, srv.url+"/api/runs", run)
	refused("/api/runs", run, "-max-client-runs")
}
