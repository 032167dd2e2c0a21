package live_test

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/fwlab/fwlab/fw/methods"
	"github.com/fwlab/fwlab/internal/problems/toy"
	"math"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/fw/live"
	"github.com/fwlab/fwlab/internal/server"
	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/store"
)

// dashboard starts a dashboard (a real fwlab server on an in-memory store)
// for the test.
func dashboard(t testing.TB) (*server.Server, string) {
	t.Helper()
	srv, err := server.New(server.Options{UploadDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		ts.Close()
		if err := srv.Close(); err != nil {
			t.Errorf("closing the dashboard: %v", err)
		}
	})
	return srv, ts.URL
}

// lsqRecord is record k of a made-up descent.
func lsqRecord(k int) solver.Record {
	obj := 1 + 1/float64(k+1)
	gap := 1 / float64(k+1)
	rec := solver.Record{K: k, Passes: float64(k), Time: float64(k) * 1e-4, Step: "fw", Gamma: 2 / float64(k+2),
		Active: min(k+1, 7), FWSteps: k, Objective: &obj, Gap: &gap}
	if k%3 == 0 {
		rec.Extra = map[string]float64{"residual": math.Sqrt(obj)}
	}
	return rec
}

// Records logged through the client arrive bit for bit, in batches, over
// several traces, and the run ends with the status given.
func TestLogsARun(t *testing.T) {
	srv, url := dashboard(t)
	fstar := 1.0
	run, err := live.Open(context.Background(), url, live.RunInfo{Problem: "made-up descent", Traces: []string{"a", "b"},
		FStar: &fstar, Iters: 1000, FlushRecords: 64})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(run.Page, "/runs/"+run.ID) {
		t.Errorf("page %q", run.Page)
	}
	const n = 700
	for k := range n {
		for _, tr := range []string{"a", "b"} {
			if err := run.Record(tr, lsqRecord(k)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := run.Record("c", lsqRecord(0)); err == nil {
		t.Error("an unknown trace was taken")
	}
	if err := run.End(solver.StatusConverged); err != nil {
		t.Fatal(err)
	}
	if err := run.Record("a", lsqRecord(n)); err == nil {
		t.Error("a record after the end was taken")
	}
	sr, err := srv.Manager().Store().Get(context.Background(), run.ID)
	if err != nil || sr.Status != store.StatusDone || !sr.Outside || sr.Traces[1].Summary.Status != solver.StatusConverged {
		t.Fatalf("stored: %v %+v", err, sr)
	}
	for tr := range 2 {
		recs, err := srv.Manager().Store().Records(context.Background(), run.ID, tr, 0, -1)
		if err != nil || len(recs) != n {
			t.Fatalf("trace %d: %d records, %v", tr, len(recs), err)
		}
		for k, got := range recs {
			want := lsqRecord(k)
			if got.K != want.K || got.Passes != want.Passes || got.Time != want.Time || got.Gamma != want.Gamma || got.Step != want.Step ||
				got.Active != want.Active || got.FWSteps != want.FWSteps || *got.Objective != *want.Objective || *got.Gap != *want.Gap ||
				len(got.Extra) != len(want.Extra) || got.Extra["residual"] != want.Extra["residual"] || got.GradErr != nil {
				t.Fatalf("trace %d record %d: got %+v, want %+v", tr, k, got, want)
			}
		}
	}
}

// A batch the dashboard refuses stops the logging with its error, naming
// the record and the field; the run ends failed with that error as its
// message, and nothing of the refused batch is stored.
func TestRefusedBatchStopsLogging(t *testing.T) {
	srv, url := dashboard(t)
	run, err := live.Open(context.Background(), url, live.RunInfo{Problem: "p", Traces: []string{"a"}, Iters: 10})
	if err != nil {
		t.Fatal(err)
	}
	for k := range 3 {
		if err := run.Record("a", lsqRecord(k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := run.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	nan := lsqRecord(3)
	*nan.Gap = math.NaN()
	_ = run.Record("a", lsqRecord(4))
	_ = run.Record("a", nan) // k = 3 after k = 4, and a NaN gap: the k is named first
	err = run.Flush(context.Background())
	var le *live.Error
	if !errors.As(err, &le) || le.Status != 400 || le.Field != "records[1].gap" {
		t.Fatalf("flush of a bad batch: %v", err)
	}
	if err := run.Record("a", lsqRecord(5)); !errors.As(err, &le) {
		t.Errorf("Record after the refusal: %v", err)
	}
	if err := run.End(solver.StatusConverged); !errors.As(err, &le) {
		t.Errorf("End after the refusal: %v", err)
	}
	sr, err := srv.Manager().Store().Get(context.Background(), run.ID)
	if err != nil || sr.Status != store.StatusFailed || sr.Traces[0].Records != 3 || !strings.Contains(sr.Traces[0].Summary.Message, "records[1].gap") {
		t.Fatalf("stored: %v %+v", err, sr)
	}
}

// BenchmarkLiveRecord: the sender's cost of a record, batched: Record on the solver's
// goroutine plus the JSON encoding of its batch on the sender's, with the
// batches sent to a live local dashboard. The time Record waits while the
// dashboard (on the same busy machine) parses and stores the batches
// before it is not the sender's cost and is left out; so is the round
// trip.
func BenchmarkLiveRecord(b *testing.B) {
	// the dashboard's store on disk, and a new run every benchRun records:
	// memory stays bounded however large b.N grows
	st, err := store.Open(filepath.Join(b.TempDir(), "fwlab.db"))
	if err != nil {
		b.Fatal(err)
	}
	srv, err := server.New(server.Options{UploadDir: b.TempDir(), Session: session.Options{Store: st}})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer st.Close()
	defer srv.Close()
	defer ts.Close()
	const benchRun = 1 << 20
	recs := make([]solver.Record, 1024)
	for i := range recs {
		recs[i] = lsqRecord(i)
	}
	var run *live.Run
	var cost time.Duration // the runs' waits left out, their encoding added
	end := func() {
		if err := run.Flush(context.Background()); err != nil {
			b.Fatal(err)
		}
		waited, encoded := live.SenderCost(run)
		cost += encoded - waited
		if err := run.End(solver.StatusMaxIters); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		k := i % benchRun
		if k == 0 {
			b.StopTimer()
			if run != nil {
				end()
			}
			if run, err = live.Open(context.Background(), ts.URL, live.RunInfo{Problem: "bench", Traces: []string{"a"}, Iters: benchRun}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		rec := recs[i&1023]
		rec.K = k
		if err := run.Record("a", rec); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	end()
	b.ReportMetric(float64((b.Elapsed()+cost).Nanoseconds())/float64(b.N), "sender-ns/record")
}

// A method of fw/methods logs through Run.Recorder: the dashboard stores
// the records methods.Collect returns for the same options, bit for bit
// (time aside, a clock reading), and the run ends with the method's status.
func TestMethodLogsThroughRecorder(t *testing.T) {
	srv, url := dashboard(t)
	ctx := context.Background()
	p, err := toy.NewSimplex(ctx, 30, 40, 5)
	if err != nil {
		t.Fatal(err)
	}
	opts := methods.Options{Algorithm: "afw", MaxIters: 200, Seed: 3}
	want, _, err := methods.Collect(ctx, p, opts)
	if err != nil {
		t.Fatal(err)
	}
	run, err := live.Open(ctx, url, live.RunInfo{Problem: "simplex from a Go program", Traces: []string{"afw"}, Iters: opts.MaxIters})
	if err != nil {
		t.Fatal(err)
	}
	res, err := methods.Run(ctx, p, opts, run.Recorder("afw"))
	if err != nil {
		t.Fatal(err)
	}
	if err := run.End(res.Summary.Status); err != nil {
		t.Fatal(err)
	}
	got, err := srv.Manager().Store().Records(ctx, run.ID, 0, 0, -1)
	if err != nil || len(got) != len(want) {
		t.Fatalf("%d records stored (%v), the method reported %d", len(got), err, len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		g.Time, w.Time = 0, 0
		gj, _ := json.Marshal(g)
		wj, _ := json.Marshal(w)
		if string(gj) != string(wj) {
			t.Fatalf("record %d: stored %s, the method reported %s", i, gj, wj)
		}
	}
	sr, err := srv.Manager().Store().Get(ctx, run.ID)
	if err != nil || sr.Traces[0].Summary.Status != res.Summary.Status {
		t.Fatalf("stored: %v %+v, want the status %s", err, sr, res.Summary.Status)
	}
}
