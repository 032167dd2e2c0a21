package toy

import (
	"context"
	"fmt"
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
// row-major X) timed in the same run, alternating with floors/iter is a run's work time per iteration over one floor (the
// target: at most 1.2); ms/iter and floor-ms the two times.
func BenchmarkLSQIteration(b *testing.B) {
	for _, p := range []int{200, 1000} {
		ball, err := NewL1Ball(context.Background(), p, 10000, 1, 1)
		if err != nil {
			b.Fatal(err)
		}
		for _, alg := range []string{"afw", "pfw"} {
			b.Run(fmt.Sprintf("%s/p=%d", alg, p), func(b *testing.B) {
				benchLSQ(b, &ball.lsq, ball, alg)
			})
		}
	}
}

// benchLSQ runs alg on pr (whose data are d) b.N times, 200 iterations each
// with only the first and last evaluated, one floor after every iteration.
func benchLSQ(b *testing.B, d *lsq, pr solver.Problem, alg string) {
	const iters = 200
	X := blas64.General{Rows: d.n, Cols: d.p, Stride: d.p, Data: d.rows}
	v := blas64.Vector{N: d.p, Inc: 1, Data: make([]float64, d.p)}
	for j := range v.Data {
		v.Data[j] = 1 / float64(j+1)
	}
	out := blas64.Vector{N: d.n, Inc: 1, Data: make([]float64, d.n)}
	cfg := solver.Config{Algorithm: alg, Step: "curvature", Limits: solver.Limits{MaxIters: iters, EvalEvery: iters}, Seed: 1}
	var work, floor time.Duration
	var done, floors int
	for i := 0; i < b.N; i++ {
		m, err := solver.New(pr, cfg)
		if err != nil {
			b.Fatal(err)
		}
		res, err := m.Run(context.Background(), solver.RecorderFunc(func(solver.Record) {
			t0 := time.Now()
			blas64.Gemv(blas.NoTrans, 1, X, v, 0, out)
			floor += time.Since(t0)
			floors++
		}))
		if err != nil {
			b.Fatal(err)
		}
		work += time.Duration(res.Summary.Time * float64(time.Second))
		done += res.Summary.Iters
	}
	perIter := work.Seconds() / float64(done)
	perFloor := floor.Seconds() / float64(floors)
	b.ReportMetric(perIter/perFloor, "floors/iter")
	b.ReportMetric(perIter*1e3, "ms/iter")
	b.ReportMetric(perFloor*1e3, "floor-ms")
}
