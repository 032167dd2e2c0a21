package toy

import (
	"context"
	"testing"
	"time"

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
