package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
)

// checkAtOpen runs SQLite's quick check (the structure of every page, not
// the indexes' agreement with their tables) on an existing file and
// returns its first complaint. A file that is empty or absent passes: it
// is about to be created.
func checkAtOpen(uri string, q url.Values) error {
	path := strings.TrimPrefix(uri, "file:")
	path = strings.NewReplacer("%3f", "?", "%23", "#", "%25", "%").Replace(path)
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		return nil
	}
	db, err := sql.Open("sqlite", uri+"?"+q.Encode())
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	msgs, err := integrity(context.Background(), db, "quick_check", 1)
	if err != nil {
		return err
	}
	if len(msgs) > 0 {
		return errors.New(msgs[0])
	}
	return nil
}

// tidyProblem drops the schema header SQLite puts before a complaint.
func tidyProblem(m string) string {
	return strings.TrimSpace(strings.TrimPrefix(m, "*** in database main ***"))
}

// integrity runs PRAGMA name(max) (integrity_check or quick_check) and
// returns its complaints (none for "ok").
func integrity(ctx context.Context, db *sql.DB, name string, max int) ([]string, error) {
	rows, err := db.QueryContext(ctx, fmt.Sprintf("PRAGMA %s(%d)", name, max))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var msgs []string
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			return nil, err
		}
		if m == "ok" {
			continue
		}
		for _, l := range strings.Split(tidyProblem(m), "\n") {
			if l = strings.TrimSpace(l); l != "" && len(msgs) < max {
				msgs = append(msgs, l)
			}
		}
	}
	return msgs, rows.Err()
}

// openReadOnly opens a store's file for reading only, without taking its
// ownership or changing anything in it.
func openReadOnly(path string) (*sql.DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Set("mode", "ro")
	q.Set("_busy_timeout", "10000")
	db, err := sql.Open("sqlite", fileURI(path)+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// MaxProblems bounds the complaints Check returns.
const MaxProblems = 100

// Check runs SQLite's full integrity check on the store at path (read
// only: it may run beside a server using the file) and returns its
// complaints, at most MaxProblems, none when the file is sound. An error
// says the check itself could not run (no such file, not a database).
func Check(ctx context.Context, path string) ([]string, error) {
	db, err := openReadOnly(path)
	if err != nil {
		return nil, fmt.Errorf("store: checking %s: %w", path, err)
	}
	defer db.Close()
	if _, err := schemaVersion(ctx, db); err != nil {
		if storageFailure(err) {
			return []string{err.Error()}, nil // not a database, or its first page is damaged
		}
		return nil, fmt.Errorf("store: checking %s: %w", path, err)
	}
	msgs, err := integrity(ctx, db, "integrity_check", MaxProblems)
	if err != nil {
		// damage the check itself stumbles on: the quick check may get
		// further, and the failure is a finding too
		quick, qerr := integrity(ctx, db, "quick_check", MaxProblems)
		msgs = append(quick, err.Error())
		if qerr != nil {
			msgs = append(msgs, qerr.Error())
		}
	}
	return msgs, nil
}

// SalvageReport says what Salvage copied and what it could not read.
type SalvageReport struct {
	Runs, Records, Sweeps int      // copied
	Lost                  []string // what could not be read, one line each
}

// Salvage copies what can be read of the store at from (read only) into a
// new store at to, which must not exist yet: every run whose row and
// traces read, each trace's records up to the first batch that does not
// (a run that lost records is marked failed, its message saying which),
// the sweeps with their names, notes and stars, the runs' verifications
// and the names uploads were sent with. Copied rows keep their ids and
// dates. It returns what it
// did; an error means the new store could not be made.
func Salvage(ctx context.Context, from, to string) (*SalvageReport, error) {
	if _, err := os.Stat(to); err == nil {
		return nil, fmt.Errorf("store: salvaging into %s: the file exists (name a new one)", to)
	}
	src, err := openReadOnly(from)
	if err != nil {
		return nil, fmt.Errorf("store: salvaging %s: %w", from, err)
	}
	defer src.Close()
	dst, err := Open(to)
	if err != nil {
		return nil, err
	}
	defer dst.Close()
	rep := &SalvageReport{}
	v, err := schemaVersion(ctx, src)
	if err != nil {
		return nil, fmt.Errorf("store: salvaging %s: %w", from, err)
	}
	cols := salvageSelect(v)
	ids := readIDs(ctx, src, rep, "runs", `SELECT id FROM runs`, `SELECT id FROM runs INDEXED BY runs_created ORDER BY created_us DESC`)
	for _, id := range ids {
		if err := salvageRun(ctx, src, dst, id, cols, from, rep); err != nil {
			if storageFailure(err) {
				return rep, fmt.Errorf("store: writing %s: %w", to, err)
			}
			rep.Lost = append(rep.Lost, fmt.Sprintf("run %s: %v", id, err))
		}
	}
	for _, id := range readIDs(ctx, src, rep, "sweeps", `SELECT id FROM sweeps`) {
		if err := salvageSweep(ctx, src, dst, id, v); err != nil {
			if storageFailure(err) {
				return rep, fmt.Errorf("store: writing %s: %w", to, err)
			}
			rep.Lost = append(rep.Lost, fmt.Sprintf("sweep %s: %v", id, err))
			continue
		}
		rep.Sweeps++
	}
	if v >= 5 {
		salvageRows(ctx, src, dst, rep, "verifications",
			`SELECT id, run_id, at_us, outcome, records, detail, version, rerun_id FROM verifications`,
			`INSERT INTO verifications (id, run_id, at_us, outcome, records, detail, version, rerun_id)
			 SELECT ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM runs WHERE id = ?2)`)
	}
	if v >= 9 {
		salvageRows(ctx, src, dst, rep, "upload names",
			`SELECT sha256, name, at_us FROM upload_names`,
			`INSERT INTO upload_names (sha256, name, at_us) VALUES (?, ?, ?)`)
	}
	return rep, nil
}

// salvageRows copies the rows a query reads, as far as it reads, with
// insert (a row of a run that was not copied is left out by the insert
// itself); what could not be read or written is said in rep.Lost.
func salvageRows(ctx context.Context, src *sql.DB, dst *Store, rep *SalvageReport, what, query, insert string) {
	rows, err := src.QueryContext(ctx, query)
	if err != nil {
		rep.Lost = append(rep.Lost, fmt.Sprintf("the %s could not be read: %v", what, err))
		return
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			rep.Lost = append(rep.Lost, fmt.Sprintf("a row of the %s: %v", what, err))
			continue
		}
		if _, err := dst.exec(ctx, insert, vals...); err != nil {
			rep.Lost = append(rep.Lost, fmt.Sprintf("a row of the %s: %v", what, err))
		}
	}
	if err := rows.Err(); err != nil {
		rep.Lost = append(rep.Lost, fmt.Sprintf("the %s were read in part: %v", what, err))
	}
}

// readIDs reads the ids the queries return, as far as each reads, and
// their union in the order found.
func readIDs(ctx context.Context, db *sql.DB, rep *SalvageReport, what string, queries ...string) []string {
	seen := map[string]bool{}
	var ids []string
	var failed []error
	for _, q := range queries {
		err := func() error {
			rows, err := db.QueryContext(ctx, q)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var id string
				if err := rows.Scan(&id); err != nil {
					return err
				}
				if !seen[id] {
					seen[id] = true
					ids = append(ids, id)
				}
			}
			return rows.Err()
		}()
		if err == nil {
			return ids // one whole reading lists them all
		}
		failed = append(failed, err)
	}
	rep.Lost = append(rep.Lost, fmt.Sprintf("the list of %s could not be read whole (%v): the ones found were copied", what, errors.Join(failed...)))
	return ids
}

// salvageCols are the columns of a run as Salvage copies them.
const salvageCols = `id, created_us, ended_us, status, problem, spec, version, name, note, starred, dim, samples, blocks, fstar, info_panels, message, entered_us, digest, outside, token_hash`

// salvageSelect reads salvageCols from a file at schema version v (older
// files lack the later columns).
func salvageSelect(v int) string {
	cols := salvageCols
	if v < 10 {
		cols = strings.Replace(cols, "outside, token_hash", "0, NULL", 1)
	}
	if v < 4 {
		cols = strings.Replace(cols, "entered_us, digest", "created_us, NULL", 1)
	}
	if v < 3 {
		cols = strings.Replace(cols, "message,", "'',", 1)
	}
	return cols
}

type salvTrace struct {
	idx, replication, records int
	algo, status, panelsError string
	seed                      int64
	summary, panels           sql.NullString
}

// salvageRun copies one run, its traces and the records that read.
func salvageRun(ctx context.Context, src *sql.DB, dst *Store, id, cols, from string, rep *SalvageReport) error {
	vals := make([]any, strings.Count(salvageCols, ",")+1)
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := src.QueryRowContext(ctx, `SELECT `+cols+` FROM runs WHERE id = ?`, id).Scan(ptrs...); err != nil {
		return err
	}
	if vals[16] == nil { // an import that never finished
		return errors.New("an unfinished import")
	}
	traces, err := readTraces(ctx, src, id)
	if err != nil {
		return fmt.Errorf("its traces: %w", err)
	}
	if _, err := dst.exec(ctx, `INSERT INTO runs (`+salvageCols+`) VALUES (`+placeholders(len(vals))+`)`, vals...); err != nil {
		return err
	}
	var lost []string
	for _, t := range traces {
		if _, err := dst.exec(ctx, `INSERT INTO traces (run_id, idx, algo, replication, seed, status, records, summary, panels, panels_error) VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, ?)`,
			id, t.idx, t.algo, t.replication, t.seed, t.status, t.summary, t.panels, t.panelsError); err != nil {
			return err
		}
		n, why, err := salvageBatches(ctx, src, dst, id, t.idx, false)
		if err == nil && n < t.records {
			// the key's index may be what is damaged: read the table
			// itself in the order the batches were written
			if m, why2, err2 := salvageBatches(ctx, src, dst, id, t.idx, true); err2 != nil || m > n {
				n, why, err = m, why2, err2
			}
		}
		if err != nil {
			return err
		}
		rep.Records += n
		if n < t.records {
			lost = append(lost, fmt.Sprintf("trace %d kept %d of %d records (%s)", t.idx, n, t.records, why))
		}
	}
	if len(lost) > 0 {
		msg := fmt.Sprintf("salvaged from %s: %s", from, strings.Join(lost, "; "))
		rep.Lost = append(rep.Lost, "run "+id+": "+strings.Join(lost, "; "))
		if _, err := dst.exec(ctx, `UPDATE runs SET status = ?, message = ? WHERE id = ?`, StatusFailed, truncate(msg, MaxNote), id); err != nil {
			return err
		}
	}
	rep.Runs++
	return nil
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func readTraces(ctx context.Context, src *sql.DB, id string) ([]salvTrace, error) {
	rows, err := src.QueryContext(ctx, `SELECT idx, algo, replication, seed, status, records, summary, panels, panels_error FROM traces WHERE run_id = ? ORDER BY idx`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []salvTrace
	for rows.Next() {
		var t salvTrace
		if err := rows.Scan(&t.idx, &t.algo, &t.replication, &t.seed, &t.status, &t.records, &t.summary, &t.panels, &t.panelsError); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// salvageBatches copies a trace's record batches in order up to the first
// that does not read or decode (or a gap), and returns the records copied
// and why it stopped early. It seeks each batch by the table's key, or
// (scan) reads the table's rows in the order they were written, past the
// batches copied already.
func salvageBatches(ctx context.Context, src *sql.DB, dst *Store, id string, trace int, scan bool) (int, string, error) {
	if scan {
		var n int
		if err := dst.db.QueryRowContext(ctx, `SELECT records FROM traces WHERE run_id = ? AND idx = ?`, id, trace).Scan(&n); err != nil {
			return 0, "", err
		}
		rows, err := src.QueryContext(ctx, `SELECT first_rec, n, data FROM batches NOT INDEXED WHERE run_id = ? AND trace = ? ORDER BY rowid`, id, trace)
		if err != nil {
			return n, fmt.Sprintf("record %d: %v", n, err), nil
		}
		defer rows.Close()
		for rows.Next() {
			var first, k int
			var data []byte
			if err := rows.Scan(&first, &k, &data); err != nil {
				return n, fmt.Sprintf("record %d: %v", n, err), nil
			}
			if first < n {
				continue // copied already
			}
			if next, why, err := copyBatch(ctx, dst, id, trace, n, first, k, data); err != nil || why != "" {
				return n, why, err
			} else {
				n = next
			}
		}
		if err := rows.Err(); err != nil {
			return n, fmt.Sprintf("record %d: %v", n, err), nil
		}
		return n, "the rest are missing", nil
	}
	next := 0
	for {
		var first, n int
		var data []byte
		err := src.QueryRowContext(ctx, `SELECT first_rec, n, data FROM batches WHERE run_id = ? AND trace = ? AND first_rec >= ? ORDER BY first_rec LIMIT 1`,
			id, trace, next).Scan(&first, &n, &data)
		if errors.Is(err, sql.ErrNoRows) {
			return next, "the rest are missing", nil
		}
		if err != nil {
			return next, fmt.Sprintf("record %d: %v", next, err), nil
		}
		after, why, err := copyBatch(ctx, dst, id, trace, next, first, n, data)
		if err != nil || why != "" {
			return next, why, err
		}
		next = after
	}
}

// copyBatch copies one batch that should start at record next; it returns
// the record after it, or why it was not copied.
func copyBatch(ctx context.Context, dst *Store, id string, trace, next, first, n int, data []byte) (int, string, error) {
	if first != next {
		return next, fmt.Sprintf("records %d to %d are missing", next, first), nil
	}
	if recs, err := decodeBatch(nil, data); err != nil || len(recs) != n {
		return next, fmt.Sprintf("the batch at record %d does not decode", next), nil
	}
	err := dst.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO batches (run_id, trace, first_rec, n, data) VALUES (?, ?, ?, ?, ?)`, id, trace, first, n, data); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE traces SET records = ? WHERE run_id = ? AND idx = ?`, first+n, id, trace)
		return err
	})
	return first + n, "", err
}

// salvageSweep copies a sweep and its cells (a cell whose run was not
// copied loses its link).
func salvageSweep(ctx context.Context, src *sql.DB, dst *Store, id string, v int) error {
	var created, starred int64
	var status, base, axes, name, note string
	user := `name, note, starred`
	if v < 6 {
		user = `'', '', 0`
	}
	if err := src.QueryRowContext(ctx, `SELECT created_us, status, base, axes, `+user+` FROM sweeps WHERE id = ?`, id).Scan(&created, &status, &base, &axes, &name, &note, &starred); err != nil {
		return err
	}
	rows, err := src.QueryContext(ctx, `SELECT idx, vals, run_id FROM sweep_cells WHERE sweep_id = ? ORDER BY idx`, id)
	if err != nil {
		return err
	}
	type cell struct {
		idx   int
		vals  string
		runID sql.NullString
	}
	var cells []cell
	for rows.Next() {
		var c cell
		if err := rows.Scan(&c.idx, &c.vals, &c.runID); err != nil {
			rows.Close()
			return err
		}
		cells = append(cells, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	return dst.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO sweeps (id, created_us, status, base, axes, name, note, starred) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, id, created, status, base, axes, name, note, starred); err != nil {
			return err
		}
		for _, c := range cells {
			run := any(nil)
			if c.runID.Valid {
				var one int
				if tx.QueryRowContext(ctx, `SELECT 1 FROM runs WHERE id = ?`, c.runID.String).Scan(&one) == nil {
					run = c.runID.String
				}
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO sweep_cells (sweep_id, idx, vals, run_id) VALUES (?, ?, ?, ?)`, id, c.idx, c.vals, run); err != nil {
				return err
			}
		}
		return nil
	})
}
