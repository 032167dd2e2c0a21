package session_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/ssvm"
)

func TestFinishedTraceCarriesPanels(t *testing.T) {
	m := newManager(t, session.Options{})
	r, err := m.Create(context.Background(), fakeSpec(20, nil, "fw", "afw"))
	if err != nil {
		t.Fatal(err)
	}
	waitDone(t, r)
	for _, ts := range r.Status().Traces {
		want := []float64{20, float64(ts.Seed)}
		if got, ok := ts.Panels["final"].([]float64); !ok || !reflect.DeepEqual(got, want) {
			t.Fatalf("trace %d: panels %v, want final = %v", ts.Trace, ts.Panels, want)
		}
		if ts.PanelsError != "" {
			t.Fatalf("trace %d: panels error %q", ts.Trace, ts.PanelsError)
		}
	}

	// A failing ResultPanels leaves the trace's result alone and says why.
	r, err = m.Create(context.Background(), fakeSpec(5, spec.Params{"panel_err": "no view"}, "fw"))
	if err != nil {
		t.Fatal(err)
	}
	waitDone(t, r)
	ts := r.Status().Traces[0]
	if ts.Status != solver.StatusMaxIters || ts.Panels != nil || !strings.Contains(ts.PanelsError, "no view") {
		t.Fatalf("status %s, panels %v, error %q", ts.Status, ts.Panels, ts.PanelsError)
	}
}

func TestRunningTraceHasNoPanels(t *testing.T) {
	m := newManager(t, session.Options{})
	r, err := m.Create(context.Background(), fakeSpec(1_000_000, spec.Params{"delay_us": "50"}, "fw"))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "records", func() bool { return r.Traces()[0].Len() > 3 })
	b, err := json.Marshal(r.Status())
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Traces []map[string]any }
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if _, has := got.Traces[0]["panels"]; has {
		t.Fatalf("a running trace reports panels: %s", b)
	}
	r.Cancel()
	waitDone(t, r)
}

func TestSSVMTracePanels(t *testing.T) {
	m := newManager(t, session.Options{})
	sp := spec.Run{Problem: "ssvm-chain", Params: spec.Params{"train": "30", "test": "12", "lambda": "0.1"},
		Algorithms: []spec.Algo{{Algo: ssvm.AlgoBCFWAS}, {Algo: ssvm.AlgoBCFW}}, Seed: 2, Iters: 300}
	r, err := m.Create(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	waitDone(t, r)
	for _, ts := range r.Status().Traces {
		words, ok := ts.Panels["decoded"].([]ssvm.DecodedWord)
		if !ok || len(words) != 8 {
			t.Fatalf("trace %d: decoded panel %v (%s)", ts.Trace, ts.Panels, ts.PanelsError)
		}
		for _, w := range words {
			if len(w.Truth) != len(w.Predicted) || w.Errors < 0 || w.Errors > len(w.Truth) {
				t.Fatalf("trace %d: bad word %+v", ts.Trace, w)
			}
		}
	}
}

func TestUploadedPathsBuild(t *testing.T) {
	data, up := t.TempDir(), t.TempDir()
	// an upload is kept by the SHA-256 of its content, and named by it
	upload := func(content string) (path, name string) {
		sum := sha256.Sum256([]byte(content))
		h := hex.EncodeToString(sum[:])
		path = filepath.Join(up, h)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path, "upload:" + h
	}
	x, xName := upload("1,0\n0,1\n1,1\n2,1\n")
	_, yName := upload("1\n2\n3\n5\n")
	if real, err := filepath.EvalSymlinks(x); err == nil {
		x = real
	}
	m := newManager(t, session.Options{DataDir: data, UploadDir: up})

	// The fake scenario records the resolved path.
	r, err := m.Create(context.Background(), fakeSpec(5, spec.Params{"data": xName}, "fw"))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Info().Panels["data"]; got != x {
		t.Errorf("uploaded path resolved to %v, want %s", got, x)
	}
	waitDone(t, r)

	// A real model reads the uploaded CSV pair.
	sp := spec.Run{Problem: "lasso", Params: spec.Params{"x": xName, "y": yName, "lambda": "0.1"},
		Algorithms: []spec.Algo{{Algo: "fista"}}, Seed: 1, Iters: 20}
	r, err = m.Create(context.Background(), sp)
	if err != nil {
		t.Fatalf("a lasso run on uploaded files: %v", err)
	}
	if info := r.Info(); info.Samples != 4 || info.Panels["data"] != "imported" {
		t.Fatalf("info %+v, want 4 imported samples", info)
	}
	waitDone(t, r)

	// Outside both directories, or reaching the uploads through a relative
	// path, is refused.
	rel, _ := filepath.Rel(data, x)
	for _, bad := range []string{rel, x, filepath.Join(filepath.Dir(up), "other.csv"), up + "-x/a.csv", filepath.Join(up, "..", "a.csv")} {
		_, err := m.Create(context.Background(), fakeSpec(5, spec.Params{"data": bad}, "fw"))
		var fe *spec.FieldError
		if !errors.As(err, &fe) || fe.Field != "params.data" {
			t.Errorf("%q: %v, want a params.data error", bad, err)
		}
	}
}
