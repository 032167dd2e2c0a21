package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/bundle"
	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
)

func runImportArgs(args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := runImport(args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

// solve -format json writes a bundle; importing it gives a stored run whose
// traces are the file's, record for record.
func TestImportSolveBundle(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "run.json")
	// gflasso draws panels of each final estimate; two replications add aggregates
	_, stderr, code := solve(t, "-problem", "gflasso", "-j", "10", "-k", "20", "-n", "40", "-algo", "bc-ssfw-as,spg", "-iters", "40", "-replications", "2", "-format", "json", "-out", file)
	if code != 0 {
		t.Fatalf("solve: %d %s", code, stderr)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("solve's json output is not a bundle: %v", err)
	}
	var raw map[string]json.RawMessage
	json.Unmarshal(data, &raw)
	if b.Status != store.StatusDone || len(b.Traces) != 4 || b.Aggregates == nil || raw["aggregates"] == nil || b.Version == "" {
		t.Fatalf("bundle: status %q, %d traces, aggregates %v, version %q", b.Status, len(b.Traces), b.Aggregates != nil, b.Version)
	}
	if b.Info.Panels == nil || b.Traces[0].Panels == nil {
		t.Errorf("the instance's and the estimates' panels are missing")
	}

	db := filepath.Join(dir, "store", "fwlab.db")
	out, stderr, code := runImportArgs("-db", db, file)
	if code != 0 {
		t.Fatalf("import: %d %s", code, stderr)
	}
	f := strings.Fields(out)
	if len(f) < 3 || f[0] != file+":" || f[1] != "run" || !store.ValidID(f[2]) {
		t.Fatalf("import said %q", out)
	}
	id := f[2]
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	r, err := st.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != store.StatusDone || r.Spec.Problem != "gflasso" || len(r.Traces) != 4 || r.Instance.Dim != b.Info.Dim {
		t.Fatalf("stored run %+v", r)
	}
	for i, tr := range b.Traces {
		recs, err := st.Records(ctx, id, i, 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != len(tr.Records) || len(recs) == 0 {
			t.Fatalf("trace %d: %d records stored, %d in the file", i, len(recs), len(tr.Records))
		}
		for j := range recs {
			a, _ := json.Marshal(recs[j])
			w, _ := json.Marshal(tr.Records[j])
			if string(a) != string(w) {
				t.Fatalf("trace %d record %d: stored %s, file %s", i, j, a, w)
			}
		}
		if st := r.Traces[i]; st.Summary == nil || *st.Summary != *tr.Summary || st.Status != tr.Summary.Status || st.Algo != tr.Algo {
			t.Errorf("trace %d: stored %+v, file %+v", i, st, tr.Summary)
		}
	}
	// the stored run exports as the same bundle
	exp, err := bundle.FromStore(ctx, st, id)
	if err != nil {
		t.Fatal(err)
	}
	exp.Aggregates = b.Aggregates // derived data, not stored
	exp.Created = b.Created
	var again bytes.Buffer
	if err := bundle.Encode(&again, exp); err != nil {
		t.Fatal(err)
	}
	if again.String() != string(data) {
		a, w := again.String(), string(data)
		i := 0
		for i < len(a) && i < len(w) && a[i] == w[i] {
			i++
		}
		t.Errorf("the exported bundle differs from the file solve wrote at byte %d:\n%.200s\nvs\n%.200s", i, a[max(0, i-50):], w[max(0, i-50):])
	}
}

func TestImportErrorsNameFileAndField(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	if _, stderr, code := solve(t, "-problem", "toy-polygon", "-algo", "afw", "-iters", "20", "-format", "json", "-out", good); code != 0 {
		t.Fatal(stderr)
	}
	data, _ := os.ReadFile(good)
	trunc := filepath.Join(dir, "trunc.json")
	os.WriteFile(trunc, data[:len(data)/2], 0o644)
	old := filepath.Join(dir, "old.json")
	os.WriteFile(old, []byte(`{"spec":{},"info":{},"traces":[]}`), 0o644)
	db := filepath.Join(dir, "fwlab.db")

	out, stderr, code := runImportArgs("-db", db, trunc, good, old, filepath.Join(dir, "missing.json"))
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if !strings.Contains(out, good+": run ") {
		t.Errorf("the good file was not imported: %q", out)
	}
	for _, want := range []string{
		trunc + ": bundle: traces[0].records[",
		"the document ends early",
		old + `: bundle: format: is required: this is not a fwlab bundle`,
		"missing.json: open",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, total, _ := st.List(context.Background(), store.Filter{}); total != 1 {
		t.Errorf("%d runs stored, want the one good file", total)
	}

	if _, stderr, code := runImportArgs("-db", db); code != 2 || !strings.Contains(stderr, "no bundle files") {
		t.Errorf("no files: %d %q", code, stderr)
	}
}

// A diverging run's non-finite numbers survive solve's bundle (JSON has no
// NaN; the bundle writes "NaN", "Inf", "-Inf").
func TestBundleKeepsNonFiniteNumbers(t *testing.T) {
	run := spec.Run{Problem: "toy-polygon", Algorithms: []spec.Algo{{Algo: "afw"}}}
	sc, vals, err := scenarios.Resolve(&run)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := sc.Build(context.Background(), vals, run.Seed)
	if err != nil {
		t.Fatal(err)
	}
	tr := traceOut{Algo: "afw", Summary: solver.Summary{Objective: math.Inf(1), Gap: math.NaN(), Status: solver.StatusFailed},
		Records: []solver.Record{{K: 0, Step: "none", Objective: solver.F(1), Gap: solver.F(2)}, {K: 1, Step: "fw", Gamma: math.NaN(), Objective: solver.F(math.Inf(-1))}}}
	var buf bytes.Buffer
	if err := writeBundle(&buf, run, inst, []traceOut{tr}, nil, false); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	r, s := b.Traces[0].Records[1], b.Traces[0].Summary
	if !math.IsNaN(r.Gamma) || !math.IsInf(*r.Objective, -1) || !math.IsInf(s.Objective, 1) || !math.IsNaN(s.Gap) || b.Status != store.StatusFailed {
		t.Errorf("read back γ %v, objective %v, summary %+v, status %s", r.Gamma, *r.Objective, s, b.Status)
	}
}
