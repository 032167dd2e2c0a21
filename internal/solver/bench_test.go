package solver_test

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/fwlab/fwlab/internal/problems/glm"
	"github.com/fwlab/fwlab/internal/solver"
)

// BenchmarkSSFWASLasso measures the records (iterations) per second of
// ssfw-as on a LASSO with n = 10⁴ samples and p = 10³ features, beside the
// time of one full gradient Xᵀ(Xβ − y) computed with gonum's BLAS in the
// same run. The metric full-grads/iter says how many full gradients one
// iteration costs on average: the semi-stochastic method's selling point is
// that it is far below 1 while the batch is small.
func BenchmarkSSFWASLasso(b *testing.B) {
	const n, p = 10_000, 1_000
	syn, err := glm.Generate(glm.Squared, n, p, 20, 1, 1)
	if err != nil {
		b.Fatal(err)
	}
	pr, err := glm.New(glm.Config{Loss: glm.Squared, X: syn.X, Y: syn.Y, Lambda: 0.1 * lambdaMax(syn.X, syn.Y)})
	if err != nil {
		b.Fatal(err)
	}
	// Baseline: one full gradient with BLAS.
	beta := mat.NewVecDense(p, nil)
	for j := 0; j < p; j += 7 {
		beta.SetVec(j, 0.01)
	}
	yv := mat.NewVecDense(n, syn.Y)
	r := mat.NewVecDense(n, nil)
	g := mat.NewVecDense(p, nil)
	fullGrad := func() {
		r.MulVec(syn.X, beta)
		r.SubVec(r, yv)
		g.MulVec(syn.X.T(), r)
	}
	fullGrad()
	const gradReps = 20
	t0 := nowSeconds()
	for i := 0; i < gradReps; i++ {
		fullGrad()
	}
	gradSec := (nowSeconds() - t0) / gradReps

	// Steady-state allocations: the difference between a long and a short
	// run with the same evaluations (k = 0, 1 and the last), per iteration.
	b.Run("allocs", func(b *testing.B) {
		cfg := func(iters int) solver.Config {
			return solver.Config{Algorithm: "ssfw-as", Step: "curvature",
				Schedule: solver.Schedule{Kind: "paper", Rho: 0.1, Alpha: 0.5},
				Limits:   solver.Limits{MaxIters: iters, EvalEvery: iters}, Seed: 1}
		}
		run := func(iters int) (mallocs, bytes uint64) {
			m, err := solver.New(pr, cfg(iters))
			if err != nil {
				b.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			if _, err := m.Run(context.Background(), solver.RecorderFunc(func(solver.Record) {})); err != nil {
				b.Fatal(err)
			}
			runtime.ReadMemStats(&after)
			return after.Mallocs - before.Mallocs, after.TotalAlloc - before.TotalAlloc
		}
		const short, long = 100, 300
		run(long) // warm up: the problem builds its vertices on first use
		var perIter, bytesPerIter float64
		for i := 0; i < b.N; i++ {
			ms, bs := run(short)
			ml, bl := run(long)
			perIter += (float64(ml) - float64(ms)) / (long - short)
			bytesPerIter += (float64(bl) - float64(bs)) / (long - short)
		}
		b.ReportMetric(perIter/float64(b.N), "allocs/iter")
		b.ReportMetric(bytesPerIter/float64(b.N), "B/iter")
	})
	for _, iters := range []int{100, 1000} {
		b.Run(fmt.Sprintf("iters=%d", iters), func(b *testing.B) {
			cfg := solver.Config{Algorithm: "ssfw-as", Step: "curvature",
				Schedule: solver.Schedule{Kind: "paper", Rho: 0.1, Alpha: 0.5},
				Limits:   solver.Limits{MaxIters: iters, EvalEvery: iters}, Seed: 1}
			var recs, totalSec float64
			for i := 0; i < b.N; i++ {
				m, err := solver.New(pr, cfg)
				if err != nil {
					b.Fatal(err)
				}
				count := 0
				res, err := m.Run(context.Background(), solver.RecorderFunc(func(solver.Record) { count++ }))
				if err != nil {
					b.Fatal(err)
				}
				recs += float64(count)
				totalSec += res.Summary.Time
			}
			b.ReportMetric(recs/totalSec, "records/s")
			b.ReportMetric(gradSec*1e3, "ms/full-grad")
			b.ReportMetric(totalSec/recs/gradSec, "full-grads/iter")
		})
	}
}

func lambdaMax(x *mat.Dense, y []float64) float64 {
	var g mat.VecDense
	g.MulVec(x.T(), mat.NewVecDense(len(y), y))
	return mat.Norm(&g, math.Inf(1)) // ‖Xᵀy‖_∞
}
