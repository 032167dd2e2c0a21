// Command fig1sizes runs the paper's Figure 1 (graph-guided fused LASSO,
// the paper-fig1 preset: bc-ssfw-as as the paper's Algorithm 3 with the
// slack kept, the slack collapse variant, and SPG) at several sizes and
// draws the relative error against iterations, one panel per size, with a
// markdown table of the relative errors reached:
//
//	go run ./cmd/fig1sizes -sizes 1x,3x,10x -iters 30000 -out fig1-sizes.svg > fig1-sizes.md
//
// The sizes are those of BenchmarkScaling (internal/problems/gflasso): 1x
// is the paper's N = 200, J = 50, K = 20 with λ = γ = 10; 3x is 600×150×30
// and 10x 1000×500×50, both with λ = γ = 30.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strings"

	"github.com/fwlab/fwlab/internal/aggregate"
	"github.com/fwlab/fwlab/internal/figures"
	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/spec"
)

// Size is one instance size of the figure.
type Size struct {
	Name        string
	N, J, K     int
	Lambda, Gam float64
}

// Sizes are the sizes the command knows, as in BenchmarkScaling.
var Sizes = []Size{
	{"1x", 200, 50, 20, 10, 10},
	{"3x", 600, 150, 30, 30, 30},
	{"10x", 1000, 500, 50, 30, 30},
	{"30x", 3000, 1500, 150, 30, 30},
}

// Result is Figure 1's data at one size.
type Result struct {
	Size Size
	Data *scenarios.Figure1Data
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fig1sizes:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("fig1sizes", flag.ContinueOnError)
	sizes := fs.String("sizes", "1x,3x,10x", "sizes, separated by commas (1x, 3x, 10x, 30x)")
	iters := fs.Int("iters", 30000, "iterations of every run")
	every := fs.Int("eval-every", 100, "evaluation cadence (iterations)")
	reps := fs.Int("replications", 1, "replications of every algorithm")
	seed := fs.Int64("seed", 1, "instance seed (≥ 1)")
	out := fs.String("out", "", "figure file (.svg, .png or .pdf; none if empty)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *iters < 1 || *every < 1 || *reps < 1 || *seed < 1 {
		return fmt.Errorf("-iters, -eval-every, -replications and -seed must be at least 1")
	}
	var want []Size
	for _, name := range strings.Split(*sizes, ",") {
		found := false
		for _, s := range Sizes {
			if s.Name == strings.TrimSpace(name) {
				want, found = append(want, s), true
			}
		}
		if !found {
			return fmt.Errorf("-sizes: unknown size %q (one of 1x, 3x, 10x, 30x)", name)
		}
	}
	format := ""
	if *out != "" {
		f, err := figures.FormatOf(*out)
		if err != nil {
			return fmt.Errorf("-out: %w", err)
		}
		format = f
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var res []Result
	for _, s := range want {
		d, err := scenarios.Figure1(ctx, scenarios.Figure1Options{Seed: *seed, Replications: *reps, Iters: *iters, EvalEvery: *every,
			Params: spec.Params{"n": fmt.Sprint(s.N), "j": fmt.Sprint(s.J), "k": fmt.Sprint(s.K),
				"lambda": fmt.Sprint(s.Lambda), "gamma": fmt.Sprint(s.Gam)}})
		if err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		res = append(res, Result{s, d})
	}
	if _, err := io.WriteString(stdout, Table(res)); err != nil {
		return err
	}
	if format != "" {
		f, err := os.Create(*out)
		if err != nil {
			return fmt.Errorf("-out: %w", err)
		}
		if err := Draw(res).Render(f, format); err != nil {
			f.Close()
			return fmt.Errorf("-out: %w", err)
		}
		return f.Close()
	}
	return nil
}

// relSeries is an algorithm's median relative error against iterations.
func relSeries(a scenarios.Figure1Algo, fstar float64) figures.Series {
	s := figures.Pow10(figures.StatSeries(a.Algo, a.LogSubopt.Iterations))
	for _, v := range []figures.Floats{s.Y, s.Lo, s.Hi} {
		for i := range v {
			v[i] /= fstar
		}
	}
	return s
}

// Draw lays out one panel per size: the relative error (F − F*)/F* of each
// algorithm against iterations, median and min–max band.
func Draw(res []Result) *figures.Figure {
	f := &figures.Figure{Cols: len(res), Title: "Graph-guided fused LASSO at the paper's size and larger: bc-ssfw-as (Algorithm 3, slack kept), its slack collapse variant, SPG"}
	for _, r := range res {
		l := &figures.Lines{XLabel: "iteration", YLabel: "(F − F*) / F*", LogY: true}
		for _, a := range r.Data.Algorithms {
			l.Series = append(l.Series, relSeries(a, r.Data.FStar))
		}
		f.Panels = append(f.Panels, figures.Panel{Title: fmt.Sprintf("%s: N×J×K = %d×%d×%d, λ = γ = %g", r.Size.Name, r.Size.N, r.Size.J, r.Size.K, r.Size.Lambda), Lines: l})
	}
	return f
}

// at returns the median relative error at the last evaluated iteration ≤ k:
// −1 when there is none, 0 when the median run is at F* to rounding there
// (F − F* ≤ 0, which the log series leaves out).
func at(st []aggregate.Stat, k, fstar float64) float64 {
	v := -1.0
	for _, s := range st {
		if s.X > k {
			break
		}
		v = math.Pow(10, s.Median) / fstar
		if math.IsNaN(v) {
			v = 0
		}
	}
	return v
}

// upTo is at(st, k) for k within the run's end, −1 beyond it.
func upTo(st []aggregate.Stat, k, end, fstar float64) float64 {
	if k > end {
		return -1
	}
	return at(st, k, fstar)
}

// first returns the first evaluated iteration whose median relative error is
// at most tol (−1: never).
func first(st []aggregate.Stat, tol, fstar float64) float64 {
	for _, s := range st {
		if math.Pow(10, s.Median)/fstar <= tol {
			return s.X
		}
	}
	return -1
}

// Table is the markdown table of the relative errors: per size and
// algorithm, the median relative error after 100, 1 000, 10 000 iterations
// and at the end ("at F*": F − F* ≤ 0 to rounding; "—": beyond the run),
// its range over the last half of the run (how far it wanders), and the
// first iterations at 1e-3 and 1e-6.
func Table(res []Result) string {
	var b strings.Builder
	b.WriteString("| size | algorithm | F* (gap/F*) | after 100 | after 1 000 | after 10 000 | at the end | last half: min–max | first at 1e-3 | first at 1e-6 |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	g := func(v float64) string {
		switch {
		case v < 0 || math.IsNaN(v):
			return "—"
		case v == 0:
			return "at F*"
		}
		return fmt.Sprintf("%.2g", v)
	}
	it := func(v float64) string {
		if v < 0 {
			return "never"
		}
		return fmt.Sprint(v)
	}
	for _, r := range res {
		d := r.Data
		for _, a := range d.Algorithms {
			st := a.LogSubopt.Iterations
			lo, hi := math.Inf(1), math.Inf(-1)
			end := float64(d.Iters)
			for _, s := range st {
				if v := math.Pow(10, s.Median) / d.FStar; s.X >= end/2 && !math.IsNaN(v) {
					lo, hi = math.Min(lo, v), math.Max(hi, v)
				}
			}
			half := "—"
			if lo <= hi {
				half = g(lo) + "–" + g(hi)
			}
			fmt.Fprintf(&b, "| %s | %s | %.8g (%.1g) | %s | %s | %s | %s | %s | %s | %s |\n", r.Size.Name, a.Algo, d.FStar, d.FStarGap/d.FStar,
				g(upTo(st, 100, end, d.FStar)), g(upTo(st, 1000, end, d.FStar)), g(upTo(st, 10000, end, d.FStar)), g(at(st, end, d.FStar)), half,
				it(first(st, 1e-3, d.FStar)), it(first(st, 1e-6, d.FStar)))
		}
	}
	return b.String()
}
