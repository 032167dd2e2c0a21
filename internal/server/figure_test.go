package server

import (
	"bufio"
	"context"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/figures"
	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
)

// bigStoredRun puts a finished run of n records (one trace) in the store.
func bigStoredRun(t *testing.T, st *store.Store, n int) string {
	t.Helper()
	ctx := context.Background()
	sp := spec.Run{Problem: "lasso", Algorithms: []spec.Algo{{Algo: "fw"}}, Replications: 1, Seed: 1, Iters: n - 1}
	id, err := st.PutRun(ctx, &store.Run{Spec: sp, Version: "test", Status: store.StatusRunning,
		Traces: []store.Trace{{Index: 0, Algo: "fw", Seed: 1, Status: store.StatusRunning}}})
	if err != nil {
		t.Fatal(err)
	}
	const batch = 20_000
	recs := make([]solver.Record, 0, batch)
	for k := 0; k < n; k++ {
		f := 1 + 10/float64(k+1)
		if k%1000 == 500 {
			f = 100 // spikes
		}
		g := f - 1
		recs = append(recs, solver.Record{K: k, Passes: float64(k) / 100, Objective: &f, Gap: &g, Step: "fw"})
		if len(recs) == batch || k == n-1 {
			if err := st.AppendRecords(ctx, id, 0, recs); err != nil {
				t.Fatal(err)
			}
			recs = recs[:0]
		}
	}
	sum := &solver.Summary{Status: solver.StatusMaxIters, Iters: n - 1}
	if err := st.SetTrace(ctx, id, 0, store.TraceResult{Status: solver.StatusMaxIters, Summary: sum}); err != nil {
		t.Fatal(err)
	}
	if err := st.SetStatus(ctx, id, store.StatusDone, time.Now()); err != nil {
		t.Fatal(err)
	}
	return id
}

// peakRSS runs fn and returns how far the process' resident set rose
// above where it stood before (Linux: VmHWM after clearing it).
func peakRSS(t *testing.T, fn func()) int64 {
	t.Helper()
	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skipf("SKIPPED: cannot reset the peak RSS: %v", err)
	}
	before := procKB(t, "VmRSS")
	fn()
	return (procKB(t, "VmHWM") - before) * 1024
}

func procKB(t *testing.T, key string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skipf("SKIPPED: no /proc/self/status: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), key+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	t.Skipf("SKIPPED: no %s in /proc/self/status", key)
	return 0
}

// A figure of a long stored run streams its records and decimates them per
// column: its peak memory is a fraction of reading the whole run (the way
// figures were drawn before), and its spikes survive. FWLAB_FIGURE_RECORDS
// sets the run's records (default 600 000; docs/figures.md quotes 4 000 000).
func TestFigureOfALongRunStreams(t *testing.T) {
	n := 600_000
	if v := os.Getenv("FWLAB_FIGURE_RECORDS"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	st, err := store.Open(filepath.Join(t.TempDir(), "big.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	id := bigStoredRun(t, st, n)
	o := Options{}
	o.Session = session.Options{Store: st, MaxRecords: n + 10, MaxTotalRecords: 2 * n, MaxMemory: 1 << 40}
	_, ts := newTestServer(t, o)

	var body []byte
	streamed := peakRSS(t, func() {
		var code int
		code, body = do(t, "GET", ts.URL+"/api/runs/"+id+"/figure.svg", nil)
		if code != 200 {
			t.Fatalf("figure: %d %.200s", code, body)
		}
	})
	if !strings.Contains(string(body), "(c) duality gap against iterations") {
		t.Errorf("the figure lacks its panels")
	}
	// the former way: every record in memory, then FromRun
	whole := peakRSS(t, func() {
		recs, err := st.Records(context.Background(), id, 0, 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		fig := figures.FromRun("x", []figures.RunTraces{{Algo: "fw", Traces: [][]solver.Record{recs}}}, math.NaN())
		var sb strings.Builder
		if err := fig.Render(&sb, "svg"); err != nil {
			t.Fatal(err)
		}
		runtime.KeepAlive(recs)
	})
	t.Logf("%d records: peak RSS %.1f MB streamed, %.1f MB reading the whole run", n, float64(streamed)/1e6, float64(whole)/1e6)
	if streamed*3 > whole {
		t.Errorf("streaming the figure peaked at %.1f MB, not a third of reading the run whole (%.1f MB)", float64(streamed)/1e6, float64(whole)/1e6)
	}
}
