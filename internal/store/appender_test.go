package store

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
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

// A Flush that finds nothing buffered must not keep reading the buffer:
// records added meanwhile would be written by it and again by the next
// Flush (a trace's first records stored twice, k = 0, 1, …, 0, 1, …). Here
// flushes run back to back while two traces add records one at a time, so
// the buffer is often empty when a flush starts and a record arrives while
// it runs; every trace must come back exactly once, in order.
func TestAppenderFlushOfEmptyBufferWritesOnce(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	id, err := s.PutRun(ctx, testRun("lasso", "ssfw-as", "fista"))
	if err != nil {
		t.Fatal(err)
	}
	a := s.NewAppender(id, time.Millisecond)
	const n = 400
	var adders, flusher sync.WaitGroup
	stop := make(chan struct{})
	flusher.Add(1)
	go func() {
		defer flusher.Done()
		for {
			select {
			case <-stop:
				return
			default:
				_ = a.Flush(ctx)
			}
		}
	}()
	for tr := 0; tr < 2; tr++ {
		adders.Add(1)
		go func(tr int) {
			defer adders.Done()
			for k := 0; k < n; k++ {
				a.Add(tr, solver.Record{K: k, Step: "fw"})
				if k%4 == 0 {
					time.Sleep(50 * time.Microsecond) // let the buffer empty
				}
			}
		}(tr)
	}
	adders.Wait()
	close(stop)
	flusher.Wait()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	for tr := 0; tr < 2; tr++ {
		got, err := s.Records(ctx, id, tr, 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range got {
			if r.K != i {
				t.Fatalf("trace %d: record %d has k = %d", tr, i, r.K)
			}
		}
		if len(got) != n {
			t.Fatalf("trace %d: %d records stored, want %d", tr, len(got), n)
		}
	}
}

// A flush writes a trace's batches in transactions of at most MaxTxBytes
// of blobs (one batch larger than that alone), in order, each as full as
// the next batch allows.
func TestTxBatchesGroupsByBytes(t *testing.T) {
	mk := func(sizes ...int) []Batch {
		var bs []Batch
		for _, n := range sizes {
			bs = append(bs, Batch{N: 1, Blob: make([]byte, n)})
		}
		return bs
	}
	const M = MaxTxBytes
	for _, c := range []struct {
		sizes []int
		want  []int // the transactions' batch counts
	}{
		{[]int{10}, []int{1}},
		{[]int{M}, []int{1}},
		{[]int{M + 1}, []int{1}},
		{[]int{M / 2, M / 2}, []int{2}},
		{[]int{M / 2, M/2 + 1}, []int{1, 1}},
		{[]int{2 * M, 10, 10}, []int{1, 2}},
		{[]int{10, 2 * M, 10}, []int{1, 1, 1}},
		{[]int{M / 4, M / 4, M / 4, M / 4, M / 4}, []int{4, 1}},
		{[]int{M / 3, M / 3, M / 3, M}, []int{3, 1}},
	} {
		var got []int
		for bs := mk(c.sizes...); len(bs) > 0; {
			n := txBatches(bs)
			got = append(got, n)
			bs = bs[n:]
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("batches of %v bytes: transactions of %v batches, want %v", c.sizes, got, c.want)
		}
	}
}
