package gflasso

import (
	"math/rand/v2"
	"testing"
	"time"
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
