package ssvm

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/solver"
)

// BenchmarkBCFWPass measures the seconds per effective pass of bcfw (with
// averaging, as run) on the full OCR training set, beside a floor measured in
// the same run: the emission scores of every training letter for every label
// as one gonum matrix product. The ratio is pass time over floor time.
func BenchmarkBCFWPass(b *testing.B) { benchPass(b, AlgoBCFW) }

// BenchmarkBCFWASPass is the same measurement for bcfw-as.
func BenchmarkBCFWASPass(b *testing.B) { benchPass(b, AlgoBCFWAS) }

func benchPass(b *testing.B, algo string) {
	p := ocrProblem(b, 0.01)
	n := p.N()
	m, err := p.NewMethod(Options{Algo: algo, Average: true, Limits: defaultLimits(n), Seed: 1,
		Schedule: solver.Schedule{Kind: "paper", Rho: 0.1, Alpha: 0.5}})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	w := make([]float64, p.D)
	for j := range w {
		w[j] = rng.NormFloat64()
	}
	var buf []float64
	// Warm up: one pass and one product.
	for j := 0; j < n; j++ {
		m.iterate()
	}
	buf = p.AllEmissions(p.Train, w, buf)
	var tPass, tFloor time.Duration
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		t0 := time.Now()
		for j := 0; j < n; j++ {
			m.iterate()
		}
		t1 := time.Now()
		buf = p.AllEmissions(p.Train, w, buf)
		t2 := time.Now()
		tPass += t1.Sub(t0)
		tFloor += t2.Sub(t1)
	}
	b.ReportMetric(tPass.Seconds()/float64(b.N), "s/pass")
	b.ReportMetric(tFloor.Seconds()/float64(b.N), "floor-s")
	b.ReportMetric(tPass.Seconds()/tFloor.Seconds(), "pass/floor")
}

// BenchmarkEvaluate measures one full evaluation (loss-augmented and plain
// decoding of the training set, plain decoding of the test set), the work
// that is not counted in passes, in units of the same floor.
func BenchmarkEvaluate(b *testing.B) {
	p := ocrProblem(b, 0.01)
	ev := newEvaluator(p)
	rng := rand.New(rand.NewPCG(1, 2))
	w := make([]float64, p.D)
	for j := range w {
		w[j] = 0.01 * rng.NormFloat64()
	}
	var buf []float64
	var tEval, tFloor time.Duration
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		t0 := time.Now()
		ev.Evaluate(w, 0, true)
		t1 := time.Now()
		buf = p.AllEmissions(p.Train, w, buf)
		tEval += t1.Sub(t0)
		tFloor += time.Since(t1)
	}
	b.ReportMetric(tEval.Seconds()/float64(b.N), "s/eval")
	b.ReportMetric(tEval.Seconds()/tFloor.Seconds(), "eval/floor")
}
