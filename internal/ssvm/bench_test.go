package ssvm

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/fwlab/fwlab/internal/solver"
)

// BenchmarkOCRPass measures one effective pass (n block steps, with
// averaging, as run) of bcfw and bcfw-as at λ = 0.01 on the full OCR
// training set, on one core, against a floor measured in the same run right
// after each pass: the emission scores of every training letter for every
// label as one gonum matrix product, the faster of X·Wᵀ (the weights stored
// labels × features, as the model keeps them) and X·W (stored features ×
// labels), each timed after every pass. Metrics:
//
//   - floors/pass: the median over the benchmark's passes of the pass's CPU
//     time over that of the floor measured next to it (CPU time of the
//     process on one core: other jobs on a shared machine do not count);
//   - s/pass and floor-s: mean wall seconds of a pass and of the floor,
//     cpu-s/pass and cpu-floor-s the same in CPU time;
//   - allocs/iter and B/pass: heap allocations of the passes alone (after a
//     warm-up of two passes), per block step and per pass.
func BenchmarkOCRPass(b *testing.B) {
	p := ocrProblem(b, 0.01)
	for _, algo := range []string{AlgoBCFW, AlgoBCFWAS} {
		b.Run(algo, func(b *testing.B) { benchPass(b, p, algo) })
	}
}

func benchPass(b *testing.B, p *Problem, algo string) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	n := p.N()
	m, err := p.NewMethod(Options{Algo: algo, Average: true, Limits: defaultLimits(n), Seed: 1,
		Schedule: solver.Schedule{Kind: "paper", Rho: 0.1, Alpha: 0.5}})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	w := make([]float64, p.D)
	for j := range w {
		w[j] = rng.NormFloat64()
	}
	// Warm-up: two passes (scratch space and active sets reach their
	// working size) and one product.
	for j := 0; j < 2*n; j++ {
		m.iterate()
	}
	buf := p.AllEmissions(p.Train, w, nil)
	// The same scores with the weights stored features × labels: X·W, the
	// natural product, which gonum computes faster than X·Wᵀ.
	nl := p.Train.Letters()
	X := mat.NewDense(nl, p.F, p.Train.X)
	Wfk := mat.DenseCopyOf(mat.NewDense(p.K, p.F, w[:p.K*p.F]).T())
	E := mat.NewDense(nl, p.K, nil)
	E.Mul(X, Wfk)
	var tPass, tFloor, cPass, cFloor time.Duration
	var mallocs, bytes uint64
	ratios := make([]float64, 0, b.N)
	var ms0, ms1 runtime.MemStats
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		b.StopTimer()
		runtime.ReadMemStats(&ms0)
		b.StartTimer()
		c0, t0 := cpuTime(), time.Now()
		for j := 0; j < n; j++ {
			m.iterate()
		}
		c1, t1 := cpuTime(), time.Now()
		b.StopTimer()
		runtime.ReadMemStats(&ms1)
		mallocs += ms1.Mallocs - ms0.Mallocs
		bytes += ms1.TotalAlloc - ms0.TotalAlloc
		b.StartTimer()
		c2, t2 := cpuTime(), time.Now()
		buf = p.AllEmissions(p.Train, w, buf)
		c3, t3 := cpuTime(), time.Now()
		E.Mul(X, Wfk)
		c4, t4 := cpuTime(), time.Now()
		// The floor is the faster of the two products.
		if c4-c3 < c3-c2 {
			c2, c3, t2, t3 = c3, c4, t3, t4
		}
		tPass += t1.Sub(t0)
		tFloor += t3.Sub(t2)
		cPass += c1 - c0
		cFloor += c3 - c2
		ratios = append(ratios, float64(c1-c0)/float64(c3-c2))
	}
	b.ReportMetric(median(ratios), "floors/pass")
	b.ReportMetric(tPass.Seconds()/float64(b.N), "s/pass")
	b.ReportMetric(tFloor.Seconds()/float64(b.N), "floor-s")
	b.ReportMetric(cPass.Seconds()/float64(b.N), "cpu-s/pass")
	b.ReportMetric(cFloor.Seconds()/float64(b.N), "cpu-floor-s")
	b.ReportMetric(float64(mallocs)/float64(b.N*n), "allocs/iter")
	b.ReportMetric(float64(bytes)/float64(b.N), "B/pass")
}

func median(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	s := slices.Clone(x)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// evalSetup returns the OCR problem at λ = 0.01, an evaluator and a small
// random w to evaluate.
func evalSetup(b *testing.B) (*Problem, *evaluator, []float64) {
	p := ocrProblem(b, 0.01)
	rng := rand.New(rand.NewPCG(1, 2))
	w := make([]float64, p.D)
	for j := range w {
		w[j] = 0.01 * rng.NormFloat64()
	}
	return p, newEvaluator(p), w
}

// BenchmarkOCREvaluate measures one full evaluation (loss-augmented and
// plain decoding of the training set, plain decoding of the test set), the
// work that is not counted in passes, in units of the same floor (one core).
func BenchmarkOCREvaluate(b *testing.B) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	p, ev, w := evalSetup(b)
	var buf []float64
	ratios := make([]float64, 0, b.N)
	var tEval time.Duration
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		c0, t0 := cpuTime(), time.Now()
		ev.Evaluate(w, 0, true)
		c1, t1 := cpuTime(), time.Now()
		buf = p.AllEmissions(p.Train, w, buf)
		c2 := cpuTime()
		tEval += t1.Sub(t0)
		ratios = append(ratios, float64(c1-c0)/float64(c2-c1))
	}
	b.ReportMetric(tEval.Seconds()/float64(b.N), "s/eval")
	b.ReportMetric(median(ratios), "floors/eval")
}

// BenchmarkOCREvaluateCores times one full evaluation with every core
// against one core in the same run (x-speedup): the words are decoded on
// up to GOMAXPROCS goroutines and the emission product is gonum's, which
// splits large products over the cores too.
func BenchmarkOCREvaluateCores(b *testing.B) {
	_, ev, w := evalSetup(b)
	cores := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(cores)
	var one, all time.Duration
	for i := 0; i < b.N; i++ {
		runtime.GOMAXPROCS(1)
		t0 := time.Now()
		ev.Evaluate(w, 0, true)
		one += time.Since(t0)
		runtime.GOMAXPROCS(cores)
		t0 = time.Now()
		ev.Evaluate(w, 0, true)
		all += time.Since(t0)
	}
	b.ReportMetric(all.Seconds()/float64(b.N), "s/eval")
	b.ReportMetric(float64(one)/float64(all), "x-speedup")
}
