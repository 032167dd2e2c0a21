package store

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"
)

var historyRuns = flag.Int("fwlab.history-runs", 1_000_000, "runs in the store BenchmarkHistoryList builds")

// HistoryRequest is one request of the History page: a filter and the page
// it asks for (Last: the last page).
type HistoryRequest struct {
	Name   string
	Filter Filter
	Last   bool
}

// History's filters, over a notebook built by FillHistory: every filter of
// the page, a search that finds a few runs and one that finds none, and the
// last page of the whole list.
var HistoryRequests = []HistoryRequest{
	{Name: "all", Filter: Filter{}},
	{Name: "problem", Filter: Filter{Problem: "gflasso"}},
	{Name: "status", Filter: Filter{Status: StatusFailed}},
	{Name: "algorithm", Filter: Filter{Algorithm: "afw"}},
	{Name: "algorithm-rare", Filter: Filter{Algorithm: "spg"}},
	{Name: "problem-status", Filter: Filter{Problem: "lasso", Status: StatusCancelled}},
	{Name: "search", Filter: Filter{Text: "baseline 7"}},
	{Name: "search-none", Filter: Filter{Text: "no such note"}},
	{Name: "last-page", Filter: Filter{}, Last: true},
}

// HistoryRun is one generated run of FillHistory: what the History page
// filters on. Run i of n is made i microseconds after the first.
func HistoryRun(i int, rng *rand.Rand) (problem, status, name, note string, algos []string) {
	problems := []string{"lasso", "lasso", "lasso", "gflasso", "ssvm-ocr", "toy-polygon", "logistic"}
	problem = problems[rng.IntN(len(problems))]
	switch r := rng.IntN(100); {
	case r < 85:
		status = StatusDone
	case r < 92:
		status = StatusCancelled
	case r < 97:
		status = StatusFailed
	default:
		status = StatusInterrupted
	}
	if i%100 == 0 {
		name = fmt.Sprintf("baseline %d", i/100)
	}
	if i%250 == 0 {
		note = fmt.Sprintf("seed sweep %d, step rule curvature", i)
	}
	all := []string{"fw", "afw", "afw + slack collapse", "pfw", "ssfw-as", "bcfw"}
	algos = []string{all[rng.IntN(len(all))]}
	if rng.IntN(3) == 0 {
		algos = append(algos, all[rng.IntN(len(all))])
	}
	if i%5000 == 0 {
		algos = append(algos, "spg")
	}
	return
}

// fillHistory writes n small runs (one or two traces each, no records)
// straight into the tables, in one transaction.
func fillHistory(ctx context.Context, s *Store, n int) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// one transaction of a million runs: its pages stay in a cache of
	// 512 MiB rather than spill to the log
	if _, err := conn.ExecContext(ctx, `PRAGMA cache_size = -524288`); err != nil {
		return err
	}
	defer conn.ExecContext(ctx, `PRAGMA cache_size = -2000`)
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	insRun, err := tx.PrepareContext(ctx, `INSERT INTO runs (id, created_us, ended_us, status, problem, spec, version, name, note, entered_us)
		VALUES (?, ?, ?, ?, ?, ?, 'bench', ?, ?, ?)`)
	if err != nil {
		return err
	}
	insTrace, err := tx.PrepareContext(ctx, `INSERT INTO traces (run_id, idx, algo, replication, seed, status, records) VALUES (?, ?, ?, 0, 1, ?, 100)`)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	for i := 0; i < n; i++ {
		problem, status, name, note, algos := HistoryRun(i, rng)
		id := NewID()
		at := base + int64(i)*1000
		sp := fmt.Sprintf(`{"problem":%q,"algorithms":[{"algo":%q}],"iters":100,"seed":%d}`, problem, algos[0], i)
		if _, err := insRun.ExecContext(ctx, id, at, at+500, status, problem, sp, name, note, at); err != nil {
			return err
		}
		for j, a := range algos {
			if _, err := insTrace.ExecContext(ctx, id, j, a, status); err != nil {
				return err
			}
		}
	}
	return tx.Commit()
}

// BenchmarkHistoryList builds a store of -fwlab.history-runs small runs
// (10⁶ by default; generated directly, not through the API) and times each
// History request (HistoryRequests): ms/<request>, the mean of b.N rounds.
func BenchmarkHistoryList(b *testing.B) {
	ctx := context.Background()
	s, err := Open(filepath.Join(b.TempDir(), "history.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	if err := fillHistory(ctx, s, *historyRuns); err != nil {
		b.Fatal(err)
	}
	b.Logf("%d runs written in %v", *historyRuns, time.Since(start).Round(time.Millisecond))
	benchHistory(b, s)
}

// benchHistory times HistoryRequests on a filled store.
func benchHistory(b *testing.B, s Backend) {
	ctx := context.Background()
	took := make([]time.Duration, len(HistoryRequests))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, q := range HistoryRequests {
			f := q.Filter
			t0 := time.Now()
			runs, total, err := s.List(ctx, f)
			if err != nil {
				b.Fatalf("%s: %v", q.Name, err)
			}
			if q.Last {
				// the page's link to the last page carries its offset
				f.Offset = max(total-DefaultLimit, 0)
				t0 = time.Now()
				if runs, _, err = s.List(ctx, f); err != nil {
					b.Fatalf("%s: %v", q.Name, err)
				}
			}
			took[j] += time.Since(t0)
			if i == 0 {
				b.Logf("%-15s %7d runs, %3d on the page, %v", q.Name, total, len(runs), time.Since(t0).Round(time.Microsecond))
			}
		}
	}
	for j, q := range HistoryRequests {
		b.ReportMetric(float64(took[j].Microseconds())/1000/float64(b.N), "ms/"+q.Name)
	}
}
