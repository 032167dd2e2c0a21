package gflasso

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/solver"
	"gonum.org/v1/gonum/mat"
)

// BenchmarkOracleVsGradient times the exact oracle of a 10-task component
// (1023 atoms, 50 rows) against the block's exact gradient (N·J·|C|
// multiply-adds) on the reference instance, and reports their ratio: the
// oracle should cost about as much as the gradient, not dominate it.
func BenchmarkOracleVsGradient(b *testing.B) {
	r := loadRef(b)
	p := refProblem(b, r, Options{})
	x := make([]float64, p.Dim())
	p.Lift(x, r.BStar)
	m := p.NewModel(x)
	size := p.Blocks()[0].Size
	g := make([]float64, size)
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range g {
		g[i] = rng.NormFloat64()
	}
	var tOracle, tGrad time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		m.Gradient(0, g, x, nil)
		t1 := time.Now()
		for j := range g[:size-1] {
			g[j] = rng.NormFloat64() // a dense gradient: no row is pruned
		}
		t2 := time.Now()
		p.LMO(0, g)
		t3 := time.Now()
		tGrad += t1.Sub(t0)
		tOracle += t3.Sub(t2)
	}
	b.ReportMetric(float64(tOracle)/float64(b.N), "oracle-ns/op")
	b.ReportMetric(float64(tGrad)/float64(b.N), "gradient-ns/op")
	b.ReportMetric(float64(tOracle)/float64(tGrad), "oracle/gradient")
}

// BenchmarkBlockIteration times a bcfw iteration over all blocks (one
// worker, no evaluations) on the reference instance, with one block per
// component and with one per (row, component), against one full gradient
// Xᵀ(XB − Y) computed with gonum's BLAS in the same run: an iteration costs
// a gradient of every block, a line and an oracle call per block.
func BenchmarkBlockIteration(b *testing.B) {
	r := loadRef(b)
	var res, grad mat.Dense
	full := func() {
		res.Mul(r.X, r.BStar)
		res.Sub(&res, r.Y)
		grad.Mul(r.X.T(), &res)
	}
	for _, blocks := range []string{"component", "row"} {
		b.Run(blocks, func(b *testing.B) {
			p := refProblem(b, r, Options{Blocks: blocks})
			full()
			t0 := time.Now()
			const reps = 50
			for i := 0; i < reps; i++ {
				full()
			}
			base := time.Since(t0) / reps
			cfg := fwConfig("bcfw", solver.Limits{MaxIters: max(b.N, 2), EvalEvery: max(b.N, 2)}, 1)
			cfg.Workers = 1
			m, err := solver.New(p, cfg)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			if _, err := m.Run(context.Background(), solver.RecorderFunc(func(solver.Record) {})); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			per := b.Elapsed() / time.Duration(max(b.N, 2))
			b.ReportMetric(float64(per)/float64(base), "full-grads/iter")
			b.ReportMetric(float64(len(p.Blocks())), "blocks")
		})
	}
}
