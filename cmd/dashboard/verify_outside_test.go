package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/bundle"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
)

// verify of a run opened from outside checks its digest and says it cannot
// re-run it: the exit status is the digest's.
func TestVerifyOutsideBundleChecksDigestOnly(t *testing.T) {
	sp := spec.Run{Problem: "my least squares", Outside: true, Algorithms: []spec.Algo{{Algo: "pgd"}}}
	if err := sp.Normalize(); err != nil {
		t.Fatal(err)
	}
	b := &bundle.Bundle{Version: "test", Status: "done", Spec: sp, Traces: []bundle.Trace{{Algo: "pgd",
		Summary: &solver.Summary{Objective: 1, Iters: 1, Status: solver.StatusConverged},
		Records: []solver.Record{{K: 0, Step: "pgd", Active: 1, Objective: solver.F(4)}, {K: 1, Step: "pgd", Active: 1, Objective: solver.F(1)}}}}}
	var buf bytes.Buffer
	if err := bundle.Encode(&buf, b); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.json"), filepath.Join(dir, "bad.json")
	changed := bytes.Replace(buf.Bytes(), []byte(`"objective":1`), []byte(`"objective":0.5`), 1)
	if bytes.Equal(changed, buf.Bytes()) {
		t.Fatal("no record changed")
	}
	if err := os.WriteFile(good, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, changed, 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := runVerify([]string{good}, nil, &out, &errb); code != 0 || !strings.Contains(out.String(), "digest ok") ||
		!strings.Contains(out.String(), "not re-run: opened from outside") {
		t.Errorf("verify good: %d %s %s", code, out.String(), errb.String())
	}
	out.Reset()
	if code := runVerify([]string{bad}, nil, &out, &errb); code != 1 || !strings.Contains(out.String(), "digest") {
		t.Errorf("verify a changed bundle: %d %s %s", code, out.String(), errb.String())
	}
}

// verify -db of a stored run opened from outside says it cannot re-run it,
// records nothing, and points to the exported bundle.
func TestVerifyStoredOutsideRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fwlab.db")
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	sp := spec.Run{Problem: "my least squares", Outside: true, Algorithms: []spec.Algo{{Algo: "pgd"}}}
	if err := sp.Normalize(); err != nil {
		t.Fatal(err)
	}
	id, err := st.PutRun(context.Background(), &store.Run{Spec: sp, Version: "test", Status: store.StatusDone, Traces: []store.Trace{{Algo: "pgd", Status: solver.StatusConverged}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AppendRecords(context.Background(), id, 0, []solver.Record{{K: 0, Step: "pgd", Active: 1}}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	var out, errb bytes.Buffer
	if code := runVerify([]string{"-db", path, id}, nil, &out, &errb); code != 1 || !strings.Contains(out.String(), "not re-run: opened from outside") ||
		!strings.Contains(out.String(), "-digest-only") {
		t.Errorf("verify -db: %d %s %s", code, out.String(), errb.String())
	}
	st, err = store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if vs, err := st.Verifications(context.Background(), id); err != nil || len(vs) != 0 {
		t.Errorf("verifications recorded: %v %+v", err, vs)
	}
}
