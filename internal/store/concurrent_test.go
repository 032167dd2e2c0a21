package store

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/solver"
)

// Four runs stream to the store while eight readers page through the
// history and read traces (run with -race).
func TestConcurrentWritersAndReaders(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	const writers, readers, batches, traces = 4, 8, 25, 2
	ids := make([]string, writers)
	want := make([][traces][]solver.Record, writers)
	for w := range ids {
		id, err := s.PutRun(ctx, testRun("lasso", "ssfw-as", "fista"))
		if err != nil {
			t.Fatal(err)
		}
		ids[w] = id
		rng := rand.New(rand.NewPCG(uint64(w), 99))
		for tr := 0; tr < traces; tr++ {
			want[w][tr] = randRecords(rng, batches*20)
		}
	}
	var stop atomic.Bool
	var wg, rg sync.WaitGroup
	errs := make(chan error, writers+readers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for b := 0; b < batches; b++ {
				for tr := 0; tr < traces; tr++ {
					if err := s.AppendRecords(ctx, ids[w], tr, want[w][tr][b*20:(b+1)*20]); err != nil {
						errs <- err
						return
					}
				}
				time.Sleep(time.Millisecond)
			}
			if err := s.SetStatus(ctx, ids[w], StatusDone, time.Now()); err != nil {
				errs <- err
			}
		}(w)
	}
	var reads atomic.Int64
	for r := 0; r < readers; r++ {
		rg.Add(1)
		go func(r int) {
			defer rg.Done()
			rng := rand.New(rand.NewPCG(uint64(r), 7))
			for !stop.Load() {
				runs, total, err := s.List(ctx, Filter{Limit: 2, Offset: rng.IntN(writers)})
				if err != nil {
					errs <- err
					return
				}
				if total != writers {
					t.Errorf("list total %d, want %d", total, writers)
				}
				for _, run := range runs {
					tr := rng.IntN(traces)
					got, err := s.Records(ctx, run.ID, tr, 0, -1)
					if err != nil {
						errs <- err
						return
					}
					// a reader sees a prefix of whole batches
					w := 0
					for i, id := range ids {
						if id == run.ID {
							w = i
						}
					}
					if len(got)%20 != 0 || len(got) > len(want[w][tr]) {
						t.Errorf("read %d records", len(got))
						return
					}
					checkRecords(t, got, want[w][tr][:len(got)])
					reads.Add(1)
				}
				if _, err := s.Get(ctx, ids[rng.IntN(writers)]); err != nil {
					errs <- err
					return
				}
			}
		}(r)
	}
	wg.Wait()
	stop.Store(true)
	rg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for w, id := range ids {
		for tr := 0; tr < traces; tr++ {
			got, err := s.Records(ctx, id, tr, 0, -1)
			if err != nil {
				t.Fatal(err)
			}
			checkRecords(t, got, want[w][tr])
		}
	}
	if reads.Load() == 0 {
		t.Error("the readers read nothing while the writers wrote")
	}
	if err := s.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
}
