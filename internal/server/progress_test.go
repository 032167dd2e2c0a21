package server

import (
	"math"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

// TestRunProgress checks the history's progress and time left against
// values worked out by hand.
func TestRunProgress(t *testing.T) {
	rec := func(k int, passes, secs float64) *solver.Record {
		return &solver.Record{K: k, Passes: passes, Time: secs}
	}
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		name   string
		sp     spec.Run
		traces []traceProgress
		frac   float64
		eta    *float64
	}{
		{"no traces", spec.Run{Iters: 100}, nil, 0, nil},
		{"not started", spec.Run{Iters: 100}, []traceProgress{{}}, 0, nil},
		// k = 25 of 100 in 5 s: 15 s left.
		{"iterations", spec.Run{Iters: 100}, []traceProgress{{last: rec(25, 0, 5)}}, 0.25, f(15)},
		// passes 3 of 4 is nearer than k = 10 of 1000: f = 0.75, 2 s for 6 s run.
		{"passes nearer", spec.Run{Iters: 1000, Passes: 4}, []traceProgress{{last: rec(10, 3, 6)}}, 0.75, f(2)},
		// iters 0 is the default 1000.
		{"default iters", spec.Run{}, []traceProgress{{last: rec(500, 0, 1)}}, 0.5, f(1)},
		// One ended, one half way in 10 s: fraction 0.75, 10 s left.
		{"one ended", spec.Run{Iters: 100}, []traceProgress{{ended: true}, {last: rec(50, 0, 10)}}, 0.75, f(10)},
		// Two live (f 0.5 in 10 s, f 0.25 in 2 s) and one waiting: the
		// longest left is 10 s; the mean duration of the started is
		// (20 + 8) / 2 = 14 s for the waiting one.
		{"waiting", spec.Run{Iters: 100}, []traceProgress{{last: rec(50, 0, 10)}, {last: rec(25, 0, 2)}, {}}, 0.25, f(24)},
		{"all ended", spec.Run{Iters: 100}, []traceProgress{{ended: true}, {ended: true}}, 1, f(0)},
		// Past its limit (a last record at k = iters): complete.
		{"clamped", spec.Run{Iters: 10}, []traceProgress{{last: rec(12, 0, 3)}}, 1, f(0)},
	} {
		got := runProgress(c.sp, c.traces)
		if math.Abs(got.Fraction-c.frac) > 1e-12 {
			t.Errorf("%s: fraction %v, want %v", c.name, got.Fraction, c.frac)
		}
		switch {
		case (got.ETA == nil) != (c.eta == nil):
			t.Errorf("%s: eta %v, want %v", c.name, got.ETA, c.eta)
		case got.ETA != nil && math.Abs(*got.ETA-*c.eta) > 1e-9:
			t.Errorf("%s: eta %v, want %v", c.name, *got.ETA, *c.eta)
		}
	}
}
