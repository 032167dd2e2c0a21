package server

import (
	"math"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

// TestRunProgress checks the history's progress fraction against values
// worked out by hand.
func TestRunProgress(t *testing.T) {
	rec := func(k int, passes, secs float64) *solver.Record {
		return &solver.Record{K: k, Passes: passes, Time: secs}
	}
	for _, c := range []struct {
		name   string
		sp     spec.Run
		traces []traceProgress
		frac   float64
	}{
		{"no traces", spec.Run{Iters: 100}, nil, 0},
		{"not started", spec.Run{Iters: 100}, []traceProgress{{}}, 0},
		// k = 25 of 100
		{"iterations", spec.Run{Iters: 100}, []traceProgress{{last: rec(25, 0, 5)}}, 0.25},
		// passes 3 of 4 is nearer than k = 10 of 1000
		{"passes nearer", spec.Run{Iters: 1000, Passes: 4}, []traceProgress{{last: rec(10, 3, 6)}}, 0.75},
		// iters 0 is the default 1000.
		{"default iters", spec.Run{}, []traceProgress{{last: rec(500, 0, 1)}}, 0.5},
		// One ended, one half way.
		{"one ended", spec.Run{Iters: 100}, []traceProgress{{ended: true}, {last: rec(50, 0, 10)}}, 0.75},
		// Two live (f 0.5 and 0.25) and one waiting.
		{"waiting", spec.Run{Iters: 100}, []traceProgress{{last: rec(50, 0, 10)}, {last: rec(25, 0, 2)}, {}}, 0.25},
		{"all ended", spec.Run{Iters: 100}, []traceProgress{{ended: true}, {ended: true}}, 1},
		// Past its limit (a last record at k = iters): complete.
		{"clamped", spec.Run{Iters: 10}, []traceProgress{{last: rec(12, 0, 3)}}, 1},
	} {
		if got := runProgress(c.sp, c.traces); math.Abs(got-c.frac) > 1e-12 {
			t.Errorf("%s: fraction %v, want %v", c.name, got, c.frac)
		}
	}
}
