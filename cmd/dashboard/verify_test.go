package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/bundle"
	"github.com/fwlab/fwlab/internal/server"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
)

func runVerifyArgs(args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := runVerify(args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

// solveBundle runs solve -format json with args (the tests pass a fixed
// evaluation cadence, so the records' count is known ahead) and returns the
// bundle's path and its records count.
func solveBundle(t *testing.T, dir, name string, args ...string) (string, int) {
	t.Helper()
	file := filepath.Join(dir, name)
	args = append(args, "-format", "json", "-out", file)
	if _, stderr, code := solve(t, args...); code != 0 {
		t.Fatalf("solve %v: %d %s", args, code, stderr)
	}
	b := readBundleFile(t, file)
	n := 0
	for _, tr := range b.Traces {
		n += len(tr.Records)
	}
	return file, n
}

func readBundleFile(t *testing.T, file string) *bundle.Bundle {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := bundle.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeBundleFile(t *testing.T, file string, b *bundle.Bundle) {
	t.Helper()
	var buf bytes.Buffer
	if err := bundle.Encode(&buf, b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A bundle fresh from solve reproduces here, every record of every trace.
func TestVerifyFreshBundleReproduces(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		args []string
	}{
		{"lasso", []string{"-problem", "lasso", "-algo", "ssfw-as,afw", "-iters", "150", "-eval-every", "7", "-replications", "2"}},
		{"lasso-backtrack", []string{"-problem", "lasso", "-algo", "ssfw-as", "-stepsize", "backtrack", "-iters", "150", "-eval-every", "5"}},
		{"gflasso-blocks", []string{"-problem", "gflasso", "-j", "10", "-k", "20", "-n", "40", "-algo", "bc-ssfw-as,spg", "-iters", "40", "-eval-every", "3", "-workers", "2"}},
		{"toy-polygon", []string{"-problem", "toy-polygon", "-algo", "ssfw-as,pfw", "-iters", "60", "-eval-every", "1"}},
		{"ssvm-chain", []string{"-problem", "ssvm-chain", "-algo", "bcfw", "-iters", "30", "-eval-every", "2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			file, n := solveBundle(t, dir, c.name+".json", c.args...)
			out, stderr, code := runVerifyArgs(file)
			if code != 0 {
				t.Fatalf("verify: %d\n%s%s", code, out, stderr)
			}
			want := fmt.Sprintf("%s: reproduced: %d records identical\n", file, n)
			if !strings.Contains(out, want) || !strings.Contains(out, file+": digest ok (sha256:") {
				t.Fatalf("verify said %q, want %q after the digest", out, want)
			}
		})
	}
}

var kField = regexp.MustCompile(`"k":(\d+),`)

// editRecordText changes one digit of the objective of the first evaluated
// record with k ≥ from in a bundle's text (its first trace), and returns
// the new text with the k, old and new values.
func editRecordText(t *testing.T, text string, from int) (string, int, string, string) {
	t.Helper()
	for _, m := range kField.FindAllStringSubmatchIndex(text, -1) {
		k, _ := strconv.Atoi(text[m[2]:m[3]])
		if k < from {
			continue
		}
		end := strings.IndexByte(text[m[0]:], '}') + m[0]
		rec := text[m[0]:end]
		i := strings.Index(rec, `"objective":`)
		if i < 0 || strings.HasPrefix(rec[i+12:], "null") {
			continue
		}
		j := i + 12
		for j < len(rec) && rec[j] != ',' {
			j++
		}
		old := rec[i+12 : j]
		e := strings.IndexAny(old, "eE")
		if e < 0 {
			e = len(old)
		}
		// a digit well inside the mantissa (the last ones may not change
		// the number a shortest form stands for)
		p := e - 4
		for p > 0 && (old[p] < '0' || old[p] > '9') {
			p--
		}
		if e < 6 || p <= 0 {
			continue
		}
		nd := byte('0' + (old[p]-'0'+1)%10)
		repl := old[:p] + string(nd) + old[p+1:]
		v, err := strconv.ParseFloat(repl, 64)
		if err != nil {
			t.Fatal(err)
		}
		return text[:m[0]+i+12] + repl + text[m[0]+j:], k, old, strconv.FormatFloat(v, 'g', -1, 64)
	}
	t.Fatal("no evaluated record to edit")
	return "", 0, "", ""
}

// One digit changed in one record is found and named: the record (trace,
// k), the field and both values; an edit made in the text also breaks the
// digest, and one re-encoded (its digest made anew) is found by the
// re-run alone.
func TestVerifyFindsOneDigitChanged(t *testing.T) {
	dir := t.TempDir()
	file, _ := solveBundle(t, dir, "run.json", "-problem", "lasso", "-algo", "ssfw-as", "-iters", "120", "-eval-every", "4", "-replications", "2")
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	edited, k, old, repl := editRecordText(t, string(raw), 50)
	bad := filepath.Join(dir, "edited.json")
	os.WriteFile(bad, []byte(edited), 0o644)
	out, _, code := runVerifyArgs(bad)
	if code != 1 {
		t.Fatalf("verify of an edited bundle: exit %d, want 1\n%s", code, out)
	}
	want := fmt.Sprintf("differs: trace 0 (ssfw-as + slack collapse #0) record %d (k = %d), field objective: stored %s, re-run %s", k, k, repl, old)
	if !strings.Contains(out, want) || !strings.Contains(out, "digest mismatch") {
		t.Fatalf("verify said\n%s\nwant a digest mismatch and %q", out, want)
	}

	// the same edit with a digest made anew: only the re-run finds it
	b := readBundleFile(t, bad)
	writeBundleFile(t, bad, b)
	out, _, code = runVerifyArgs(bad)
	if code != 1 || !strings.Contains(out, "digest ok") || !strings.Contains(out, want) {
		t.Fatalf("verify of a re-encoded edited bundle: exit %d\n%s\nwant %q", code, out, want)
	}
	// a change in the second replication's summary
	b = readBundleFile(t, file)
	b.Traces[1].Summary.Status = solver.StatusConverged
	writeBundleFile(t, bad, b)
	out, _, code = runVerifyArgs(bad)
	if code != 1 || !strings.Contains(out, `trace 1 (ssfw-as + slack collapse #1), field summary.status: stored "converged", re-run "max_iters"`) {
		t.Fatalf("verify of an edited summary: exit %d\n%s", code, out)
	}
}

// -digest-only checks a bundle's integrity without re-running it: an edited
// bundle fails, a bundle without a digest says so.
func TestVerifyDigestOnly(t *testing.T) {
	dir := t.TempDir()
	file, _ := solveBundle(t, dir, "run.json", "-problem", "lasso", "-algo", "afw", "-iters", "60", "-eval-every", "2")
	out, _, code := runVerifyArgs("-digest-only", file)
	if code != 0 || !strings.Contains(out, "digest ok") || strings.Contains(out, "reproduced") {
		t.Fatalf("-digest-only of a fresh bundle: %d %s", code, out)
	}
	raw, _ := os.ReadFile(file)
	edited, _, _, _ := editRecordText(t, string(raw), 10)
	bad := filepath.Join(dir, "edited.json")
	os.WriteFile(bad, []byte(edited), 0o644)
	out, _, code = runVerifyArgs("-digest-only", file, bad)
	if code != 1 || !strings.Contains(out, bad+": digest mismatch: the bundle says sha256:") || !strings.Contains(out, file+": digest ok") {
		t.Fatalf("-digest-only of an edited bundle: %d %s", code, out)
	}

	// a bundle from before digests (format version 1)
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc, "digest")
	doc["format_version"] = json.RawMessage("1")
	old, _ := json.Marshal(doc)
	oldFile := filepath.Join(dir, "old.json")
	os.WriteFile(oldFile, old, 0o644)
	out, _, code = runVerifyArgs("-digest-only", oldFile)
	if code != 1 || !strings.Contains(out, oldFile+": no digest") {
		t.Fatalf("-digest-only of a bundle without a digest: %d %s", code, out)
	}
	// verify without -digest-only says so, and re-runs it
	out, _, code = runVerifyArgs(oldFile)
	if code != 0 || !strings.Contains(out, oldFile+": no digest") || !strings.Contains(out, "reproduced:") {
		t.Fatalf("verify of a bundle without a digest: %d %s", code, out)
	}
}

// A run cancelled part-way is compared with the re-run's first records.
func TestVerifyUnfinishedTrace(t *testing.T) {
	dir := t.TempDir()
	file, _ := solveBundle(t, dir, "run.json", "-problem", "lasso", "-algo", "ssfw-as,afw", "-iters", "100", "-eval-every", "5")
	b := readBundleFile(t, file)
	b.Status = store.StatusCancelled
	b.Traces[1].Records = b.Traces[1].Records[:37]
	b.Traces[1].Status = solver.StatusCancelled
	b.Traces[1].Summary = &solver.Summary{Status: solver.StatusCancelled, Iters: 36}
	writeBundleFile(t, file, b)
	n := len(b.Traces[0].Records) + 37
	out, _, code := runVerifyArgs(file)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("reproduced: %d records identical (1 unfinished traces", n)) {
		t.Fatalf("verify of a cancelled run: %d %s", code, out)
	}
	// its records still count
	b.Traces[1].Records[36].Gamma *= 2
	writeBundleFile(t, file, b)
	out, _, code = runVerifyArgs(file)
	if code != 1 || !strings.Contains(out, "trace 1 (afw + slack collapse #0) record 36 (k = 36), field gamma") {
		t.Fatalf("verify of an edited cancelled run: %d %s", code, out)
	}
}

// Stored runs are verified from the store, each outcome recorded there; a
// sweep's cells are verified one by one.
func TestVerifyStored(t *testing.T) {
	dir := t.TempDir()
	file, n := solveBundle(t, dir, "run.json", "-problem", "lasso", "-algo", "ssfw-as", "-iters", "80", "-eval-every", "3")
	db := filepath.Join(dir, "fwlab.db")
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	b := readBundleFile(t, file)
	good, err := bundle.Put(ctx, st, b)
	if err != nil {
		t.Fatal(err)
	}
	obj := *b.Traces[0].Records[30].Objective
	b.Traces[0].Records[30].Objective = solver.F(obj * (1 + 1e-15))
	if *b.Traces[0].Records[30].Objective == obj {
		t.Fatal("the edit changed nothing")
	}
	changed, err := bundle.Put(ctx, st, b)
	if err != nil {
		t.Fatal(err)
	}
	st.Close() // verify opens the file itself

	out, stderr, code := runVerifyArgs("-db", db, good, changed, "notanid")
	if code != 1 {
		t.Fatalf("verify -db: %d %s %s", code, out, stderr)
	}
	for _, want := range []string{
		fmt.Sprintf("run %s: reproduced: %d records identical", good, n),
		fmt.Sprintf("run %s: differs: trace 0 (ssfw-as + slack collapse #0) record 30 (k = 30), field objective: stored %s, re-run %s", changed,
			strconv.FormatFloat(obj*(1+1e-15), 'g', -1, 64), strconv.FormatFloat(obj, 'g', -1, 64)),
		"run notanid: not a run id",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("verify -db said\n%s\nwant %q", out, want)
		}
	}
	st, err = store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	last, err := st.LastVerifications(ctx, []string{good, changed})
	if err != nil {
		t.Fatal(err)
	}
	if v := last[good]; v.Outcome != store.VerifyReproduced || v.Records != n || v.Version == "" || v.At.IsZero() {
		t.Errorf("the reproduced run's verification: %+v", v)
	}
	if v := last[changed]; v.Outcome != store.VerifyDiffers || !strings.Contains(v.Detail, "record 30 (k = 30), field objective") {
		t.Errorf("the changed run's verification: %+v", v)
	}

	// a sweep of the two runs and a cell whose run was deleted
	swID, err := st.PutSweep(ctx, &store.Sweep{Base: b.Spec, Axes: json.RawMessage(`[{"param":"seed","values":[1,2,3]}]`), Status: store.StatusDone,
		Cells: []store.Cell{{Index: 0, Values: json.RawMessage(`{"seed":1}`)}, {Index: 1, Values: json.RawMessage(`{"seed":2}`)}, {Index: 2, Values: json.RawMessage(`{"seed":3}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range []string{good, changed} {
		if err := st.SetCellRun(ctx, swID, i, id); err != nil {
			t.Fatal(err)
		}
	}
	out, _, code = runVerifyArgs("-db", db, "-sweep", swID)
	if code != 1 {
		t.Fatalf("verify -sweep: %d %s", code, out)
	}
	for _, want := range []string{
		fmt.Sprintf(`cell 0 {"seed":1}: run %s: reproduced: %d records identical`, good, n),
		fmt.Sprintf(`cell 1 {"seed":2}: run %s: differs: trace 0 (ssfw-as + slack collapse #0) record 30`, changed),
		`cell 2 {"seed":3}: no run (deleted, or never started)`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("verify -sweep said\n%s\nwant %q", out, want)
		}
	}
	if vs, err := st.Verifications(ctx, good); err != nil || len(vs) != 2 {
		t.Errorf("the sweep's verification of a cell was not recorded: %d, %v", len(vs), err)
	}
}

func TestVerifyUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "no bundle files given"},
		{[]string{"-db", "x.db"}, "no run ids given"},
		{[]string{"-sweep", "abc"}, "-sweep: needs -db"},
		{[]string{"-db", "x.db", "-digest-only", "a"}, "-digest-only"},
		{[]string{"-db", "x.db", "-sweep", "abc", "aaaaaaaaaaaa"}, "give no run ids"},
		{[]string{"-nosuch"}, "-nosuch"},
	} {
		_, stderr, code := runVerifyArgs(c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("verify %v: exit %d %q, want 2 and %q", c.args, code, stderr, c.want)
		}
	}
	out, _, code := runVerifyArgs(filepath.Join(t.TempDir(), "missing.json"))
	if code != 1 || out != "" {
		t.Errorf("a missing file: exit %d %q", code, out)
	}
}

// A run made by the server (its session layer) reproduces through solve's
// path: both run a spec alike.
func TestVerifyServerRun(t *testing.T) {
	db := filepath.Join(t.TempDir(), "fwlab.db")
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	o := server.Options{}
	o.Session.Store = st
	srv, err := server.New(o)
	if err != nil {
		t.Fatal(err)
	}
	sp := spec.Run{Problem: "gflasso", Params: spec.Params{"j": "10", "k": "20", "n": "40"}, Iters: 50, EvalEvery: 3, Replications: 2,
		Algorithms: []spec.Algo{{Algo: "bc-ssfw-as", Workers: 2}, {Algo: "spg"}}}
	run, err := srv.Manager().Create(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	<-run.Done()
	id := run.ID
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	n := 0
	r, err := st.Get(context.Background(), id)
	if err != nil || r.Status != store.StatusDone {
		t.Fatalf("the server's run: %+v, %v", r, err)
	}
	for _, tr := range r.Traces {
		n += tr.Records
	}
	st.Close()
	out, stderr, code := runVerifyArgs("-db", db, id)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("run %s: reproduced: %d records identical", id, n)) {
		t.Fatalf("verify -db of a server's run: %d %s %s", code, out, stderr)
	}
}

// A run that cannot be re-run here (its data file is gone, or no data
// folder is given) says so, naming the spec's field, and fails.
func TestVerifyMissingData(t *testing.T) {
	dir := t.TempDir()
	x, y := filepath.Join(dir, "x.csv"), filepath.Join(dir, "y.csv")
	os.WriteFile(x, []byte("1,0\n0,1\n1,1\n"), 0o644)
	os.WriteFile(y, []byte("1\n2\n3\n"), 0o644)
	t.Chdir(dir) // solve names the files as its user gives them: relative
	file, _ := solveBundle(t, dir, "run.json", "-problem", "lasso", "-x", "x.csv", "-y", "y.csv", "-algo", "afw", "-iters", "20", "-eval-every", "1")
	if out, _, code := runVerifyArgs("-data", dir, file); code != 0 {
		t.Fatalf("verify with the data: %d %s", code, out)
	}
	out, _, code := runVerifyArgs(file)
	if code != 1 || !strings.Contains(out, file+": cannot re-run it here: lasso: spec.params.x: is a path") || !strings.Contains(out, "-data DIR") {
		t.Fatalf("verify without a data folder: %d %s", code, out)
	}
	os.Remove(x)
	out, _, code = runVerifyArgs("-data", dir, file)
	if code != 1 || !strings.Contains(out, file+": cannot re-run it here: lasso: spec.params.x: no readable file") {
		t.Fatalf("verify without the data: %d %s", code, out)
	}
}

// A stored spec reads data files only inside verify's -data folder: one
// that names a file outside it (absolute, climbing, a link out) is refused
// before the file is opened, and neither the printed line nor the
// verification recorded (served to every client) quotes a byte of any
// file, not even of one inside the folder that does not parse.
func TestVerifyConfinesStoredSpecs(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	os.Mkdir(data, 0o755)
	const secret = "TOPSECRET:x:0:0:root:/root:/bin/bash"
	outside := filepath.Join(dir, "secret.csv")
	for name, content := range map[string]string{
		outside:                          secret + "\n",
		filepath.Join(data, "x.csv"):     "1,0\n0,1\n1,1\n",
		filepath.Join(data, "y.csv"):     "1\n2\n3\n",
		filepath.Join(data, "x-bad.csv"): secret + "\n",
	} {
		if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(data, "link.csv")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(data)
	file, _ := solveBundle(t, dir, "run.json", "-problem", "lasso", "-x", "x.csv", "-y", "y.csv", "-algo", "afw", "-iters", "20", "-eval-every", "1")
	db := filepath.Join(dir, "fwlab.db")
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	b := readBundleFile(t, file)
	ids := map[string]string{} // the value of params.x → its run
	for _, x := range []string{"x.csv", outside, "../secret.csv", "link.csv", "x-bad.csv"} {
		b.Spec.Params["x"] = x
		id, err := bundle.Put(ctx, st, b)
		if err != nil {
			t.Fatal(err)
		}
		ids[x] = id
	}
	st.Close()
	for x, rule := range map[string]string{
		"x.csv":         "reproduced",
		outside:         "not an absolute path",
		"../secret.csv": "climbs out",
		"link.csv":      "symbolic links are followed",
		"x-bad.csv":     `x-bad.csv:1:1: field 1: "…" is not a finite number`,
	} {
		out, stderr, code := runVerifyArgs("-db", db, "-data", data, ids[x])
		if (code == 0) != (rule == "reproduced") || !strings.Contains(out, rule) {
			t.Errorf("%s: %d %s %s, want %q", x, code, out, stderr, rule)
		}
		if strings.Contains(out+stderr, "TOPSECRET") {
			t.Errorf("%s: verify printed a file's content: %s %s", x, out, stderr)
		}
	}
	st, err = store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for x, id := range ids {
		vs, err := st.Verifications(ctx, id)
		if err != nil || len(vs) != 1 {
			t.Fatalf("%s: verifications %+v, %v", x, vs, err)
		}
		if strings.Contains(vs[0].Detail, "TOPSECRET") || (x != "x.csv" && vs[0].Outcome != store.VerifyFailed) {
			t.Errorf("%s: recorded %+v", x, vs[0])
		}
	}
}

// A run started paused, stepped three times and resumed verifies: its
// steps' evaluations, which the spec does not hold, are compared without
// their figures and said so plainly; every other record is compared
// whole, and the outcome is recorded with the same words.
func TestVerifySteppedRun(t *testing.T) {
	db := filepath.Join(t.TempDir(), "fwlab.db")
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	o := server.Options{}
	o.Session.Store = st
	srv, err := server.New(o)
	if err != nil {
		t.Fatal(err)
	}
	sp := spec.Run{Problem: "lasso", Iters: 300, Replications: 1, Seed: 4, StartPaused: true,
		Algorithms: []spec.Algo{{Algo: "afw"}, {Algo: "fista"}}}
	run, err := srv.Manager().Create(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	waitUntil := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("still waiting for %s", what)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitUntil("the run parked at k = 0", run.Parked)
	for k := 1; k <= 3; k++ {
		run.Step()
		waitUntil("a step", func() bool { return run.Parked() && run.Status().Records == 2*(k+1) })
	}
	run.Resume()
	<-run.Done()
	id := run.ID
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	n := 0
	r, err := st.Get(context.Background(), id)
	if err != nil || r.Status != store.StatusDone {
		t.Fatalf("the stepped run: %+v, %v", r, err)
	}
	for _, tr := range r.Traces {
		n += tr.Records
	}
	st.Close()
	out, stderr, code := runVerifyArgs("-db", db, id)
	want := fmt.Sprintf("run %s: reproduced: %d records identical (", id, n)
	if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "records evaluated at a step of a paused run") {
		t.Fatalf("verify -db of a stepped run: %d %s %s", code, out, stderr)
	}
	st, err = store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	vs, err := st.Verifications(context.Background(), id)
	if err != nil || len(vs) != 1 || vs[0].Outcome != store.VerifyReproduced || !strings.Contains(vs[0].Detail, "at a step of a paused run") {
		t.Fatalf("the recorded verification: %+v %v", vs, err)
	}
}
