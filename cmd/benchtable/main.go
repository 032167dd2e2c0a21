// Command benchtable reads `go test -bench` output and prints the project's
// benchmark table (benchmark, figure, baseline, ratio, target, met) for the
// targets in bench/targets.tsv; with -out it also writes the table, the
// command and the machine to a markdown file (BENCHMARKS.md).
//
//	go test -run '^$' -bench . ./... | tee bench.txt
//	go run ./cmd/benchtable -in bench.txt -cmd "make bench" -out BENCHMARKS.md
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
	r := stdin
	if *in != "-" {
		f, err := os.Open(*in)
		if err != nil {
			return fmt.Errorf("benchmark output: %w", err)
		}
		defer f.Close()
		r = f
	}
	res, err := benchtable.Parse(r)
	if err != nil {
		return fmt.Errorf("benchmark output %s: %w", *in, err)
	}
	rows := benchtable.Build(res, targets)
	table := benchtable.Markdown(rows)
	fmt.Fprint(stdout, table)
	if *out != "" {
		doc := document(table, res, *command, time.Now().UTC())
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

// document is the content of BENCHMARKS.md.
func document(table string, res *benchtable.Output, command string, now time.Time) string {
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
