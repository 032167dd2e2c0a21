// Package sessiontest provides a fast, dependency-free scenario for the tests
// of the session and server packages: its methods emit synthetic records as
// fast as the recorder takes them, so that tests exercise the run machinery
// (storage, streaming, pause, cancel, panics) independently of the solvers.
package sessiontest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

// Name is the registered scenario's name.
const Name = "test-fake"

var once sync.Once

// Register adds the fake scenario to the registry (once). Its parameters:
//
//	n         iterations per trace (capped by the run's iters); n+1 records with the start
//	panic_at  the method panics at this iteration (0: never)
//	fail      when non-empty, Run returns an error with this text after the records
//	delay_us  microseconds slept after each record
//	data      a data-file path (kind Path), recorded in the instance's panels
//	panel_err when non-empty, ResultPanels fails with this text
//	blocks    the instance's block count q (1)
//	build_ms  milliseconds the build takes, without watching its context
//	          (a build slower than its request)
//
// A method with workers w > 1 (a block method's pool, at most q) counts as w
// goroutines computing at once, for MaxConcurrency.
//
// The instance implements scenarios.ResultPanels: a finished trace's panels
// are {"final": [iterations, seed]}, its Result.X.
// Method rejects m0 > n with a field error named "m0", as real instances do.
func Register() {
	once.Do(func() {
		scenarios.Register(&scenarios.Scenario{
			Name: Name, Title: "Synthetic records", Help: "Emits synthetic records quickly.", Group: "test",
			Params: []scenarios.Param{
				{Name: "n", Kind: scenarios.Int, Default: "1000", Help: "records per trace", Min: 1, HasMin: true},
				{Name: "panic_at", Kind: scenarios.Int, Default: "0", Help: "panic at this iteration", Min: 0, HasMin: true},
				{Name: "fail", Kind: scenarios.String, Default: "", Help: "error text returned by Run"},
				{Name: "delay_us", Kind: scenarios.Int, Default: "0", Help: "sleep after each record", Min: 0, HasMin: true, Max: 1e6, HasMax: true},
				{Name: "data", Kind: scenarios.Path, Default: "", Help: "a data file"},
				{Name: "panel_err", Kind: scenarios.String, Default: "", Help: "error text returned by ResultPanels"},
				{Name: "blocks", Kind: scenarios.Int, Default: "1", Help: "block count q", Min: 1, HasMin: true, Max: 64, HasMax: true},
				{Name: "build_ms", Kind: scenarios.Int, Default: "0", Help: "milliseconds the build takes", Min: 0, HasMin: true, Max: 60_000, HasMax: true},
			},
			Algorithms: []string{"fw", "afw", "ssfw-as", "fista"},
			Defaults:   []spec.Algo{{Algo: "ssfw-as"}, {Algo: "fista"}},
			Build: func(ctx context.Context, v scenarios.Values, seed int64) (scenarios.Instance, error) {
				time.Sleep(time.Duration(v.Int("build_ms")) * time.Millisecond)
				return &Instance{
					N: v.Int("n"), PanicAt: v.Int("panic_at"), Fail: v.Str("fail"),
					Delay: time.Duration(v.Int("delay_us")) * time.Microsecond, Data: v.Str("data"),
					PanelErr: v.Str("panel_err"), Blocks: v.Int("blocks"),
				}, nil
			},
		})
	})
}

// Instance is the fake instance.
type Instance struct {
	N        int
	PanicAt  int
	Fail     string
	Delay    time.Duration
	Data     string
	PanelErr string
	Blocks   int
}

// ResultPanels returns {"final": x} (x is [iterations, seed]), or fails
// with PanelErr.
func (in *Instance) ResultPanels(x []float64) (map[string]any, error) {
	if in.PanelErr != "" {
		return nil, errors.New(in.PanelErr)
	}
	return map[string]any{"final": append([]float64(nil), x...)}, nil
}

// Info reports n as the dimension and the data path as a panel.
func (in *Instance) Info() scenarios.Info {
	return scenarios.Info{Dim: 2, Samples: in.N, Blocks: max(in.Blocks, 1), Panels: map[string]any{"data": in.Data}}
}

// Method makes a fake method.
func (in *Instance) Method(a spec.Algo, lim solver.Limits, seed int64) (solver.Method, error) {
	if a.M0 > in.N {
		return nil, spec.Errorf("m0", "must be at most the sample count n = %d, got %d", in.N, a.M0)
	}
	w := max(a.Workers, 1)
	if a.Workers == 0 {
		w = runtime.GOMAXPROCS(0) // as the solver's block methods
	}
	return &Method{in: in, stochastic: spec.Stochastic(a.Algo), lim: lim, seed: seed, workers: int64(min(w, max(in.Blocks, 1)))}, nil
}

// Method is the fake method.
type Method struct {
	in         *Instance
	stochastic bool
	lim        solver.Limits
	seed       int64
	workers    int64 // goroutines computing at once
}

var (
	executing    atomic.Int64
	maxExecuting atomic.Int64
)

// ResetConcurrency clears the record of concurrently executing methods.
func ResetConcurrency() { maxExecuting.Store(0) }

// MaxConcurrency returns the largest number of methods seen computing at once
// (between two records) since the last reset.
func MaxConcurrency() int64 { return maxExecuting.Load() }

// Objective is the fake objective at iteration k of a trace with this seed.
func Objective(seed int64, k int) float64 { return 1/float64(k+1) + float64(seed)*1e-3 }

var steps = [...]string{solver.StepFW, solver.StepAway, solver.StepDrop}

// Run emits the starting record k = 0 and then one record for each of
// min(n, iters) iterations, as the solvers do, evaluating the first and last
// records and every EvalEvery-th (every one when EvalEvery is 0).
func (m *Method) Run(ctx context.Context, rec solver.Recorder) (solver.Result, error) {
	// Time counts the method's own work, not the time spent in the
	// Recorder (where the session holds a paused or slot-less trace), as
	// the solver's methods do.
	start := time.Now()
	var inRecorder time.Duration
	work := func() float64 { return (time.Since(start) - inRecorder).Seconds() }
	iters := min(m.in.N, m.lim.MaxIters)
	var sum solver.Summary
	for k := 0; k <= iters; k++ {
		if ctx.Err() != nil {
			sum.Status = solver.StatusCancelled
			sum.Time = work()
			return solver.Result{Summary: sum}, nil
		}
		if m.in.PanicAt > 0 && k == m.in.PanicAt {
			panic(fmt.Sprintf("fake method: boom at k = %d", k))
		}
		// The "work" of the iteration, counted for the concurrency bound.
		n := executing.Add(m.workers)
		for {
			mx := maxExecuting.Load()
			if n <= mx || maxExecuting.CompareAndSwap(mx, n) {
				break
			}
		}
		r := solver.Record{
			K: k, Passes: float64(k) / 2, Step: steps[k%3], Gamma: 1 / float64(k+2),
			Batch: k, Active: k%7 + 1,
		}
		switch {
		case k == 0:
			r.Step, r.Gamma = solver.StepNone, 0
		case r.Step == solver.StepDrop:
			r.Drops = 1
		}
		if k == 0 || k == iters || k%max(m.lim.EvalEvery, 1) == 0 {
			r.Objective = solver.F(Objective(m.seed, k))
			r.Gap = solver.F(1 / float64(k+1))
			if m.stochastic && k > 0 {
				r.GradErr = solver.F(0.5 / float64(k))
			}
			sum.Objective, sum.Gap = *r.Objective, *r.Gap
		}
		executing.Add(-m.workers)
		r.Time = work()
		t0 := time.Now()
		rec.Record(r)
		inRecorder += time.Since(t0)
		sum.Iters, sum.Passes = k, r.Passes
		if m.in.Delay > 0 {
			time.Sleep(m.in.Delay)
		}
	}
	sum.Time = work()
	if m.in.Fail != "" {
		return solver.Result{}, errors.New(m.in.Fail)
	}
	sum.Status = solver.StatusMaxIters
	return solver.Result{Summary: sum, X: []float64{float64(iters), float64(m.seed)}}, nil
}
