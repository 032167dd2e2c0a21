package scenarios

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

// Golden traces (ARCHITECTURE.md, "Vertex representation"): the first records of a few fixed runs are kept
// in testdata/golden, so that any change in the numbers a user would see is
// a deliberate, reviewed decision rather than an accident. Every field but
// the wall time is compared exactly (floats as their shortest round-trip
// text). After a deliberate change, rewrite them with
//
//	go test ./internal/scenarios -run TestGoldenTraces -update
//
// and say in the commit message why the numbers moved.
var update = flag.Bool("update", false, "rewrite the golden traces in testdata/golden from the current code")

// goldenIters is the length of each pinned run.
const goldenIters = 30

type goldenCase struct {
	name       string
	problem    string
	params     spec.Params
	algo       spec.Algo
	buildSeed  int64
	methodSeed int64
	evalEvery  int
}

func goldenCases() []goldenCase {
	return []goldenCase{
		{name: "toy-polygon-ssfw-as", problem: "toy-polygon", algo: spec.Algo{Algo: "ssfw-as"}, buildSeed: 1, methodSeed: 11, evalEvery: 1},
		{name: "toy-polygon-fista", problem: "toy-polygon", algo: spec.Algo{Algo: "fista"}, buildSeed: 1, methodSeed: 11, evalEvery: 1},
		{name: "lasso-ssfw-as-paper", problem: "lasso", algo: spec.Algo{Algo: "ssfw-as", Schedule: "paper", Stepsize: "paper"}, buildSeed: 2, methodSeed: 12, evalEvery: 1},
		{name: "lasso-afw", problem: "lasso", algo: spec.Algo{Algo: "afw"}, buildSeed: 2, methodSeed: 12, evalEvery: 1},
		{name: "simplex-pfw", problem: "simplex", algo: spec.Algo{Algo: "pfw"}, buildSeed: 3, methodSeed: 13, evalEvery: 1},
		{name: "svm-dual-ssfw-as", problem: "svm-dual", algo: spec.Algo{Algo: "ssfw-as"}, buildSeed: 4, methodSeed: 14, evalEvery: 1},
		{name: "ssvm-chain-bcfw-as", problem: "ssvm-chain", params: spec.Params{"train": "40", "test": "10"},
			algo: spec.Algo{Algo: "bcfw-as"}, buildSeed: 5, methodSeed: 15, evalEvery: 3},
		{name: "gflasso-bc-ssfw-as-r2", problem: "gflasso", algo: spec.Algo{Algo: "bc-ssfw-as", R: 2}, buildSeed: 6, methodSeed: 16, evalEvery: 1},
	}
}

// fmtG formats a float exactly (the shortest text that parses back to it).
func fmtG(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// goldenField is one key of a golden line with its value as JSON text.
type goldenField struct{ key, val string }

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func optFloat(p *float64) string {
	if p == nil {
		return "null"
	}
	return jsonText(fmtG(*p))
}

// goldenFields flattens a record: every field except time_s, floats as exact
// text, Extra as one "extra.<name>" key per metric in sorted order.
func goldenFields(r solver.Record) []goldenField {
	fs := []goldenField{
		{"k", strconv.Itoa(r.K)},
		{"passes", jsonText(fmtG(r.Passes))},
		{"step", jsonText(r.Step)},
		{"gamma", jsonText(fmtG(r.Gamma))},
		{"batch", strconv.Itoa(r.Batch)},
		{"active", strconv.Itoa(r.Active)},
		{"fw_steps", strconv.Itoa(r.FWSteps)},
		{"away_steps", strconv.Itoa(r.AwaySteps)},
		{"drops", strconv.Itoa(r.Drops)},
		{"cleanups", strconv.Itoa(r.Cleanups)},
		{"objective", optFloat(r.Objective)},
		{"gap", optFloat(r.Gap)},
		{"grad_err", optFloat(r.GradErr)},
	}
	keys := make([]string, 0, len(r.Extra))
	for k := range r.Extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fs = append(fs, goldenField{"extra." + k, jsonText(fmtG(r.Extra[k]))})
	}
	return fs
}

func goldenLine(fs []goldenField) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, f := range fs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(jsonText(f.key))
		b.WriteByte(':')
		b.WriteString(f.val)
	}
	b.WriteByte('}')
	return b.String()
}

// header describes the run that produced a golden file (its first line).
func (c goldenCase) header(a spec.Algo) string {
	return jsonText(map[string]any{
		"golden": c.name, "problem": c.problem, "params": c.params, "algorithm": a,
		"build_seed": c.buildSeed, "method_seed": c.methodSeed, "iters": goldenIters, "eval_every": c.evalEvery,
	})
}

// runGolden builds the case and returns its header and record lines.
func runGolden(t *testing.T, c goldenCase) (string, []string) {
	t.Helper()
	r := spec.Run{Problem: c.problem, Params: c.params, Algorithms: []spec.Algo{c.algo},
		Seed: c.buildSeed, Iters: goldenIters, EvalEvery: c.evalEvery}
	s, v, err := Resolve(&r)
	if err != nil {
		t.Fatalf("resolve: %v", err)
	}
	inst, err := s.Build(context.Background(), v, r.Seed)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	m, err := inst.Method(r.Algorithms[0], LimitsOf(&r), c.methodSeed)
	if err != nil {
		t.Fatalf("method: %v", err)
	}
	var lines []string
	if _, err := m.Run(context.Background(), solver.RecorderFunc(func(rec solver.Record) {
		lines = append(lines, goldenLine(goldenFields(rec)))
	})); err != nil {
		t.Fatalf("run: %v", err)
	}
	return c.header(r.Algorithms[0]), lines
}

func TestGoldenTraces(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		// Other architectures fuse multiply-adds and use other math kernels,
		// which moves the last bits; the traces are pinned for amd64.
		t.Skipf("golden traces are recorded on amd64 (GOAMD64=v1); this is %s", runtime.GOARCH)
	}
	dir := filepath.Join("testdata", "golden")
	for _, c := range goldenCases() {
		t.Run(c.name, func(t *testing.T) {
			if _, ok := Lookup(c.problem); !ok {
				t.Skipf("problem %s is not registered", c.problem)
			}
			path := filepath.Join(dir, c.name+".jsonl")
			header, lines := runGolden(t, c)
			// the same spec and seeds give the same trace within one build,
			// and a block method's trace does not depend on its worker count
			variants := []goldenCase{c}
			if c.algo.Algo == "bc-ssfw-as" || c.algo.Algo == "bcfw" {
				for _, w := range []int{1, 3} {
					v := c
					v.algo.Workers = w
					variants = append(variants, v)
				}
			}
			for _, v := range variants {
				_, again := runGolden(t, v)
				if d := firstDiff(lines, again); d != "" {
					t.Fatalf("a second run with %d workers differs (the run is not deterministic): %s", v.algo.Workers, d)
				}
			}
			if *update {
				var b bytes.Buffer
				b.WriteString(header + "\n")
				for _, l := range lines {
					b.WriteString(l + "\n")
				}
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("wrote %s (%d records)", path, len(lines))
				return
			}
			how := fmt.Sprintf("if this change in the numbers is deliberate, run `go test ./internal/scenarios -run 'TestGoldenTraces/%s' -update` and commit %s, saying why in the commit message", c.name, path)
			want, err := readGolden(path)
			if err != nil {
				t.Fatalf("%v; %s", err, how)
			}
			if want[0] != header {
				t.Fatalf("%s: the pinned run's spec changed:\n golden %s\n now    %s\n%s", path, want[0], header, how)
			}
			compareGolden(t, path, want[1:], lines, how)
		})
	}
}

func readGolden(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("golden trace missing: %v", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			out = append(out, l)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: empty golden trace", path)
	}
	return out, nil
}

// parseLine decodes a golden line into its fields (values as JSON text).
func parseLine(l string) (map[string]string, []string, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(l), &raw); err != nil {
		return nil, nil, err
	}
	m := make(map[string]string, len(raw))
	keys := make([]string, 0, len(raw))
	for k, v := range raw {
		m[k] = string(v)
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return m, keys, nil
}

// compareGolden reports each changed field (up to a handful) by record and name.
func compareGolden(t fataler, path string, want, got []string, how string) {
	t.Helper()
	var diffs []string
	for i := 0; i < len(want) && i < len(got) && len(diffs) < 8; i++ {
		if want[i] == got[i] {
			continue
		}
		w, wk, err := parseLine(want[i])
		if err != nil {
			t.Fatalf("%s line %d: %v", path, i+2, err)
		}
		g, gk, _ := parseLine(got[i])
		keys := append(append([]string(nil), wk...), gk...)
		sort.Strings(keys)
		for j, k := range keys {
			if j > 0 && keys[j-1] == k {
				continue
			}
			wv, wok := w[k]
			gv, gok := g[k]
			switch {
			case !wok:
				diffs = append(diffs, fmt.Sprintf("record %d (k=%s): new field %s = %s", i, g["k"], k, gv))
			case !gok:
				diffs = append(diffs, fmt.Sprintf("record %d (k=%s): field %s (golden %s) is gone", i, w["k"], k, wv))
			case wv != gv:
				diffs = append(diffs, fmt.Sprintf("record %d (k=%s): field %s changed: golden %s, now %s", i, w["k"], k, wv, gv))
			}
		}
	}
	if len(want) != len(got) {
		diffs = append(diffs, fmt.Sprintf("%d records, golden has %d", len(got), len(want)))
	}
	if len(diffs) > 0 {
		t.Fatalf("%s: the trace changed:\n  %s\n%s", path, strings.Join(diffs, "\n  "), how)
	}
}

func firstDiff(a, b []string) string {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return fmt.Sprintf("record %d: %s vs %s", i, a[i], b[i])
		}
	}
	if len(a) != len(b) {
		return fmt.Sprintf("%d vs %d records", len(a), len(b))
	}
	return ""
}

// TestGoldenCompareReports checks the comparison itself: a changed field is
// reported by record, field and both values, with the way to update.
func TestGoldenCompareReports(t *testing.T) {
	one := solver.Record{K: 3, Passes: 0.1, Step: solver.StepAway, Gamma: 0.25, Batch: 7, Active: 2,
		Objective: solver.F(1.5), Gap: solver.F(1e-3), Extra: map[string]float64{"nnz": 4}}
	two := one
	two.Gamma = 0.25000000000000006
	two.Extra = map[string]float64{"nnz": 4, "new": 1}
	ft := &fakeT{}
	compareGolden(ft, "x.jsonl", []string{goldenLine(goldenFields(one))}, []string{goldenLine(goldenFields(two))}, "run with -update")
	for _, w := range []string{"record 0 (k=3): field gamma changed: golden \"0.25\", now \"0.25000000000000006\"",
		"new field extra.new", "-update"} {
		if !strings.Contains(ft.msg, w) {
			t.Errorf("report %q lacks %q", ft.msg, w)
		}
	}
	// the wall time is not compared
	three := one
	three.Time = 12.5
	if goldenLine(goldenFields(one)) != goldenLine(goldenFields(three)) {
		t.Error("time_s is part of the golden line")
	}
}

// fataler is the part of testing.T that compareGolden uses.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// fakeT captures a comparison failure.
type fakeT struct{ msg string }

func (f *fakeT) Helper()                   {}
func (f *fakeT) Fatalf(s string, a ...any) { f.msg = fmt.Sprintf(s, a...) }
