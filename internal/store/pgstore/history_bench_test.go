package pgstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fwlab/fwlab/internal/pgtest"
	"github.com/fwlab/fwlab/internal/store/pgstore"
	"github.com/fwlab/fwlab/internal/store/storetest"
)

// BenchmarkPGHistoryList builds a PostgreSQL store of -fwlab.history-runs
// small runs (storetest.NewHistoryRun; one or two traces each, no records)
// copied straight into its tables and filed by its triggers' function, and
// times every History request (storetest.BenchHistory).
func BenchmarkPGHistoryList(b *testing.B) {
	ctx := context.Background()
	if historyURL != "" {
		s, err := pgstore.Open(ctx, historyURL)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		storetest.BenchHistory(b, s)
		return
	}
	c := pgtest.Shared(b)
	url := c.NewDB(b)
	s, err := pgstore.Open(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	n := *storetest.HistoryRuns
	rng := rand.New(rand.NewPCG(1, 2))
	var runs, traces [][]any
	for i := 0; i < n; i++ {
		h := storetest.NewHistoryRun(i, rng)
		sp := fmt.Sprintf(`{"problem":%q,"algorithms":[{"algo":%q}],"iters":100,"seed":%d}`, h.Problem, h.Algos[0], i)
		runs = append(runs, []any{h.ID, h.At, h.At + 500, h.Status, h.Problem, sp, "bench", h.Name, h.Note, h.At})
		for j, a := range h.Algos {
			traces = append(traces, []any{h.ID, j, a, 0, int64(1), h.Status, 100})
		}
	}
	start := time.Now()
	tx, err := s.Pool().Begin(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback(ctx)
	// the rows are copied with the triggers off (per row they would take
	// most of an hour at 10⁶ runs), then every run is filed by the
	// triggers' own function
	if _, err := tx.Exec(ctx, `SET LOCAL session_replication_role = replica`); err != nil {
		b.Fatal(err)
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"runs"},
		[]string{"id", "created_us", "ended_us", "status", "problem", "spec", "version", "name", "note", "entered_us"}, pgx.CopyFromRows(runs)); err != nil {
		b.Fatal(err)
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"traces"},
		[]string{"run_id", "idx", "algo", "replication", "seed", "status", "records"}, pgx.CopyFromRows(traces)); err != nil {
		b.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SET LOCAL session_replication_role = origin`); err != nil {
		b.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT fwlab_file_run_algos(id) FROM runs`); err != nil {
		b.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := s.Pool().Exec(ctx, `ANALYZE`); err != nil {
		b.Fatal(err)
	}
	b.Logf("%d runs written in %v", n, time.Since(start).Round(time.Millisecond))
	historyURL = url
	storetest.BenchHistory(b, s)
}

// historyURL is the database BenchmarkPGHistoryList built, kept for the
// next round of a -count (the shared cluster lives as long as the process).
var historyURL string
