package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"
)

// control posts a pause, step or resume to a run and returns the answer's
// code and status.
func control(t *testing.T, url, id, op string) (int, string) {
	t.Helper()
	resp, err := http.Post(url+"/api/runs/"+id+"/"+op, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var st struct{ Status, Worker string }
	json.Unmarshal(b, &st)
	return resp.StatusCode, st.Status
}

// TestPauseStepResumeFromTheServerReachAWorker: the run page's pause, step
// and resume (POST /api/runs/{id}/pause|step|resume) on a -slots 0 server
// reach the worker process running the run, answered as for a local run:
// 202 with the run paused (its records stop growing), a step makes exactly
// one more record and leaves it paused, a resume lets it run on; a stop
// while paused ends it cancelled; an unknown run is 404.
func TestPauseStepResumeFromTheServerReachAWorker(t *testing.T) {
	t.Parallel()
	db, st := pgStore(t)
	ctx := context.Background()
	srv := startChild(t, "-db", db, "-slots", "0")
	startWorkerProc(t, db, "w0", "-slots", "1")
	const n = 600000 // ten minutes at 1 ms a record
	id := post(t, srv.url+"/api/runs", fmt.Sprintf(`{"problem":"test-fake","params":{"n":"%d","delay_us":"1000"},"algorithms":[{"algo":"fw"}],"replications":1,"iters":%d}`, n, n))
	stored := func() int {
		r, err := st.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return r.Traces[0].Records
	}
	// steady waits until the records stop growing (the same count for 1.5 s,
	// the worker's flushes are every 250 ms)
	steady := func() int {
		last, since := stored(), time.Now()
		deadline := since.Add(30 * time.Second)
		for time.Since(since) < 1500*time.Millisecond {
			if time.Now().After(deadline) {
				t.Fatalf("the run's records never stopped growing (%d)", last)
			}
			time.Sleep(100 * time.Millisecond)
			if got := stored(); got != last {
				last, since = got, time.Now()
			}
		}
		return last
	}
	waitUntil(t, time.Minute, "the run's first records on the worker", func() bool { return stored() > 0 })
	if code, status := control(t, srv.url, id, "pause"); code != http.StatusAccepted || status != "paused" {
		t.Fatalf("pause: %d %q, want 202 paused", code, status)
	}
	at := steady()
	var st1 struct{ Status, Worker string }
	if err := json.Unmarshal(get(t, srv.url+"/api/runs/"+id), &st1); err != nil || st1.Status != "paused" || st1.Worker != "w0" {
		t.Fatalf("paused run's status: %+v, %v", st1, err)
	}
	for i := 0; i < 2; i++ {
		if code, status := control(t, srv.url, id, "step"); code != http.StatusAccepted || status != "paused" {
			t.Fatalf("step: %d %q, want 202 paused", code, status)
		}
		waitUntil(t, 30*time.Second, "the step's record", func() bool { return stored() > at })
		if got := steady(); got != at+1 {
			t.Fatalf("step %d: %d records after %d, want exactly one more", i+1, got, at)
		}
		at++
	}
	if code, status := control(t, srv.url, id, "resume"); code != http.StatusAccepted || status != "running" {
		t.Fatalf("resume: %d %q, want 202 running", code, status)
	}
	waitUntil(t, 30*time.Second, "the resumed run to go on", func() bool { return stored() > at+100 })
	if code, status := control(t, srv.url, id, "pause"); code != http.StatusAccepted || status != "paused" {
		t.Fatalf("pause again: %d %q", code, status)
	}
	at = steady()
	req, _ := http.NewRequest(http.MethodDelete, srv.url+"/api/runs/"+id, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("DELETE of the paused run: %s", resp.Status)
	}
	waitUntil(t, 30*time.Second, "the worker to end the run", func() bool {
		r, err := st.Get(ctx, id)
		return err == nil && r.Traces[0].Summary != nil
	})
	r, _ := st.Get(ctx, id)
	if r.Status != "cancelled" || r.Traces[0].Status != "cancelled" || r.Traces[0].Records != at {
		t.Errorf("stopped while paused: %s, trace %s with %d records (paused at %d)", r.Status, r.Traces[0].Status, r.Traces[0].Records, at)
	}
	// an ended run answers as a local one that has ended; an unknown run 404
	if code, status := control(t, srv.url, id, "resume"); code != http.StatusAccepted || status != "cancelled" {
		t.Errorf("resume of the cancelled run: %d %q", code, status)
	}
	if code, _ := control(t, srv.url, "nosuchrun444", "pause"); code != http.StatusNotFound {
		t.Errorf("pause of an unknown run: %d, want 404", code)
	}
}

// TestSweepCancelFromTheServerReachesWorkers: DELETE /api/sweeps/{id} on a
// -slots 0 server cancels a sweep queued for the workers: its running cell
// stops on its worker, its queued cells never start, the sweep ends
// cancelled.
func TestSweepCancelFromTheServerReachesWorkers(t *testing.T) {
	t.Parallel()
	db, st := pgStore(t)
	ctx := context.Background()
	srv := startChild(t, "-db", db, "-slots", "0")
	startWorkerProc(t, db, "w0", "-slots", "1")
	sid := post(t, srv.url+"/api/sweeps", `{"base":{"problem":"test-fake","params":{"n":"600000","delay_us":"1000"},"algorithms":[{"algo":"fw"}],"replications":1,"iters":600000},
		"axes":[{"param":"seed","values":[1,2,3]}]}`)
	var first string
	waitUntil(t, time.Minute, "a cell running on the worker", func() bool {
		sw, err := st.GetSweep(ctx, sid)
		if err != nil {
			return false
		}
		for _, cell := range sw.Cells {
			if r, err := st.Get(ctx, cell.RunID); err == nil && r.Traces[0].Records > 0 {
				first = r.ID
				return true
			}
		}
		return false
	})
	req, _ := http.NewRequest(http.MethodDelete, srv.url+"/api/sweeps/"+sid, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Status string }
	json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted || got.Status != "cancelled" {
		t.Fatalf("DELETE /api/sweeps/%s: %s %+v, want 202 cancelled", sid, resp.Status, got)
	}
	waitUntil(t, 30*time.Second, "the running cell to stop on its worker", func() bool {
		r, err := st.Get(ctx, first)
		return err == nil && r.Traces[0].Summary != nil
	})
	time.Sleep(time.Second) // the worker is free: the other cells must not start
	sw, _ := st.GetSweep(ctx, sid)
	if sw.Status != "cancelled" {
		t.Errorf("the sweep: %s", sw.Status)
	}
	for _, cell := range sw.Cells {
		r, _ := st.Get(ctx, cell.RunID)
		if r.Status != "cancelled" || (r.ID != first && r.Traces[0].Records != 0) {
			t.Errorf("cell %d: %s with %d records", cell.Index, r.Status, r.Traces[0].Records)
		}
	}
}
