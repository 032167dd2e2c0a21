package server

import (
	"path/filepath"
	"testing"

	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/store"
)

// Fifty finished runs of 10⁵ records each leave the heap (after GC) within
// 10% of an empty server's: a finished run is on disk, not in memory (held
// in memory, their records alone would take about 640 MB).
func TestFinishedRunsLeaveTheHeap(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("writes 5·10⁶ records; heap figures are measured without the race detector")
	}
	st, err := store.Open(filepath.Join(t.TempDir(), "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv, ts := newTestServer(t, Options{Session: session.Options{Store: st, MaxActive: 2}})
	// Warm up what any server allocates once (the first request, the
	// store's connections, one run's code paths), then measure the empty
	// server.
	const runs, n = 50, 100_000
	sp := fakeRun(n, "fw")
	sp.EvalEvery = n
	warm := create(t, ts, sp)
	waitFinished(t, srv, warm)
	status(t, ts, warm)
	do(t, "POST", ts.URL+"/api/runs/delete", []byte(`{"ids":["`+warm+`"]}`))
	list(t, ts.URL, "")
	client.CloseIdleConnections()
	empty := heapAfterGC()

	var ids []string
	for i := 0; i < runs; i++ {
		id := create(t, ts, sp)
		ids = append(ids, id)
		if i >= 2 { // two at a time
			waitFinished(t, srv, ids[i-2])
		}
	}
	for _, id := range ids {
		waitFinished(t, srv, id)
	}
	if l := list(t, ts.URL, "?limit=1"); l.Total != runs {
		t.Fatalf("%d runs stored, want %d", l.Total, runs)
	}
	if s := status(t, ts, ids[7]); s.Records != n+1 {
		t.Fatalf("a stored run has %d records, want %d", s.Records, n+1)
	}
	client.CloseIdleConnections()
	after := heapAfterGC()
	t.Logf("heap: empty server %.1f MiB, after %d runs of %d records %.1f MiB (ratio %.3f)",
		float64(empty)/(1<<20), runs, n+1, float64(after)/(1<<20), float64(after)/float64(empty))
	if float64(after) > 1.1*float64(empty) {
		t.Errorf("the heap grew from %d to %d bytes, more than 10%%", empty, after)
	}
}
