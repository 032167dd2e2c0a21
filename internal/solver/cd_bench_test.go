package solver_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/fwlab/fwlab/internal/problems/glm"
	"github.com/fwlab/fwlab/internal/solver"
)

// lassoBench is the LASSO of BenchmarkCDLasso: X standard normal n×p, a
// true β with 18 non-zeros, y = Xβ + noise, λ = 0.05·λ_max.
func lassoBench(tb testing.TB, n, p int) (*glm.Problem, *glm.Synthetic) {
	tb.Helper()
	s, err := glm.Generate(glm.Squared, n, p, 18, 1, 7)
	if err != nil {
		tb.Fatal(err)
	}
	probe, err := glm.New(glm.Config{Loss: glm.Squared, X: s.X, Y: s.Y, Lambda: 1})
	if err != nil {
		tb.Fatal(err)
	}
	pr, err := probe.WithLambda(0.05*probe.LambdaMax(), 0)
	if err != nil {
		tb.Fatal(err)
	}
	return pr, s
}

// timeTo runs algo on pr, evaluating every iteration (evaluations are not
// counted in a record's time), and returns the work time of the first
// record whose objective is within rel·F* of fstar, and that objective.
func timeTo(tb testing.TB, pr *glm.Problem, algo string, fstar, rel float64) (float64, float64) {
	tb.Helper()
	return timeToPath(tb, pr, algo, 0, fstar, rel)
}

// timeToPath is timeTo with cd's continuation of path stages.
func timeToPath(tb testing.TB, pr *glm.Problem, algo string, path int, fstar, rel float64) (float64, float64) {
	tb.Helper()
	cfg := solver.Config{Algorithm: algo, Path: path, Limits: solver.Limits{MaxIters: 1_000_000, EvalEvery: 1}}
	var m solver.Method
	var err error
	if algo == "cd" {
		m, err = solver.NewCD(pr, pr, cfg)
	} else {
		m, err = solver.NewProx(pr, pr, cfg)
	}
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	at, obj := math.NaN(), math.NaN()
	res, err := m.Run(ctx, solver.RecorderFunc(func(r solver.Record) {
		if math.IsNaN(at) && r.Evaluated() && (*r.Objective-fstar) <= rel*math.Abs(fstar) {
			at, obj = r.Time, *r.Objective
			cancel()
		}
	}))
	if err != nil {
		tb.Fatal(err)
	}
	if math.IsNaN(at) {
		tb.Fatalf("%s did not reach %g relative suboptimality: %+v", algo, rel, res.Summary)
	}
	return at, obj
}

// BenchmarkCDLasso compares coordinate descent with FISTA on the LASSO a
// practitioner would hand to scikit-learn's Lasso (2 000×5 000 and
// 1 000×2 000, 18 true non-zeros, λ = 0.05·λ_max): the work time of each to
// a relative suboptimality of 1e-6, F* from cd run to its coordinate-wise
// minimum and certified by its duality gap. x-fista is fista's time over
// cd's; cd-certified-ms is cd's own run to its coordinate-wise minimum,
// where its duality gap certifies F*. The times are CPU time on one core (the records' clock is the
// process CPU clock during the benchmark). With FWLAB_CD_DATA set to a folder, it writes each instance there
// (X row-major and y as little-endian float64, λ and F* as text) for
// bench/sklearn_lasso.py, which times scikit-learn on the same data.
func BenchmarkCDLasso(b *testing.B) {
	for _, sz := range []struct{ n, p int }{{2000, 5000}, {1000, 2000}, {20000, 200}} {
		b.Run(fmt.Sprintf("%dx%d", sz.n, sz.p), func(b *testing.B) {
			pr, syn := lassoBench(b, sz.n, sz.p)
			// one core, and the records' times read in CPU time: the figures
			// do not count what other jobs on a loaded machine take
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			defer solver.SetClock(cpuTime)()
			cfg := solver.Config{Algorithm: "cd", Limits: solver.Limits{MaxIters: 1_000_000}}
			m, err := solver.NewCD(pr, pr, cfg)
			if err != nil {
				b.Fatal(err)
			}
			res, err := m.Run(context.Background(), solver.RecorderFunc(func(solver.Record) {}))
			if err != nil {
				b.Fatal(err)
			}
			fstar, gap := res.Summary.Objective, res.Summary.Gap
			if !(gap <= 1e-9*fstar) {
				b.Fatalf("cd's optimum is not certified: gap %.3g at F = %.10g", gap, fstar)
			}
			if dir := os.Getenv("FWLAB_CD_DATA"); dir != "" {
				writeLassoData(b, filepath.Join(dir, fmt.Sprintf("lasso-%dx%d", sz.n, sz.p)), syn, pr.Lambda(), fstar)
			}
			var cd, fista float64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t, _ := timeTo(b, pr, "cd", fstar, 1e-6)
				cd += t
				t, _ = timeTo(b, pr, "fista", fstar, 1e-6)
				fista += t
			}
			b.ReportMetric(cd/float64(b.N)*1e3, "cd-ms")
			b.ReportMetric(fista/float64(b.N)*1e3, "fista-ms")
			b.ReportMetric(fista/cd, "x-fista")
			b.ReportMetric(gap/fstar, "gap/F*")
			// cd run to its coordinate-wise minimum, its certificate
			// evaluated on the default cadence (evaluations not counted)
			b.ReportMetric(res.Summary.Time*1e3, "cd-certified-ms")
		})
	}
}

func writeLassoData(tb testing.TB, base string, s *glm.Synthetic, lambda, fstar float64) {
	tb.Helper()
	n, p := s.X.Dims()
	write := func(name string, v []float64) {
		buf := make([]byte, 8*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint64(buf[8*i:], math.Float64bits(x))
		}
		if err := os.WriteFile(base+name, buf, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	write(".X", s.X.RawMatrix().Data)
	write(".y", s.Y)
	meta := fmt.Sprintf("n %d\np %d\nlambda %.17g\nfstar %.17g\n", n, p, lambda, fstar)
	if err := os.WriteFile(base+".txt", []byte(meta), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// certifiedCD runs cd with path continuation stages on pr to its
// coordinate-wise minimum, on the default cadence, and checks its gap
// certificate (at most 1e-9·F).
func certifiedCD(tb testing.TB, pr *glm.Problem, path int) solver.Summary {
	tb.Helper()
	m, err := solver.NewCD(pr, pr, solver.Config{Algorithm: "cd", Path: path, Limits: solver.Limits{MaxIters: 1_000_000}})
	if err != nil {
		tb.Fatal(err)
	}
	res, err := m.Run(context.Background(), solver.RecorderFunc(func(solver.Record) {}))
	if err != nil {
		tb.Fatal(err)
	}
	if s := res.Summary; s.Status != solver.StatusConverged || !(s.Gap <= 1e-9*s.Objective) {
		tb.Fatalf("cd with path = %d ended %s (%s) with gap %.3g at F = %.10g", path, s.Status, s.Message, s.Gap, s.Objective)
	}
	return res.Summary
}

// BenchmarkCDLassoPath compares cd from a cold start with cd along a
// geometric λ path of K stages (the setting path, docs/cd.md) on
// BenchmarkCDLasso's two instances (2 000×5 000 and 1 000×2 000, 18 true
// non-zeros, λ = 0.05·λ_max), both in the same round: cold-ms and path-ms
// are the CPU times to a relative suboptimality of 1e-6 (every record
// evaluated, evaluations not counted), x-cold is cold-ms over path-ms;
// cold-certified-ms and path-certified-ms the runs to their coordinate-wise
// minimum, whose duality gap certifies F*, and cold-passes and path-passes
// their work counted in passes (the same on every machine).
func BenchmarkCDLassoPath(b *testing.B) {
	for _, sz := range []struct{ n, p int }{{2000, 5000}, {1000, 2000}} {
		pr, _ := lassoBench(b, sz.n, sz.p)
		for _, k := range []int{3, 10, 30} {
			b.Run(fmt.Sprintf("%dx%d/path=%d", sz.n, sz.p, k), func(b *testing.B) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
				defer solver.SetClock(cpuTime)()
				fstar := certifiedCD(b, pr, 0).Objective
				var cold, path, coldC, pathC, coldP, pathP float64
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					t, _ := timeToPath(b, pr, "cd", 0, fstar, 1e-6)
					cold += t
					t, _ = timeToPath(b, pr, "cd", k, fstar, 1e-6)
					path += t
					c, p := certifiedCD(b, pr, 0), certifiedCD(b, pr, k)
					coldC += c.Time
					pathC += p.Time
					coldP, pathP = c.Passes, p.Passes
				}
				n := float64(b.N)
				b.ReportMetric(coldP, "cold-passes")
				b.ReportMetric(pathP, "path-passes")
				b.ReportMetric(cold/n*1e3, "cold-ms")
				b.ReportMetric(path/n*1e3, "path-ms")
				b.ReportMetric(cold/path, "x-cold")
				b.ReportMetric(coldC/n*1e3, "cold-certified-ms")
				b.ReportMetric(pathC/n*1e3, "path-certified-ms")
			})
		}
	}
}

// BenchmarkCDLassoPathSweep is a sweep over λ as the dashboard runs one:
// one run per λ ∈ {0.5, 0.2, 0.1, 0.05, 0.02, 0.01}·λ_max on the 1 000×2 000
// instance, each independent, cold or with path = K; the total CPU time of
// the six runs to their certified coordinate-wise minimum (cold-ms,
// path-ms; x-cold is their ratio) and their total work in passes.
func BenchmarkCDLassoPathSweep(b *testing.B) {
	base, _ := lassoBench(b, 1000, 2000)
	var cells []*glm.Problem
	for _, f := range []float64{0.5, 0.2, 0.1, 0.05, 0.02, 0.01} {
		pr, err := base.WithLambda(f*base.LambdaMax(), 0)
		if err != nil {
			b.Fatal(err)
		}
		cells = append(cells, pr)
	}
	for _, k := range []int{3, 10, 30} {
		b.Run(fmt.Sprintf("path=%d", k), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			defer solver.SetClock(cpuTime)()
			var cold, path, coldP, pathP float64
			for i := 0; i < b.N; i++ {
				coldP, pathP = 0, 0
				for _, pr := range cells {
					c, p := certifiedCD(b, pr, 0), certifiedCD(b, pr, k)
					cold += c.Time
					path += p.Time
					coldP += c.Passes
					pathP += p.Passes
				}
			}
			b.ReportMetric(coldP, "cold-passes")
			b.ReportMetric(pathP, "path-passes")
			b.ReportMetric(cold/float64(b.N)*1e3, "cold-ms")
			b.ReportMetric(path/float64(b.N)*1e3, "path-ms")
			b.ReportMetric(cold/path, "x-cold")
		})
	}
}
