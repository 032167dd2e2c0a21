package benchtable

import (
	"math"
	"strings"
	"testing"
)

// testTable has a dimensions column, a fitted time, a time that may not be
// reached (with its iterations and best error) and a scaled metric.
var testTable = ScalingTable{
	Bench: "BenchmarkGrow", Title: "Growth.", SizeHeader: "size", Size: "n",
	Expect: []string{"n=1", "n=2", "n=4"},
	Columns: []ScalingColumn{
		{Header: "dims", Units: []string{"n", "m"}},
		{Header: "ms/iter", Units: []string{"ms/iter"}, Fit: true},
		{Header: "iters", Units: []string{"iters/1e-6"}, Int: true},
		{Header: "s to 1e-6", Units: []string{"s/1e-6"}, Fit: true, Iters: "iters", Best: "best/1e-6"},
		{Header: "gap", Units: []string{"gap/1e-9"}, Sci: true},
	},
	UnitScale: map[string]float64{"best/1e-6": 1e-6, "gap/1e-9": 1e-9},
}

func TestBuildScaling(t *testing.T) {
	for _, c := range []struct {
		name string
		out  string
		rows []string // the table's lines after the header, title excluded
		err  string
	}{
		{
			name: "every size, exponents exact",
			out: "BenchmarkGrow/n=1-2 1 5 ns/op 1 n 3 m 2 ms/iter 10 iters/1e-6 0.02 s/1e-6 12 gap/1e-9\n" +
				"BenchmarkGrow/n=2-2 1 5 ns/op 2 n 3 m 4 ms/iter 20 iters/1e-6 0.08 s/1e-6 12 gap/1e-9\n" +
				"BenchmarkGrow/n=4-2 1 5 ns/op 4 n 3 m 8 ms/iter 40 iters/1e-6 0.32 s/1e-6 12 gap/1e-9\n",
			rows: []string{
				"| n=1 | 1×3 | 2 | 10 | 0.02 | 1.2e-08 |",
				"| n=2 | 2×3 | 4 | 20 | 0.08 | 1.2e-08 |",
				"| n=4 | 4×3 | 8 | 40 | 0.32 | 1.2e-08 |",
				"| exponent e (∝ n^e) |  | 1.00 |  | 2.00 |  |",
			},
		},
		{
			name: "missing size, not reached, extra size after the expected",
			out: "BenchmarkGrow/n=1 1 5 ns/op 1 n 3 m 2 ms/iter 500 iters 3e4 best/1e-6\n" +
				"BenchmarkOther/n=2 1 5 ns/op 2 n\n" +
				"BenchmarkGrow/n=8 1 5 ns/op 8 n 3 m 16 ms/iter 500 iters\n",
			rows: []string{
				"| n=1 | 1×3 | 2 | — | not reached in 500 iterations (best 3.0e-02) | — |",
				"| n=2 | not run | not run | not run | not run | not run |",
				"| n=4 | not run | not run | not run | not run | not run |",
				"| n=8 | 8×3 | 16 | — | not reached in 500 iterations | — |",
				"| exponent e (∝ n^e) |  | 1.00 |  | — |  |",
			},
		},
		{
			name: "repeated runs: medians, reached in some",
			out: "BenchmarkGrow/n=1 1 5 ns/op 1 n 1 m 1 ms/iter 0.5 s/1e-6 9 iters\n" +
				"BenchmarkGrow/n=1 1 5 ns/op 1 n 1 m 3 ms/iter 9 iters\n" +
				"BenchmarkGrow/n=1 1 5 ns/op 1 n 1 m 2 ms/iter 0.7 s/1e-6 9 iters\n",
			rows: []string{
				"| n=1 | 1×1 | 2 | — | 0.6 (2 of 3 runs) | — |",
				"| n=2 | not run | not run | not run | not run | not run |",
				"| n=4 | not run | not run | not run | not run | not run |",
				"| exponent e (∝ n^e) |  | — |  | — |  |",
			},
		},
		{name: "no size", out: "BenchmarkGrow/n=1 1 5 ns/op 2 ms/iter\n", err: `BenchmarkGrow/n=1: no size metric "n"`},
		{name: "zero size", out: "BenchmarkGrow/n=1 1 5 ns/op 0 n\n", err: "positive finite number, got 0"},
		{name: "negative size", out: "BenchmarkGrow/n=1 1 5 ns/op -3 n\n", err: "positive finite number, got -3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := Parse(strings.NewReader(c.out))
			if err != nil {
				t.Fatal(err)
			}
			s, err := BuildScaling(out, &testTable)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			md := s.Markdown()
			want := "Growth.\n\n| size | dims | ms/iter | iters | s to 1e-6 | gap |\n|---|---|---|---|---|---|\n" + strings.Join(c.rows, "\n") + "\n"
			if md != want {
				t.Fatalf("markdown:\n%s\nwant:\n%s", md, want)
			}
		})
	}
}

func TestFitExponent(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		name string
		x, y []float64
		want float64
	}{
		{"linear", []float64{1, 2, 4}, []float64{3, 6, 12}, 1},
		{"cubic", []float64{1, 10, 100}, []float64{2, 2e3, 2e6}, 3},
		{"flat", []float64{1, 3, 9}, []float64{5, 5, 5}, 0},
		// Off a line: in units of ln 2, x = (0, 1, 2), y = (0, 1.5, 2), and
		// the slope Σ(x−x̄)(y−ȳ)/Σ(x−x̄)² = 2/2.
		{"noisy", []float64{1, 2, 4}, []float64{1, math.Pow(2, 1.5), 4}, 1},
		{"skips non-positive and infinite y", []float64{1, 2, 3, 4}, []float64{1, 0, math.Inf(1), 16}, 2},
		{"skips NaN", []float64{1, 2, 4}, []float64{nan, 2, 4}, 1},
		{"one point", []float64{1, 2}, []float64{1, -1}, nan},
		{"equal sizes", []float64{3, 3}, []float64{1, 2}, nan},
		{"none", nil, nil, nan},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := FitExponent(c.x, c.y)
			if math.IsNaN(c.want) != math.IsNaN(got) || (!math.IsNaN(c.want) && math.Abs(got-c.want) > 1e-12) {
				t.Fatalf("FitExponent = %v, want %v", got, c.want)
			}
		})
	}
}

func TestMerge(t *testing.T) {
	a, err := Parse(strings.NewReader("goos: linux\npkg: p\nBenchmarkA-2 1 5 ns/op 1 u\nBenchmarkB 1 5 ns/op\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse(strings.NewReader("goos: plan9\ncpu: X\npkg: p\nBenchmarkA-2 1 7 ns/op 3 u 4 v\nBenchmarkA-4 1 9 ns/op\npkg: q\nBenchmarkB 1 6 ns/op\n--- FAIL: BenchmarkC\n"))
	if err != nil {
		t.Fatal(err)
	}
	a.Merge(b)
	if len(a.Results) != 4 {
		t.Fatalf("%d results", len(a.Results))
	}
	r := a.Results[0]
	if r.Runs != 2 || len(r.Iters) != 2 || strings.Join(r.Units, ",") != "ns/op,u,v" {
		t.Fatalf("merged result %+v", r)
	}
	if m, _ := r.Median("u"); m != 2 {
		t.Errorf("median u %v", m)
	}
	if a.Results[2].Procs != 4 || a.Results[3].Pkg != "q" {
		t.Errorf("results %+v %+v", a.Results[2], a.Results[3])
	}
	if a.Env["goos"] != "linux" || a.Env["cpu"] != "X" || len(a.Failures) != 1 {
		t.Errorf("env %v failures %v", a.Env, a.Failures)
	}
}

// FuzzBuildScaling feeds arbitrary benchmark output to the scaling tables:
// no panic; an error names a benchmark; a table has one row per expected or
// reported size and a header, separator and exponent line, and every
// exponent is NaN or finite.
func FuzzBuildScaling(f *testing.F) {
	f.Add("BenchmarkGrow/n=1-2 1 5 ns/op 1 n 3 m 2 ms/iter 10 iters/1e-6 0.02 s/1e-6 12 gap/1e-9\nBenchmarkGrow/n=4 1 5 ns/op 4 n 3 m 8 ms/iter 9 iters 1 best/1e-6\n")
	f.Add("BenchmarkGrow/n=1 1 5 ns/op 0 n\n")
	f.Add("BenchmarkGrow/ 1 5 ns/op 1e308 n 1e308 ms/iter\nBenchmarkGrow/x 1 1 n -1e308 ms/iter\n")
	f.Add("BenchmarkScaling/30x-2 1 5 ns/op 30 x 3000 N 1500 J 150 K 1 spg-ms/iter 2 spg-iters 3e6 spg-best/1e-6\n")
	tables := append([]*ScalingTable{&testTable}, Scalings...)
	f.Fuzz(func(t *testing.T, s string) {
		out, err := Parse(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, tb := range tables {
			sc, err := BuildScaling(out, tb)
			if err != nil {
				if !strings.HasPrefix(err.Error(), tb.Bench+"/") {
					t.Fatalf("error without the benchmark: %v", err)
				}
				continue
			}
			if len(sc.Rows) < len(tb.Expect) || len(sc.Exponents) != len(tb.Columns) {
				t.Fatalf("%d rows, %d exponents", len(sc.Rows), len(sc.Exponents))
			}
			for _, e := range sc.Exponents {
				if math.IsInf(e, 0) {
					t.Fatalf("infinite exponent in %v", sc.Exponents)
				}
			}
			md := sc.Markdown()
			if n := strings.Count(md, "\n| "); n < len(sc.Rows)+2 {
				t.Fatalf("%d table lines for %d rows:\n%s", n, len(sc.Rows), md)
			}
		}
	})
}
