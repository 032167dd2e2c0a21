package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/ssvm"
)

// load keeps every core busy with spinning goroutines (two per core, so
// that the run's own goroutines are preempted now and then) until stop.
func load() (stop func()) {
	var done atomic.Bool
	var wg sync.WaitGroup
	for i := 0; i < 2*runtime.NumCPU(); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := uint64(i + 1)
			for !done.Load() {
				for j := 0; j < 1000; j++ {
					x ^= x << 13
					x ^= x >> 7
					x ^= x << 17
				}
			}
			_ = x
		}()
	}
	return func() { done.Store(true); wg.Wait() }
}

// reproRun runs one spec's first algorithm with the default cadence and
// returns its records with time_s cleared, as JSON, and its summary.
func reproRun(t *testing.T, inst Instance, r spec.Run) ([]string, solver.Summary) {
	t.Helper()
	m, err := inst.Method(r.Algorithms[0], LimitsOf(&r), r.Seed)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	res, err := m.Run(context.Background(), solver.RecorderFunc(func(rc solver.Record) {
		rc.Time = 0
		b, err := json.Marshal(rc)
		if err != nil {
			t.Error(err)
		}
		out = append(out, string(b))
	}))
	if err != nil {
		t.Fatal(err)
	}
	res.Summary.Time = 0
	return out, res.Summary
}

// sameRecords fails on the first record (every field but time_s) or summary
// that differs.
func sameRecords(t *testing.T, what string, a, b []string, sa, sb solver.Summary) {
	t.Helper()
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			t.Fatalf("%s: record %d differs:\n%s\n%s", what, i, a[i], b[i])
		}
	}
	if len(a) != len(b) {
		t.Fatalf("%s: %d records against %d", what, len(a), len(b))
	}
	if fmt.Sprintf("%+v", sa) != fmt.Sprintf("%+v", sb) { // NaN gaps compare equal as text
		t.Fatalf("%s: summaries differ:\n%+v\n%+v", what, sa, sb)
	}
}

// reproCases are the runs of TestDefaultCadenceReproducible: every problem
// of the catalogue with its algorithms, the adaptive step rules (curvature,
// backtrack) of those that take one, with limits that keep each run short.
func reproCases(t *testing.T) []spec.Run {
	var out []spec.Run
	for _, s := range All() {
		if s.Name == "ssvm-ocr" {
			if _, err := ssvm.ResolveOCR(""); err != nil {
				t.Logf("ssvm-ocr: skipped (%v)", err)
				continue
			}
		}
		for _, a := range s.Algorithms {
			rules := []string{""}
			switch {
			case s.Group == "ssvm" || a == "spg" || a == "cd":
			case a == "fista" || a == "pgd":
				rules = []string{"", "backtrack"}
			default:
				rules = []string{"curvature", "backtrack"}
			}
			for _, st := range rules {
				r := spec.Run{Problem: s.Name, Algorithms: []spec.Algo{{Algo: a, Stepsize: st}}, Seed: 4, Iters: 400, Replications: 1}
				switch {
				case s.Name == "ssvm-ocr":
					r.Iters, r.Passes = 10000000, 0.5
				case s.Group == "ssvm":
					r.Iters = 3000
				case s.Group == "gflasso":
					r.Iters = 150
				}
				out = append(out, r)
			}
		}
	}
	return out
}

// The same spec with the default cadence gives the same records (every
// field but time_s), stop point, status and summary whether it runs quietly
// or while busy goroutines compete for every core, for every problem of the
// catalogue and both adaptive step rules; block methods give the same with
// 1, 2 and 4 workers.
func TestDefaultCadenceReproducible(t *testing.T) {
	insts := map[string]Instance{}
	for _, r := range reproCases(t) {
		name := r.Problem + "/" + r.Algorithms[0].Algo
		if st := r.Algorithms[0].Stepsize; st != "" {
			name += "/" + st
		}
		t.Run(name, func(t *testing.T) {
			s, v, err := Resolve(&r)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Algorithms[0].Normalize(""); err != nil {
				t.Fatal(err)
			}
			inst := insts[r.Problem]
			if inst == nil {
				if inst, err = s.Build(context.Background(), v, 1); err != nil {
					t.Fatal(err)
				}
				insts[r.Problem] = inst
			}
			quiet, sq := reproRun(t, inst, r)
			stop := load()
			busy, sb := reproRun(t, inst, r)
			stop()
			sameRecords(t, "quiet against loaded", quiet, busy, sq, sb)
			evals := 0
			for _, rc := range quiet {
				if json.Valid([]byte(rc)) && !contains(rc, `"objective":null`) {
					evals++
				}
			}
			if a := r.Algorithms[0].Algo; a == "bc-ssfw-as" || a == "bcfw" {
				for _, w := range []int{1, 2, 4} {
					rw := r
					rw.Algorithms = []spec.Algo{r.Algorithms[0]}
					rw.Algorithms[0].Workers = w
					got, sg := reproRun(t, inst, rw)
					sameRecords(t, fmt.Sprintf("%d workers", w), quiet, got, sq, sg)
				}
			}
			t.Logf("%d records, %d evaluated, %s at k = %d", len(quiet), evals, sq.Status, sq.Iters)
		})
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
