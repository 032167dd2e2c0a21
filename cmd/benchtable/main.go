// Command benchtable reads `go test -bench` output and prints the project's
// benchmark table (benchmark, figure, baseline, ratio, target, met) for the
// targets in bench/targets.tsv, then the tables of how cost grows with size
// (benchtable.Scalings, with fitted exponents) from the scaling benchmarks'
// output (-scaling, or the same -in); with -out it also writes the tables,
// the command and the machine to a markdown file (BENCHMARKS.md).
//
//	go test -run '^$' -bench . -skip '^(BenchmarkScaling|BenchmarkL1BallScaling)$' ./... | tee bench.txt
//	go test -run '^$' -bench '^(BenchmarkScaling|BenchmarkL1BallScaling)$' -benchtime 1x \
//		./internal/problems/gflasso/ ./internal/problems/toy/ | tee bench-scaling.txt
//	go run ./cmd/benchtable -in bench.txt -scaling bench-scaling.txt -cmd "make bench" -out BENCHMARKS.md
//
// It exits with status 1 when the output reports a failed test or package,
// and with -strict also when a target is not met or not run.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/fwlab/fwlab/internal/benchtable"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
}

func run(args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("benchtable", flag.ContinueOnError)
	targetsPath := fs.String("targets", "bench/targets.tsv", "targets file (tab separated: benchmark unit baseline op target)")
	in := fs.String("in", "-", "go test -bench output to read (- for standard input)")
	scaling := fs.String("scaling", "", "a second go test -bench output, of the scaling benchmarks (none if empty)")
	out := fs.String("out", "", "markdown file to write the table, command and machine to (none if empty)")
	command := fs.String("cmd", "", "the command that produced the benchmark output, for -out")
	strict := fs.Bool("strict", false, "exit with status 1 when a target is not met or not run")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	tf, err := os.Open(*targetsPath)
	if err != nil {
		return fmt.Errorf("targets: %w", err)
	}
	targets, err := benchtable.ParseTargets(tf)
	tf.Close()
	if err != nil {
		return fmt.Errorf("targets %s: %w", *targetsPath, err)
	}
	res, err := readOutput(*in, stdin)
	if err != nil {
		return err
	}
	if *scaling != "" {
		if *scaling == "-" && *in == "-" {
			return fmt.Errorf("-in and -scaling cannot both be standard input")
		}
		res2, err := readOutput(*scaling, stdin)
		if err != nil {
			return err
		}
		res.Merge(res2)
	}
	rows := benchtable.Build(res, targets)
	table := benchtable.Markdown(rows)
	scal, err := scalingTables(res)
	if err != nil {
		return fmt.Errorf("benchmark output: %w", err)
	}
	fmt.Fprint(stdout, table)
	fmt.Fprint(stdout, "\n"+scal)
	if *out != "" {
		doc := document(table, scal, res, *command, time.Now().UTC())
		// the hand-written sections of the file it replaces are kept
		old, err := os.ReadFile(*out)
		if err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("reading %s: %w", *out, err)
		}
		doc += handWritten(string(old))
		if err := os.WriteFile(*out, []byte(doc), 0o644); err != nil {
			return fmt.Errorf("writing the table: %w", err)
		}
		fmt.Fprintf(stdout, "\n(written to %s)\n", *out)
	}
	if len(res.Failures) > 0 {
		return fmt.Errorf("the benchmark run reports failures:\n%s", strings.Join(res.Failures, "\n"))
	}
	if *strict {
		for _, row := range rows {
			if !row.Found || !row.Met {
				return fmt.Errorf("target %s %s of %s is not met", row.Target, row.Unit, row.Name)
			}
		}
	}
	return nil
}

// readOutput parses the benchmark output in the file path (standard input
// for "-").
func readOutput(path string, stdin io.Reader) (*benchtable.Output, error) {
	r := stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("benchmark output: %w", err)
		}
		defer f.Close()
		r = f
	}
	res, err := benchtable.Parse(r)
	if err != nil {
		return nil, fmt.Errorf("benchmark output %s: %w", path, err)
	}
	return res, nil
}

// scalingTables renders the tables of benchtable.Scalings under a heading.
func scalingTables(res *benchtable.Output) (string, error) {
	var b strings.Builder
	b.WriteString("## How cost grows with size\n\n")
	b.WriteString("CPU time on one core (`GOMAXPROCS` 1): the process's CPU time from one record to the\n")
	b.WriteString("next, over the iterations that were not evaluated; a time to a relative error of 1e-6 is\n")
	b.WriteString("that times the iterations it took. An exponent is the slope of the least-squares line\n")
	b.WriteString("through (log size, log figure); a size the run did not include says \"not run\".\n")
	for _, t := range benchtable.Scalings {
		s, err := benchtable.BuildScaling(res, t)
		if err != nil {
			return "", err
		}
		b.WriteString("\n" + s.Markdown())
	}
	return b.String(), nil
}

// HandWrittenMark starts the part of BENCHMARKS.md that is written by hand
// (measurements against other tools, which need more than Go): benchtable
// keeps it, from the mark to the end, when it rewrites the file.
const HandWrittenMark = "<!-- hand-written: benchtable keeps everything below this line -->"

// handWritten returns the hand-written part of a BENCHMARKS.md, the mark
// included, after a blank line ("" when it has none).
func handWritten(old string) string {
	i := strings.Index(old, HandWrittenMark)
	if i < 0 {
		return ""
	}
	return "\n" + old[i:]
}

// document is the generated content of BENCHMARKS.md.
func document(table, scaling string, res *benchtable.Output, command string, now time.Time) string {
	var b strings.Builder
	b.WriteString("# Benchmarks\n\n")
	b.WriteString("The latest benchmark table written by `make bench` (`cmd/benchtable`). Each ratio is\n")
	b.WriteString("measured against its baseline in the same benchmark run; the targets are in\n")
	b.WriteString("`bench/targets.tsv`. A figure repeated by `-count` is the median of its runs; *figure* is\n")
	b.WriteString("the median time of one benchmark operation (for the OCR passes: a pass and its floor).\n\n")
	if command != "" {
		fmt.Fprintf(&b, "- command: `%s`\n", command)
	}
	fmt.Fprintf(&b, "- machine: %s, %d cores, %s/%s\n", cpuModel(res), runtime.NumCPU(), env(res, "goos", runtime.GOOS), env(res, "goarch", runtime.GOARCH))
	fmt.Fprintf(&b, "- Go: %s\n", runtime.Version())
	fmt.Fprintf(&b, "- date: %s\n\n", now.Format("2006-01-02 15:04 MST"))
	b.WriteString(table)
	b.WriteString("\n" + scaling)
	return b.String()
}

func env(res *benchtable.Output, key, def string) string {
	if v := res.Env[key]; v != "" {
		return v
	}
	return def
}

// cpuModel is the "cpu:" line of the benchmark output, else the model name
// in /proc/cpuinfo, else "unknown CPU".
func cpuModel(res *benchtable.Output) string {
	if v := res.Env["cpu"]; v != "" {
		return v
	}
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}
