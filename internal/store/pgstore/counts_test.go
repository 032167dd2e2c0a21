package pgstore

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/storetest"
)

// The counts stay exact while writers put runs, change their statuses and
// delete them side by side and the counts are folded between them: every
// total then equals the runs the filter lists.
func TestCountsUnderConcurrentWriters(t *testing.T) {
	s := openShared(t)
	ctx := context.Background()
	problems := []string{"lasso", "gflasso"}
	algos := [][]string{{"afw"}, {"fw", "afw + slack collapse"}, {"pfw", "afw"}}
	statuses := []string{store.StatusRunning, store.StatusPaused, store.StatusDone, store.StatusFailed}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var mine []string
			for i := 0; i < 25; i++ {
				r := storetest.TestRun(problems[(w+i)%2], algos[(w+i)%3]...)
				id, err := s.PutRun(ctx, r)
				if err != nil {
					errs <- err
					return
				}
				mine = append(mine, id)
				// statuses back and forth, as pauses and resumes go
				for k := 0; k < 3; k++ {
					if err := s.SetStatus(ctx, mine[(i*7+k)%len(mine)], statuses[(w+i+k)%len(statuses)], time.Time{}); err != nil {
						errs <- err
						return
					}
				}
				if i%4 == 3 {
					if _, err := s.Delete(ctx, mine[0]); err != nil {
						errs <- err
						return
					}
					mine = mine[1:]
				}
			}
		}(w)
	}
	stop := make(chan struct{})
	var folds sync.WaitGroup
	folds.Add(1)
	go func() {
		defer folds.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			s.counted.Store(0)
			s.compactCounts(ctx)
			if _, _, err := s.List(ctx, store.Filter{Algorithm: "afw"}); err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	close(stop)
	folds.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, fold := range []bool{false, true} {
		if fold {
			s.counted.Store(0)
			s.compactCounts(ctx)
		}
		for _, algo := range []string{"", "afw", "fw", "pfw"} {
			for _, p := range []string{"", "lasso", "gflasso"} {
				for _, st := range append([]string{""}, statuses...) {
					f := store.Filter{Algorithm: algo, Problem: p, Status: st, Limit: store.MaxLimit}
					runs, total, err := s.List(ctx, f)
					if err != nil {
						t.Fatal(err)
					}
					if total != len(runs) {
						t.Errorf("folded %v, %s: total %d, %d runs listed", fold, fmt.Sprintf("%+v", f), total, len(runs))
					}
				}
			}
		}
	}
	var rows int
	if err := s.pool.QueryRow(ctx, `SELECT COUNT(*) FROM run_count_deltas WHERE n < 0`).Scan(&rows); err != nil || rows != 0 {
		t.Errorf("%d negative counts after a fold (%v)", rows, err)
	}
}
