package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/spec"
)

// The schema version before the verifications table, filled for
// TestOpensEveryEarlierVersion.
func init() {
	for i, m := range migrations {
		if strings.Contains(m[0], "CREATE TABLE verifications") {
			if _, ok := oldVersions[i]; !ok {
				oldVersions[i] = fillBeforeVerifications
			}
		}
	}
}

func fillBeforeVerifications(t *testing.T, db *sql.DB) func(t *testing.T, s *Store) {
	if _, err := db.Exec(`INSERT INTO runs (id, created_us, ended_us, status, problem, spec, version, name, note, starred, dim, samples, blocks, fstar, info_panels, message, entered_us)
		VALUES ('dddddddddddd', 1767225600000000, 1767225601000000, 'done', 'lasso', '{"problem":"lasso","algorithms":[{"algo":"afw"}],"replications":1,"seed":3,"iters":50,"passes":0,"gap":0,"eval_every":0}',
		'v0.4', 'v4 run', '', 0, 5, 10, 1, NULL, NULL, '', 1767225600000000)`); err != nil {
		t.Fatal(err)
	}
	return func(t *testing.T, s *Store) {
		ctx := context.Background()
		if vs, err := s.Verifications(ctx, "dddddddddddd"); err != nil || len(vs) != 0 {
			t.Fatalf("a run from before verifications: %v, %v", vs, err)
		}
		if _, err := s.AddVerification(ctx, &Verification{RunID: "dddddddddddd", Outcome: VerifyReproduced, Records: 3}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestVerifications(t *testing.T) {
	ctx := context.Background()
	s, err := Open(Memory)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	put := func() string {
		id, err := s.PutRun(ctx, &Run{Spec: spec.Run{Problem: "lasso", Algorithms: []spec.Algo{{Algo: "afw"}}}, Status: StatusDone, Traces: []Trace{{Algo: "afw"}}})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	a, b, c := put(), put(), put()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	for _, v := range []Verification{
		{RunID: a, At: t0, Outcome: VerifyDiffers, Records: 10, Detail: "trace 0 (afw #0) record 3 (k = 3), field gap: stored 1, re-run 2", Version: "v1"},
		{RunID: a, At: t0.Add(time.Minute), Outcome: VerifyReproduced, Records: 12, Version: "v2", RerunID: c},
		{RunID: b, At: t0, Outcome: VerifyFailed, Detail: "the data file is missing"},
	} {
		if _, err := s.AddVerification(ctx, &v); err != nil {
			t.Fatal(err)
		}
	}
	vs, err := s.Verifications(ctx, a)
	if err != nil || len(vs) != 2 {
		t.Fatalf("Verifications = %+v, %v", vs, err)
	}
	if v := vs[0]; v.Outcome != VerifyReproduced || !v.At.Equal(t0.Add(time.Minute)) || v.Records != 12 || v.Version != "v2" || v.RerunID != c || v.RunID != a {
		t.Errorf("newest verification read as %+v", v)
	}
	if v := vs[1]; v.Outcome != VerifyDiffers || !strings.Contains(v.Detail, "field gap") || v.RerunID != "" {
		t.Errorf("oldest verification read as %+v", v)
	}
	last, err := s.LastVerifications(ctx, []string{a, b, c})
	if err != nil || len(last) != 2 || last[a].Outcome != VerifyReproduced || last[b].Outcome != VerifyFailed {
		t.Fatalf("LastVerifications = %+v, %v", last, err)
	}
	// refusals
	if _, err := s.AddVerification(ctx, &Verification{RunID: "zzzzzzzzzzzz", Outcome: VerifyReproduced}); !errors.Is(err, ErrNotFound) {
		t.Errorf("an unknown run: %v, want ErrNotFound", err)
	}
	var fe *spec.FieldError
	if _, err := s.AddVerification(ctx, &Verification{RunID: a, Outcome: "fine"}); !errors.As(err, &fe) || fe.Field != "outcome" {
		t.Errorf("an unknown outcome: %v", err)
	}
	if _, err := s.AddVerification(ctx, &Verification{RunID: a, Outcome: VerifyDiffers, Detail: strings.Repeat("x", MaxVerifyDetail+1)}); !errors.As(err, &fe) || fe.Field != "detail" {
		t.Errorf("a long detail: %v", err)
	}
	// deleting a run deletes its verifications
	if _, err := s.Delete(ctx, a); err != nil {
		t.Fatal(err)
	}
	if vs, err := s.Verifications(ctx, a); err != nil || len(vs) != 0 {
		t.Errorf("after delete: %+v, %v", vs, err)
	}
}
