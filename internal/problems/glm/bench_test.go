package glm

import (
	"testing"
	"time"
)

// BenchmarkStepVsFullGradient measures one sparse Frank-Wolfe update of the
// model (Scale + Add with a vertex T·(±e_j, 1): one column of X) and a batch
// gradient of 100 rows, and reports each as a fraction of one full gradient
// Xᵀf′(Xβ) (BLAS) timed in the same run, on a LASSO with n = 10⁴, p = 10³.
func BenchmarkStepVsFullGradient(b *testing.B) {
	s, err := Generate(Squared, 10000, 1000, 10, 1, 1)
	if err != nil {
		b.Fatal(err)
	}
	pr, err := New(Config{Loss: Squared, X: s.X, Y: s.Y, Lambda: 10})
	if err != nil {
		b.Fatal(err)
	}
	x := make([]float64, pr.Dim())
	m := pr.NewModel(x)
	g := make([]float64, pr.Dim())
	const reps = 20
	start := time.Now()
	for r := 0; r < reps; r++ {
		m.Gradient(0, g, x, nil)
	}
	full := time.Since(start).Seconds() / reps
	vs := pr.Vertices()
	batch := make([]int, 100)
	for i := range batch {
		batch[i] = i * 97
	}
	var upd, grad time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		m.Scale(0, 0.99)
		m.Add(0, 0.01, vs[1+i%(len(vs)-1)])
		t1 := time.Now()
		m.Gradient(0, g, x, batch)
		upd += t1.Sub(t0)
		grad += time.Since(t1)
	}
	b.ReportMetric(full*1e3, "ms/full-gradient")
	b.ReportMetric(upd.Seconds()/float64(b.N)/full, "update/full")
	b.ReportMetric(grad.Seconds()/float64(b.N)/full, "batch100/full")
}
