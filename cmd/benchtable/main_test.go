package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/benchtable"
)

const benchOut = `goos: linux
goarch: amd64
pkg: github.com/fwlab/fwlab/internal/ssvm
cpu: Test CPU 9000
BenchmarkOCRPass/bcfw-2  5  100000000 ns/op  1.2 floors/pass  0 allocs/iter
BenchmarkOCRPass/bcfw-2  5  110000000 ns/op  1.4 floors/pass  0 allocs/iter
BenchmarkOCRPass/bcfw-2  5  120000000 ns/op  1.3 floors/pass  0 allocs/iter
ok  	github.com/fwlab/fwlab/internal/ssvm	3s
`

const targets = "benchmark\tunit\tbaseline\top\ttarget\n" +
	"BenchmarkOCRPass/bcfw\tfloors/pass\tone gonum product of all emissions\t<=\t1.5\n" +
	"BenchmarkOCRPass/bcfw\tallocs/iter\tnone\t<=\t0\n"

func write(t *testing.T, dir, name, s string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunWritesTable(t *testing.T) {
	dir := t.TempDir()
	tp := write(t, dir, "targets.tsv", targets)
	in := write(t, dir, "bench.txt", benchOut)
	md := filepath.Join(dir, "BENCHMARKS.md")
	var stdout bytes.Buffer
	if err := run([]string{"-targets", tp, "-in", in, "-out", md, "-cmd", "make bench", "-strict"}, nil, &stdout); err != nil {
		t.Fatal(err)
	}
	row := "| BenchmarkOCRPass/bcfw-2 | 110 ms/op | one gonum product of all emissions | 1.3 floors/pass | <= 1.5 floors/pass | yes |"
	if !strings.Contains(stdout.String(), row) {
		t.Errorf("stdout lacks %q:\n%s", row, stdout.String())
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"- command: `make bench`", "- machine: Test CPU 9000, ", "linux/amd64", "- Go: go", "- date: ", row} {
		if !strings.Contains(string(b), s) {
			t.Errorf("BENCHMARKS.md lacks %q:\n%s", s, b)
		}
	}
}

func TestRunStdinFailuresAndStrict(t *testing.T) {
	dir := t.TempDir()
	tp := write(t, dir, "targets.tsv", targets)
	var stdout bytes.Buffer
	err := run([]string{"-targets", tp}, strings.NewReader(benchOut+"--- FAIL: TestX (0.1s)\nFAIL\n"), &stdout)
	if err == nil || !strings.Contains(err.Error(), "--- FAIL: TestX") {
		t.Errorf("failures: error %v", err)
	}
	if !strings.Contains(stdout.String(), "| yes |") {
		t.Errorf("the table is printed before the failure is reported:\n%s", stdout.String())
	}
	slow := strings.NewReplacer("1.2 floors", "2.2 floors", "1.4 floors", "2.4 floors", "1.3 floors", "2.3 floors").Replace(benchOut)
	err = run([]string{"-targets", tp, "-strict"}, strings.NewReader(slow), &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "not met") {
		t.Errorf("strict: error %v", err)
	}
	if err := run([]string{"-targets", tp}, strings.NewReader(slow), &bytes.Buffer{}); err != nil {
		t.Errorf("not strict: %v", err)
	}
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	tp := write(t, dir, "targets.tsv", targets)
	bad := write(t, dir, "bad.tsv", "benchmark\tunit\tbaseline\top\ttarget\nA\tu\tb\t~\t1\n")
	for _, c := range []struct {
		args []string
		in   string
		want string
	}{
		{[]string{"-targets", filepath.Join(dir, "none.tsv")}, "", "targets: "},
		{[]string{"-targets", bad}, "", "line 2, column op"},
		{[]string{"-targets", tp, "-in", filepath.Join(dir, "none.txt")}, "", "benchmark output: "},
		{[]string{"-targets", tp}, "BenchmarkA 3 x ns/op\n", "line 1: value \"x\""},
		{[]string{"-targets", tp, "extra"}, "", "unexpected arguments"},
		{[]string{"-targets", tp, "-scaling", "-"}, "", "both be standard input"},
		{[]string{"-targets", tp, "-in", write(t, dir, "b.txt", benchOut), "-scaling", filepath.Join(dir, "none.txt")}, "", "benchmark output: "},
		{[]string{"-targets", tp, "-in", write(t, dir, "c.txt", benchOut), "-scaling", "-"}, "BenchmarkScaling/1x 1 5 ns/op 2 N\n", `no size metric "x"`},
	} {
		err := run(c.args, strings.NewReader(c.in), &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
}

// scalingOut is the output of a scaling run: GFLASSO at two sizes (spg
// reaching 1e-6 at one), the l1 ball at two.
const scalingOut = `pkg: github.com/fwlab/fwlab/internal/problems/gflasso
BenchmarkScaling/1x-2  1  100 ns/op  1 x  200 N  50 J  20 K  9 gap/F*/1e-9  0.1 bc-ssfw-as-ms/iter  100 bc-ssfw-as-iters/1e-6  0.01 bc-ssfw-as-s/1e-6  300 bc-ssfw-as-iters  0.01 bc-ssfw-as-best/1e-6  0.02 spg-ms/iter  20000 spg-iters  56000 spg-best/1e-6
BenchmarkScaling/10x-2  1  100 ns/op  10 x  1000 N  500 J  50 K  40 gap/F*/1e-9  1 bc-ssfw-as-ms/iter  1000 bc-ssfw-as-iters/1e-6  1 bc-ssfw-as-s/1e-6  3000 bc-ssfw-as-iters  0.01 bc-ssfw-as-best/1e-6  2 spg-ms/iter  5000 spg-iters/1e-6  10 spg-s/1e-6  5000 spg-iters  0.9 spg-best/1e-6
ok  	github.com/fwlab/fwlab/internal/problems/gflasso	10s
pkg: github.com/fwlab/fwlab/internal/problems/toy
BenchmarkL1BallScaling/p=200-2  1  100 ns/op  0 gap*/F*/1e-12  2 ms/iter  84 iters/1e-6  0.168 s/1e-6  84 iters  0.8 best/1e-6  200 p
BenchmarkL1BallScaling/p=2000-2  1  100 ns/op  0.2 gap*/F*/1e-12  20 ms/iter  840 iters/1e-6  16.8 s/1e-6  840 iters  0.8 best/1e-6  2000 p
ok  	github.com/fwlab/fwlab/internal/problems/toy	10s
`

func TestRunScalingTables(t *testing.T) {
	dir := t.TempDir()
	tp := write(t, dir, "targets.tsv", targets)
	in := write(t, dir, "bench.txt", benchOut)
	sc := write(t, dir, "scaling.txt", scalingOut)
	md := filepath.Join(dir, "BENCHMARKS.md")
	var stdout bytes.Buffer
	if err := run([]string{"-targets", tp, "-in", in, "-scaling", sc, "-out", md}, nil, &stdout); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"## How cost grows with size",
		"| 1x | 200×50×20 | 9.0e-09 | 0.1 | 100 | 0.01 | 0.02 | not reached in 20000 iterations (best 5.6e-02) |",
		"| 10x | 1000×500×50 | 4.0e-08 | 1 | 1000 | 1 | 2 | 10 |",
		"| 3x | not run | not run | not run | not run | not run | not run | not run |",
		"| exponent e (time ∝ size^e) |  |  | 1.00 | 1.00 | 2.00 | 2.00 | — |",
		"| p=2000 | 2.0e-13 | 20 | 840 | 16.8 |",
		"| p=10000 | not run | not run | not run | not run |",
		"| exponent e (figure ∝ p^e) |  | 1.00 | 1.00 | 2.00 |",
	} {
		if !strings.Contains(string(b), s) {
			t.Errorf("BENCHMARKS.md lacks %q:\n%s", s, b)
		}
		if !strings.Contains(stdout.String(), s) {
			t.Errorf("stdout lacks %q", s)
		}
	}
	// The main table is unchanged by the second file.
	if !strings.Contains(string(b), "| BenchmarkOCRPass/bcfw-2 | 110 ms/op |") {
		t.Errorf("main table:\n%s", b)
	}
}

func TestDocumentNamesMachine(t *testing.T) {
	res, err := benchtable.Parse(strings.NewReader("BenchmarkA 3 5 ns/op\n"))
	if err != nil {
		t.Fatal(err)
	}
	doc := document("TABLE\n", "SCALING\n", res, "", time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC))
	if !strings.Contains(doc, "- date: 2026-01-02 03:04 UTC") || !strings.HasSuffix(doc, "TABLE\n\nSCALING\n") || strings.Contains(doc, "command:") {
		t.Errorf("document:\n%s", doc)
	}
	if strings.Contains(doc, "machine: , ") {
		t.Errorf("no CPU model:\n%s", doc)
	}
}

// A rewrite of BENCHMARKS.md keeps its hand-written part (from the mark to
// the end) and replaces the rest.
func TestRunKeepsHandWritten(t *testing.T) {
	dir := t.TempDir()
	tp := write(t, dir, "targets.tsv", targets)
	in := write(t, dir, "bench.txt", benchOut)
	hand := HandWrittenMark + "\n\n## Against scikit-learn\n\nmeasured by hand\n"
	md := write(t, dir, "BENCHMARKS.md", "# Benchmarks\n\nOLD TABLE\n\n"+hand)
	for range 2 {
		if err := run([]string{"-targets", tp, "-in", in, "-out", md}, nil, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(md)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "OLD TABLE") || !strings.HasSuffix(string(b), "\n"+hand) || strings.Count(string(b), HandWrittenMark) != 1 {
			t.Fatalf("BENCHMARKS.md after the rewrite:\n%s", b)
		}
	}
}
