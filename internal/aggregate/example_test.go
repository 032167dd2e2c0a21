package aggregate_test

import (
	"fmt"

	"github.com/fwlab/fwlab/internal/aggregate"
	"github.com/fwlab/fwlab/internal/solver"
)

func Example() {
	// Two replications evaluated at iterations 1 and 2; F* = 1.
	tr := func(f1, f2 float64) []solver.Record {
		return []solver.Record{{K: 1, Passes: 1, Objective: solver.F(f1)}, {K: 2, Passes: 2, Objective: solver.F(f2)}}
	}
	traces := [][]solver.Record{tr(101, 11), tr(1001, 2)}
	for _, s := range aggregate.ByIteration(traces, aggregate.LogSubopt, 1) {
		fmt.Printf("k=%g median=%.1f min=%.1f max=%.1f\n", s.X, s.Median, s.Min, s.Max)
	}
	// Output:
	// k=1 median=2.5 min=2.0 max=3.0
	// k=2 median=0.5 min=0.0 max=1.0
}
