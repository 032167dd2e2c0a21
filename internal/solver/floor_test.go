package solver

import (
	"context"
	"math"
	"testing"
)

// liarOffset is liarProblem (no step is ever accepted) with a constant
// added to its objective: the same gap at an objective of any size.
type liarOffset struct {
	liarProblem
	off float64
}

func (p liarOffset) Objective(x []float64) float64 { return p.liarProblem.Objective(x) + p.off }

// The rounding-floor rule decides a stalled run's status: a run that stops
// with its gap at most RoundingFloorC·ε·|F| is converged, one just above
// it is stalled, whatever the sign of F. The same stalled run (the same
// gap) is put at objectives that place its gap at 0.5 and 2 times the
// floor, with F positive and negative: a floor constant too large, or the
// floor taken without |F|, changes one of these statuses.
func TestRoundingFloorDecidesTheStatus(t *testing.T) {
	run := func(off float64) Summary {
		t.Helper()
		p := newLSQFace(1, 30, 5, 1)
		m := mustNew(t, liarOffset{liarProblem{p}, off}, Config{Algorithm: "afw", Step: "backtrack", Limits: limits(100)})
		res, err := m.Run(context.Background(), &collect{})
		if err != nil {
			t.Fatal(err)
		}
		return res.Summary
	}
	base := run(0)
	if base.Status != StatusStalled || !(base.Gap > 1e-3) {
		t.Fatalf("the run without an offset: %+v, want stalled with a gap above 1e-3", base)
	}
	f0 := base.Objective
	// the documented c of the floor, written out: the test must not scale
	// with the constant it checks
	const c1000 = 1000
	if RoundingFloorC != c1000 {
		t.Errorf("RoundingFloorC = %d, documented as %d", RoundingFloorC, c1000)
	}
	for _, c := range []struct {
		times float64 // the gap as a multiple of the floor
		sign  float64
		want  string
	}{
		{0.5, 1, StatusConverged}, {0.5, -1, StatusConverged},
		{2, 1, StatusStalled}, {2, -1, StatusStalled},
	} {
		// |F| such that gap = times · C·ε·|F|
		absF := base.Gap / (c.times * c1000 * 0x1p-52)
		sum := run(c.sign*absF - f0)
		if sum.Gap != base.Gap {
			t.Fatalf("the offset changed the gap: %v, want %v", sum.Gap, base.Gap)
		}
		if got := sum.Gap / (c1000 * 0x1p-52 * math.Abs(sum.Objective)); math.Abs(got-c.times) > 1e-6 {
			t.Fatalf("gap at %v floors, want %v", got, c.times)
		}
		if sum.Status != c.want {
			t.Errorf("gap at %v× the floor, F = %.6g: %s (%s), want %s", c.times, sum.Objective, sum.Status, sum.Message, c.want)
		}
	}
}
