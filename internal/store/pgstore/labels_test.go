package pgstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/storetest"
)

// A queued run is named by default from its algorithms' names; once its
// worker names the traces (a variant with what it changes), the default
// name follows them in the same transaction, while a name the user gave
// stays as it is.
func TestSetLabelsRenamesTheDefaultNameOnly(t *testing.T) {
	ctx := context.Background()
	s := openShared(t)
	for _, c := range []struct{ given, want string }{
		{"", "gflasso: bc-ssfw-as + slack collapse, spg"},
		{"my study", "my study"},
	} {
		r := storetest.TestRun("gflasso", "bc-ssfw-as", "spg")
		r.Status, r.Name = store.StatusQueued, c.given
		id, err := s.PutRun(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := s.Get(ctx, id); c.given == "" && got.Name != "gflasso: bc-ssfw-as, spg" {
			t.Errorf("a queued run is named %q before its worker names its traces", got.Name)
		}
		if err := s.Claim(ctx, id, "w1/7/1"); err != nil {
			t.Fatal(err)
		}
		if err := s.SetLabels(ctx, id, "w1/7/1", []string{"bc-ssfw-as + slack collapse", ""}); err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != c.want || got.Traces[0].Algo != "bc-ssfw-as + slack collapse" || got.Traces[1].Algo != "spg" {
			t.Errorf("put named %q, after the worker named the traces: %q with traces %q, %q; want %q",
				c.given, got.Name, got.Traces[0].Algo, got.Traces[1].Algo, c.want)
		}
	}
}

// A worker names its run's traces while their first records are appended:
// both write under the claim, and neither may fail for the other (naming
// the traces and then the run, beside an append that locked the run and
// waits for its trace, was a deadlock PostgreSQL broke by failing one).
func TestSetLabelsBesideAppends(t *testing.T) {
	ctx := context.Background()
	s := openShared(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 30 {
		r := storetest.TestRun("gflasso", "bc-ssfw-as", "spg")
		r.Status = store.StatusQueued
		id, err := s.PutRun(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		claim := fmt.Sprintf("w1/%d/1", round)
		if err := s.Claim(ctx, id, claim); err != nil {
			t.Fatal(err)
		}
		recs := storetest.RandRecords(rng, 20)
		var wg sync.WaitGroup
		errs := make(chan error, 3)
		for tr := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 10 {
					if err := s.AppendClaimed(ctx, id, claim, tr, recs[2*i:2*i+2]); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.SetLabels(ctx, id, claim, []string{"bc-ssfw-as + slack collapse", "spg"}); err != nil {
				errs <- err
			}
		}()
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: %v", round, err)
		}
		got, err := s.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != "gflasso: bc-ssfw-as + slack collapse, spg" || got.Traces[0].Records != 20 || got.Traces[1].Records != 20 {
			t.Fatalf("round %d: run %q with %d and %d records", round, got.Name, got.Traces[0].Records, got.Traces[1].Records)
		}
	}
}
