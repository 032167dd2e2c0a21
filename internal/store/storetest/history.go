package storetest

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/store"
)

// HistoryRuns is the size of the notebook the History benchmarks build
// (-fwlab.history-runs; 10⁶ by default, smaller for a quick run).
var HistoryRuns = flag.Int("fwlab.history-runs", 1_000_000, "runs in the store the History benchmarks build")

// HistoryRequest is one request of the History page: a filter and the page
// it asks for (Last: the last page).
type HistoryRequest struct {
	Name   string
	Filter store.Filter
	Last   bool
}

// History's filters, over a notebook built by FillHistory: every filter of
// the page, a search that finds a few runs and one that finds none, and the
// last page of the whole list.
var HistoryRequests = []HistoryRequest{
	{Name: "all", Filter: store.Filter{}},
	{Name: "problem", Filter: store.Filter{Problem: "gflasso"}},
	{Name: "status", Filter: store.Filter{Status: store.StatusFailed}},
	{Name: "algorithm", Filter: store.Filter{Algorithm: "afw"}},
	{Name: "algorithm-rare", Filter: store.Filter{Algorithm: "spg"}},
	{Name: "problem-status", Filter: store.Filter{Problem: "lasso", Status: store.StatusCancelled}},
	{Name: "search", Filter: store.Filter{Text: "baseline 7"}},
	{Name: "search-none", Filter: store.Filter{Text: "no such note"}},
	{Name: "last-page", Filter: store.Filter{}, Last: true},
}

// HistoryRun is run i of a generated notebook: what the History page
// filters on. Run i is made i milliseconds after the first, on 1 January
// 2026; its id is random (store.NewID).
type HistoryRun struct {
	ID, Problem, Status, Name, Note string
	At                              int64 // created, ended and entered, in microseconds
	Algos                           []string
}

// NewHistoryRun draws run i: seven problems (lasso three times as often),
// 85% done, 7% cancelled, 5% failed, 3% interrupted; one in a hundred
// named, one in 250 noted; one or two traces of six algorithms (one a
// variant), and spg in one run in 5000.
func NewHistoryRun(i int, rng *rand.Rand) HistoryRun {
	problems := []string{"lasso", "lasso", "lasso", "gflasso", "ssvm-ocr", "toy-polygon", "logistic"}
	h := HistoryRun{ID: store.NewID(), Problem: problems[rng.IntN(len(problems))],
		At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro() + int64(i)*1000}
	switch r := rng.IntN(100); {
	case r < 85:
		h.Status = store.StatusDone
	case r < 92:
		h.Status = store.StatusCancelled
	case r < 97:
		h.Status = store.StatusFailed
	default:
		h.Status = store.StatusInterrupted
	}
	if i%100 == 0 {
		h.Name = fmt.Sprintf("baseline %d", i/100)
	}
	if i%250 == 0 {
		h.Note = fmt.Sprintf("seed sweep %d, step rule curvature", i)
	}
	all := []string{"fw", "afw", "afw + slack collapse", "pfw", "ssfw-as", "bcfw"}
	h.Algos = []string{all[rng.IntN(len(all))]}
	if rng.IntN(3) == 0 {
		h.Algos = append(h.Algos, all[rng.IntN(len(all))])
	}
	if i%5000 == 0 {
		h.Algos = append(h.Algos, "spg")
	}
	return h
}

// BenchHistory times each of HistoryRequests on a store filled with
// HistoryRun's runs and reports ms/<request>, the mean of b.N rounds.
func BenchHistory(b *testing.B, s store.Backend) {
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
				f.Offset = max(total-store.DefaultLimit, 0)
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
