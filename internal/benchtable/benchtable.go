// Package benchtable turns the text output of `go test -bench` into the
// project's benchmark table: one row per target of bench/targets.tsv with
// the benchmark's figure, the baseline, the measured ratio, the target and
// whether it is met. Figures repeated by -count are summarised by their
// median.
package benchtable

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Result is one benchmark's figures, every metric unit with the values of
// all its runs (one per -count).
type Result struct {
	Pkg   string // from the preceding "pkg:" line, "" if none
	Name  string // without the -GOMAXPROCS suffix
	Procs int    // the suffix, 1 when absent
	Runs  int
	Iters []int64
	Units []string // in order of first appearance
	Vals  map[string][]float64
}

// Median returns the median of the unit's values and whether there are any.
func (r *Result) Median(unit string) (float64, bool) {
	v := r.Vals[unit]
	if len(v) == 0 {
		return 0, false
	}
	return median(v), true
}

func median(x []float64) float64 {
	s := slices.Clone(x)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Output is a parsed `go test -bench` output.
type Output struct {
	Results []*Result // in order of first appearance
	Env     map[string]string
	// Failures lists the lines that report a failed test or package
	// ("--- FAIL", "FAIL", "panic:").
	Failures []string
}

var procsSuffix = regexp.MustCompile(`^(.*)-(\d+)$`)

// Parse reads `go test -bench` output. Lines that are not benchmark
// results (test logs, PASS/ok lines) are skipped; the goos, goarch, pkg and
// cpu header lines are kept in Env (pkg also names the results after it).
// A line that starts like a result ("Benchmark…" followed by an iteration
// count) but is malformed is an error naming the line.
func Parse(r io.Reader) (*Output, error) {
	out := &Output{Env: map[string]string{}}
	byKey := map[string]*Result{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	pkg := ""
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		trimmed := strings.TrimSpace(text)
		switch {
		case strings.HasPrefix(trimmed, "--- FAIL"), trimmed == "FAIL", strings.HasPrefix(trimmed, "FAIL\t"),
			strings.HasPrefix(trimmed, "FAIL "), strings.HasPrefix(trimmed, "panic:"):
			out.Failures = append(out.Failures, trimmed)
			continue
		}
		for _, key := range []string{"goos", "goarch", "pkg", "cpu"} {
			if v, ok := strings.CutPrefix(text, key+": "); ok {
				out.Env[key] = strings.TrimSpace(v)
				if key == "pkg" {
					pkg = strings.TrimSpace(v)
				}
			}
		}
		if !strings.HasPrefix(text, "Benchmark") {
			continue
		}
		f := strings.Fields(text)
		if len(f) < 2 {
			continue // a benchmark's name printed before its log output
		}
		iters, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue // "BenchmarkX  some log text": not a result line
		}
		if iters < 1 {
			return nil, fmt.Errorf("line %d: iteration count must be positive, got %d", line, iters)
		}
		if len(f)%2 != 0 {
			return nil, fmt.Errorf("line %d: want value-unit pairs after the iteration count, got %d fields", line, len(f)-2)
		}
		name, procs := f[0], 1
		if m := procsSuffix.FindStringSubmatch(name); m != nil {
			if p, err := strconv.Atoi(m[2]); err == nil && p > 0 {
				name, procs = m[1], p
			}
		}
		key := pkg + "\x00" + f[0]
		res := byKey[key]
		if res == nil {
			res = &Result{Pkg: pkg, Name: name, Procs: procs, Vals: map[string][]float64{}}
			byKey[key] = res
			out.Results = append(out.Results, res)
		}
		res.Runs++
		res.Iters = append(res.Iters, iters)
		for i := 2; i < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil || math.IsNaN(v) {
				return nil, fmt.Errorf("line %d: value %q of unit %q is not a number", line, f[i], f[i+1])
			}
			unit := f[i+1]
			if _, ok := res.Vals[unit]; !ok {
				res.Units = append(res.Units, unit)
			}
			res.Vals[unit] = append(res.Vals[unit], v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	return out, nil
}

// Merge adds the results, environment and failures of o2 to o (a second
// benchmark run of the same `make bench`): a result with the package and
// name of one of o's (GOMAXPROCS suffix included) adds its runs to it.
func (o *Output) Merge(o2 *Output) {
	byKey := map[string]*Result{}
	key := func(r *Result) string { return fmt.Sprintf("%s\x00%s-%d", r.Pkg, r.Name, r.Procs) }
	for _, r := range o.Results {
		byKey[key(r)] = r
	}
	for _, r := range o2.Results {
		have := byKey[key(r)]
		if have == nil {
			o.Results = append(o.Results, r)
			byKey[key(r)] = r
			continue
		}
		have.Runs += r.Runs
		have.Iters = append(have.Iters, r.Iters...)
		for _, u := range r.Units {
			if _, ok := have.Vals[u]; !ok {
				have.Units = append(have.Units, u)
			}
			have.Vals[u] = append(have.Vals[u], r.Vals[u]...)
		}
	}
	for k, v := range o2.Env {
		if _, ok := o.Env[k]; !ok {
			o.Env[k] = v
		}
	}
	o.Failures = append(o.Failures, o2.Failures...)
}

// Target is one line of bench/targets.tsv.
type Target struct {
	Line     int
	Pattern  string // regular expression matched against the whole benchmark name
	re       *regexp.Regexp
	Unit     string
	Baseline string
	Op       string // <=, <, >=, >, ==
	Value    float64
}

// Met reports whether v satisfies the target.
func (t *Target) Met(v float64) bool {
	switch t.Op {
	case "<=":
		return v <= t.Value
	case "<":
		return v < t.Value
	case ">=":
		return v >= t.Value
	case ">":
		return v > t.Value
	case "==":
		return v == t.Value
	}
	return false
}

// Matches reports whether the benchmark name (without its -GOMAXPROCS
// suffix) matches the target's pattern as a whole.
func (t *Target) Matches(name string) bool { return t.re.MatchString(name) }

var targetHeader = []string{"benchmark", "unit", "baseline", "op", "target"}

// ParseTargets reads the tab-separated targets file: a header line
// "benchmark unit baseline op target", then one target per line. Blank
// lines and lines starting with # are skipped. Errors name the line and
// the column.
func ParseTargets(r io.Reader) ([]Target, error) {
	sc := bufio.NewScanner(r)
	var out []Target
	line := 0
	header := false
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.Split(text, "\t")
		if !header {
			if !slices.Equal(f, targetHeader) {
				return nil, fmt.Errorf("line %d: want the header %q (tab separated), got %q", line, strings.Join(targetHeader, " "), text)
			}
			header = true
			continue
		}
		if len(f) != 5 {
			return nil, fmt.Errorf("line %d: want 5 tab-separated columns (%s), got %d", line, strings.Join(targetHeader, ", "), len(f))
		}
		t := Target{Line: line, Pattern: f[0], Unit: f[1], Baseline: f[2], Op: f[3]}
		if t.Pattern == "" {
			return nil, fmt.Errorf("line %d, column benchmark: empty", line)
		}
		re, err := regexp.Compile("^(?:" + t.Pattern + ")$")
		if err != nil {
			return nil, fmt.Errorf("line %d, column benchmark: not a regular expression: %v", line, err)
		}
		t.re = re
		if t.Unit == "" || strings.ContainsAny(t.Unit, " ") {
			return nil, fmt.Errorf("line %d, column unit: want a metric unit without spaces, got %q", line, t.Unit)
		}
		switch t.Op {
		case "<=", "<", ">=", ">", "==":
		default:
			return nil, fmt.Errorf("line %d, column op: want one of <=, <, >=, >, ==, got %q", line, t.Op)
		}
		v, err := strconv.ParseFloat(f[4], 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("line %d, column target: want a finite number, got %q", line, f[4])
		}
		t.Value = v
		out = append(out, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	if !header {
		return nil, fmt.Errorf("line 1: want the header %q, the file is empty", strings.Join(targetHeader, " "))
	}
	return out, nil
}

// Row is one row of the table.
type Row struct {
	Name     string // benchmark name, with the GOMAXPROCS suffix when not 1
	Figure   string // the benchmark's own figure: median time per operation
	Baseline string
	Unit     string
	Ratio    float64 // median of the target's unit
	Runs     int
	Found    bool // a benchmark matched and reported the unit
	Target   string
	Met      bool
}

// Build joins the results with the targets: one row per (target, matching
// benchmark), and a row marked as not run for a target that no benchmark
// matched with its unit.
func Build(out *Output, targets []Target) []Row {
	var rows []Row
	for i := range targets {
		t := &targets[i]
		found := false
		for _, r := range out.Results {
			if !t.Matches(r.Name) {
				continue
			}
			v, ok := r.Median(t.Unit)
			if !ok {
				continue
			}
			found = true
			name := r.Name
			if r.Procs != 1 {
				name = fmt.Sprintf("%s-%d", r.Name, r.Procs)
			}
			fig := ""
			if ns, ok := r.Median("ns/op"); ok {
				fig = FormatDuration(ns) + "/op"
			}
			rows = append(rows, Row{Name: name, Figure: fig, Baseline: t.Baseline, Unit: t.Unit, Ratio: v,
				Runs: r.Runs, Found: true, Target: t.Op + " " + FormatNumber(t.Value), Met: t.Met(v)})
		}
		if !found {
			rows = append(rows, Row{Name: t.Pattern, Baseline: t.Baseline, Unit: t.Unit,
				Target: t.Op + " " + FormatNumber(t.Value)})
		}
	}
	return rows
}

// FormatNumber prints a figure with three significant digits.
func FormatNumber(v float64) string {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// FormatDuration prints nanoseconds with a unit (ns, µs, ms, s).
func FormatDuration(ns float64) string {
	switch a := math.Abs(ns); {
	case a >= 1e9:
		return FormatNumber(ns/1e9) + " s"
	case a >= 1e6:
		return FormatNumber(ns/1e6) + " ms"
	case a >= 1e3:
		return FormatNumber(ns/1e3) + " µs"
	}
	return FormatNumber(ns) + " ns"
}

// Markdown renders the rows as a markdown table.
func Markdown(rows []Row) string {
	var b strings.Builder
	b.WriteString("| benchmark | figure | baseline | ratio | target | met |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, r := range rows {
		ratio, met := "not run", "—"
		if r.Found {
			ratio = FormatNumber(r.Ratio) + " " + r.Unit
			met = "no"
			if r.Met {
				met = "yes"
			}
		}
		target := r.Target + " " + r.Unit
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", cell(r.Name), cell(r.Figure), cell(r.Baseline), cell(ratio), cell(target), met)
	}
	return b.String()
}

// cell escapes the characters that would break a markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}
