package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/bundle"
	"github.com/fwlab/fwlab/internal/store"
)

// verify -db postgres://… verifies runs kept in PostgreSQL and records the
// outcome there.
func TestVerifyOnPostgreSQL(t *testing.T) {
	db, st := pgStore(t)
	file, n := solveBundle(t, t.TempDir(), "run.json", "-problem", "lasso", "-algo", "ssfw-as", "-iters", "60", "-eval-every", "3")
	ctx := context.Background()
	id, err := bundle.Put(ctx, st, readBundleFile(t, file))
	if err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runVerifyArgs("-db", db, id)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("run %s: reproduced: %d records identical", id, n)) {
		t.Fatalf("verify -db postgres: %d %s %s", code, out, stderr)
	}
	last, err := st.LastVerifications(ctx, []string{id})
	if err != nil || last[id].Outcome != store.VerifyReproduced || last[id].Records != n {
		t.Fatalf("the verification in PostgreSQL: %+v, %v", last, err)
	}
}
