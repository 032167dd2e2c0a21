package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/queue"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
)

// A run made on the cluster (queued on River, run by a worker) is the run
// one machine makes: its traces carry the names of the one labelling
// function (a variant's included), and verify re-runs it here and finds
// every record, summary and name identical.
func TestVerifyRunsMadeOnTheCluster(t *testing.T) {
	t.Parallel()
	db, st := pgStore(t)
	ctx := context.Background()
	w, err := serveWorker(ctx, st, "w1", 2, queue.DefaultRescueAfter, "", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer stopWorker(w, time.Second, io.Discard, io.Discard, "stopping")
	q, err := queue.New(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	sp := spec.Run{Problem: "lasso", Iters: 60, EvalEvery: 3, Seed: 5, Replications: 2,
		Algorithms: []spec.Algo{{Algo: "ssfw-as"}, {Algo: "ssfw-as", Slack: "keep"}, {Algo: "fista"}}}
	id, err := q.Submit(ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	var r *store.Run
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if r, err = st.Get(ctx, id); err != nil {
			t.Fatal(err)
		}
		if !store.Live(r.Status) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s still %s", id, r.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if r.Status != store.StatusDone {
		t.Fatalf("run %s ended %s: %s", id, r.Status, r.Message)
	}
	want := []string{"ssfw-as + slack collapse", "ssfw-as + slack collapse", "ssfw-as", "ssfw-as", "fista", "fista"}
	n := 0
	for i, tr := range r.Traces {
		if tr.Algo != want[i] {
			t.Errorf("trace %d is named %q, want %q", i, tr.Algo, want[i])
		}
		n += tr.Records
	}
	out, stderr, code := runVerifyArgs("-db", db, id)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("run %s: reproduced: %d records identical", id, n)) {
		t.Fatalf("verify of a run made on the cluster: %d %s %s", code, out, stderr)
	}
}

// TestVerifyButtonQueuesForTheWorkers: a front end with -slots 0 runs
// nothing itself, re-runs of verification included: POST
// /api/runs/{id}/verify queues the re-run for the workers as POST
// /api/runs queues a run, a worker runs it, and the verification is
// recorded reproduced.
func TestVerifyButtonQueuesForTheWorkers(t *testing.T) {
	t.Parallel()
	db, _ := pgStore(t)
	srv := startChild(t, "-db", db, "-slots", "0")
	w := startWorkerProc(t, db, "w1", "-slots", "1")
	ended := func(id string) (status, worker string) {
		deadline := time.Now().Add(2 * time.Minute)
		for {
			var st struct{ Status, Worker string }
			if err := json.Unmarshal(get(t, srv.url+"/api/runs/"+id), &st); err != nil {
				t.Fatal(err)
			}
			if !store.Live(st.Status) {
				return st.Status, st.Worker
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %s still %s\n%s", id, st.Status, w.output())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	id := post(t, srv.url+"/api/runs", `{"problem":"test-fake","params":{"n":"200"},"algorithms":[{"algo":"fw"}],"replications":1,"iters":200}`)
	if status, worker := ended(id); status != "done" || worker != "w1" {
		t.Fatalf("run %s ended %s on %q, want done on w1", id, status, worker)
	}
	rerun := postVerify(t, srv.url, id)
	if status, worker := ended(rerun); status != "done" || worker != "w1" {
		t.Fatalf("the re-run %s ended %s on %q, want done on the worker w1", rerun, status, worker)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		var vs struct {
			Verifications []struct{ Outcome, RerunID string }
		}
		if err := json.Unmarshal(get(t, srv.url+"/api/runs/"+id+"/verifications"), &vs); err != nil {
			t.Fatal(err)
		}
		if len(vs.Verifications) > 0 {
			if v := vs.Verifications[0]; v.Outcome != "reproduced" {
				t.Fatalf("verification %+v, want reproduced", v)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no verification of run %s recorded", id)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestVerifyCancelReachesTheWorker: a verification's re-run running on a
// worker is cancelled from the run page's Cancel (DELETE
// /api/runs/{id}/verify) as any run on a worker is: through the store, at
// once, and the worker stops it.
func TestVerifyCancelReachesTheWorker(t *testing.T) {
	t.Parallel()
	db, _ := pgStore(t)
	srv := startChild(t, "-db", db, "-slots", "0")
	w := startWorkerProc(t, db, "w1", "-slots", "1")
	status := func(id string) (string, string) {
		var st struct{ Status, Worker string }
		if err := json.Unmarshal(get(t, srv.url+"/api/runs/"+id), &st); err != nil {
			t.Fatal(err)
		}
		return st.Status, st.Worker
	}
	waitFor := func(what string, limit time.Duration, ok func() bool) {
		deadline := time.Now().Add(limit)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s\n%s", what, w.output())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// about 4 s of sleeping between records (no solver work), long
	// enough that the re-run is still running when it is cancelled (the
	// cancel follows at once the re-run seen running)
	id := post(t, srv.url+"/api/runs", fakeSpec(4000, 1000))
	waitFor("the run's end", 5*time.Minute, func() bool { s, _ := status(id); return !store.Live(s) })
	rerun := postVerify(t, srv.url, id)
	waitFor("the re-run running on w1", time.Minute, func() bool { s, wk := status(rerun); return s == "running" && wk == "w1" })
	req, _ := http.NewRequest(http.MethodDelete, srv.url+"/api/runs/"+id+"/verify", nil)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("DELETE verify: %s", resp.Status)
	}
	waitFor("the re-run cancelled", 10*time.Second, func() bool { s, _ := status(rerun); return s == "cancelled" })
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the re-run read cancelled %v after the cancel, want within 5 s", d)
	}
}

// postVerify asks the server at base to verify run id (the run page's
// Verify) and returns the re-run's id.
func postVerify(t *testing.T, base, id string) string {
	t.Helper()
	resp, err := http.Post(base+"/api/runs/"+id+"/verify", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ ID string }
	err = json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST verify: %s %v", resp.Status, err)
	}
	return out.ID
}
