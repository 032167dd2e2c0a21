package dense

import (
	"math/rand/v2"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// BenchmarkGemm times the SPG product at ten times the paper's size (J×J by
// J×K, J = 500, K = 50) on this machine's path against gonum's Gemm of the
// same product, alternating (x-gonum: this package's time over gonum's).
func BenchmarkGemm(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	a, w := general(rng, 500, 500, 0), general(rng, 500, 50, 0)
	c := general(rng, 500, 50, 0)
	var td, tg time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		Gemm(blas.NoTrans, blas.NoTrans, 1, a, w, 0, c)
		t1 := time.Now()
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, a, w, 0, c)
		td += t1.Sub(t0)
		tg += time.Since(t1)
	}
	b.ReportMetric(float64(td)/float64(tg), "x-gonum")
	b.ReportMetric(td.Seconds()*1e3/float64(b.N), "ms/op-dense")
	b.ReportMetric(tg.Seconds()*1e3/float64(b.N), "ms/op-gonum")
}
