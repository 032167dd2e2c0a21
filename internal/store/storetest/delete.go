package storetest

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/store"
)

func checkDelete(t *testing.T, s store.Backend) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(2, 2))
	var ids []string
	for i := 0; i < 3; i++ {
		id := put(t, s, TestRun("lasso", "afw", "fista"))
		for tr := 0; tr < 2; tr++ {
			if err := s.AppendRecords(ctx, id, tr, RandRecords(rng, 30)); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, id)
	}
	if n, err := s.Delete(ctx); err != nil || n != 0 {
		t.Errorf("deleting nothing: %d, %v", n, err)
	}
	if n, err := s.Delete(ctx, ids[0], "nosuchrun222", ids[2], ids[0]); err != nil || n != 2 {
		t.Fatalf("delete: %d, %v", n, err)
	}
	for _, id := range []string{ids[0], ids[2]} {
		if _, err := s.Get(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a deleted run: %v", err)
		}
		if _, err := s.Records(ctx, id, 0, 0, -1); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("records of a deleted run: %v", err)
		}
	}
	if recs, err := s.Records(ctx, ids[1], 1, 0, -1); err != nil || len(recs) != 30 {
		t.Errorf("the run left: %d records, %v", len(recs), err)
	}
	// an id put again after its delete starts empty
	r := TestRun("lasso", "afw")
	r.ID = ids[0]
	put(t, s, r)
	if recs, err := s.Records(ctx, ids[0], 0, 0, -1); err != nil || len(recs) != 0 {
		t.Errorf("a deleted run's id reused: %d records, %v", len(recs), err)
	}
	// many ids at once
	var many []string
	for i := 0; i < 700; i++ {
		many = append(many, store.NewID())
	}
	many = append(many, ids[1])
	if n, err := s.Delete(ctx, many...); err != nil || n != 1 {
		t.Errorf("deleting among 701 ids: %d, %v", n, err)
	}
}

func checkTrim(t *testing.T, s store.Backend) {
	ctx := context.Background()
	if _, err := s.Trim(ctx, -1); !fieldErr(err, "keep") {
		t.Errorf("keep -1: %v", err)
	}
	if clock == nil {
		t.Skip("no clock for this store: trimming by entry time is not checked")
	}
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	at := func(tm time.Time) { t.Cleanup(clock(func() time.Time { return tm })) }
	var ids []string
	for i := 0; i < 8; i++ {
		r := TestRun("lasso", "afw")
		r.Status = store.StatusDone
		// created dates run backwards: Trim goes by when runs entered
		r.Created = base.Add(-time.Duration(i) * time.Hour)
		r.Ended = base.Add(time.Duration(i) * time.Second)
		switch i {
		case 1:
			r.Starred = true
		case 2:
			r.Status, r.Ended = store.StatusRunning, time.Time{}
		case 3:
			r.Status, r.Ended = store.StatusQueued, time.Time{}
		}
		at(base.Add(time.Duration(i) * time.Second))
		id := put(t, s, r)
		if err := s.AppendRecords(ctx, id, 0, RandRecords(rand.New(rand.NewPCG(1, uint64(i))), 200)); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	// every run entered and ended within the grace: none goes
	at(base.Add(10 * time.Second))
	if n, err := s.Trim(ctx, 0); err != nil || n != 0 {
		t.Errorf("trim within the grace: %d, %v", n, err)
	}
	late := base.Add(time.Hour)
	at(late)
	n, err := s.Trim(ctx, 3) // keeps 7, 6, 5 (entered last, unstarred), 1 (starred), 2 and 3 (live)
	if err != nil || n != 2 {
		t.Fatalf("trim: %d, %v", n, err)
	}
	left := map[string]bool{}
	runs, total, _ := s.List(ctx, store.Filter{})
	for _, r := range runs {
		left[r.ID] = true
	}
	for i, id := range ids {
		if want := i != 0 && i != 4; left[id] != want || total != 6 {
			t.Errorf("run %d kept %v (%d left), want %v", i, left[id], total, want)
		}
	}
	// a run that entered just now is spared; the others beyond keep 0 go
	r := TestRun("lasso", "afw")
	r.Status, r.Ended = store.StatusDone, base
	fresh := put(t, s, r)
	if n, err := s.Trim(ctx, 0); err != nil || n != 3 {
		t.Errorf("trim to 0: %d, %v (starred, live and fresh runs stay)", n, err)
	}
	if _, err := s.Get(ctx, fresh); err != nil {
		t.Errorf("the fresh run: %v", err)
	}
}
