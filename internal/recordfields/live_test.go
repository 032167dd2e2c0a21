package recordfields_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/fwlab/fwlab/fw/live"
	"github.com/fwlab/fwlab/internal/recordfields"
	"github.com/fwlab/fwlab/internal/server"
	"github.com/fwlab/fwlab/internal/solver"
)

// liveRecord is record k with every declared field set to a value of its
// own (finite, as the dashboard takes): the counts on odd k, the optional
// values and the metrics on every third.
func liveRecord(k int) solver.Record {
	var r solver.Record
	evaluated, counts := k%3 == 0, k%2 == 1
	for i := range recordfields.Fields {
		f := &recordfields.Fields[i]
		if f.Evaluated && !evaluated {
			continue
		}
		switch f.Kind {
		case recordfields.Int:
			switch {
			case f.Index:
				f.SetInt(&r, k)
			case !f.Omit || counts:
				f.SetInt(&r, k*7+i)
			}
		case recordfields.Float:
			f.SetFloat(&r, float64(k)+float64(i)/16)
		case recordfields.String:
			f.SetStr(&r, []string{solver.StepFW, solver.StepAway, solver.StepDrop}[k%3])
		case recordfields.OptFloat:
			f.SetOpt(&r, -float64(k)-float64(i)/32)
		case recordfields.Metrics:
			if r.Extra == nil {
				r.Extra = map[string]float64{}
			}
			r.Extra["residual"] = float64(k) / 3
		}
	}
	return r
}

// A record fw/live sends to a real dashboard arrives stored with every
// declared field, each sent as a field of its own (a slot field too, never
// among the metrics). Built with -tags recordfields_extra (make
// test-declared), the table has a field more, which fw/live queues and
// sends with no edit besides its generated file.
func TestLiveSendsEveryDeclaredField(t *testing.T) {
	srv, err := server.New(server.Options{UploadDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var bodies [][]byte
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("reading a request: %v", err)
		}
		mu.Lock()
		bodies = append(bodies, body)
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		ts.Close()
		if err := srv.Close(); err != nil {
			t.Errorf("closing the dashboard: %v", err)
		}
	})
	run, err := live.Open(context.Background(), ts.URL, live.RunInfo{Problem: "every field", Traces: []string{"a"}, Iters: 100})
	if err != nil {
		t.Fatal(err)
	}
	const n = 60
	for k := range n {
		if err := run.Record("a", liveRecord(k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := run.End(solver.StatusConverged); err != nil {
		t.Fatal(err)
	}
	stored, err := srv.Manager().Store().Records(context.Background(), run.ID, 0, 0, -1)
	if err != nil || len(stored) != n {
		t.Fatalf("%d records stored, %v", len(stored), err)
	}
	for k := range stored {
		want := liveRecord(k)
		if d := recordfields.Diff(&stored[k], &want); d != "" {
			t.Fatalf("record %d stored with %s (stored vs sent)", k, d)
		}
	}
	// what went over the wire: each field under its own name
	sent := map[string]int{}
	mu.Lock()
	defer mu.Unlock()
	for _, body := range bodies {
		var batch struct {
			Records []map[string]json.RawMessage `json:"records"`
		}
		if json.Unmarshal(body, &batch) != nil || batch.Records == nil {
			continue // opening and ending the run
		}
		for _, rec := range batch.Records {
			for key := range rec {
				sent[key]++
			}
			var extra map[string]float64
			if raw, ok := rec[recordfields.MetricsField.JSON]; ok {
				if err := json.Unmarshal(raw, &extra); err != nil {
					t.Fatalf("metrics sent as %s: %v", raw, err)
				}
			}
			for key := range extra {
				if recordfields.IsSlot(key) {
					t.Errorf("field %s sent among the metrics: %s", key, rec[recordfields.MetricsField.JSON])
				}
			}
		}
	}
	for i := range recordfields.Fields {
		f := &recordfields.Fields[i]
		if sent[f.JSON] == 0 {
			t.Errorf("field %s never sent as a field of its own (sent: %v)", f.JSON, sent)
		}
	}
	if sent["k"] != n {
		t.Errorf("%d records sent, want %d", sent["k"], n)
	}
}
