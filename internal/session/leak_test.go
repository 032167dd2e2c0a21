package session

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

// Every test of the package leaves no goroutine behind: runs, cancels,
// pauses, queues and Close all wait for what they started.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// bigInstance holds a large buffer, as a real instance holds its data.
type bigInstance struct{ data []float64 }

func (b *bigInstance) Info() scenarios.Info {
	return scenarios.Info{Dim: 1, Samples: len(b.data), Blocks: 1}
}

func (b *bigInstance) MemoryBytes() int64 { return int64(8 * len(b.data)) }

func (b *bigInstance) Method(a spec.Algo, lim solver.Limits, seed int64) (solver.Method, error) {
	return bigMethod{b}, nil
}

type bigMethod struct{ b *bigInstance }

func (m bigMethod) Run(ctx context.Context, rec solver.Recorder) (solver.Result, error) {
	rec.Record(solver.Record{K: 0, Objective: solver.F(m.b.data[0])})
	return solver.Result{Summary: solver.Summary{Status: solver.StatusMaxIters}}, nil
}

func init() {
	scenarios.Register(&scenarios.Scenario{
		Name: "test-big", Title: "A large instance", Help: "Holds 32 MiB.", Group: "test",
		Algorithms: []string{"fw"},
		Defaults:   []spec.Algo{{Algo: "fw"}},
		Build: func(ctx context.Context, v scenarios.Values, seed int64) (scenarios.Instance, error) {
			d := make([]float64, 4<<20)
			d[0] = float64(seed)
			return &bigInstance{data: d}, nil
		},
	})
}

func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// A finished run frees its instance: twelve finished runs of a 32 MiB
// instance leave the heap where it was, give or take one instance.
func TestFinishedRunsFreeTheirInstances(t *testing.T) {
	m := NewManager(Options{MaxStored: 20})
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = m.Close(ctx)
	}()
	base := heapAfterGC()
	for i := 0; i < 12; i++ {
		r, err := m.Create(context.Background(), spec.Run{Problem: "test-big", Seed: int64(i), Iters: 1, Algorithms: []spec.Algo{{Algo: "fw"}}})
		if err != nil {
			t.Fatal(err)
		}
		<-r.Done()
	}
	if n := len(m.List()); n != 12 {
		t.Fatalf("%d runs kept, want 12", n)
	}
	grown := int64(heapAfterGC()) - int64(base)
	if grown > 32<<20 {
		t.Fatalf("heap grew by %d MiB after 12 finished runs of a 32 MiB instance; their instances are kept", grown>>20)
	}
	t.Logf("heap grew by %.1f MiB", float64(grown)/(1<<20))
}

var (
	buildGate     = make(chan struct{})
	building, top atomic.Int64
)

func init() {
	scenarios.Register(&scenarios.Scenario{
		Name: "test-slow-build", Title: "A slow build", Help: "Waits for the test.", Group: "test",
		Algorithms: []string{"fw"},
		Defaults:   []spec.Algo{{Algo: "fw"}},
		Build: func(ctx context.Context, v scenarios.Values, seed int64) (scenarios.Instance, error) {
			n := building.Add(1)
			for {
				t := top.Load()
				if n <= t || top.CompareAndSwap(t, n) {
					break
				}
			}
			defer building.Add(-1)
			select {
			case <-buildGate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return &bigInstance{data: make([]float64, 1)}, nil
		},
	})
}

// At most MaxActive instances are built at once: a burst of creations
// waits for build slots instead of building everything together.
func TestBuildsAreBounded(t *testing.T) {
	m := NewManager(Options{MaxActive: 2, MaxStored: 20})
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = m.Close(ctx)
	}()
	errs := make(chan error, 6)
	for i := 0; i < 6; i++ {
		go func() {
			_, err := m.Create(context.Background(), spec.Run{Problem: "test-slow-build", Iters: 1, Algorithms: []spec.Algo{{Algo: "fw"}}})
			errs <- err
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for building.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	for i := 0; i < 6; i++ {
		buildGate <- struct{}{}
	}
	for i := 0; i < 6; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := top.Load(); got != 2 {
		t.Fatalf("%d instances built at once, want 2 (MaxActive)", got)
	}
}
