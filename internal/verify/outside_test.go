package verify_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/fwlab/fwlab/internal/bundle"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/verify"
)

// A run opened from outside is not re-run, any other is; its bundle's
// digest is checked as any bundle's: it holds for the records written, and
// fails once a record is changed.
func TestOutsideRunsAreCheckedByDigestOnly(t *testing.T) {
	sp := spec.Run{Problem: "my least squares", Outside: true, Algorithms: []spec.Algo{{Algo: "pgd"}}}
	if err := sp.Normalize(); err != nil {
		t.Fatal(err)
	}
	if err := verify.Rerunnable(sp); !errors.Is(err, verify.ErrOutside) {
		t.Errorf("Rerunnable(outside) = %v, want ErrOutside", err)
	}
	if err := verify.Rerunnable(spec.Run{Problem: "lasso", Algorithms: []spec.Algo{{Algo: "afw"}}}); err != nil {
		t.Errorf("Rerunnable(lasso) = %v", err)
	}
	recs := []solver.Record{
		{K: 0, Step: "pgd", Active: 1, Objective: solver.F(4), Gap: solver.F(2)},
		{K: 3, Passes: 3, Time: 0.1, Step: "pgd", Gamma: 0.5, Active: 1, Objective: solver.F(1), Gap: solver.F(0.25)},
	}
	b := &bundle.Bundle{Version: "test", Status: "done", Spec: sp, Traces: []bundle.Trace{{Algo: "pgd",
		Summary: &solver.Summary{Objective: 1, Gap: 0.25, Iters: 3, Passes: 3, Status: solver.StatusConverged}, Records: recs}}}
	var buf bytes.Buffer
	if err := bundle.Encode(&buf, b); err != nil {
		t.Fatal(err)
	}
	got, err := bundle.Decode(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if !got.Spec.Outside || bundle.CheckDigest(got) != nil {
		t.Fatalf("the bundle read back: outside %v, digest %v", got.Spec.Outside, bundle.CheckDigest(got))
	}
	changed := bytes.Replace(buf.Bytes(), []byte(`"objective":1,`), []byte(`"objective":0.5,`), 1)
	if bytes.Equal(changed, buf.Bytes()) {
		t.Fatal("no record changed")
	}
	bad, err := bundle.Decode(bytes.NewReader(changed))
	if err != nil {
		t.Fatal(err)
	}
	if bundle.CheckDigest(bad) == nil {
		t.Error("a changed record passes the digest")
	}
}
