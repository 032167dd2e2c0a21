package pgstore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
)

// List returns a page of runs, newest first (or oldest first), and the
// number of runs the filter selects. The runs come without panels.
func (s *Store) List(ctx context.Context, f store.Filter) ([]*store.Run, int, error) {
	p, err := s.ListPage(ctx, f)
	if err != nil {
		return nil, 0, err
	}
	return p.Runs, p.Total, nil
}

// ListPage is List with the cursors of the pages on either side: the page
// f asks for by offset or by cursor (Filter.After, Before, Last).
func (s *Store) ListPage(ctx context.Context, f store.Filter) (*store.Page, error) {
	f, err := f.Check()
	if err != nil {
		return nil, err
	}
	if f.Text != "" {
		if strings.IndexByte(f.Text, 0) >= 0 {
			return nil, spec.Errorf("text", "must not contain the NUL character")
		}
		if f.Problem == "" && f.Status == "" && f.Sweep == "" && f.Algorithm == "" && (f.Keyed() || f.Offset == 0) {
			return s.searchPage(ctx, f)
		}
	}
	lq := newListQuery(f)
	s.counting(ctx, f, lq)
	cond := ""
	if len(lq.where) > 0 {
		cond = " WHERE " + strings.Join(lq.where, " AND ")
	}
	if lq.count == "" {
		lq.count, lq.cargs = `SELECT COUNT(*)`+lq.from+cond, lq.args
	}
	p := &store.Page{}
	if err := s.pool.QueryRow(ctx, lq.count, listArgs(lq.cargs)...).Scan(&p.Total); err != nil {
		return nil, fmt.Errorf("store: listing runs: %w", err)
	}
	pq, ok := lq.page(f, cond, p.Total)
	if !ok {
		return p, nil
	}
	if p.Runs, err = s.scanRuns(ctx, pq.q, lq.args); err != nil {
		return nil, err
	}
	if err := s.pageEnds(ctx, f, p, pq, lq.args); err != nil {
		return nil, err
	}
	if err := s.loadTraces(ctx, p.Runs, false); err != nil {
		return nil, fmt.Errorf("store: listing runs: %w", err)
	}
	return p, nil
}

// listQuery is a History list's query as ListPage builds it from a
// filter: its conditions and their arguments (numbered in the order
// written), what the page is read from and ordered by, and the query
// counting the runs it selects with its arguments.
type listQuery struct {
	where []string
	args  []any
	// from is what the page is read from: the runs, or the algorithm's
	// entries of run_algos (in list order) joined to them; keys orders it
	from  string
	keys  [2]string
	count string
	cargs []any
}

// arg adds v to the query's arguments and returns its placeholder.
func (lq *listQuery) arg(v any) string {
	lq.args = append(lq.args, v)
	return fmt.Sprintf("$%d", len(lq.args))
}

// newListQuery is the query of the runs f selects (a search among other
// conditions: a search alone is searchPage's).
func newListQuery(f store.Filter) *listQuery {
	lq := &listQuery{from: ` FROM runs`, keys: [2]string{"created_us", `id COLLATE "C"`}}
	if f.Problem != "" {
		lq.where = append(lq.where, "runs.problem = "+lq.arg(f.Problem))
	}
	if f.Status != "" {
		lq.where = append(lq.where, "runs.status = "+lq.arg(f.Status))
	}
	if f.Text != "" {
		// the trigram indexes of schema 11 answer these
		p := lq.arg("%" + store.LikeEscape(f.Text) + "%")
		lq.where = append(lq.where, `(LOWER(name) LIKE LOWER(`+p+`) ESCAPE '\' OR LOWER(note) LIKE LOWER(`+p+`) ESCAPE '\')`)
	}
	if f.Sweep != "" {
		lq.where = append(lq.where, `id IN (SELECT run_id FROM sweep_cells WHERE sweep_id = `+lq.arg(f.Sweep)+` AND run_id IS NOT NULL)`)
	}
	if f.Algorithm != "" {
		if strings.Contains(f.Algorithm, store.VariantSep) {
			// run_algos files a variant under its own name and its
			// algorithm's, not under every prefix: a rare filter
			lq.where = append(lq.where, "EXISTS (SELECT 1 FROM traces t WHERE t.run_id = runs.id AND (t.algo = "+lq.arg(f.Algorithm)+
				" OR t.algo LIKE "+lq.arg(store.AlgorithmLike(f.Algorithm))+` ESCAPE '\'))`)
		} else {
			// run_algos.run_id sorts in "C", as the lists do; the join
			// compares in the runs' collation, so that it reads runs' key
			lq.from, lq.keys = ` FROM run_algos ra JOIN runs ON runs.id = ra.run_id COLLATE "default"`, [2]string{"ra.at_us", "ra.run_id"}
			lq.where = append(lq.where, "ra.algo = "+lq.arg(f.Algorithm))
		}
	}
	return lq
}

// counting sets the count of a page filtered by an algorithm, a problem
// and a status at most: run_count_deltas (an empty algo for every run), folded
// first; other pages are counted from the rows they are read from.
func (s *Store) counting(ctx context.Context, f store.Filter, lq *listQuery) {
	if f.Text != "" || f.Sweep != "" || strings.Contains(f.Algorithm, store.VariantSep) {
		return
	}
	lq.cargs = append(lq.cargs, f.Algorithm)
	lq.count = `SELECT COALESCE(SUM(n), 0) FROM run_count_deltas WHERE algo = $1`
	if f.Problem != "" {
		lq.cargs = append(lq.cargs, f.Problem)
		lq.count += fmt.Sprintf(" AND problem = $%d", len(lq.cargs))
	}
	if f.Status != "" {
		lq.cargs = append(lq.cargs, f.Status)
		lq.count += fmt.Sprintf(" AND status = $%d", len(lq.cargs))
	}
	s.compactCounts(ctx)
}

// pageQuery is the query of a page's runs, whether the rows it reads are
// to be reversed, and for a keyed page the query of a run on the cursor's
// other side (other, with the first otherArgs of the list's arguments).
type pageQuery struct {
	q, other  string
	otherArgs int
	reverse   bool
}

// page is the query of the page f asks for, by cursor or by offset among
// total runs selected under cond; its arguments are added to lq's. ok is
// false past the last run.
func (lq *listQuery) page(f store.Filter, cond string, total int) (pq pageQuery, ok bool) {
	if f.Keyed() {
		var seek, otherCond, order string
		seek, otherCond, order, pq.reverse = f.Seek(lq.keys, lq.arg)
		c := cond
		if seek != "" {
			c = " WHERE " + strings.Join(append(slices.Clone(lq.where), seek), " AND ")
			pq.other, pq.otherArgs = `SELECT EXISTS (SELECT 1`+lq.from+" WHERE "+strings.Join(append(slices.Clone(lq.where), otherCond), " AND ")+`)`, len(lq.args)
		}
		pq.q = `SELECT ` + runColsOf("runs.") + lq.from + c + order + ` LIMIT ` + lq.arg(f.Limit+1)
		return pq, true
	}
	n, offset, order, rev, ok := f.Page(total, lq.keys)
	if !ok {
		return pq, false
	}
	pq.reverse = rev
	pq.q = `SELECT ` + runColsOf("runs.") + lq.from + cond + order + ` LIMIT ` + lq.arg(n) + ` OFFSET ` + lq.arg(offset)
	return pq, true
}

// scanRuns reads the runs query q selects, without their traces.
func (s *Store) scanRuns(ctx context.Context, q string, args []any) ([]*store.Run, error) {
	rows, err := s.pool.Query(ctx, q, listArgs(args)...)
	if err != nil {
		return nil, fmt.Errorf("store: listing runs: %w", err)
	}
	var runs []*store.Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: listing runs: %w", err)
		}
		runs = append(runs, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: listing runs: %w", err)
	}
	return runs, nil
}

// pageEnds puts p's runs (read by pq) in list order and sets the cursors
// of the pages on either side; a keyed page reads one run past its limit
// and asks pq.other (with args' first pq.otherArgs) whether a run lies on
// the cursor's other side.
func (s *Store) pageEnds(ctx context.Context, f store.Filter, p *store.Page, pq pageQuery, args []any) error {
	var other func() (bool, error)
	if pq.other != "" {
		other = func() (bool, error) {
			var beyond bool
			if err := s.pool.QueryRow(ctx, pq.other, listArgs(args[:pq.otherArgs])...).Scan(&beyond); err != nil {
				return false, fmt.Errorf("store: listing runs: %w", err)
			}
			return beyond, nil
		}
	}
	return f.FinishPage(p, pq.reverse, other)
}

// searchPage is ListPage of a search alone, read by cursor or from the
// list's start: one pass over the runs found (the trigram indexes of
// schema 11) sorts them, counts them (and those on the cursor's other
// side) and reads the page's runs after, where walking the list for them
// would read most of it when they lie in one part of it.
func (s *Store) searchPage(ctx context.Context, f store.Filter) (*store.Page, error) {
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	pat := arg("%" + store.LikeEscape(f.Text) + "%")
	found := `SELECT id, created_us FROM runs WHERE (LOWER(name) LIKE LOWER(` + pat + `) ESCAPE '\' OR LOWER(note) LIKE LOWER(` + pat + `) ESCAPE '\')`
	seek, other, order, reverse := f.Seek([2]string{"tm.created_us", `tm.id COLLATE "C"`}, arg)
	beyond, where := "0", ""
	if other != "" {
		beyond = "COUNT(*) FILTER (WHERE " + other + ") OVER ()"
	}
	if seek != "" {
		where = " WHERE " + seek
	}
	q := `WITH found AS MATERIALIZED (` + found + `)
		SELECT ` + runColsOf("runs.") + `, tm.total, tm.beyond FROM (
			SELECT tm.id, tm.created_us, tm.total, tm.beyond FROM (
				SELECT tm.id, tm.created_us, COUNT(*) OVER () AS total, ` + beyond + ` AS beyond FROM found tm) tm` +
		where + order + ` LIMIT ` + arg(f.Limit+1) + `) tm JOIN runs ON runs.id = tm.id` + order
	rows, err := s.pool.Query(ctx, q, listArgs(args)...)
	if err != nil {
		return nil, fmt.Errorf("store: listing runs: %w", err)
	}
	p := &store.Page{}
	var total, n int64
	for rows.Next() {
		r, err := scanRun(rows, &total, &n)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: listing runs: %w", err)
		}
		p.Runs = append(p.Runs, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: listing runs: %w", err)
	}
	p.Total = int(total)
	if len(p.Runs) == 0 {
		// no run past the cursor: the count alone
		if err := s.pool.QueryRow(ctx, `SELECT COUNT(*) FROM (`+found+`) f`, listArgs(args[:1])...).Scan(&p.Total); err != nil {
			return nil, fmt.Errorf("store: listing runs: %w", err)
		}
	}
	more := len(p.Runs) > f.Limit
	p.Runs = p.Runs[:min(len(p.Runs), f.Limit)]
	if reverse {
		slices.Reverse(p.Runs)
	}
	f.Ends(p, more, n > 0)
	if err := s.loadTraces(ctx, p.Runs, false); err != nil {
		return nil, fmt.Errorf("store: listing runs: %w", err)
	}
	return p, nil
}

// listArgs are a list query's arguments, sent to be planned with their
// values each time (an unnamed statement, not one prepared once): a
// prepared statement's generic plan, made for any algorithm, reads a page
// of 50 runs with parallel workers, whose start takes tens of
// milliseconds (235 ms a page at 10⁶ runs on a busy machine, where the
// plan for the value read takes one).
func listArgs(args []any) []any {
	return append([]any{pgx.QueryExecModeExec}, args...)
}
