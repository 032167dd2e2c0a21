package storetest

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/store"
)

func checkVerifications(t *testing.T, s store.Backend) {
	ctx := context.Background()
	a := put(t, s, TestRun("lasso", "afw"))
	b := put(t, s, TestRun("lasso", "fista"))
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	add := func(run, outcome string, at time.Time, detail string) string {
		t.Helper()
		v := &store.Verification{RunID: run, Outcome: outcome, At: at, Records: 7, Detail: detail, Version: "v1", RerunID: ""}
		id, err := s.AddVerification(ctx, v)
		if err != nil || id == "" || v.ID != id {
			t.Fatalf("AddVerification(%s, %s): %q, %v", run, outcome, id, err)
		}
		return id
	}
	add(a, store.VerifyReproduced, t0, "")
	second := add(a, store.VerifyDiffers, t0.Add(time.Hour), "trace 0, k = 3: gap 1 vs 2")
	add(b, store.VerifyFailed, t0, "data file missing")
	got, err := s.Verifications(ctx, a)
	if err != nil || len(got) != 2 || got[0].ID != second || got[0].Outcome != store.VerifyDiffers ||
		!got[0].At.Equal(t0.Add(time.Hour)) || got[0].Records != 7 || got[0].Detail != "trace 0, k = 3: gap 1 vs 2" || got[0].Version != "v1" {
		t.Errorf("Verifications(a), newest first: %+v, %v", got, err)
	}
	last, err := s.LastVerifications(ctx, []string{a, b, "nosuchrun333"})
	if err != nil || len(last) != 2 || last[a].ID != second || last[b].Outcome != store.VerifyFailed {
		t.Errorf("LastVerifications: %+v, %v", last, err)
	}
	for _, tc := range []struct {
		field string
		v     store.Verification
	}{
		{"outcome", store.Verification{RunID: a, Outcome: "maybe"}},
		{"records", store.Verification{RunID: a, Outcome: store.VerifyReproduced, Records: -1}},
		{"detail", store.Verification{RunID: a, Outcome: store.VerifyFailed, Detail: strings.Repeat("d", store.MaxVerifyDetail+1)}},
	} {
		if _, err := s.AddVerification(ctx, &tc.v); !fieldErr(err, tc.field) {
			t.Errorf("a verification with a bad %s: %v", tc.field, err)
		}
	}
	if _, err := s.AddVerification(ctx, &store.Verification{RunID: "nosuchrun444", Outcome: store.VerifyReproduced}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a verification of an unknown run: %v", err)
	}
	// a run's verifications go with it
	if _, err := s.Delete(ctx, a); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Verifications(ctx, a); err != nil || len(got) != 0 {
		t.Errorf("a deleted run's verifications: %+v, %v", got, err)
	}
}

func checkIntegrity(t *testing.T, s store.Backend) {
	ctx := context.Background()
	if err := s.IntegrityCheck(ctx); err != nil {
		t.Errorf("an empty store: %v", err)
	}
	id := put(t, s, TestRun("lasso", "afw"))
	if err := s.AppendRecords(ctx, id, 0, RandRecords(rand.New(rand.NewPCG(4, 4)), 500)); err != nil {
		t.Fatal(err)
	}
	if err := s.IntegrityCheck(ctx); err != nil {
		t.Errorf("a store with a run: %v", err)
	}
	if n, err := s.DiskUsage(ctx); err != nil || n <= 0 {
		t.Errorf("disk usage %d, %v", n, err)
	}
}
