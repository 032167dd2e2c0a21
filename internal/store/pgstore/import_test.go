package pgstore_test

import (
	"context"
	"sync"
	"testing"

	"github.com/fwlab/fwlab/internal/pgtest"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/storetest"
)

// TestConcurrentImportsOfOneBundle: imports of one content digest
// committing at the same moment, from separate connections as from
// separate processes, store one run, which every one of them answers.
func TestConcurrentImportsOfOneBundle(t *testing.T) {
	c := pgtest.Shared(t)
	s := open(t, c)
	ctx := context.Background()
	const n = 3 // fewer than the pool's connections: each import holds one
	ims := make([]store.RunImport, n)
	for i := range ims {
		im, err := s.StreamImport(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := im.AddTrace(ctx, store.Trace{Index: 0, Algo: "afw"}); err != nil {
			t.Fatal(err)
		}
		ims[i] = im
	}
	type answer struct {
		id       string
		existing bool
		err      error
	}
	answers := make([]answer, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, im := range ims {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r := storetest.TestRun("lasso", "afw")
			r.Status = store.StatusDone
			id, existing, err := im.Commit(ctx, r, "sha256:same")
			answers[i] = answer{id, existing, err}
		}()
	}
	close(start)
	wg.Wait()
	ids, fresh := map[string]bool{}, 0
	for _, a := range answers {
		if a.err != nil {
			t.Fatal(a.err)
		}
		ids[a.id] = true
		if !a.existing {
			fresh++
		}
	}
	if _, total, err := s.List(ctx, store.Filter{}); err != nil || total != 1 || len(ids) != 1 || fresh != 1 {
		t.Errorf("%d runs stored, answers %+v, %v", total, answers, err)
	}
}
