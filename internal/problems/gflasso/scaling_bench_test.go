package gflasso

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/fwlab/fwlab/internal/solver"
)

// scaleRun is one method's run at one size of BenchmarkScaling.
type scaleRun struct {
	perIter float64 // CPU seconds per iteration not evaluated
	hit     int     // first evaluated iteration at a relative error ≤ 1e-6, −1 if none
	iters   int     // iterations run
	best    float64 // best relative error
}

// report adds the run's metrics, their units prefixed by the method.
func (r *scaleRun) report(b *testing.B, method string) {
	b.ReportMetric(r.perIter*1e3, method+"-ms/iter")
	if r.hit >= 0 {
		b.ReportMetric(float64(r.hit), method+"-iters/1e-6")
		b.ReportMetric(float64(r.hit)*r.perIter, method+"-s/1e-6")
	}
	b.ReportMetric(float64(r.iters), method+"-iters")
	b.ReportMetric(r.best/1e-6, method+"-best/1e-6")
}

// BenchmarkScaling runs bc-ssfw-as (defaults: paper schedule, curvature
// steps, component blocks, slack collapse) and spg on the GFLASSO at 1×, 3×,
// 10× and 30× the paper's size (sub-benchmarks 1x, 3x, 10x, 30x: N×J×K =
// 200×50×20, 600×150×30, 1000×500×50, 3000×1500×150; λ = γ = 10 at 1×, 30
// above, as the paper's and the ten-times instances; about 200 MB at 30×).
// F* is certified by bc-ssfw-as's duality gap: it runs until the gap is at
// most 1e-9·F(0) (at most 50 000 iterations or 30 minutes of CPU), and
// relative errors are measured against the certified lower bound
// F_lo = F(x̂) − gap ≤ F*, so that a time to 1e-6 is an upper bound of the
// true one. spg targets the same accuracy: μ from ε = 5e-7·F_lo; it stops
// at 20 000 iterations or 120 s of CPU. Each size reports, in CPU time on
// one core (the process's CPU time from one record to the next, over the
// iterations not evaluated), per method m (bc-ssfw-as, spg):
//
//	m-ms/iter      the time of an iteration
//	m-iters/1e-6   the iterations to a relative error ≤ 1e-6 (absent when
//	               not reached), m-s/1e-6 that times m-ms/iter
//	m-iters        the iterations run
//	m-best/1e-6    the best relative error, in multiples of 1e-6
//
// and x (the size factor), N, J, K, F* (F_lo), gap/F*/1e-9 (the certified
// gap over F_lo, in multiples of 1e-9) and certify-s (the CPU seconds of
// the certifying run). cmd/benchtable renders them as a table with the
// fitted exponents (time ∝ x^e).
func BenchmarkScaling(b *testing.B) {
	sizes := []struct {
		name    string
		factor  float64
		n, j, k int
		lam     float64
	}{{"1x", 1, 200, 50, 20, 10}, {"3x", 3, 600, 150, 30, 30}, {"10x", 10, 1000, 500, 50, 30}, {"30x", 30, 3000, 1500, 150, 30}}
	for _, sz := range sizes {
		b.Run(sz.name, func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			b.StopTimer()
			sp := DefaultSim(1)
			sp.N, sp.J, sp.K = sz.n, sz.j, sz.k
			s, err := Simulate(sp)
			if err != nil {
				b.Fatal(err)
			}
			p, err := New(s.X, s.Y, Options{Lambda: sz.lam, Gamma: sz.lam, Threshold: 0.7})
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			var c scaleCert
			var bc, spg scaleRun
			for i := 0; i < b.N; i++ {
				c, bc = scaleBC(b, p)
				spg = scaleSPG(b, p, c.flo)
			}
			for u, v := range map[string]float64{"x": sz.factor, "N": float64(sz.n), "J": float64(sz.j), "K": float64(sz.k),
				"F*": c.flo, "gap/F*/1e-9": c.gap / c.flo / 1e-9, "certify-s": c.cpu} {
				b.ReportMetric(v, u)
			}
			bc.report(b, "bc-ssfw-as")
			spg.report(b, "spg")
			fmt.Printf("scaling %s: bc-ssfw-as %.3g ms/iter, 1e-6 after %d iterations; spg %.3g ms/iter, 1e-6 after %d (best %.2g in %d); F* ≥ %.12g, gap %.2g, certified in %.3g s\n",
				sz.name, bc.perIter*1e3, bc.hit, spg.perIter*1e3, spg.hit, spg.best, spg.iters, c.flo, c.gap, c.cpu)
		})
	}
}

// scaleCert is the certificate of F*: F* ∈ [flo, flo + gap].
type scaleCert struct {
	flo, gap float64
	cpu      float64 // CPU seconds of the certifying run
}

// scaleBC runs bc-ssfw-as to a certified gap of 1e-9·F(0) (or its limits)
// and returns the certificate of F* and the run measured against it.
func scaleBC(b *testing.B, p *Problem) (scaleCert, scaleRun) {
	f0 := p.F(mat.NewDense(p.J, p.K, nil))
	var objs []solver.Record
	m, err := solver.New(p, fwConfig("bc-ssfw-as", solver.Limits{MaxIters: 50000, EvalEvery: 10, GapTol: 1e-9 * f0}, 1))
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ct cpuTimer
	start := cpuTime()
	bestF, bestGap := math.Inf(1), math.Inf(1)
	res, err := m.Run(ctx, solver.RecorderFunc(func(rec solver.Record) {
		ct.record(rec)
		if rec.Objective != nil {
			objs = append(objs, rec)
			if rec.Gap != nil && *rec.Gap < math.Inf(1) {
				// Each evaluated record certifies F* ≥ F(x_k) − gap_k.
				if *rec.Objective-*rec.Gap > bestF-bestGap || math.IsInf(bestF, 1) {
					bestF, bestGap = *rec.Objective, *rec.Gap
				}
			}
		}
		if cpuTime()-start > 30*time.Minute {
			cancel()
		}
		ct.mark = cpuTime()
	}))
	if err != nil {
		b.Fatalf("bc-ssfw-as: %v", err)
	}
	if math.IsInf(bestF, 1) {
		b.Fatalf("bc-ssfw-as recorded no duality gap in %d iterations", res.Summary.Iters)
	}
	c := scaleCert{flo: bestF - bestGap, gap: bestGap, cpu: (cpuTime() - start).Seconds()}
	r := scaleRun{perIter: ct.perIter(), hit: -1, iters: res.Summary.Iters, best: math.Inf(1)}
	for _, rec := range objs {
		r.observe(rec.K, *rec.Objective, c.flo)
	}
	return c, r
}

// observe notes an evaluated iteration's objective against F* ≥ flo.
func (r *scaleRun) observe(k int, f, flo float64) {
	rel := (f - flo) / flo
	r.best = math.Min(r.best, rel)
	if r.hit < 0 && rel <= 1e-6 {
		r.hit = k
	}
}

// scaleSPG runs spg towards F − F* ≤ 1e-6·F* (μ from ε = 5e-7·flo) until
// it gets there, 20 000 iterations or 120 s of CPU.
func scaleSPG(b *testing.B, p *Problem, flo float64) scaleRun {
	s, err := NewSPG(p, SPGConfig{Eps: 5e-7 * flo, Limits: solver.Limits{MaxIters: 20000, EvalEvery: 10}})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := scaleRun{hit: -1, best: math.Inf(1)}
	var ct cpuTimer
	start := cpuTime()
	if _, err := s.Run(ctx, solver.RecorderFunc(func(rec solver.Record) {
		ct.record(rec)
		defer func() { ct.mark = cpuTime() }()
		r.iters = rec.K
		if cpuTime()-start > 120*time.Second {
			cancel()
		}
		if rec.Objective != nil {
			r.observe(rec.K, *rec.Objective, flo)
			if r.hit >= 0 {
				cancel()
			}
		}
	})); err != nil {
		b.Fatal(err)
	}
	r.perIter = ct.perIter()
	return r
}

// cpuTimer sums the process's CPU time from one record to the next over
// the iterations that were not evaluated.
type cpuTimer struct {
	mark, cpu time.Duration
	n         int
}

func (c *cpuTimer) record(rec solver.Record) {
	if rec.Objective == nil && rec.K > 0 {
		c.cpu += cpuTime() - c.mark
		c.n++
	}
}

// perIter is the mean CPU time of an iteration, in seconds.
func (c *cpuTimer) perIter() float64 { return c.cpu.Seconds() / float64(max(c.n, 1)) }
