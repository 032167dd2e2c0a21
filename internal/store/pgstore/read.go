package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
)

// ids are compared byte by byte, as in SQLite, whatever the database's
// collation
const runCols = `id, created_us, ended_us, status, spec, version, name, note, starred, dim, samples, blocks, fstar, message, outside`

// runColsOf is runCols, each qualified by prefix ("runs.").
func runColsOf(prefix string) string {
	return prefix + strings.ReplaceAll(runCols, ", ", ", "+prefix)
}

func scanRun(row pgx.Row, extra ...any) (*store.Run, error) {
	var r store.Run
	var ended *int64
	var created int64
	var sp string
	dst := []any{&r.ID, &created, &ended, &r.Status, &sp, &r.Version, &r.Name, &r.Note, &r.Starred,
		&r.Instance.Dim, &r.Instance.Samples, &r.Instance.Blocks, &r.Instance.FStar, &r.Message, &r.Outside}
	if err := row.Scan(append(dst, extra...)...); err != nil {
		return nil, err
	}
	r.Created = fromMicros(created)
	if ended != nil {
		r.Ended = fromMicros(*ended)
	}
	if err := json.Unmarshal([]byte(sp), &r.Spec); err != nil {
		return nil, fmt.Errorf("run %s: decoding the stored spec: %w", r.ID, err)
	}
	return &r, nil
}

// Get returns a run with its traces and panels (not its records).
func (s *Store) Get(ctx context.Context, id string) (*store.Run, error) {
	return s.get(ctx, id, true)
}

// GetLean is Get without the traces' panels (store.Backend).
func (s *Store) GetLean(ctx context.Context, id string) (*store.Run, error) {
	return s.get(ctx, id, false)
}

func (s *Store) get(ctx context.Context, id string, tracePanels bool) (*store.Run, error) {
	var panels *string
	r, err := scanRun(s.pool.QueryRow(ctx, `SELECT `+runCols+`, info_panels FROM runs WHERE id = $1`, id), &panels)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("run " + id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: run %s: %w", id, err)
	}
	if panels != nil {
		r.Instance.Panels = json.RawMessage(*panels)
	}
	if err := s.loadTraces(ctx, []*store.Run{r}, tracePanels); err != nil {
		return nil, fmt.Errorf("store: run %s: %w", id, err)
	}
	return r, nil
}

// TracePanels returns one trace's panels (store.Backend): nil when it has
// none, store.ErrTooLarge (wrapped) over max bytes, without reading them.
func (s *Store) TracePanels(ctx context.Context, id string, trace int, max int64) (json.RawMessage, error) {
	var size *int64
	err := s.pool.QueryRow(ctx, `SELECT octet_length(panels) FROM traces WHERE run_id = $1 AND idx = $2`, id, trace).Scan(&size)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound(fmt.Sprintf("run %s trace %d", id, trace))
	}
	if err != nil {
		return nil, fmt.Errorf("store: run %s trace %d: %w", id, trace, err)
	}
	if size == nil {
		return nil, nil
	}
	if *size > max {
		return nil, fmt.Errorf("store: run %s trace %d: panels of %d bytes, over the cap of %d: %w", id, trace, *size, max, store.ErrTooLarge)
	}
	var pan *string
	if err := s.pool.QueryRow(ctx, `SELECT panels FROM traces WHERE run_id = $1 AND idx = $2`, id, trace).Scan(&pan); err != nil {
		return nil, fmt.Errorf("store: run %s trace %d: %w", id, trace, err)
	}
	if pan == nil {
		return nil, nil
	}
	return json.RawMessage(*pan), nil
}

// User returns a run's name, note and star.
func (s *Store) User(ctx context.Context, id string) (name, note string, starred bool, err error) {
	err = s.pool.QueryRow(ctx, `SELECT name, note, starred FROM runs WHERE id = $1`, id).Scan(&name, &note, &starred)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", "", false, notFound("run " + id)
	}
	if err != nil {
		return "", "", false, fmt.Errorf("store: run %s: %w", id, err)
	}
	return name, note, starred, nil
}

// loadTraces fills the runs' traces (with their panels when asked).
func (s *Store) loadTraces(ctx context.Context, runs []*store.Run, panels bool) error {
	if len(runs) == 0 {
		return nil
	}
	byID := make(map[string]*store.Run, len(runs))
	ids := make([]string, len(runs))
	for i, r := range runs {
		byID[r.ID] = r
		ids[i] = r.ID
		r.Traces = nil
	}
	cols := `run_id, idx, algo, replication, seed, status, records, summary, panels_error, panels IS NOT NULL`
	if panels {
		cols += `, panels`
	}
	rows, err := s.pool.Query(ctx, `SELECT `+cols+` FROM traces WHERE run_id = ANY($1) ORDER BY run_id, idx`, ids)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var t store.Trace
		var runID string
		var sum, pan *string
		dst := []any{&runID, &t.Index, &t.Algo, &t.Replication, &t.Seed, &t.Status, &t.Records, &sum, &t.PanelsError, &t.HasPanels}
		if panels {
			dst = append(dst, &pan)
		}
		if err := rows.Scan(dst...); err != nil {
			return err
		}
		if sum != nil {
			t.Summary, err = store.UnmarshalSummary([]byte(*sum))
			if err != nil {
				return fmt.Errorf("trace %d: %w", t.Index, err)
			}
		}
		if pan != nil {
			t.Panels = json.RawMessage(*pan)
		}
		r := byID[runID]
		r.Traces = append(r.Traces, t)
	}
	return rows.Err()
}

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
	if !f.Keyed() {
		if pq.reverse {
			slices.Reverse(p.Runs)
		}
		f.OffsetEnds(p)
		return nil
	}
	more := len(p.Runs) > f.Limit
	p.Runs = p.Runs[:min(len(p.Runs), f.Limit)]
	var beyond bool
	if pq.other != "" && len(p.Runs) > 0 {
		if err := s.pool.QueryRow(ctx, pq.other, listArgs(args[:pq.otherArgs])...).Scan(&beyond); err != nil {
			return fmt.Errorf("store: listing runs: %w", err)
		}
	}
	if pq.reverse {
		slices.Reverse(p.Runs)
	}
	f.Ends(p, more, beyond)
	return nil
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

// Records returns the records of a trace with indices in [from, to); to < 0
// means to the end.
func (s *Store) Records(ctx context.Context, id string, trace, from, to int) ([]solver.Record, error) {
	var out []solver.Record
	err := s.EachRecord(ctx, id, trace, from, to, func(_ int, r *solver.Record) error {
		out = append(out, *r)
		return nil
	})
	return out, err
}

// readPage is how many batches one read of EachRecord takes.
const readPage = 16

type batch struct {
	first int
	data  []byte
}

// EachRecord calls fn for every record of a trace with index in [from, to)
// (to < 0: to the end), in order, reading a few batches at a time (no
// connection is held while fn runs, so fn may use the store).
func (s *Store) EachRecord(ctx context.Context, id string, trace, from, to int, fn func(i int, r *solver.Record) error) error {
	if from < 0 {
		return spec.Errorf("from", "must be non-negative, got %d", from)
	}
	defer s.reading.Start(id)() // before the run is looked at: Trim spares it
	var n int
	err := s.pool.QueryRow(ctx, `SELECT records FROM traces WHERE run_id = $1 AND idx = $2`, id, trace).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		return notFound(fmt.Sprintf("run %s trace %d", id, trace))
	}
	if err != nil {
		return fmt.Errorf("store: reading run %s trace %d: %w", id, trace, err)
	}
	if to < 0 || to > n {
		to = n
	}
	next := from
	var recs []solver.Record
	for next < to {
		bs, err := s.batches(ctx, id, trace, next, to)
		if err != nil {
			return fmt.Errorf("store: reading run %s trace %d: %w", id, trace, err)
		}
		if len(bs) == 0 {
			return fmt.Errorf("store: reading run %s trace %d: records %d to %d are missing", id, trace, next, to)
		}
		before := next
		for _, b := range bs {
			if b.first > next {
				return fmt.Errorf("store: reading run %s trace %d: records %d to %d are missing", id, trace, next, b.first)
			}
			recs, err = store.DecodeBatch(recs[:0], b.data)
			if err != nil {
				return fmt.Errorf("store: reading run %s trace %d batch at %d: %w", id, trace, b.first, err)
			}
			for j := next - b.first; j < len(recs) && b.first+j < to; j++ {
				if err := fn(b.first+j, &recs[j]); err != nil {
					return err
				}
				next = b.first + j + 1
			}
			if next < b.first+len(recs) && next < to {
				return fmt.Errorf("store: reading run %s trace %d: batch at %d is short", id, trace, b.first)
			}
		}
		if next == before {
			return fmt.Errorf("store: reading run %s trace %d: records %d to %d are missing", id, trace, next, to)
		}
	}
	return nil
}

// batches reads up to readPage batches of a trace from the one holding
// record next, stopping before record to.
func (s *Store) batches(ctx context.Context, id string, trace, next, to int) ([]batch, error) {
	rows, err := s.pool.Query(ctx, `SELECT first_rec, data FROM batches
		WHERE run_id = $1 AND trace = $2 AND first_rec >= (
			SELECT COALESCE(MAX(first_rec), 0) FROM batches WHERE run_id = $1 AND trace = $2 AND first_rec <= $3)
		AND first_rec < $4 ORDER BY first_rec LIMIT $5`, id, trace, next, to, readPage)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var bs []batch
	for rows.Next() {
		var b batch
		if err := rows.Scan(&b.first, &b.data); err != nil {
			return nil, err
		}
		bs = append(bs, b)
	}
	return bs, rows.Err()
}

// Delete deletes runs with their traces and records, and in the same
// transaction the data files no run names any more that a run named (or
// past their grace, datafiles.go); unknown ids are skipped. It returns the number deleted.
func (s *Store) Delete(ctx context.Context, ids ...string) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	var n int
	err := s.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM runs WHERE id = ANY($1)`, ids)
		if err != nil {
			return err
		}
		n = int(tag.RowsAffected())
		if n == 0 {
			return nil
		}
		_, _, err = reclaimIn(ctx, tx, DataFileGrace)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: deleting runs: %w", err)
	}
	return n, nil
}

// Trim deletes the unstarred runs beyond the keep that entered this store
// last, as store.Store.Trim does: never a starred run, a live one, one
// that ended or entered within store.TrimGrace (by this store's clock), or
// one whose records this process is reading.
func (s *Store) Trim(ctx context.Context, keep int) (int, error) {
	rule, err := store.NewTrimRule(keep, now(), &s.reading)
	if err != nil {
		return 0, err
	}
	rows, err := s.pool.Query(ctx, `SELECT id, status, ended_us, entered_us FROM runs WHERE NOT starred ORDER BY entered_us DESC, id COLLATE "C" DESC`)
	if err != nil {
		return 0, fmt.Errorf("store: trimming: %w", err)
	}
	var del []string
	for i := 0; rows.Next(); i++ {
		var id, st string
		var ended *int64
		var entered int64
		if err := rows.Scan(&id, &st, &ended, &entered); err != nil {
			rows.Close()
			return 0, fmt.Errorf("store: trimming: %w", err)
		}
		if rule.Deletes(i, id, st, ended, entered) {
			del = append(del, id)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("store: trimming: %w", err)
	}
	// a read that began since the rule looked spares its run too
	return s.reading.DeleteUnread(del, func(ids ...string) (int, error) { return s.Delete(ctx, ids...) })
}

// IntegrityCheck checks the records' bookkeeping: every trace's batches
// start at record 0, follow each other without gap or overlap and add up
// to the trace's record count.
func (s *Store) IntegrityCheck(ctx context.Context) error {
	rows, err := s.pool.Query(ctx, `
		WITH b AS (
			SELECT run_id, trace, first_rec, n,
				COALESCE(LAG(first_rec + n) OVER (PARTITION BY run_id, trace ORDER BY first_rec), 0) AS expect
			FROM batches)
		SELECT run_id, trace, 'batch at ' || first_rec || ' follows records to ' || expect FROM b WHERE first_rec <> expect
		UNION ALL
		SELECT t.run_id, t.idx, 'counts ' || t.records || ' records, its batches hold ' || COALESCE(SUM(b.n), 0)
		FROM traces t LEFT JOIN batches b ON b.run_id = t.run_id AND b.trace = t.idx
		GROUP BY t.run_id, t.idx, t.records HAVING t.records <> COALESCE(SUM(b.n), 0)
		LIMIT 20`)
	if err != nil {
		return fmt.Errorf("store: integrity check: %w", err)
	}
	defer rows.Close()
	var msgs []string
	for rows.Next() {
		var id, msg string
		var trace int
		if err := rows.Scan(&id, &trace, &msg); err != nil {
			return fmt.Errorf("store: integrity check: %w", err)
		}
		msgs = append(msgs, fmt.Sprintf("run %s trace %d: %s", id, trace, msg))
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: integrity check: %w", err)
	}
	if len(msgs) > 0 {
		return fmt.Errorf("store: integrity check: %s", strings.Join(msgs, "; "))
	}
	return nil
}

// DiskUsage returns the size of the database.
func (s *Store) DiskUsage(ctx context.Context) (int64, error) {
	var n int64
	if err := s.pool.QueryRow(ctx, `SELECT pg_database_size(current_database())`).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: disk usage: %w", err)
	}
	return n, nil
}
