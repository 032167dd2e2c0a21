package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Page says how a backend reads the page f asks for from a list of total
// runs ordered by keys (the time key, then the id): n rows at offset, in
// order (an ORDER BY clause), and whether the rows read must be reversed;
// ok is false past the last run. A page past the middle is read from the
// other end, so the last page costs what the first does.
func (f Filter) Page(total int, keys [2]string) (n, offset int, order string, reverse, ok bool) {
	if f.Offset >= total {
		return 0, 0, "", false, false
	}
	n, offset = f.Limit, f.Offset
	if f.Offset > total/2 {
		n = min(f.Limit, total-f.Offset)
		offset, reverse = total-f.Offset-n, true
	}
	desc := !f.OldestFirst
	if reverse {
		desc = !desc
	}
	order = ` ORDER BY ` + keys[0] + `, ` + keys[1]
	if desc {
		order = ` ORDER BY ` + keys[0] + ` DESC, ` + keys[1] + ` DESC`
	}
	return n, offset, order, reverse, true
}

// List returns a page of runs, newest first (or oldest first), and the
// number of runs the filter selects. The runs come without panels.
func (s *Store) List(ctx context.Context, f Filter) ([]*Run, int, error) {
	p, err := s.ListPage(ctx, f)
	if err != nil {
		return nil, 0, err
	}
	return p.Runs, p.Total, nil
}

// ListPage is List with the cursors of the pages on either side: the page
// f asks for by offset or by cursor (Filter.After, Before, Last).
func (s *Store) ListPage(ctx context.Context, f Filter) (*Page, error) {
	f, err := f.check()
	if err != nil {
		return nil, err
	}
	matches, textArgs := searchMatches(f.Text)
	if f.Text != "" && f.Problem == "" && f.Status == "" && f.Sweep == "" && f.Algorithm == "" && (f.Keyed() || f.Offset == 0) {
		return s.searchPage(ctx, f, matches, textArgs)
	}
	lq := newListQuery(f)
	lq.search(f, matches, textArgs)
	lq.sweepAndAlgorithm(f)
	cond := " WHERE " + strings.Join(lq.where, " AND ")
	lq.counting(f, cond)
	p := &Page{}
	if err := s.db.QueryRowContext(ctx, lq.count, lq.countArgs...).Scan(&p.Total); err != nil {
		return nil, fmt.Errorf("store: listing runs: %w", err)
	}
	pq, ok := lq.page(f, cond, p.Total)
	if !ok {
		return p, nil
	}
	if p.Runs, err = s.scanRuns(ctx, pq.q, pq.args); err != nil {
		return nil, err
	}
	if err := s.pageEnds(ctx, f, p, pq); err != nil {
		return nil, err
	}
	if err := s.loadTraces(ctx, p.Runs, false); err != nil {
		return nil, fmt.Errorf("store: listing runs: %w", err)
	}
	for _, r := range p.Runs {
		s.unstale(r)
	}
	return p, nil
}

// searchMatches is the query of the runs a search text finds (their ids
// and times) and its arguments; nil arguments for no text. LIKE folds
// ASCII letters alike on both sides; runs_text's trigram index answers a
// LIKE of one column (an OR of both is read from the whole table) without
// an ESCAPE clause, of three characters or more: a text holding a
// wildcard (% or _) is escaped and read from the whole table.
func searchMatches(text string) (matches string, textArgs []any) {
	matches = `SELECT m.run_id, m.at_us FROM (SELECT rowid AS rid FROM runs_text WHERE name LIKE ?
			UNION SELECT rowid FROM runs_text WHERE note LIKE ?) x JOIN run_text_rows m ON m.rid = x.rid`
	if text == "" {
		return matches, nil
	}
	pat := "%" + text + "%"
	if strings.ContainsAny(text, "%_") {
		pat = "%" + likeEscape(text) + "%"
		matches = strings.ReplaceAll(matches, "LIKE ?", `LIKE ? ESCAPE '\'`)
	}
	return matches, []any{pat, pat}
}

// listQuery is a History list's query as ListPage builds it from a
// filter: its conditions and their arguments, what the page is read from
// and ordered by, and the query counting the runs it selects.
type listQuery struct {
	// where and args are the conditions and their arguments; a run still
	// being imported has no entered_us and is not listed (the partial
	// indexes of schema 7 hold the listed runs: the condition is written
	// as they are)
	where []string
	args  []any
	// from is what the page is read from: the runs, or the algorithm's
	// entries of run_algos (in list order) joined to them; keys orders it
	from string
	keys [2]string
	// count counts the runs selected (empty until chosen)
	count     string
	countArgs []any
	// sel is what a page's query selects; wrap makes it the page's query
	sel  string
	wrap func(q, order string) string
}

// newListQuery is the query of all listed runs narrowed to f's problem
// and status.
func newListQuery(f Filter) *listQuery {
	lq := &listQuery{
		where: []string{"entered_us IS NOT NULL"},
		from:  ` FROM runs`,
		keys:  [2]string{"created_us", "id"},
		sel:   `SELECT ` + runColsOf("runs."),
		wrap:  func(q, order string) string { return q },
	}
	if f.Problem != "" {
		lq.where, lq.args = append(lq.where, "runs.problem = ?"), append(lq.args, f.Problem)
	}
	if f.Status != "" {
		lq.where, lq.args = append(lq.where, "runs.status = ?"), append(lq.args, f.Status)
	}
	return lq
}

// search narrows the query to the runs f's text finds (matches, with its
// arguments textArgs), by the way that reads fewest rows for the other
// conditions of f.
func (lq *listQuery) search(f Filter, matches string, textArgs []any) {
	if f.Text == "" {
		return
	}
	if f.Problem == "" && f.Status == "" && f.Sweep == "" && f.Algorithm == "" {
		// the search alone: runs_text holds listed runs only, and
		// run_text_rows their times, so the page and its count read
		// the runs found alone, and the page's runs after
		lq.from, lq.keys, lq.where = ` FROM (`+matches+`) tm`, [2]string{"tm.at_us", "tm.run_id"}, []string{"tm.run_id IS NOT NULL"}
		lq.sel = `SELECT tm.run_id, tm.at_us`
		lq.wrap = func(q, order string) string {
			return `SELECT ` + runColsOf("runs.") + ` FROM (` + q + `) tm CROSS JOIN runs ON runs.id = tm.run_id` + order
		}
		lq.args = append(lq.args, textArgs...)
	} else if f.Algorithm == "" || strings.Contains(f.Algorithm, VariantSep) {
		// the page is read from the runs found, sorted (a few in a
		// long list: walking the list for them would read most of it)
		lq.from = ` FROM (` + matches + `) tm CROSS JOIN runs ON runs.id = tm.run_id`
		lq.args = append(slices.Clone(textArgs), lq.args...) // from's come first
	} else {
		lq.where, lq.args = append(lq.where, `runs.id IN (SELECT run_id FROM (`+matches+`))`), append(lq.args, textArgs...)
	}
}

// sweepAndAlgorithm narrows the query to f's sweep and algorithm; a list
// of one algorithm (not a variant) is read from run_algos, and counted
// from run_algo_counts when nothing but problem and status narrows it
// further.
func (lq *listQuery) sweepAndAlgorithm(f Filter) {
	if f.Sweep != "" {
		c, a := sweepFilter(f.Sweep)
		lq.where, lq.args = append(lq.where, c), append(lq.args, a...)
	}
	if f.Algorithm == "" {
		return
	}
	if strings.Contains(f.Algorithm, VariantSep) {
		// run_algos files a variant under its own name and its
		// algorithm's, not under every prefix: a rare filter
		lq.where = append(lq.where, `EXISTS (SELECT 1 FROM traces t WHERE t.run_id = runs.id AND (t.algo = ? OR t.algo LIKE ? ESCAPE '\'))`)
		lq.args = append(lq.args, f.Algorithm, AlgorithmLike(f.Algorithm))
		return
	}
	lq.from, lq.keys = ` FROM run_algos ra JOIN runs ON runs.id = ra.run_id`, [2]string{"ra.at_us", "ra.run_id"}
	if f.Text == "" && f.Sweep == "" {
		// run_algos holds listed runs only: run_algo_counts
		// counts them by algorithm, problem and status
		lq.count, lq.countArgs = `SELECT COALESCE(SUM(n), 0) FROM run_algo_counts WHERE algo = ?`, []any{f.Algorithm}
		if f.Problem != "" {
			lq.count, lq.countArgs = lq.count+` AND problem = ?`, append(lq.countArgs, f.Problem)
		}
		if f.Status != "" {
			lq.count, lq.countArgs = lq.count+` AND status = ?`, append(lq.countArgs, f.Status)
		}
	}
	lq.where, lq.args = append([]string{"ra.algo = ?"}, lq.where...), append([]any{f.Algorithm}, lq.args...)
}

// counting chooses the query counting the runs selected, if
// sweepAndAlgorithm has not: run_counts for problem and status at most,
// else a count of the rows the page is read from under cond.
func (lq *listQuery) counting(f Filter, cond string) {
	if lq.count == "" && f.Text == "" && f.Sweep == "" && f.Algorithm == "" {
		// problem and status at most: run_counts has the number
		lq.count, lq.countArgs = `SELECT COALESCE(SUM(n), 0) FROM run_counts`, nil
		var on []string
		if f.Problem != "" {
			on, lq.countArgs = append(on, "problem = ?"), append(lq.countArgs, f.Problem)
		}
		if f.Status != "" {
			on, lq.countArgs = append(on, "status = ?"), append(lq.countArgs, f.Status)
		}
		if len(on) > 0 {
			lq.count += " WHERE " + strings.Join(on, " AND ")
		}
	}
	if lq.count == "" {
		lq.count, lq.countArgs = `SELECT COUNT(*)`+lq.from+cond, lq.args
	}
}

// pageQuery is the query of a page's runs and its arguments, whether the
// rows it reads are to be reversed, and for a keyed page the query of a
// run on the cursor's other side (other, with otherArgs).
type pageQuery struct {
	q         string
	args      []any
	reverse   bool
	other     string
	otherArgs []any
}

// page is the query of the page f asks for, by cursor or by offset among
// total runs selected under cond; ok is false past the last run.
func (lq *listQuery) page(f Filter, cond string, total int) (pq pageQuery, ok bool) {
	if f.Keyed() {
		var seek, otherCond, order string
		seekArgs := slices.Clone(lq.args)
		seek, otherCond, order, pq.reverse = f.Seek(lq.keys, func(v any) string {
			seekArgs = append(seekArgs, v)
			return "?"
		})
		c := cond
		if seek != "" {
			c += " AND " + seek
			pq.other = `SELECT EXISTS (SELECT 1` + lq.from + cond + ` AND ` + otherCond + `)`
		}
		pq.q, pq.args = lq.wrap(lq.sel+lq.from+c+order+` LIMIT ?`, order), append(seekArgs, f.Limit+1)
		pq.otherArgs = seekArgs
		return pq, true
	}
	n, offset, order, rev, ok := f.Page(total, lq.keys)
	if !ok {
		return pq, false
	}
	pq.q, pq.args, pq.reverse = lq.wrap(lq.sel+lq.from+cond+order+` LIMIT ? OFFSET ?`, order), append(slices.Clone(lq.args), n, offset), rev
	return pq, true
}

// scanRuns reads the runs query q selects, without their traces.
func (s *Store) scanRuns(ctx context.Context, q string, args []any) ([]*Run, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: listing runs: %w", err)
	}
	var runs []*Run
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
// and asks pq.other whether a run lies on the cursor's other side.
func (s *Store) pageEnds(ctx context.Context, f Filter, p *Page, pq pageQuery) error {
	var other func() (bool, error)
	if pq.other != "" {
		other = func() (bool, error) {
			var beyond bool
			if err := s.db.QueryRowContext(ctx, pq.other, pq.otherArgs...).Scan(&beyond); err != nil {
				return false, fmt.Errorf("store: listing runs: %w", err)
			}
			return beyond, nil
		}
	}
	return f.FinishPage(p, pq.reverse, other)
}

// searchPage is ListPage of a search alone, read by cursor or from the
// list's start: runs_text holds the listed runs only and run_text_rows
// their times, so one pass over the runs found sorts them, counts them
// (and those on the cursor's other side) and reads the page's runs after.
func (s *Store) searchPage(ctx context.Context, f Filter, matches string, textArgs []any) (*Page, error) {
	var cargs []any
	seek, other, order, reverse := f.Seek([2]string{"tm.at_us", "tm.run_id"}, func(v any) string {
		cargs = append(cargs, v)
		return "?"
	})
	// the placeholders in the order they are written: beyond's, the
	// search's, the seek's
	var args []any
	beyond, where := "0", ""
	if other != "" {
		beyond = "COUNT(*) FILTER (WHERE " + other + ") OVER ()"
		args = append(args, cargs...)
	}
	args = append(args, textArgs...)
	if seek != "" {
		where = " WHERE " + seek
		args = append(args, cargs...)
	}
	q := `SELECT ` + runColsOf("runs.") + `, tm.total, tm.beyond FROM (
		SELECT tm.run_id, tm.at_us, tm.total, tm.beyond FROM (
			SELECT tm.run_id, tm.at_us, COUNT(*) OVER () AS total, ` + beyond + ` AS beyond FROM (` + matches + `) tm) tm` +
		where + order + ` LIMIT ?) tm CROSS JOIN runs ON runs.id = tm.run_id` + order
	rows, err := s.db.QueryContext(ctx, q, append(args, f.Limit+1)...)
	if err != nil {
		return nil, fmt.Errorf("store: listing runs: %w", err)
	}
	p := &Page{}
	var total, n int
	for rows.Next() {
		r, err := scanRun(plusScanner{rows, []any{&total, &n}})
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
	p.Total = total
	if len(p.Runs) == 0 {
		// no run past the cursor: the count alone
		if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM (`+matches+`)`, textArgs...).Scan(&p.Total); err != nil {
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
	for _, r := range p.Runs {
		s.unstale(r)
	}
	return p, nil
}

// plusScanner scans a row's columns beyond those its caller asks for
// into more.
type plusScanner struct {
	sc   scanner
	more []any
}

func (p plusScanner) Scan(dst ...any) error { return p.sc.Scan(append(dst, p.more...)...) }

// likeEscape escapes LIKE's wildcards with a backslash.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
