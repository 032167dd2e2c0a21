package ssvm

import (
	"math"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
)

// maxAbs returns max_j |x_j|.
func maxAbs(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s = max(s, math.Abs(v))
	}
	return s
}

// TestLazyAverageMatchesRecursion checks the lazily kept average w̄ of bcfw
// and bcfw-as (with and without feature sampling) against the elementwise
// recursion w̄ ← (1−ρ)w̄ + ρw with ρ = 2/(k+1), run beside the method on
// the iterates w it produces: every coordinate within 1e-12·‖w̄‖∞ at every
// iteration on the synthetic chain (through three once-per-pass
// recomputations of w) and at every quarter pass over 2.5 passes on OCR.
// ℓ̄ is the recursion's bit for bit.
func TestLazyAverageMatchesRecursion(t *testing.T) {
	type instance struct {
		p          *Problem
		iters, chk int
	}
	chain := smallChain(t, 30, 5, 0.05)
	cases := map[string]instance{"chain": {chain, 3*chain.N() + 7, 1}}
	if !testing.Short() {
		ocr := ocrProblem(t, 0.01)
		cases["ocr"] = instance{ocr, 5 * ocr.N() / 2, ocr.N() / 4}
	}
	for name, c := range cases {
		p := c.p
		n := p.N()
		for _, o := range []Options{
			{Algo: AlgoBCFW},
			{Algo: AlgoBCFWAS, Schedule: solver.Schedule{Kind: "geometric", M0: 5, Growth: 1.01}},
			{Algo: AlgoBCFWAS, Schedule: paperSchedule()},
		} {
			o.Average, o.Limits, o.Seed = true, defaultLimits(n), 4
			m, err := p.NewMethod(o)
			if err != nil {
				t.Fatal(err)
			}
			ref := make([]float64, p.D)
			lref := 0.0
			worst := 0.0
			for k := 1; k <= c.iters; k++ {
				m.iterate()
				rho := 2 / float64(k+1)
				for j, v := range m.weights() {
					ref[j] = (1-rho)*ref[j] + rho*v
				}
				lref = (1-rho)*lref + rho*m.ell
				if math.Float64bits(lref) != math.Float64bits(m.lavg) {
					t.Fatalf("%s %s iteration %d: ℓ̄ = %v, the recursion %v", name, o.Algo, k, m.lavg, lref)
				}
				if k%c.chk != 0 && k != c.iters {
					continue
				}
				got := m.avgWeights()
				scale := maxAbs(ref)
				for j := range ref {
					d := math.Abs(got[j] - ref[j])
					worst = max(worst, d/scale)
					if d > 1e-12*scale {
						t.Fatalf("%s %s iteration %d: w̄[%d] = %v, the recursion %v (‖w̄‖∞ = %v)", name, o.Algo, k, j, got[j], ref[j], scale)
					}
				}
			}
			t.Logf("%s %s: largest difference %.2g·‖w̄‖∞", name, o.Algo, worst)
		}
	}
}

// TestLazyAverageReadsDoNotPerturb checks that forming w̄ (at every
// iteration in one run, only at the end in the other) leaves the run
// unchanged: the same w, w̄ and ℓ̄ bit for bit, and that w̄ = w = 0 before
// the first step.
func TestLazyAverageReadsDoNotPerturb(t *testing.T) {
	p := smallChain(t, 30, 5, 0.05)
	n := p.N()
	for _, algo := range []string{AlgoBCFW, AlgoBCFWAS} {
		o := Options{Algo: algo, Average: true, Limits: defaultLimits(n), Seed: 11, Schedule: paperSchedule()}
		a, _ := p.NewMethod(o)
		b, _ := p.NewMethod(o)
		if maxAbs(a.avgWeights()) != 0 {
			t.Fatalf("%s: w̄ ≠ 0 before the first step", algo)
		}
		for k := 0; k < 4*n+3; k++ {
			a.iterate()
			a.avgWeights()
			b.iterate()
		}
		wa, wb := a.avgWeights(), b.avgWeights()
		if hashFloats(wa) != hashFloats(wb) || hashFloats(a.weights()) != hashFloats(b.weights()) || a.lavg != b.lavg {
			t.Fatalf("%s: reading w̄ at every step changed the run", algo)
		}
	}
}
