package scenarios

import (
	"context"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

// BenchmarkDefaultCadence runs default runs (no eval_every: the adaptive
// cadence) through the public API and reports the wall time a user waits
// for, including every evaluation and the recorder, against the method's own
// work time in the same run: the unit x-work-time is wall/work (target
// ≤ 1.25). Each sub-benchmark is one problem and algorithm.
func BenchmarkDefaultCadence(b *testing.B) {
	for _, c := range []struct {
		name    string
		problem string
		params  spec.Params
		algo    spec.Algo
		iters   int
	}{
		{"lasso/ssfw-as", "lasso", nil, spec.Algo{Algo: "ssfw-as"}, 2000},
		{"lasso/fista", "lasso", nil, spec.Algo{Algo: "fista"}, 2000},
		{"gflasso/bc-ssfw-as", "gflasso", nil, spec.Algo{Algo: "bc-ssfw-as"}, 2000},
		{"gflasso-row/bc-ssfw-as", "gflasso", spec.Params{"blocks": "row"}, spec.Algo{Algo: "bc-ssfw-as"}, 1000},
		{"gflasso/spg", "gflasso", nil, spec.Algo{Algo: "spg"}, 20000},
	} {
		b.Run(c.name, func(b *testing.B) {
			r := spec.Run{Problem: c.problem, Params: c.params, Algorithms: []spec.Algo{c.algo}, Seed: 1, Iters: c.iters}
			s, v, err := Resolve(&r)
			if err != nil {
				b.Fatal(err)
			}
			inst, err := s.Build(context.Background(), v, r.Seed)
			if err != nil {
				b.Fatal(err)
			}
			var wall, work float64
			evals := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m, err := inst.Method(r.Algorithms[0], LimitsOf(&r), 1)
				if err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				res, err := m.Run(context.Background(), solver.RecorderFunc(func(rec solver.Record) {
					if rec.Evaluated() {
						evals++
					}
				}))
				wall += time.Since(t0).Seconds()
				if err != nil {
					b.Fatal(err)
				}
				work += res.Summary.Time
			}
			b.ReportMetric(wall/work, "x-work-time")
			b.ReportMetric(float64(evals)/float64(b.N), "evals/run")
		})
	}
}
