package toy

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/solver"
)

// BenchmarkL1BallScaling runs afw (curvature steps: exact line searches) on
// l1-ball least squares with n = 10⁴ samples and p = 200, 500, 1 000 and
// 2 000 coordinates (the generator's limit: building an instance costs
// O(n·p² + p³)), evaluating every second iteration, until F − F* ≤
// 1e-6·F* (F* known by construction), and prints a table of the CPU time
// per iteration (one core; the process's CPU time from one record to the
// next, over the iterations not evaluated) and to that accuracy (that
// times the iterations), with the exponents e of a least-squares fit
// time ∝ p^e.
func BenchmarkL1BallScaling(b *testing.B) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	ps := []int{200, 500, 1000, 2000}
	per, to := make([]float64, len(ps)), make([]float64, len(ps))
	its := make([]int, len(ps))
	for i := 0; i < b.N; i++ {
		for q, p := range ps {
			ball, err := NewL1Ball(context.Background(), p, 10000, 1, 1)
			if err != nil {
				b.Fatal(err)
			}
			fs := ball.FStar()
			m, err := solver.New(ball, solver.Config{Algorithm: "afw", Step: "curvature", Limits: solver.Limits{MaxIters: 100000, EvalEvery: 2}, Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			to[q] = math.NaN()
			var last solver.Record
			var mark, cpu time.Duration
			plain := 0
			if _, err := m.Run(ctx, solver.RecorderFunc(func(r solver.Record) {
				c := cpuTime()
				if r.Objective == nil && r.K > 0 {
					cpu += c - mark
					plain++
				}
				last = r
				if r.Objective != nil && math.IsNaN(to[q]) && *r.Objective-fs <= 1e-6*fs {
					to[q] = float64(r.K)
					cancel()
				}
				mark = cpuTime()
			})); err != nil {
				b.Fatal(err)
			}
			cancel()
			if math.IsNaN(to[q]) {
				b.Fatalf("p = %d: afw did not reach 1e-6 in %d iterations", p, last.K)
			}
			its[q] = last.K
			per[q] = cpu.Seconds() / float64(max(plain, 1))
			to[q] *= per[q]
			fmt.Printf("l1-ball scaling p = %d: %.3g ms/iter, %d iterations, %.3g s to 1e-6\n", p, per[q]*1e3, its[q], to[q])
		}
	}
	var sb strings.Builder
	sb.WriteString("\nafw on the l1 ball, n = 10⁴ (CPU time, one core; F − F* ≤ 1e-6·F*):\n\n| p | ms/iter | iterations to 1e-6 | s to 1e-6 |\n|---|---|---|---|\n")
	fp := make([]float64, len(ps))
	for q, p := range ps {
		fp[q] = float64(p)
		fmt.Fprintf(&sb, "| %d | %.3g | %d | %.3g |\n", p, per[q]*1e3, its[q], to[q])
	}
	fmt.Fprintf(&sb, "| exponent e (time ∝ p^e) | %.2f | | %.2f |\n\n", fitExponent(fp, per), fitExponent(fp, to))
	fmt.Print(sb.String())
	b.ReportMetric(per[len(ps)-1]*1e3, "ms/iter-p2000")
}

// fitExponent is the slope of the least-squares line through (log x, log y)
// over the points with finite positive y (NaN with fewer than two).
func fitExponent(x, y []float64) float64 {
	var sx, sy, sxx, sxy, n float64
	for i := range x {
		if !(y[i] > 0) || math.IsInf(y[i], 0) {
			continue
		}
		lx, ly := math.Log(x[i]), math.Log(y[i])
		sx, sy, sxx, sxy, n = sx+lx, sy+ly, sxx+lx*lx, sxy+lx*ly, n+1
	}
	if n < 2 {
		return math.NaN()
	}
	return (n*sxy - sx*sy) / (n*sxx - sx*sx)
}
