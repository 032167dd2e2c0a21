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

func TestAppenderStreamsAndFlushes(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	id, err := s.PutRun(ctx, testRun("lasso", "ssfw-as", "fista"))
	if err != nil {
		t.Fatal(err)
	}
	a := s.NewAppender(id, 20*time.Millisecond)
	rng := rand.New(rand.NewPCG(1, 2))
	want := [2][]solver.Record{randRecords(rng, 3000), randRecords(rng, 2000)}
	var wg sync.WaitGroup
	for tr := 0; tr < 2; tr++ {
		wg.Add(1)
		go func(tr int) { // one goroutine per trace, as the solvers run
			defer wg.Done()
			for i, r := range want[tr] {
				a.Add(tr, r)
				if i%100 == 0 {
					time.Sleep(time.Millisecond)
				}
			}
		}(tr)
	}
	wg.Wait()
	// the background writes have been going on meanwhile
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, _ := s.Get(ctx, id)
		if r.Traces[0].Records > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	a.Add(0, want[0][0]) // after Close: ignored
	for tr := 0; tr < 2; tr++ {
		got, err := s.Records(ctx, id, tr, 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		checkRecords(t, got, want[tr])
	}
	var batches int
	s.db.QueryRow("SELECT COUNT(*) FROM batches").Scan(&batches)
	if batches < 3 {
		t.Errorf("%d batches: the records were not written as they came", batches)
	}
}

func TestAppenderReportsFailures(t *testing.T) {
	s, err := Open(Memory)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a := s.NewAppender("nosuchrun222", time.Hour)
	a.Add(0, solver.Record{K: 1, Step: "fw"})
	if err := a.Close(); !errors.Is(err, ErrNotFound) {
		t.Fatalf("appending to an unknown run: %v", err)
	}
}

// A long stretch of records buffered at once goes out in batches of at most
// MaxBatchRecords, read back whole and in order.
func TestAppenderSplitsLongBatches(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	id, err := s.PutRun(ctx, testRun("lasso", "fw"))
	if err != nil {
		t.Fatal(err)
	}
	a := s.NewAppender(id, time.Hour)
	want := randRecords(rand.New(rand.NewPCG(3, 4)), 2*MaxBatchRecords+5)
	a.Add(0, want...)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	var batches, most int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*), MAX(n) FROM batches WHERE run_id = ?`, id).Scan(&batches, &most); err != nil {
		t.Fatal(err)
	}
	if batches != 3 || most != MaxBatchRecords {
		t.Errorf("%d batches of at most %d records, want 3 of at most %d", batches, most, MaxBatchRecords)
	}
	got, err := s.Records(ctx, id, 0, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, got, want)
}
