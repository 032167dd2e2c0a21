package toy

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/fwlab/fwlab/internal/solver"
)

// BenchmarkModelStep times one incremental FW update of the model (Scale and
// Add of a sparse vertex) on a simplex problem with n = 2000, p = 200, and
// reports it against a full Reset (z = A x from scratch) timed in the same run:
// the metric reset/step is how many incremental steps one recomputation costs.
func BenchmarkModelStep(b *testing.B) {
	s, err := NewSimplex(context.Background(), 200, 2000, 1)
	if err != nil {
		b.Fatal(err)
	}
	x := s.ProxStart()
	m := s.NewModel(x)
	vs := make([]solver.Vertex, 200)
	for j := range vs {
		vs[j] = SimplexVertex(j)
	}
	const resets = 50
	t0 := time.Now()
	for i := 0; i < resets; i++ {
		m.Reset(x)
	}
	reset := time.Since(t0) / resets
	b.ResetTimer()
	t1 := time.Now()
	for i := 0; i < b.N; i++ {
		m.Scale(0, 0.9)
		m.Add(0, 0.1, vs[i%len(vs)])
	}
	step := time.Since(t1) / time.Duration(b.N)
	b.ReportMetric(float64(reset)/float64(max(step, 1)), "reset/step")
}

// BenchmarkLSQIteration times full-batch afw and pfw iterations (curvature
// steps, which for least squares are exact line searches) on l1-ball least
// squares with n = 10⁴ samples and p = 200 and 1 000 coordinates, against
// the one-pass floor: one product X·v with gonum's BLAS (Gemv on the
// row-major X), one after every iteration (in the iteration's record). All
// in CPU time on one core (GOMAXPROCS 1): an iteration is the process's CPU
// time from the end of one record to the start of the next (its work and
// the solver's bookkeeping around it), so that other jobs on a shared
// machine do not count. Each benchmark iteration is a run of 200 iterations
// of afw, then one of pfw, only their first and last iterations evaluated
// (those two iterations are left out). afw-floors/iter and pfw-floors/iter
// are the runs' CPU time per iteration over one floor's (target: at most
// 1.2), pfw/afw the ratio of the two (target: at most 1.05); afw-ms/iter,
// pfw-ms/iter and floor-ms the CPU times.
func BenchmarkLSQIteration(b *testing.B) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, p := range []int{200, 1000} {
		ball, err := NewL1Ball(context.Background(), p, 10000, 1, 1)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("p=%d", p), func(b *testing.B) { benchLSQ(b, &ball.lsq, ball) })
	}
}

// benchLSQ runs afw and pfw on pr (whose data are d) b.N times each.
func benchLSQ(b *testing.B, d *lsq, pr solver.Problem) {
	const iters = 200
	X := blas64.General{Rows: d.n, Cols: d.p, Stride: d.p, Data: d.rows}
	v := blas64.Vector{N: d.p, Inc: 1, Data: make([]float64, d.p)}
	for j := range v.Data {
		v.Data[j] = 1 / float64(j+1)
	}
	out := blas64.Vector{N: d.n, Inc: 1, Data: make([]float64, d.n)}
	algs := []string{"afw", "pfw"}
	var work, floor [2]time.Duration
	var done [2]int
	for i := 0; i < b.N; i++ {
		for a, alg := range algs {
			m, err := solver.New(pr, solver.Config{Algorithm: alg, Step: "curvature", Limits: solver.Limits{MaxIters: iters, EvalEvery: iters}, Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			var mark time.Duration
			if _, err := m.Run(context.Background(), solver.RecorderFunc(func(r solver.Record) {
				c0 := cpuTime()
				if r.K > 1 && r.K < iters { // k = 1 and the last are evaluated
					work[a] += c0 - mark
					done[a]++
				}
				blas64.Gemv(blas.NoTrans, 1, X, v, 0, out)
				mark = cpuTime()
				floor[a] += mark - c0
			})); err != nil {
				b.Fatal(err)
			}
		}
	}
	var ratio [2]float64
	for a, alg := range algs {
		perIter := work[a].Seconds() / float64(done[a])
		perFloor := floor[a].Seconds() / float64(b.N*(iters+1))
		ratio[a] = perIter / perFloor
		b.ReportMetric(ratio[a], alg+"-floors/iter")
		b.ReportMetric(perIter*1e3, alg+"-ms/iter")
	}
	b.ReportMetric((floor[0]+floor[1]).Seconds()*1e3/float64(2*b.N*(iters+1)), "floor-ms")
	b.ReportMetric(ratio[1]/ratio[0], "pfw/afw")
}
