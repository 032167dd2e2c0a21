package store

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/solver"
)

// Downloads (EachRecord, which marks its run as being read) run while
// -keep trims the store: the read tracking is shared by the readers and the
// trimmer, and the race detector (make test runs this package with -race)
// finds any access to it without its lock. Every read sees a whole trace
// or none (its run deleted before it began), and Trim deletes runs all the
// while.
func TestReadTrackingUnderDownloadsAndTrim(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	late := base.Add(time.Hour)
	recs := randRecords(rand.New(rand.NewPCG(3, 4)), 10)
	var ids []string
	now = func() time.Time { return base } // entered long before the trims
	old := now
	for range 40 {
		r := testRun("lasso", "afw")
		r.Status, r.Created, r.Ended = StatusDone, base, base
		id, err := s.PutRun(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AppendRecords(ctx, id, 0, recs); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	now = func() time.Time { return late }
	defer func() { now = old }()
	var wg, first sync.WaitGroup
	reads := make([]int, 4)
	for g := range reads {
		wg.Add(1)
		first.Add(1)
		go func() {
			defer wg.Done()
			once := sync.OnceFunc(first.Done)
			defer once()
			// each reader reads one run again and again until it is
			// trimmed, then the next: the trimmer meets runs being read
			for i := g; i < len(ids) && reads[g] < 150; {
				n := 0
				err := s.EachRecord(ctx, ids[i], 0, 0, -1, func(int, *solver.Record) error { n++; return nil })
				switch {
				case errors.Is(err, ErrNotFound) && n == 0:
					i += len(reads)
				case err != nil:
					t.Errorf("reading run %s: %v after %d records", ids[i], err, n)
					return
				case n != len(recs):
					t.Errorf("reading run %s: %d records, want %d", ids[i], n, len(recs))
					return
				default:
					reads[g]++
					once() // the trims begin once every reader has read
				}
			}
		}()
	}
	first.Wait()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	deleted := 0
	for trimming := true; trimming; {
		select {
		case <-done:
			trimming = false
		default:
		}
		n, err := s.Trim(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		deleted += n
	}
	total := 0
	for _, n := range reads {
		total += n
	}
	if deleted == 0 || total == 0 {
		t.Fatalf("%d runs trimmed, %d whole reads: the test did not run reads and trims side by side", deleted, total)
	}
}
