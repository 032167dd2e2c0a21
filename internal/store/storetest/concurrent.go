package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/store"
)

func checkConcurrent(t *testing.T, s store.Backend) {
	ctx := context.Background()
	const runs, traces, batches = 4, 2, 15
	ids := make([]string, runs)
	for i := range ids {
		ids[i] = put(t, s, TestRun("lasso", "afw", "fista"))
	}
	want := make([][traces][]solver.Record, runs)
	var wg sync.WaitGroup
	errs := make(chan error, runs*traces+4)
	for i := range ids {
		for tr := 0; tr < traces; tr++ {
			recs := RandRecords(rand.New(rand.NewPCG(uint64(i), uint64(tr))), batches*5)
			want[i][tr] = recs
			wg.Add(1)
			go func() {
				defer wg.Done()
				for b := 0; b < batches; b++ {
					if err := s.AppendRecords(ctx, ids[i], tr, recs[b*5:(b+1)*5]); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
	}
	stop := make(chan struct{})
	var rwg sync.WaitGroup
	for g := 0; g < 3; g++ {
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				id := ids[g%runs]
				recs, err := s.Records(ctx, id, 0, 0, -1)
				if err != nil {
					errs <- err
					return
				}
				if len(recs)%5 != 0 { // batches are whole or absent
					errs <- fmt.Errorf("a reader saw %d records: part of a batch", len(recs))
					return
				}
				if _, _, err := s.List(ctx, store.Filter{}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	rwg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i, id := range ids {
		for tr := 0; tr < traces; tr++ {
			got, err := s.Records(ctx, id, tr, 0, -1)
			if err != nil {
				t.Fatal(err)
			}
			CheckRecords(t, got, want[i][tr])
		}
	}
}
