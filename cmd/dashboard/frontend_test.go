package main

import (
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
)

// TestFrontEndQueuesForAWorker: a server with -slots 0 runs nothing itself;
// a run started through its API is queued in PostgreSQL, a worker process
// runs it, and the run's websocket on the server streams it live, every
// record once, to its end; its status names the worker.
func TestFrontEndQueuesForAWorker(t *testing.T) {
	t.Parallel()
	sessiontest.Register()
	c := pgtest.Shared(t)
	db := c.NewDB(t)
	srv := startChild(t, "-db", db, "-slots", "0")
	// a bad spec is refused as by a server that runs it, naming the field
	resp, err := http.Post(srv.url+"/api/runs", "application/json", strings.NewReader(`{"problem":"test-fake","algorithms":[{"algo":"fw"}],"replications":1,"iters":-5}`))
	if err != nil {
		t.Fatal(err)
	}
	var bad struct{ Field, Error string }
	json.NewDecoder(resp.Body).Decode(&bad)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || bad.Field != "iters" {
		t.Errorf("a bad spec: %s %+v, want 400 naming iters", resp.Status, bad)
	}
	const n = 3000 // about 3 s at 1 ms a record
	id := post(t, srv.url+"/api/runs", fmt.Sprintf(`{"problem":"test-fake","params":{"n":"%d","delay_us":"1000"},"algorithms":[{"algo":"fw"}],"replications":1,"iters":%d}`, n, n))
	// no worker yet: the run waits in the queue, the server does not run it
	time.Sleep(time.Second)
	var st struct{ Status, Worker string }
	if err := json.Unmarshal(get(t, srv.url+"/api/runs/"+id), &st); err != nil || st.Status != "queued" {
		t.Fatalf("before any worker: %+v, %v; want queued", st, err)
	}
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.url, "http")+"/ws/runs/"+id, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	w := startWorkerProc(t, db, "w0", "-slots", "1")
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
			t.Fatalf("after %d records in %d batches (%v): %v\n%s", got, batches, statuses, err, w.output())
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
	t.Logf("%d records in %d batches, statuses %v", got, batches, statuses)
	if got != n+1 || batches < 3 || statuses[len(statuses)-1] != "done:done" {
		t.Errorf("streamed %d records in %d batches, statuses %v; want %d records as they came, then done", got, batches, statuses, n+1)
	}
	if err := json.Unmarshal(get(t, srv.url+"/api/runs/"+id), &st); err != nil || st.Status != "done" || st.Worker != "w0" {
		t.Errorf("at the end: %+v, %v; want done on w0", st, err)
	}
}

// TestSlotsFlagErrors: -slots 0 needs PostgreSQL; negative slots, a
// negative -drain and a -rescue-after under two heartbeats are refused.
func TestSlotsFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-db", "x.db", "-slots", "0"}, "-slots 0 (a pure front end) needs -db postgres://"},
		{[]string{"-db", "x.db", "-slots", "-3"}, "-slots: must be 0 or more, got -3"},
		{[]string{"-db", "x.db", "-slots", "2", "-rescue-after", "3s"}, "-rescue-after: must be at least two heartbeats (4s), got 3s"},
		{[]string{"-db", "x.db", "-slots", "2", "-drain", "-1s"}, "-drain: must not be negative, got -1s"},
	} {
		var out, errb strings.Builder
		if code := runServe(c.args, &out, &errb); code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, errb.String(), c.want)
		}
	}
}

// TestFrontEndQueuesSweepsForWorkers: a sweep started through a -slots 0
// server's API is run by the worker processes, cell by cell, to its end;
// the sweep's page data shows every cell done, each cell's run naming its
// worker.
func TestFrontEndQueuesSweepsForWorkers(t *testing.T) {
	t.Parallel()
	sessiontest.Register()
	c := pgtest.Shared(t)
	db := c.NewDB(t)
	srv := startChild(t, "-db", db, "-slots", "0")
	startWorkerProc(t, db, "w0", "-slots", "2")
	startWorkerProc(t, db, "w1", "-slots", "2")
	id := post(t, srv.url+"/api/sweeps", fmt.Sprintf(`{"base":{"problem":%q,"params":{"n":"200","delay_us":"1000"},"algorithms":[{"algo":"fw"}],"replications":1,"iters":200},
		"axes":[{"param":"seed","values":[1,2,3,4,5,6]}]}`, sessiontest.Name))
	var sw struct {
		Status string
		Cells  []struct {
			Run    string `json:"run_id"`
			Status string
		}
	}
	waitUntil(t, 2*time.Minute, "the sweep's end", func() bool {
		if err := json.Unmarshal(get(t, srv.url+"/api/sweeps/"+id), &sw); err != nil {
			t.Fatal(err)
		}
		return sw.Status == "done"
	})
	var l struct {
		Runs []struct{ ID, Status, Worker string }
	}
	if err := json.Unmarshal(get(t, srv.url+"/api/runs?sweep="+id), &l); err != nil {
		t.Fatal(err)
	}
	if len(sw.Cells) != 6 || len(l.Runs) != 6 {
		t.Fatalf("%d cells, %d runs listed", len(sw.Cells), len(l.Runs))
	}
	for _, r := range l.Runs {
		if r.Status != "done" || (r.Worker != "w0" && r.Worker != "w1") {
			t.Errorf("cell run %+v: want done on w0 or w1", r)
		}
	}
}

// TestStopFromTheServerReachesAWorker: DELETE /api/runs/{id} on a -slots 0
// server stops the run on its worker: it ends cancelled, its records kept,
// well before it would have finished.
func TestStopFromTheServerReachesAWorker(t *testing.T) {
	t.Parallel()
	db, st := pgStore(t)
	ctx := context.Background()
	srv := startChild(t, "-db", db, "-slots", "0")
	startWorkerProc(t, db, "w0", "-slots", "1")
	const n = 60000 // a minute at 1 ms a record
	id := post(t, srv.url+"/api/runs", fmt.Sprintf(`{"problem":"test-fake","params":{"n":"%d","delay_us":"1000"},"algorithms":[{"algo":"fw"}],"replications":1,"iters":%d}`, n, n))
	waitUntil(t, time.Minute, "the run's first records on the worker", func() bool {
		r, err := st.Get(ctx, id)
		return err == nil && r.Traces[0].Records > 0
	})
	req, _ := http.NewRequest(http.MethodDelete, srv.url+"/api/runs/"+id, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("DELETE: %s", resp.Status)
	}
	var kept int
	waitUntil(t, 30*time.Second, "the run to end cancelled", func() bool {
		r, err := st.Get(ctx, id)
		if err != nil || r.Status != "cancelled" {
			return false
		}
		kept = r.Traces[0].Records
		return true
	})
	// the worker stops at its next beat: its records stop growing
	time.Sleep(5 * time.Second)
	r, err := st.Get(ctx, id)
	if err != nil || r.Status != "cancelled" || r.Traces[0].Records == 0 || r.Traces[0].Records >= n || r.Traces[0].Records > kept+3000 {
		t.Errorf("after the stop: %v, %d records (%d at the cancel), %v", r.Status, r.Traces[0].Records, kept, err)
	}
}

// TestHistoryProgressOfARunOnAWorker: History (GET /api/runs) gives a run
// running on a worker process its progress towards its limits, as it does
// a run of the server's own: from the records the worker stored.
func TestHistoryProgressOfARunOnAWorker(t *testing.T) {
	t.Parallel()
	sessiontest.Register()
	db := pgtest.Shared(t).NewDB(t)
	srv := startChild(t, "-db", db, "-slots", "0")
	w := startWorkerProc(t, db, "w1", "-slots", "1")
	const n = 60000 // about a minute at 1 ms a record
	id := post(t, srv.url+"/api/runs", fmt.Sprintf(`{"problem":"test-fake","params":{"n":"%d","delay_us":"1000"},"algorithms":[{"algo":"fw"}],"replications":1,"iters":%d}`, n, n))
	defer http.DefaultClient.Do(mustRequest(t, http.MethodDelete, srv.url+"/api/runs/"+id))
	deadline := time.Now().Add(90 * time.Second)
	for {
		var list struct {
			Runs []struct {
				ID, Status, Worker string
				Progress           *struct {
					Fraction float64  `json:"fraction"`
					ETA      *float64 `json:"eta_s"`
				}
			}
		}
		if err := json.Unmarshal(get(t, srv.url+"/api/runs"), &list); err != nil {
			t.Fatal(err)
		}
		if len(list.Runs) != 1 || list.Runs[0].ID != id {
			t.Fatalf("History lists %+v, want run %s", list.Runs, id)
		}
		row := list.Runs[0]
		if row.Status == "running" && row.Progress != nil && row.Progress.Fraction > 0 && row.Progress.Fraction < 1 && row.Progress.ETA != nil && *row.Progress.ETA > 0 {
			if row.Worker != "w1" {
				t.Errorf("the run ran on %q, want w1", row.Worker)
			}
			return
		}
		if row.Status != "queued" && row.Status != "running" {
			t.Fatalf("the run ended %s before History showed its progress", row.Status)
		}
		if time.Now().After(deadline) {
			t.Fatalf("History's row of a run on a worker: %s, progress %+v\n%s", row.Status, row.Progress, w.output())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func mustRequest(t *testing.T, method, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
