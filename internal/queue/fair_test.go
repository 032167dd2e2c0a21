package queue

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/sweep"
)

// TestFairShareAcrossClients: with one worker slot, client C queues a
// sweep of three cells, client A six runs and then client B one: B's run
// starts before A's third (right after A's second: the clients take
// turns), A's runs keep their order, and every run starts before the
// sweep's cells still waiting (interactive runs first).
func TestFairShareAcrossClients(t *testing.T) {
	t.Parallel()
	url, st, q := newQueue(t)
	ctx := context.Background()
	startWorker(t, url, "w1", 1)
	// The sweep's first cell holds the only slot for about 3 s (20 ms a
	// record), so that every run below is queued while it runs whatever
	// the machine's load; the other two take about 150 ms.
	doc := &sweep.Doc{Base: fakeSpec(150, 1000, "fw"), Axes: []sweep.Axis{{Param: "params.delay_us", Values: []json.RawMessage{json.RawMessage(`"20000"`), json.RawMessage(`"1000"`), json.RawMessage(`"1000"`)}}}}
	sid, err := q.SubmitSweepFor(ctx, doc, From{Client: "10.0.0.3"})
	if err != nil {
		t.Fatal(err)
	}
	cellRunning := func() bool {
		sw, err := st.GetSweep(ctx, sid)
		if err != nil || len(sw.Cells) == 0 || sw.Cells[0].RunID == "" {
			return false
		}
		r, err := st.Get(ctx, sw.Cells[0].RunID)
		return err == nil && r.Status == store.StatusRunning
	}
	waitFor(t, time.Minute, "the sweep's first cell to start", cellRunning)
	var a []string
	for i := 0; i < 6; i++ {
		id, err := q.SubmitFor(ctx, fakeSpec(150, 1000, "fw"), From{Client: "10.0.0.1"})
		if err != nil {
			t.Fatal(err)
		}
		a = append(a, id)
	}
	b, err := q.SubmitFor(ctx, fakeSpec(150, 1000, "fw"), From{Client: "10.0.0.2"})
	if err != nil {
		t.Fatal(err)
	}
	if !cellRunning() {
		t.Fatal("the sweep's first cell ended before the runs were queued: the test's premise (the slot held while they are queued) failed")
	}
	sw, err := st.GetSweep(ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	all := append(append([]string{}, a...), b)
	for _, cell := range sw.Cells {
		all = append(all, cell.RunID)
	}
	started := map[string]time.Time{}
	waitFor(t, 2*time.Minute, "every run to start", func() bool {
		rows, err := st.Pool().Query(ctx, `SELECT args->>'run_id', attempted_at FROM river_job WHERE attempted_at IS NOT NULL`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			var at time.Time
			if err := rows.Scan(&id, &at); err != nil {
				t.Fatal(err)
			}
			started[id] = at
		}
		return len(started) == len(all)
	})
	for _, cell := range sw.Cells[1:] {
		for _, id := range all[:len(a)+1] {
			if !started[id].Before(started[cell.RunID]) {
				t.Errorf("run %s started at %v, after the sweep's cell %d at %v", id, started[id], cell.Index, started[cell.RunID])
			}
		}
	}
	for i := 1; i < len(a); i++ {
		if !started[a[i-1]].Before(started[a[i]]) {
			t.Errorf("A's run %d started at %v, before its run %d at %v", i+1, started[a[i]], i, started[a[i-1]])
		}
	}
	if !started[b].Before(started[a[2]]) {
		t.Errorf("B's run started at %v, after A's third at %v (A's started at %v)", started[b], started[a[2]], []time.Time{started[a[0]], started[a[1]], started[a[2]]})
	}
}
