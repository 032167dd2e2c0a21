package scenarios

import (
	"context"
	"reflect"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

// runTrace runs one algorithm on an instance and returns its records and
// summary.
func runTrace(t *testing.T, inst Instance, a spec.Algo, lim solver.Limits, seed int64) ([]solver.Record, solver.Summary) {
	t.Helper()
	m, err := inst.Method(a, lim, seed)
	if err != nil {
		t.Fatalf("%s: %v", a.Algo, err)
	}
	var recs []solver.Record
	res, err := m.Run(context.Background(), solver.RecorderFunc(func(r solver.Record) { recs = append(recs, r) }))
	if err != nil {
		t.Fatalf("%s: %v", a.Algo, err)
	}
	return recs, res.Summary
}

// GFLASSO's row blocks share their component's residual (coupled blocks).
// With every block per iteration and the full batch, bc-ssfw-as combines the
// block steps by a line search along their sum (drops included) and reaches
// a relative gap of 1e-6 within 100 passes; its objective agrees with the
// optimum certified independently on component blocks (separable, no
// combination involved), and the trace does not depend on the worker count.
func TestGFLASSORowBlocksCoupledReachGap(t *testing.T) {
	row, err := buildGFLASSO(t, spec.Params{"blocks": "row"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !row.P.BlocksCoupled() {
		t.Fatal("row blocks must be coupled")
	}
	comp, err := buildGFLASSO(t, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if comp.P.BlocksCoupled() {
		t.Fatal("component blocks must not be coupled")
	}
	full := spec.Algo{Algo: "bc-ssfw-as", Schedule: "full"}
	_, ref := runTrace(t, comp, full, solver.Limits{MaxIters: 20000, EvalEvery: 10, GapTol: 1e-9}, 1)
	if ref.Status != solver.StatusConverged {
		t.Fatalf("reference on component blocks: %+v", ref)
	}
	fstar := ref.Objective

	lim := solver.Limits{MaxIters: 100000, MaxPasses: 100, EvalEvery: 1}
	for _, w := range []int{1, 2} {
		a := full
		a.Workers = w
		recs, sum := runTrace(t, row, a, lim, 1)
		reached, drops := -1.0, 0
		for _, r := range recs {
			drops += r.Drops
			if r.Objective == nil {
				continue
			}
			if reached < 0 && *r.Gap <= 1e-6**r.Objective {
				reached = r.Passes
			}
			// the gap certifies the P1 objective, an upper bound on F: F − F* ≤ gap
			if *r.Objective-fstar > *r.Gap*(1+1e-9)+1e-9*fstar {
				t.Fatalf("k=%d: F − F* = %.6g exceeds the gap %.6g", r.K, *r.Objective-fstar, *r.Gap)
			}
		}
		t.Logf("workers=%d: relative gap ≤ 1e-6 after %.4g passes; final gap %.3g (F %.12g, F* %.12g), %d drops, %d iterations",
			w, reached, sum.Gap, sum.Objective, fstar, drops, sum.Iters)
		if reached < 0 || reached > 100 {
			t.Errorf("workers=%d: relative gap 1e-6 not reached within 100 passes (final gap %.3g, F %.6g)", w, sum.Gap, sum.Objective)
		}
		if drops == 0 {
			t.Errorf("workers=%d: no drop step in %d iterations", w, sum.Iters)
		}
		if d := sum.Objective - fstar; d > 1e-6*fstar || d < -1e-9*fstar {
			t.Errorf("workers=%d: F = %.12g, certified optimum %.12g", w, sum.Objective, fstar)
		}
	}

	// the same trace with 1 and 2 workers, for the full batch and the paper
	// schedule (each block's randomness comes from the seed, not the worker)
	for _, sched := range []string{"full", "paper"} {
		a := spec.Algo{Algo: "bc-ssfw-as", Schedule: sched, Rho: 0.1, Alpha: 0.5}
		lim := solver.Limits{MaxIters: 60, EvalEvery: 7}
		a.Workers = 1
		r1, _ := runTrace(t, row, a, lim, 3)
		a.Workers = 2
		r2, _ := runTrace(t, row, a, lim, 3)
		for i := range r1 {
			r1[i].Time, r2[i].Time = 0, 0
		}
		if !reflect.DeepEqual(r1, r2) {
			t.Errorf("schedule %s: 1 and 2 workers give different traces", sched)
		}
	}
}
