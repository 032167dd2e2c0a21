package scenarios

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

// BenchmarkBlockWorkers times full-batch bc-ssfw-as iterations with every
// block on the GFLASSO instance at ten times the paper's size (N = 1000,
// J = 500, K = 50, λ = γ = 30), on component blocks (5 of them) and on row
// blocks (2 500), with 1, 2 and all cores as workers, and the same for bcfw
// (bcfw-component, bcfw-row). It reports the work time per iteration and
// the speed-up against one worker measured in the same run (x-speedup; the
// target for 2 workers is ≥ 1.6), and fails if the traces differ. Each
// benchmark operation runs the pair (one worker and w, in alternating
// order) twice on row blocks and four times on component blocks, whose runs
// take milliseconds. On a machine shared with other work a run can lose a
// core for part of it (single pairs of component runs on the 2-core machine
// range from 0.8 to 2.4), and such work only ever adds time: x-speedup is
// the fastest one-worker run's time over the fastest w-worker run's, each
// the closest to what the code itself needs, and x-speedup-median the
// median of the pairs' ratios. x-control is the speed-up of a plain arithmetic loop split the same
// way, measured right after each pair of runs, the most the machine gave at
// the time. A run is 60 iterations on component blocks (as in the issue that
// set the target; about 0.25 ms each) and 20 on row blocks (about 25 ms).
func BenchmarkBlockWorkers(b *testing.B) {
	cores := runtime.GOMAXPROCS(0)
	counts := []int{1, 2}
	if cores > 2 {
		counts = append(counts, cores)
	}
	for _, c := range []struct {
		name, blocks, algo string
		iters, pairs       int
	}{
		{"component", "component", "bc-ssfw-as", 60, 4}, {"row", "row", "bc-ssfw-as", 20, 2},
		{"bcfw-component", "component", "bcfw", 60, 4}, {"bcfw-row", "row", "bcfw", 20, 2},
	} {
		iters := c.iters
		params := spec.Params{"n": "1000", "j": "500", "k": "50", "lambda": "30", "gamma": "30", "blocks": c.blocks}
		b.Run(c.name, func(b *testing.B) {
			r := spec.Run{Problem: "gflasso", Params: params, Seed: 1, Iters: iters, EvalEvery: iters,
				Algorithms: []spec.Algo{{Algo: c.algo, Schedule: "full"}}}
			s, v, err := Resolve(&r)
			if err != nil {
				b.Fatal(err)
			}
			inst, err := s.Build(context.Background(), v, r.Seed)
			if err != nil {
				b.Fatal(err)
			}
			run := func(workers int) (float64, []solver.Record) {
				a := r.Algorithms[0]
				a.Workers = workers
				m, err := inst.Method(a, LimitsOf(&r), 1)
				if err != nil {
					b.Fatal(err)
				}
				var recs []solver.Record
				res, err := m.Run(context.Background(), solver.RecorderFunc(func(rec solver.Record) {
					rec.Time = 0
					recs = append(recs, rec)
				}))
				if err != nil {
					b.Fatal(err)
				}
				return res.Summary.Time / float64(res.Summary.Iters), recs
			}
			for _, w := range counts {
				b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
					// The garbage of the instances built before is collected
					// first, and one pair runs untimed, so that the
					// collector's background work does not take a core from
					// the timed runs.
					runtime.GC()
					run(1)
					run(w)
					b.ResetTimer()
					var tw float64
					var speedups, controls []float64
					minOne, minMany := math.Inf(1), math.Inf(1)
					for i := 0; i < b.N; i++ {
						for p := 0; p < c.pairs; p++ {
							// the order alternates, so that a drift in what the
							// machine gives favours neither
							var one, many float64
							var ref, recs []solver.Record
							if p%2 == 0 {
								one, ref = run(1)
								many, recs = run(w)
							} else {
								many, recs = run(w)
								one, ref = run(1)
							}
							if !reflect.DeepEqual(recs, ref) {
								b.Fatalf("%d workers give a different trace", w)
							}
							tw += many
							speedups = append(speedups, one/many)
							minOne, minMany = min(minOne, one), min(minMany, many)
						}
						controls = append(controls, control(1)/control(w))
					}
					b.ReportMetric(tw/float64(b.N*c.pairs)*1e3, "ms/iter")
					b.ReportMetric(minOne/minMany, "x-speedup")
					b.ReportMetric(median(speedups), "x-speedup-median")
					b.ReportMetric(median(controls), "x-control")
				})
			}
		})
	}
}

// median returns the median of xs (which it sorts).
func median(xs []float64) float64 {
	sort.Float64s(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// control times a fixed amount of plain arithmetic split over the given
// number of goroutines, in seconds.
func control(workers int) float64 {
	const total = 20_000_000
	t0 := time.Now()
	var wg sync.WaitGroup
	sink := make([]float64, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := 0.0
			for i := 0; i < total/workers; i++ {
				s += float64(i) * 1e-9
			}
			sink[w] = s
		}()
	}
	wg.Wait()
	return time.Since(t0).Seconds()
}
