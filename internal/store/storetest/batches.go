package storetest

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/store"
)

func checkRecords(t *testing.T, s store.Backend) {
	ctx := context.Background()
	id := put(t, s, TestRun("lasso", "ssfw-as", "fista"))
	rng := rand.New(rand.NewPCG(7, 8))
	var want [2][]solver.Record
	for b := 0; b < 7; b++ {
		for tr := 0; tr < 2; tr++ {
			recs := RandRecords(rng, 1+rng.IntN(40))
			if b%2 == 0 {
				if err := s.AppendRecords(ctx, id, tr, recs); err != nil {
					t.Fatal(err)
				}
			} else {
				// the same, encoded before and cut in up to three batches
				// written in one call (as the Appender flushes), an empty
				// one among them
				var bs []store.Batch
				for lo := 0; lo < len(recs); {
					hi := min(len(recs), lo+1+rng.IntN(len(recs)))
					var e store.BatchEncoder
					for i := lo; i < hi; i++ {
						e.Add(&recs[i])
					}
					bs = append(bs, store.Batch{N: hi - lo, Blob: e.AppendBlob(nil)})
					if len(bs) == 1 {
						bs = append(bs, store.Batch{})
					}
					lo = hi
				}
				if err := s.AppendBatches(ctx, id, tr, bs); err != nil {
					t.Fatal(err)
				}
			}
			want[tr] = append(want[tr], recs...)
		}
	}
	for tr := 0; tr < 2; tr++ {
		got, err := s.Records(ctx, id, tr, 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		CheckRecords(t, got, want[tr])
		n := len(want[tr])
		for _, rg := range [][2]int{{0, 0}, {0, 1}, {5, 6}, {3, 50}, {n - 1, n}, {n / 2, n + 10}, {n, -1}, {n + 5, -1}} {
			got, err := s.Records(ctx, id, tr, rg[0], rg[1])
			if err != nil {
				t.Fatal(err)
			}
			lo, hi := min(rg[0], n), rg[1]
			if hi < 0 || hi > n {
				hi = n
			}
			CheckRecords(t, got, want[tr][lo:max(lo, hi)])
		}
	}
	if r, _ := s.Get(ctx, id); r.Traces[0].Records != len(want[0]) || r.Traces[1].Records != len(want[1]) {
		t.Errorf("record counts %d, %d; want %d, %d", r.Traces[0].Records, r.Traces[1].Records, len(want[0]), len(want[1]))
	}
	if _, err := s.Records(ctx, id, 0, -1, -1); !fieldErr(err, "from") {
		t.Errorf("a negative from: %v", err)
	}
	if _, err := s.Records(ctx, id, 9, 0, -1); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("records of an unknown trace: %v", err)
	}
	one := store.Batch{N: 1, Blob: store.EncodeBatch(nil, want[0][:1])}
	if err := s.AppendBatches(ctx, "nosuchrun333", 0, []store.Batch{one, one}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("batches for an unknown run: %v", err)
	}
	if err := s.AppendBatches(ctx, id, 7, []store.Batch{one, one}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("batches for an unknown trace: %v", err)
	}
	if err := s.AppendBatches(ctx, id, 0, []store.Batch{{}, {}}); err != nil {
		t.Errorf("empty batches: %v", err)
	}
	if err := s.AppendBatches(ctx, id, 0, nil); err != nil {
		t.Errorf("no batch: %v", err)
	}
	// an empty Extra map reads as nil, the only normalisation
	id2 := put(t, s, TestRun("lasso", "afw"))
	if err := s.AppendRecords(ctx, id2, 0, []solver.Record{{K: 1, Step: "fw", Extra: map[string]float64{}}}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Records(ctx, id2, 0, 0, -1); err != nil || len(got) != 1 || got[0].Extra != nil {
		t.Errorf("an empty Extra: %+v, %v", got, err)
	}
}

func checkLargeBatches(t *testing.T, s store.Backend) {
	ctx := context.Background()
	id := put(t, s, TestRun("lasso", "afw"))
	rng := rand.New(rand.NewPCG(1, 9))
	want := RandRecords(rng, store.MaxBatchRecords)
	want = append(want, RandRecords(rng, 3)...)
	if err := s.AppendRecords(ctx, id, 0, want[:store.MaxBatchRecords]); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendRecords(ctx, id, 0, want[store.MaxBatchRecords:]); err != nil {
		t.Fatal(err)
	}
	got, err := s.Records(ctx, id, 0, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	CheckRecords(t, got, want)
	got, err = s.Records(ctx, id, 0, store.MaxBatchRecords-2, store.MaxBatchRecords+2)
	if err != nil {
		t.Fatal(err)
	}
	CheckRecords(t, got, want[store.MaxBatchRecords-2:store.MaxBatchRecords+2])
}

func checkEachRecord(t *testing.T, s store.Backend) {
	ctx := context.Background()
	id := put(t, s, TestRun("lasso", "afw"))
	rng := rand.New(rand.NewPCG(5, 5))
	var want []solver.Record
	for b := 0; b < 40; b++ { // more batches than one read takes
		recs := RandRecords(rng, 3)
		if err := s.AppendRecords(ctx, id, 0, recs); err != nil {
			t.Fatal(err)
		}
		want = append(want, recs...)
	}
	var idx []int
	stop := errors.New("enough")
	err := s.EachRecord(ctx, id, 0, 10, -1, func(i int, r *solver.Record) error {
		if d := RecordDiff(r, &want[i]); d != "" {
			t.Fatalf("record %d: %s", i, d)
		}
		idx = append(idx, i)
		if i == 100 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || len(idx) != 91 || idx[0] != 10 || idx[90] != 100 {
		t.Errorf("EachRecord from 10 stopped at 100: %v, %d records from %v", err, len(idx), idx[:1])
	}
	// the callback may use the store (a reader inside a walk)
	n := 0
	err = s.EachRecord(ctx, id, 0, 0, -1, func(i int, r *solver.Record) error {
		n++
		if i%50 == 0 {
			_, err := s.Get(ctx, id)
			return err
		}
		return nil
	})
	if err != nil || n != len(want) {
		t.Errorf("a walk that reads the store: %d records, %v", n, err)
	}
}

func checkAppender(t *testing.T, s store.Backend) {
	ctx := context.Background()
	id := put(t, s, TestRun("lasso", "afw", "fista"))
	a := store.NewAppenderFor(s, id, 5*time.Millisecond)
	rng := rand.New(rand.NewPCG(6, 6))
	var want [2][]solver.Record
	for i := 0; i < 300; i++ {
		tr := i % 2
		rec := RandRecords(rng, 1)[0]
		a.Add(tr, rec)
		want[tr] = append(want[tr], rec)
		if i == 150 {
			time.Sleep(20 * time.Millisecond) // a few flushes mid-stream
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	a.Add(0, want[0][0]) // after Close: nothing
	for tr := 0; tr < 2; tr++ {
		got, err := s.Records(ctx, id, tr, 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		CheckRecords(t, got, want[tr])
	}
	// more than a batch's records between two writes: full batches, then
	// the rest
	id2 := put(t, s, TestRun("lasso", "afw"))
	c := store.NewAppenderFor(s, id2, time.Hour)
	many := RandRecords(rng, 2*store.MaxBatchRecords+5)
	for i := range many {
		c.Add(0, many[i])
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Records(ctx, id2, 0, 0, -1); err != nil {
		t.Fatal(err)
	} else {
		CheckRecords(t, got, many)
	}
	// a failed write is reported
	b := store.NewAppenderFor(s, "nosuchrun222", time.Hour)
	b.Add(0, want[0][0])
	if err := b.Close(); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an appender for an unknown run: %v", err)
	}
}

// checkAppenderBatches: batches encoded by the caller (AddBatch) between
// records added, and records held back until BeforeWrite's function hands
// them over, before every write, Close's last one included.
func checkAppenderBatches(t *testing.T, s store.Backend) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(6, 7))
	id3 := put(t, s, TestRun("lasso", "afw", "fista"))
	d := store.NewAppenderFor(s, id3, 5*time.Millisecond)
	var mu sync.Mutex
	var held [2][]solver.Record
	var want3 [2][]solver.Record
	writes := 0
	// handHeld hands trace tr's held records over as one encoded batch (mu held)
	handHeld := func(tr int) {
		if len(held[tr]) > 0 {
			d.AddBatch(tr, encoded(held[tr]))
			held[tr] = nil
		}
	}
	d.BeforeWrite(func() {
		mu.Lock()
		defer mu.Unlock()
		writes++
		for tr := range held {
			handHeld(tr)
		}
	})
	for i := 0; i < 600; i++ {
		tr := i % 2
		recs := RandRecords(rng, 1+rng.IntN(3))
		mu.Lock()
		switch i % 3 {
		case 0: // added: after what is held, which goes first
			handHeld(tr)
			d.Add(tr, recs...)
		default: // held back
			held[tr] = append(held[tr], recs...)
		}
		mu.Unlock()
		want3[tr] = append(want3[tr], recs...)
		if i%200 == 100 {
			time.Sleep(20 * time.Millisecond) // a few writes mid-stream
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d.AddBatch(0, encoded(want3[0][:1])) // after Close: nothing
	mu.Lock()
	if writes < 2 || len(held[0])+len(held[1]) != 0 {
		t.Errorf("BeforeWrite's function ran %d times, %d records left held", writes, len(held[0])+len(held[1]))
	}
	mu.Unlock()
	for tr := 0; tr < 2; tr++ {
		got, err := s.Records(ctx, id3, tr, 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		CheckRecords(t, got, want3[tr])
	}
}

// encoded is recs as one batch, encoded as a caller of AddBatch encodes it.
func encoded(recs []solver.Record) store.Batch {
	var e store.BatchEncoder
	for i := range recs {
		e.Add(&recs[i])
	}
	return store.Batch{N: len(recs), Blob: e.AppendBlob(nil)}
}
