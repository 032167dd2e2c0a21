package storetest

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/store"
)

// HistoryRuns is the size of the notebook the History benchmarks build
// (-fwlab.history-runs; 10⁶ by default, smaller for a quick run).
var HistoryRuns = flag.Int("fwlab.history-runs", 1_000_000, "runs in the store the History benchmarks build")

// HistoryRequest is one filter of the History page, as the benchmarks
// time it.
type HistoryRequest struct {
	Name   string
	Filter store.Filter
}

// HistoryRequests are History's filters over a notebook of generated runs
// (HistoryFillSQL): the whole list in either order, every filter, a
// search of the names and one of the notes that find runs, and one that
// finds none.
var HistoryRequests = []HistoryRequest{
	{Name: "all", Filter: store.Filter{}},
	{Name: "all-oldest-first", Filter: store.Filter{OldestFirst: true}},
	{Name: "problem", Filter: store.Filter{Problem: "gflasso"}},
	{Name: "status", Filter: store.Filter{Status: store.StatusFailed}},
	{Name: "problem-status", Filter: store.Filter{Problem: "lasso", Status: store.StatusCancelled}},
	{Name: "algorithm", Filter: store.Filter{Algorithm: "afw"}},
	{Name: "algorithm-rare", Filter: store.Filter{Algorithm: "spg"}},
	{Name: "algorithm-problem", Filter: store.Filter{Algorithm: "pfw", Problem: "logistic"}},
	{Name: "algorithm-oldest-first", Filter: store.Filter{Algorithm: "fw", OldestFirst: true}},
	{Name: "search-name", Filter: store.Filter{Text: "baseline 7"}},
	{Name: "search-note", Filter: store.Filter{Text: "curvature"}},
	{Name: "search-none", Filter: store.Filter{Text: "no such note"}},
}

// HistoryBase is when run 0 of a generated notebook was made; run i is
// made i milliseconds later.
var HistoryBase = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// HistoryRun is run i of a generated notebook: what the History page
// filters on (the Go form of what HistoryFillSQL writes).
type HistoryRun struct {
	ID, Problem, Status, Name, Note string
	At                              int64 // created, ended and entered, in microseconds
	Algos                           []string
}

// The generated notebook's choices: seven problems (lasso three times as
// often), 85% of the runs done, 7% cancelled, 5% failed, 3% interrupted;
// one or two traces of six algorithms (one a variant), and spg in one run
// in 5000; one run in a hundred named, one in 250 noted.
var (
	historyProblems = []string{"lasso", "lasso", "lasso", "gflasso", "ssvm-ocr", "toy-polygon", "logistic"}
	historyAlgos    = []string{"fw", "afw", "afw + slack collapse", "pfw", "ssfw-as", "bcfw"}
)

const idAlphabet = "abcdefghijklmnopqrstuvwxyz234567"

// mix is the notebook's hash of run i for a choice (a: the choice's
// multiplier): small enough that no product overflows 64 bits for i
// below 2²⁰·100, the same in Go, SQLite and PostgreSQL.
func mix(i, a int64) int64 { return (i*a + 7) * 104729 % 1000003 }

// multipliers of mix for each choice
const (
	mixProblem = 7919
	mixStatus  = 7927
	mixAlgo0   = 7933
	mixTwo     = 7937
	mixAlgo1   = 7949
)

// historyID is run i's id: twelve characters of the store's alphabet
// spelling i·2654435761 (distinct for distinct i).
func historyID(i int64) string {
	x := i * 2654435761
	var b [12]byte
	for k := 0; k < 12; k++ {
		b[k] = idAlphabet[(x>>(5*(11-k)))&31]
	}
	return string(b[:])
}

// NewHistoryRun is run i of the generated notebook.
func NewHistoryRun(i int) HistoryRun {
	n := int64(i)
	h := HistoryRun{ID: historyID(n), Problem: historyProblems[mix(n, mixProblem)%7], At: HistoryBase.UnixMicro() + n*1000}
	switch r := mix(n, mixStatus) % 100; {
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
	h.Algos = []string{historyAlgos[mix(n, mixAlgo0)%6]}
	if mix(n, mixTwo)%3 == 0 {
		h.Algos = append(h.Algos, historyAlgos[mix(n, mixAlgo1)%6])
	}
	if i%5000 == 0 {
		h.Algos = append(h.Algos, "spg")
	}
	return h
}

// HistoryFillSQL is the SQL that writes runs 0 to n-1 of the generated
// notebook (NewHistoryRun) into a store's runs and traces tables, set at
// a time: series is the table of the integers i from 0 to n-1 (a
// recursive CTE on SQLite, generate_series on PostgreSQL) and with a WITH
// clause put before each statement ("" for none). The stores' triggers
// (or the caller) file the runs' algorithms, names and notes.
func HistoryFillSQL(with, series string) []string {
	m := func(a int) string { return fmt.Sprintf("((i * %d + 7) * 104729 %% 1000003)", a) }
	choice := func(x string, names []string) string {
		var b strings.Builder
		b.WriteString("CASE " + x + fmt.Sprintf(" %% %d", len(names)))
		for k, nm := range names {
			fmt.Fprintf(&b, " WHEN %d THEN '%s'", k, nm)
		}
		return b.String() + " END"
	}
	var id []string
	for k := 0; k < 12; k++ {
		id = append(id, fmt.Sprintf("substr('%s', CAST(((i * 2654435761) >> %d) & 31 AS INTEGER) + 1, 1)", idAlphabet, 5*(11-k)))
	}
	idSQL := strings.Join(id, " || ")
	at := fmt.Sprintf("(%d + i * 1000)", HistoryBase.UnixMicro())
	status := "CASE WHEN " + m(mixStatus) + " % 100 < 85 THEN 'done' WHEN " + m(mixStatus) + " % 100 < 92 THEN 'cancelled' WHEN " +
		m(mixStatus) + " % 100 < 97 THEN 'failed' ELSE 'interrupted' END"
	problem := choice(m(mixProblem), historyProblems)
	algo0, algo1 := choice(m(mixAlgo0), historyAlgos), choice(m(mixAlgo1), historyAlgos)
	two := m(mixTwo) + " % 3 = 0"
	runs := with + `INSERT INTO runs (id, created_us, ended_us, status, problem, spec, version, name, note, entered_us)
		SELECT ` + idSQL + `, ` + at + `, ` + at + ` + 500, ` + status + `, ` + problem + `,
			'{"problem":"' || ` + problem + ` || '","algorithms":[{"algo":"' || ` + algo0 + ` || '"}],"iters":100,"seed":' || i || '}', 'bench',
			CASE WHEN i % 100 = 0 THEN 'baseline ' || (i / 100) ELSE '' END,
			CASE WHEN i % 250 = 0 THEN 'seed sweep ' || i || ', step rule curvature' ELSE '' END, ` + at + `
		FROM ` + series
	trace := func(idx, algo, where string) string {
		return with + `INSERT INTO traces (run_id, idx, algo, replication, seed, status, records)
		SELECT ` + idSQL + `, ` + idx + `, ` + algo + `, 0, 1, ` + status + `, 100 FROM ` + series + where
	}
	return []string{
		runs,
		trace("0", algo0, ""),
		trace("1", algo1, " WHERE "+two),
		trace("CASE WHEN "+two+" THEN 2 ELSE 1 END", "'spg'", " WHERE i % 5000 = 0"),
	}
}

// PutHistoryRuns writes runs 0 to n-1 of the generated notebook through
// the store's own PutRun: what a fill by HistoryFillSQL must list alike.
func PutHistoryRuns(t testing.TB, s store.Backend, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		h := NewHistoryRun(i)
		r := TestRun(h.Problem, h.Algos...)
		r.ID, r.Status, r.Name, r.Note = h.ID, h.Status, h.Name, h.Note
		r.Created = time.UnixMicro(h.At).UTC()
		if _, err := s.PutRun(context.Background(), r); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
	}
}

// SameHistory checks that two stores holding the same generated notebook,
// one filled by HistoryFillSQL and one by PutHistoryRuns, list alike
// under every History filter: the same runs in the same order, the same
// counts, the same cursors.
func SameHistory(t *testing.T, filled, put store.Backend) {
	ctx := context.Background()
	for _, q := range HistoryRequests {
		var a, b []string
		for _, s := range []store.Backend{filled, put} {
			f := q.Filter
			f.Limit = 7
			var seen []string
			total := -1
			for n := 0; ; n++ {
				p, err := s.ListPage(ctx, f)
				if err != nil {
					t.Fatalf("%s: %v", q.Name, err)
				}
				if total >= 0 && p.Total != total {
					t.Fatalf("%s: total %d, then %d", q.Name, total, p.Total)
				}
				total = p.Total
				for _, r := range p.Runs {
					seen = append(seen, fmt.Sprintf("%s %s %s %d", r.ID, r.Status, r.Spec.Problem, len(r.Traces)))
				}
				if p.Next == nil || n > 10000 {
					break
				}
				f.After = p.Next
			}
			if len(seen) != total {
				t.Errorf("%s: %d runs paged of %d", q.Name, len(seen), total)
			}
			if s == filled {
				a = seen
			} else {
				b = seen
			}
		}
		if !slices.Equal(a, b) {
			t.Errorf("%s: the filled store lists %d runs %.300v,\nthe store written run by run %d %.300v", q.Name, len(a), a, len(b), b)
		}
		if len(a) == 0 && q.Name != "search-none" {
			t.Errorf("%s: no run", q.Name)
		}
	}
}

// BenchHistory times each of HistoryRequests, one sub-benchmark each, on a
// store holding the generated notebook: the first page, a page in the
// middle of the list (by cursor: the run half way down is found once
// beforehand), the last page and the count alone, each reported as
// ms/first, ms/middle, ms/last and ms/count, the median of b.N rounds.
func BenchHistory(b *testing.B, s store.Backend) {
	ctx := context.Background()
	for _, q := range HistoryRequests {
		b.Run(q.Name, func(b *testing.B) {
			f := q.Filter
			_, total, err := s.List(ctx, f)
			if err != nil {
				b.Fatal(err)
			}
			mf := f
			mf.Offset, mf.Limit = total/2, 1
			mid, _, err := s.List(ctx, mf)
			if err != nil {
				b.Fatal(err)
			}
			pages := []struct {
				name string
				f    store.Filter
			}{{"first", f}, {"middle", f}, {"last", f}, {"count", f}}
			pages[2].f.Last = true
			pages[3].f.Offset = 1 << 30 // past the end: the count alone
			if len(mid) == 1 {
				c := store.CursorOf(mid[0])
				pages[1].f.After = &c
			}
			took := make([][]float64, len(pages))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for j, p := range pages {
					t0 := time.Now()
					pg, err := s.ListPage(ctx, p.f)
					if err != nil {
						b.Fatalf("%s %s: %v", q.Name, p.name, err)
					}
					took[j] = append(took[j], float64(time.Since(t0).Microseconds())/1000)
					if i == 0 {
						b.Logf("%-22s %-6s %7d runs, %3d on the page, %.2f ms", q.Name, p.name, pg.Total, len(pg.Runs), took[j][0])
					}
				}
			}
			b.StopTimer()
			for j, p := range pages {
				slices.Sort(took[j])
				b.ReportMetric(took[j][len(took[j])/2], "ms/"+p.name)
			}
		})
	}
}
