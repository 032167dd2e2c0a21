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
