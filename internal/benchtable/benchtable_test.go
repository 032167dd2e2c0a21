package benchtable

import (
	"math"
	"strings"
	"testing"
)

const sample = `goos: linux
goarch: amd64
pkg: github.com/fwlab/fwlab/internal/ssvm
cpu: AMD EPYC 7B13
BenchmarkOCRPass/bcfw-2         	       7	 205259764 ns/op	         0 B/pass	         0 allocs/iter	         2.174 floors/pass
BenchmarkOCRPass/bcfw-as-2      	       7	 219298641 ns/op	    620125 B/pass	         1.275 allocs/iter	         2.261 floors/pass
BenchmarkOCRPass/bcfw-2         	       8	 195000000 ns/op	         0 B/pass	         0 allocs/iter	         1.9 floors/pass
    bench_test.go:12: some log line
BenchmarkOCRPass/bcfw-2         	       6	 199000000 ns/op	         0 B/pass	         0 allocs/iter	         2.5 floors/pass
PASS
ok  	github.com/fwlab/fwlab/internal/ssvm	12.3s
pkg: github.com/fwlab/fwlab/internal/solver
BenchmarkSSFW	     100	  1000 ns/op	  0.7 full-grads/iter	  64 B/op	  2 allocs/op
BenchmarkLog
    x_test.go:3: started
BenchmarkLog-2 	 50	 20 ns/op
ok  	github.com/fwlab/fwlab/internal/solver	3.1s
`

func TestParse(t *testing.T) {
	out, err := Parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if out.Env["cpu"] != "AMD EPYC 7B13" || out.Env["goos"] != "linux" || out.Env["goarch"] != "amd64" {
		t.Errorf("env %v", out.Env)
	}
	if len(out.Failures) != 0 {
		t.Errorf("failures %v", out.Failures)
	}
	want := []struct {
		pkg, name string
		procs     int
		runs      int
		unit      string
		median    float64
	}{
		{"github.com/fwlab/fwlab/internal/ssvm", "BenchmarkOCRPass/bcfw", 2, 3, "floors/pass", 2.174},
		{"github.com/fwlab/fwlab/internal/ssvm", "BenchmarkOCRPass/bcfw-as", 2, 1, "B/pass", 620125},
		{"github.com/fwlab/fwlab/internal/solver", "BenchmarkSSFW", 1, 1, "full-grads/iter", 0.7},
		{"github.com/fwlab/fwlab/internal/solver", "BenchmarkLog", 2, 1, "ns/op", 20},
	}
	if len(out.Results) != len(want) {
		t.Fatalf("%d results, want %d: %+v", len(out.Results), len(want), out.Results)
	}
	for i, w := range want {
		r := out.Results[i]
		if r.Pkg != w.pkg || r.Name != w.name || r.Procs != w.procs || r.Runs != w.runs {
			t.Errorf("result %d: %s %s procs %d runs %d, want %+v", i, r.Pkg, r.Name, r.Procs, r.Runs, w)
		}
		if m, ok := r.Median(w.unit); !ok || m != w.median {
			t.Errorf("result %d: median %s = %v (%v), want %v", i, w.unit, m, ok, w.median)
		}
	}
	if got := out.Results[0].Units; strings.Join(got, ",") != "ns/op,B/pass,allocs/iter,floors/pass" {
		t.Errorf("units in order %v", got)
	}
	if m, _ := out.Results[0].Median("ns/op"); m != 199000000 {
		t.Errorf("median ns/op %v", m)
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		x    []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{3, 1}, 2},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		if got := median(c.x); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.x, got, c.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"BenchmarkA 10 5", "line 1: want value-unit pairs"},
		{"x\nBenchmarkA 10 abc ns/op", "line 2: value \"abc\" of unit \"ns/op\""},
		{"BenchmarkA 0 5 ns/op", "line 1: iteration count must be positive"},
		{"BenchmarkA 10 NaN ns/op", "not a number"},
	} {
		_, err := Parse(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q): error %v, want it to contain %q", c.in, err, c.want)
		}
	}
}

func TestParseFailures(t *testing.T) {
	in := "--- FAIL: TestX (0.1s)\nFAIL\tgithub.com/fwlab/fwlab/internal/x\t0.2s\npanic: boom\nok  \tgithub.com/y\t1s\n"
	out, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Failures) != 3 {
		t.Fatalf("failures %q, want 3", out.Failures)
	}
}

const targetsFile = "benchmark\tunit\tbaseline\top\ttarget\n" +
	"# comment\n" +
	"\n" +
	"BenchmarkOCRPass/bcfw\tfloors/pass\tone gonum product of all emissions\t<=\t1.5\n" +
	"BenchmarkOCRPass/bcfw\tallocs/iter\tnone\t<=\t0\n" +
	"BenchmarkOCRPass/bcfw-as\tfloors/pass\tone gonum product of all emissions\t<=\t1.5\n" +
	"BenchmarkMissing\tx-spg-time\tspg\t<\t1\n" +
	"BenchmarkSSFW\tfull-grads/iter\tone full gradient\t>=\t0.5\n"

func TestParseTargets(t *testing.T) {
	ts, err := ParseTargets(strings.NewReader(targetsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 5 {
		t.Fatalf("%d targets", len(ts))
	}
	if ts[0].Line != 4 || ts[0].Unit != "floors/pass" || ts[0].Op != "<=" || ts[0].Value != 1.5 {
		t.Errorf("first target %+v", ts[0])
	}
	// Patterns match whole names: bcfw does not match bcfw-as.
	if ts[0].Matches("BenchmarkOCRPass/bcfw-as") || !ts[0].Matches("BenchmarkOCRPass/bcfw") {
		t.Error("pattern not anchored")
	}
}

func TestParseTargetsErrors(t *testing.T) {
	h := "benchmark\tunit\tbaseline\top\ttarget\n"
	for _, c := range []struct{ in, want string }{
		{"", "line 1: want the header"},
		{"name\tunit\n", "line 1: want the header"},
		{h + "A\tu\tb\t<=\n", "line 2: want 5 tab-separated columns"},
		{h + "\tu\tb\t<=\t1\n", "line 2, column benchmark: empty"},
		{h + "A(\tu\tb\t<=\t1\n", "line 2, column benchmark: not a regular expression"},
		{h + "A\t\tb\t<=\t1\n", "line 2, column unit"},
		{h + "A\tu\tb\t=<\t1\n", "line 2, column op"},
		{h + "A\tu\tb\t<=\tone\n", "line 2, column target"},
		{h + "A\tu\tb\t<=\tInf\n", "line 2, column target"},
	} {
		_, err := ParseTargets(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseTargets(%q): error %v, want it to contain %q", c.in, err, c.want)
		}
	}
}

func TestMet(t *testing.T) {
	for _, c := range []struct {
		op   string
		v    float64
		want bool
	}{
		{"<=", 1.5, true}, {"<=", 1.6, false},
		{"<", 1.5, false}, {"<", 1.4, true},
		{">=", 1.5, true}, {">=", 1.4, false},
		{">", 1.5, false}, {">", 2, true},
		{"==", 1.5, true}, {"==", 1, false},
		{"<=", math.NaN(), false},
	} {
		tg := Target{Op: c.op, Value: 1.5}
		if got := tg.Met(c.v); got != c.want {
			t.Errorf("%v %s 1.5: %v, want %v", c.v, c.op, got, c.want)
		}
	}
}

func TestBuildAndMarkdown(t *testing.T) {
	out, err := Parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	ts, err := ParseTargets(strings.NewReader(targetsFile))
	if err != nil {
		t.Fatal(err)
	}
	rows := Build(out, ts)
	want := []struct {
		name  string
		found bool
		ratio float64
		met   bool
	}{
		{"BenchmarkOCRPass/bcfw-2", true, 2.174, false},
		{"BenchmarkOCRPass/bcfw-2", true, 0, true},
		{"BenchmarkOCRPass/bcfw-as-2", true, 2.261, false},
		{"BenchmarkMissing", false, 0, false},
		{"BenchmarkSSFW", true, 0.7, true},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows: %+v", len(rows), rows)
	}
	for i, w := range want {
		r := rows[i]
		if r.Name != w.name || r.Found != w.found || r.Ratio != w.ratio || r.Met != w.met {
			t.Errorf("row %d: %+v, want %+v", i, r, w)
		}
	}
	if rows[0].Figure != "199 ms/op" || rows[0].Runs != 3 {
		t.Errorf("figure %q runs %d", rows[0].Figure, rows[0].Runs)
	}
	md := Markdown(rows)
	for _, s := range []string{
		"| benchmark | figure | baseline | ratio | target | met |",
		"| BenchmarkOCRPass/bcfw-2 | 199 ms/op | one gonum product of all emissions | 2.17 floors/pass | <= 1.5 floors/pass | no |",
		"| BenchmarkOCRPass/bcfw-2 | 199 ms/op | none | 0 allocs/iter | <= 0 allocs/iter | yes |",
		"| BenchmarkMissing |  | spg | not run | < 1 x-spg-time | — |",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("markdown lacks %q:\n%s", s, md)
		}
	}
	if n := strings.Count(md, "\n"); n != 2+len(rows) {
		t.Errorf("%d lines", n)
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		ns   float64
		want string
	}{
		{12, "12 ns"}, {1500, "1.5 µs"}, {2.5e6, "2.5 ms"}, {3.21e9, "3.21 s"}, {0, "0 ns"},
	} {
		if got := FormatDuration(c.ns); got != c.want {
			t.Errorf("FormatDuration(%v) = %q, want %q", c.ns, got, c.want)
		}
	}
	if got := cell("a|b\nc"); got != `a\|b c` {
		t.Errorf("cell: %q", got)
	}
}

// FuzzParse feeds arbitrary text to the parser: it never panics, and what
// it returns is consistent (every result has runs, iteration counts and at
// least one value per unit, its name carries no GOMAXPROCS suffix).
func FuzzParse(f *testing.F) {
	f.Add(sample)
	f.Add("BenchmarkA-4 10 5 ns/op 1.5 x/y\nBenchmarkA-4 12 6 ns/op 1.4 x/y\n")
	f.Add("BenchmarkA 1\n")
	f.Add("pkg: p\nBenchmarkB-x 3 1e3 ns/op\n--- FAIL: x\n")
	f.Fuzz(func(t *testing.T, s string) {
		out, err := Parse(strings.NewReader(s))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "line ") {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		for _, r := range out.Results {
			if r.Runs < 1 || len(r.Iters) != r.Runs || r.Procs < 1 {
				t.Fatalf("result %+v", r)
			}
			for _, u := range r.Units {
				v, ok := r.Median(u)
				if !ok || math.IsNaN(v) {
					t.Fatalf("unit %q of %s: median %v %v", u, r.Name, v, ok)
				}
			}
			if len(r.Units) != len(r.Vals) {
				t.Fatalf("units %v, values for %d", r.Units, len(r.Vals))
			}
		}
		ts, _ := ParseTargets(strings.NewReader(targetsFile))
		_ = Markdown(Build(out, ts))
	})
}

// FuzzParseTargets: no panic; a parsed target has a valid operator, a
// finite value and a compiled pattern.
func FuzzParseTargets(f *testing.F) {
	f.Add(targetsFile)
	f.Add("benchmark\tunit\tbaseline\top\ttarget\nA\tu\tb\t>\t-1e3\n")
	f.Fuzz(func(t *testing.T, s string) {
		ts, err := ParseTargets(strings.NewReader(s))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "line ") {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		for _, tg := range ts {
			if math.IsNaN(tg.Value) || math.IsInf(tg.Value, 0) || tg.re == nil {
				t.Fatalf("target %+v", tg)
			}
			switch tg.Op {
			case "<=", "<", ">=", ">", "==":
			default:
				t.Fatalf("op %q", tg.Op)
			}
			tg.Matches("BenchmarkX")
		}
	})
}
