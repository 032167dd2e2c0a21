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
	} {
		err := run(c.args, strings.NewReader(c.in), &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
}

func TestDocumentNamesMachine(t *testing.T) {
	res, err := benchtable.Parse(strings.NewReader("BenchmarkA 3 5 ns/op\n"))
	if err != nil {
		t.Fatal(err)
	}
	doc := document("TABLE\n", res, "", time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC))
	if !strings.Contains(doc, "- date: 2026-01-02 03:04 UTC") || !strings.HasSuffix(doc, "TABLE\n") || strings.Contains(doc, "command:") {
		t.Errorf("document:\n%s", doc)
	}
	if strings.Contains(doc, "machine: , ") {
		t.Errorf("no CPU model:\n%s", doc)
	}
}
