package main

import (
	"context"
	"fmt"
	"io"
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
