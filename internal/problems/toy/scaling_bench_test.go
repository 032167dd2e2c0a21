package toy

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/solver"
)

// BenchmarkL1BallScaling runs afw (curvature steps: exact line searches) on
// l1-ball least squares with n = 10⁴ samples and p = 200 to 10⁴
// coordinates (NewL1BallFast's instances, seed 1, radius 1: about p/5
// vertices in the optimal face), evaluating every second iteration, until
// F − F* ≤ 1e-6·F*. Each p is a sub-benchmark "p=<p>" reporting, in CPU
// time on one core (the process's CPU time from one record to the next,
// over the iterations not evaluated):
//
//	p            the size
//	ms/iter      the time of an iteration
//	iters/1e-6   the iterations to 1e-6, s/1e-6 that times ms/iter
//	iters        the iterations run (at most 10⁵, 600 s of CPU in the
//	             iterations not evaluated or 1 800 s in all)
//	best/1e-6    the best relative error, in multiples of 1e-6
//	gap*/F*/1e-12  the Frank-Wolfe gap at the constructed x*, from the
//	             data, over F*, in multiples of 1e-12: the certificate of
//	             F* (the benchmark fails above 1e-9)
//
// Go prints small metrics with seven decimals, hence the multiples.
// cmd/benchtable renders them as a table with the fitted exponents.
func BenchmarkL1BallScaling(b *testing.B) {
	for _, p := range []int{200, 500, 1000, 2000, 5000, 10000} {
		b.Run(fmt.Sprintf("p=%d", p), func(b *testing.B) { benchL1Scaling(b, p, 10000) })
		runtime.GC() // the next instance's memory (16·n·p bytes)
	}
}

// benchL1Scaling is one size of BenchmarkL1BallScaling.
func benchL1Scaling(b *testing.B, p, n int) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	b.StopTimer()
	ball, err := NewL1BallFast(context.Background(), p, n, 1, 1)
	if err != nil {
		b.Fatal(err)
	}
	fs := ball.FStar()
	gap := l1GapAt(ball, ball.XStar())
	if !(gap <= 1e-9*fs) {
		b.Fatalf("p = %d: FW gap at x* is %v, F* = %v: F* is not certified", p, gap, fs)
	}
	b.StartTimer()
	var r l1ScaleRun
	for i := 0; i < b.N; i++ {
		r = runL1Scaling(b, ball)
	}
	b.ReportMetric(float64(p), "p")
	b.ReportMetric(r.perIter*1e3, "ms/iter")
	if r.hit >= 0 {
		b.ReportMetric(float64(r.hit), "iters/1e-6")
		b.ReportMetric(float64(r.hit)*r.perIter, "s/1e-6")
	}
	b.ReportMetric(float64(r.iters), "iters")
	b.ReportMetric(r.best/1e-6, "best/1e-6")
	b.ReportMetric(gap/fs/1e-12, "gap*/F*/1e-12")
	fmt.Printf("l1-ball scaling p = %d: %.3g ms/iter, 1e-6 after %d iterations (best %.2g in %d)\n", p, r.perIter*1e3, r.hit, r.best, r.iters)
}

// l1ScaleRun is the outcome of one afw run of BenchmarkL1BallScaling.
type l1ScaleRun struct {
	perIter float64 // CPU seconds per iteration not evaluated
	hit     int     // first iteration with F − F* ≤ 1e-6·F*, −1 if none
	iters   int
	best    float64
}

// runL1Scaling runs afw on ball until 1e-6, 10⁵ iterations, 600 s of CPU in
// the iterations not evaluated (the evaluations, every second iteration,
// cost as much again: an objective and a gradient from scratch) or 1 800 s
// in all.
func runL1Scaling(b *testing.B, ball *L1Ball) l1ScaleRun {
	fs := ball.FStar()
	m, err := solver.New(ball, solver.Config{Algorithm: "afw", Step: "curvature", Limits: solver.Limits{MaxIters: 100000, EvalEvery: 2}, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := l1ScaleRun{hit: -1, best: math.Inf(1)}
	var mark, cpu time.Duration
	plain := 0
	start := cpuTime()
	if _, err := m.Run(ctx, solver.RecorderFunc(func(r solver.Record) {
		c := cpuTime()
		if r.Objective == nil && r.K > 0 {
			cpu += c - mark
			plain++
		}
		out.iters = r.K
		if r.Objective != nil {
			rel := (*r.Objective - fs) / fs
			out.best = math.Min(out.best, rel)
			if out.hit < 0 && rel <= 1e-6 {
				out.hit = r.K
				cancel()
			}
		}
		if cpu > 600*time.Second || c-start > 1800*time.Second {
			cancel()
		}
		mark = cpuTime()
	})); err != nil {
		b.Fatal(err)
	}
	out.perIter = cpu.Seconds() / float64(max(plain, 1))
	return out
}

// l1GapAt is the Frank-Wolfe gap ⟨∇F(x), x − s⟩ at x, s the ball's vertex
// minimising ⟨∇F(x), s⟩, with the gradient computed from the data.
func l1GapAt(ball *L1Ball, x []float64) float64 {
	g := make([]float64, ball.Dim())
	ball.Smooth(x, g)
	gmax := 0.0
	for _, v := range g {
		gmax = math.Max(gmax, math.Abs(v))
	}
	return dot(g, x) + ball.Radius()*gmax
}
