package server

import (
	"context"
	"encoding/json"
	"math"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/spec"
)

// TestHistoryTimeLeftIsWallClock: under a CPU-bound competitor History's
// time left follows the wall clock, as the run page's: null (measuring) at
// first, then, from a fifth of the run on (once History has watched it for
// 4 s), within a factor of 2 of the time the run in fact still took,
// measured in the same test.
func TestHistoryTimeLeftIsWallClock(t *testing.T) {
	if testing.Short() {
		t.Skip("a run of many seconds")
	}
	// a CPU-bound competitor on every core
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	for range runtime.GOMAXPROCS(0) {
		go func() {
			x := 1.0
			for ctx.Err() == nil {
				for i := 0; i < 1e6; i++ {
					x = math.Sqrt(x + 1)
				}
			}
		}()
	}
	srv, ts := newTestServer(t, Options{Session: session.Options{MaxActive: 2}})
	// a run too short to check (a fast machine) is made again twice as long
	for iters := 10000; ; iters *= 2 {
		checked, took := historyTimeLeft(t, srv, ts, iters)
		if checked >= 5 {
			t.Logf("%d samples checked over %.1f s", checked, took.Seconds())
			return
		}
		if iters >= 8*10000 {
			t.Fatalf("%d samples past a fifth of the run with more than 3 s left: the run was too short (%.1f s)", checked, took.Seconds())
		}
	}
}

// historyTimeLeft runs six replications of fw on lasso for iters
// iterations, watches History's time left and checks it against the time
// the run in fact still took; it returns how many samples it checked and
// how long it watched.
func historyTimeLeft(t *testing.T, srv *Server, ts *httptest.Server, iters int) (int, time.Duration) {
	t.Helper()
	// six replications of fw at a constant cost per iteration, to the
	// iteration limit: more traces than the server runs at once, so some
	// wait for a slot
	id := create(t, ts, spec.Run{Problem: "lasso", Params: spec.Params{"n": "4000", "p": "60"},
		Algorithms: []spec.Algo{{Algo: "fw"}}, Replications: 6, Iters: iters, Gap: 1e-300})
	type sample struct {
		at       time.Time
		fraction float64
		eta      *float64
	}
	var samples []sample
	deadline := time.Now().Add(5 * time.Minute)
	for {
		code, body := do(t, "GET", ts.URL+"/api/runs?limit=5", nil)
		if code != 200 {
			t.Fatalf("GET /api/runs: %d %s", code, body)
		}
		var out struct{ Runs []RunRow }
		if err := json.Unmarshal(body, &out); err != nil {
			t.Fatal(err)
		}
		var row *RunRow
		for i := range out.Runs {
			if out.Runs[i].ID == id {
				row = &out.Runs[i]
			}
		}
		if row == nil {
			t.Fatalf("run %s not in History: %s", id, body)
		}
		if row.Progress == nil {
			break // the run ended: the time left was this
		}
		samples = append(samples, sample{time.Now(), row.Progress.Fraction, row.Progress.ETA})
		if time.Now().After(deadline) {
			t.Fatalf("the run did not end: %+v", row)
		}
		time.Sleep(250 * time.Millisecond)
	}
	end := time.Now()
	if r := waitFinished(t, srv, id); r.RunStatus() != "done" {
		t.Fatalf("run %s", r.RunStatus())
	}
	if len(samples) == 0 {
		t.Fatal("the run ended before History showed it live")
	}
	if samples[0].eta != nil {
		t.Errorf("the first time left was %v s, not measuring", *samples[0].eta)
	}
	checked, bad := 0, 0
	for _, s := range samples {
		truth := end.Sub(s.at).Seconds()
		if s.fraction < 0.2 || s.at.Sub(samples[0].at) < 4*time.Second || truth < 3 {
			continue
		}
		checked++
		if s.eta == nil || *s.eta < truth/2 || *s.eta > 2*truth {
			bad++
			if bad <= 5 {
				eta := math.NaN()
				if s.eta != nil {
					eta = *s.eta
				}
				t.Errorf("at %.0f%% of the run History said %.1f s left; it took %.1f s more", 100*s.fraction, eta, truth)
			}
		}
	}
	return checked, end.Sub(samples[0].at)
}
