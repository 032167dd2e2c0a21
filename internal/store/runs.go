package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

// Run statuses (ARCHITECTURE.md, "Nothing is lost silently").
const (
	StatusQueued      = "queued"
	StatusRunning     = "running"
	StatusPaused      = "paused"
	StatusDone        = "done"
	StatusFailed      = "failed"
	StatusCancelled   = "cancelled"
	StatusInterrupted = "interrupted"
)

// Statuses lists every run status.
var Statuses = []string{StatusQueued, StatusRunning, StatusPaused, StatusDone, StatusFailed, StatusCancelled, StatusInterrupted}

// Live reports whether a run with this status may still change.
func Live(status string) bool {
	return status == StatusQueued || status == StatusRunning || status == StatusPaused
}

func knownStatus(s string) bool {
	for _, t := range Statuses {
		if s == t {
			return true
		}
	}
	return false
}

// Limits on what a user writes.
const (
	MaxName = 200    // characters of a run's name
	MaxNote = 10_000 // characters of a run's note
)

// Run is a stored run. List fills everything but the panels (Instance.Panels
// and Trace.Panels), which Get adds.
type Run struct {
	ID       string
	Spec     spec.Run
	Instance Instance
	Version  string // the fwlab version that made the run
	Name     string
	Note     string
	Starred  bool
	Status   string
	Created  time.Time
	Ended    time.Time // zero until the run ends
	Traces   []Trace   // in index order
	// Message says why the run ended as it did when its traces do not
	// (SetMessage; PutRun ignores it).
	Message string
	// Outside marks a run opened from outside (docs/live.md): its records
	// came from a program fwlab does not run. PutRun and an import take it
	// from Spec.Outside.
	Outside bool
	// TokenHash is the SHA-256 of an outside run's write token: PutRun
	// stores it, reads leave it empty.
	TokenHash []byte
}

// Instance summarises the problem instance of a run (scenarios.Info).
type Instance struct {
	Dim     int
	Samples int
	Blocks  int
	FStar   *float64        // the optimal value where known
	Panels  json.RawMessage // the instance's panels as a JSON object, or nil
}

// Trace is one (algorithm, replication) of a run.
type Trace struct {
	Index       int
	Algo        string
	Replication int
	Seed        int64
	Status      string          // a run status while live, then the solver's (converged, max_iters, …)
	Records     int             // records appended so far
	Summary     *solver.Summary // set when the trace has ended
	Panels      json.RawMessage // the final estimate's panels (a JSON object), or nil
	HasPanels   bool            // the trace has panels (set also where Panels is not loaded)
	PanelsError string          // why a finished trace has no panels
}

// TraceResult is what SetTrace records when a trace ends.
type TraceResult struct {
	Status      string
	Summary     *solver.Summary
	Panels      json.RawMessage
	PanelsError string
}

// Edit changes a run's user fields; nil fields stay as they are.
type Edit struct {
	Name    *string
	Note    *string
	Starred *bool
}

// Filter selects runs for List. Empty fields do not filter.
type Filter struct {
	Problem   string
	Algorithm string // runs with at least one trace of this algorithm or of a variant of it (VariantSep)
	Status    string
	Text      string // substring of the name or the note, ASCII letters in either case
	Sweep     string // the runs of this sweep's cells
	// OldestFirst reverses the order: with Status queued, the queue in
	// the order the runs came.
	OldestFirst bool
	Offset      int
	Limit       int // 0: DefaultLimit; at most MaxLimit
	// After and Before ask for the page by cursor rather than by offset
	// (keyset.go): the Limit runs that follow the cursor in the list's
	// order, or that precede it. Last asks for the last Limit runs. At
	// most one of the three, and none with Offset.
	After, Before *Cursor
	Last          bool
}

// Page sizes of List.
const (
	DefaultLimit = 50
	MaxLimit     = 1000
)

func micros(t time.Time) int64 { return t.UnixMicro() }

// now is the store's clock (when a run entered the store; what Trim
// spares as recent).
var now = time.Now

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

// checkText checks a user's text (a name, a note, a message) on every
// store alike: valid UTF-8, at most max characters, and no NUL character
// (PostgreSQL's text cannot hold it, and a page would show a text cut at
// it), each refused naming field.
func checkText(field, s string, max int) error {
	if !utf8.ValidString(s) {
		return spec.Errorf(field, "must be valid UTF-8")
	}
	if n := utf8.RuneCountInString(s); n > max {
		return spec.Errorf(field, "must be at most %d characters, got %d", max, n)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return spec.Errorf(field, "must not contain the NUL character")
	}
	return nil
}

// checkInstance checks what the pages read of an instance summary: F*, when
// known, a finite number (JSON cannot carry NaN or an infinity, so a page
// could not read the run, nor any list that holds it), and the panels valid
// JSON.
func checkInstance(in Instance) error {
	if in.FStar != nil && (math.IsNaN(*in.FStar) || math.IsInf(*in.FStar, 0)) {
		return spec.Errorf("instance.fstar", "must be a finite number (the optimal value) or absent, got %v", *in.FStar)
	}
	return checkJSON("instance.panels", in.Panels)
}

func checkJSON(field string, m json.RawMessage) error {
	if m != nil && !json.Valid(m) {
		return spec.Errorf(field, "must be valid JSON")
	}
	return nil
}

// nullJSON stores nil (or JSON null) as SQL NULL.
func nullJSON(m json.RawMessage) any {
	if m == nil || string(m) == "null" {
		return nil
	}
	return string(m)
}

// PutRun stores a new run with its traces (their Records, Summary and
// Panels are ignored: records come with AppendRecords, results with
// SetTrace). An empty r.ID gets a NewID; the id used is returned. An id the
// store already holds is refused. Created defaults to now, Status to queued,
// Name to the run's DefaultName (NameNew).
func (s *Store) PutRun(ctx context.Context, r *Run) (string, error) {
	if r.Status == "" {
		r.Status = StatusQueued
	}
	NameNew(r)
	if !knownStatus(r.Status) {
		return "", spec.Errorf("status", "must be one of %s, got %q", strings.Join(Statuses, ", "), r.Status)
	}
	if r.Created.IsZero() {
		r.Created = time.Now()
	}
	for _, c := range []struct {
		field, v string
		max      int
	}{{"name", r.Name, MaxName}, {"note", r.Note, MaxNote}, {"version", r.Version, MaxName}} {
		if err := checkText(c.field, c.v, c.max); err != nil {
			return "", err
		}
	}
	if err := checkInstance(r.Instance); err != nil {
		return "", err
	}
	sp, err := json.Marshal(r.Spec)
	if err != nil {
		return "", fmt.Errorf("store: encoding the spec: %w", err)
	}
	for i, t := range r.Traces {
		if t.Index != i {
			return "", spec.Errorf(fmt.Sprintf("traces[%d].index", i), "must be %d (traces in index order), got %d", i, t.Index)
		}
	}
	given := r.ID != ""
	if given && !ValidID(r.ID) {
		return "", spec.Errorf("id", "must be %d characters of a-z and 2-7, got %q", IDLen, r.ID)
	}
	for attempt := 0; ; attempt++ {
		id := r.ID
		if !given {
			id = NewID()
		}
		err := s.tx(ctx, func(tx *sql.Tx) error {
			var one int
			switch err := tx.QueryRowContext(ctx, `SELECT 1 FROM runs WHERE id = ?`, id).Scan(&one); {
			case err == nil:
				return errExists
			case !errors.Is(err, sql.ErrNoRows):
				return err
			}
			var ended any
			if !r.Ended.IsZero() {
				ended = micros(r.Ended)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO runs (id, created_us, ended_us, status, problem, spec, version, name, note, starred, dim, samples, blocks, fstar, info_panels, entered_us, outside, token_hash)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				id, micros(r.Created), ended, r.Status, r.Spec.Problem, string(sp), r.Version, r.Name, r.Note, boolInt(r.Starred),
				r.Instance.Dim, r.Instance.Samples, r.Instance.Blocks, optFloat(r.Instance.FStar), nullJSON(r.Instance.Panels), micros(now()),
				boolInt(r.Spec.Outside), nullBytes(r.TokenHash)); err != nil {
				return err
			}
			for _, t := range r.Traces {
				st := t.Status
				if st == "" {
					st = r.Status
				}
				if _, err := tx.ExecContext(ctx, `INSERT INTO traces (run_id, idx, algo, replication, seed, status) VALUES (?, ?, ?, ?, ?, ?)`,
					id, t.Index, t.Algo, t.Replication, t.Seed, st); err != nil {
					return err
				}
			}
			return nil
		})
		switch {
		case err == nil:
			r.ID = id
			return id, nil
		case errors.Is(err, errExists) && !given && attempt < 3:
			continue
		case errors.Is(err, errExists):
			return "", fmt.Errorf("store: run %s: %w", id, errExists)
		default:
			return "", fmt.Errorf("store: putting run %s: %w", id, err)
		}
	}
}

// errExists refuses an id already taken.
var errExists = errors.New("id already in use")

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// nullBytes stores an empty slice as SQL NULL.
func nullBytes(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}

func optFloat(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// tx runs fn in a transaction (BEGIN IMMEDIATE: writers queue on the busy
// timeout instead of failing on a lock upgrade); a storage failure makes
// the store degraded (Health).
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	return s.noteWrite(s.rawTx(ctx, fn))
}

// exec runs one writing statement outside a transaction, noting a storage
// failure as tx does.
func (s *Store) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	res, err := s.db.ExecContext(ctx, q, args...)
	return res, s.noteWrite(err)
}

// rawTx is tx without noting failures.
func (s *Store) rawTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// AppendRecords appends recs to the end of a trace, in one transaction: a
// batch is on disk whole or not at all.
func (s *Store) AppendRecords(ctx context.Context, id string, trace int, recs []solver.Record) error {
	if len(recs) == 0 {
		return nil
	}
	if s.spent.Load() {
		return fmt.Errorf("store: appending to run %s trace %d: %w", id, trace, s.noteWrite(errSpent))
	}
	blob := encodeBatch(nil, recs)
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var n int
		err := tx.QueryRowContext(ctx, `SELECT records FROM traces WHERE run_id = ? AND idx = ?`, id, trace).Scan(&n)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("run %s trace %d: %w", id, trace, ErrNotFound)
		}
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO batches (run_id, trace, first_rec, n, data) VALUES (?, ?, ?, ?, ?)`,
			id, trace, n, len(recs), blob); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE traces SET records = ? WHERE run_id = ? AND idx = ?`, n+len(recs), id, trace)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: appending to run %s trace %d: %w", id, trace, err)
	}
	return nil
}

// SetStatus sets a run's status and its end time (zero: none). The run's
// traces that are still live (queued, running, paused: not yet given a
// result by SetTrace) take the status too.
func (s *Store) SetStatus(ctx context.Context, id, status string, ended time.Time) error {
	if !knownStatus(status) {
		return spec.Errorf("status", "must be one of %s, got %q", strings.Join(Statuses, ", "), status)
	}
	var end any
	if !ended.IsZero() {
		end = micros(ended)
	}
	err := s.ending(func() error {
		return s.tx(ctx, func(tx *sql.Tx) error {
			return setStatusTx(ctx, tx, id, status, end)
		})
	})
	if err != nil {
		return fmt.Errorf("store: setting the status of run %s: %w", id, err)
	}
	return nil
}

func setStatusTx(ctx context.Context, tx *sql.Tx, id, status string, end any) error {
	{
		res, err := tx.ExecContext(ctx, `UPDATE runs SET status = ?, ended_us = ? WHERE id = ?`, status, end, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		_, err = tx.ExecContext(ctx, `UPDATE traces SET status = ? WHERE run_id = ? AND status IN (?, ?, ?)`,
			status, id, StatusQueued, StatusRunning, StatusPaused)
		return err
	}
}

// SetMessage records why a run ended as it did, when its traces do not
// say (at most MaxNote characters).
func (s *Store) SetMessage(ctx context.Context, id, msg string) error {
	if err := checkText("message", msg, MaxNote); err != nil {
		return err
	}
	var res sql.Result
	err := s.ending(func() (err error) {
		res, err = s.exec(ctx, `UPDATE runs SET message = ? WHERE id = ?`, msg, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: setting the message of run %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: run %s: %w", id, ErrNotFound)
	}
	return nil
}

// SetTrace records a trace's end: its status, summary and panels.
func (s *Store) SetTrace(ctx context.Context, id string, trace int, r TraceResult) error {
	if r.Status == "" {
		return spec.Errorf("status", "is required")
	}
	if err := checkJSON("panels", r.Panels); err != nil {
		return err
	}
	var sum any
	if r.Summary != nil {
		b, err := marshalSummary(r.Summary)
		if err != nil {
			return fmt.Errorf("store: run %s trace %d: %w", id, trace, err)
		}
		sum = string(b)
	}
	var res sql.Result
	err := s.ending(func() (err error) {
		res, err = s.exec(ctx, `UPDATE traces SET status = ?, summary = ?, panels = ?, panels_error = ? WHERE run_id = ? AND idx = ?`,
			r.Status, sum, nullJSON(r.Panels), r.PanelsError, id, trace)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: setting run %s trace %d: %w", id, trace, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: run %s trace %d: %w", id, trace, ErrNotFound)
	}
	return nil
}

// SetInstance records the instance summary of a run (known once the
// instance is built, after the run was put while queued).
func (s *Store) SetInstance(ctx context.Context, id string, in Instance) error {
	if err := checkInstance(in); err != nil {
		return err
	}
	res, err := s.exec(ctx, `UPDATE runs SET dim = ?, samples = ?, blocks = ?, fstar = ?, info_panels = ? WHERE id = ?`,
		in.Dim, in.Samples, in.Blocks, optFloat(in.FStar), nullJSON(in.Panels), id)
	if err != nil {
		return fmt.Errorf("store: setting the instance of run %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: run %s: %w", id, ErrNotFound)
	}
	return nil
}

// Update applies a user's edit to a run.
func (s *Store) Update(ctx context.Context, id string, e Edit) error {
	var sets []string
	var args []any
	if e.Name != nil {
		if err := checkText("name", *e.Name, MaxName); err != nil {
			return err
		}
		sets, args = append(sets, "name = ?"), append(args, *e.Name)
	}
	if e.Note != nil {
		if err := checkText("note", *e.Note, MaxNote); err != nil {
			return err
		}
		sets, args = append(sets, "note = ?"), append(args, *e.Note)
	}
	if e.Starred != nil {
		sets, args = append(sets, "starred = ?"), append(args, boolInt(*e.Starred))
	}
	q := `UPDATE runs SET ` + strings.Join(sets, ", ") + ` WHERE id = ?`
	if len(sets) == 0 {
		q = `UPDATE runs SET id = id WHERE id = ?` // only checks that the run exists
	}
	res, err := s.exec(ctx, q, append(args, id)...)
	if err != nil {
		return fmt.Errorf("store: updating run %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: run %s: %w", id, ErrNotFound)
	}
	return nil
}

const runCols = `id, created_us, ended_us, status, spec, version, name, note, starred, dim, samples, blocks, fstar, message, outside`

// runColsOf is runCols, each qualified by prefix ("runs.").
func runColsOf(prefix string) string {
	return prefix + strings.ReplaceAll(runCols, ", ", ", "+prefix)
}

type scanner interface{ Scan(...any) error }

func scanRun(sc scanner) (*Run, error) {
	var r Run
	var ended sql.NullInt64
	var created int64
	var sp string
	var starred, outside int
	var fstar sql.NullFloat64
	if err := sc.Scan(&r.ID, &created, &ended, &r.Status, &sp, &r.Version, &r.Name, &r.Note, &starred,
		&r.Instance.Dim, &r.Instance.Samples, &r.Instance.Blocks, &fstar, &r.Message, &outside); err != nil {
		return nil, err
	}
	r.Outside = outside != 0
	r.Created = fromMicros(created)
	if ended.Valid {
		r.Ended = fromMicros(ended.Int64)
	}
	r.Starred = starred != 0
	if fstar.Valid {
		v := fstar.Float64
		r.Instance.FStar = &v
	}
	if err := json.Unmarshal([]byte(sp), &r.Spec); err != nil {
		return nil, fmt.Errorf("run %s: decoding the stored spec: %w", r.ID, err)
	}
	return &r, nil
}

// Get returns a run with its traces and panels (not its records).
func (s *Store) Get(ctx context.Context, id string) (*Run, error) {
	return s.get(ctx, id, true)
}

// GetLean is Get without the traces' panels (each Trace's HasPanels says
// which have some; TracePanels reads one): what a run's status needs.
func (s *Store) GetLean(ctx context.Context, id string) (*Run, error) {
	return s.get(ctx, id, false)
}

func (s *Store) get(ctx context.Context, id string, tracePanels bool) (*Run, error) {
	r, err := scanRun(s.db.QueryRowContext(ctx, `SELECT `+runCols+` FROM runs WHERE id = ? AND entered_us IS NOT NULL`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: run %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: run %s: %w", id, err)
	}
	var panels sql.NullString
	if err := s.db.QueryRowContext(ctx, `SELECT info_panels FROM runs WHERE id = ?`, id).Scan(&panels); err != nil {
		return nil, fmt.Errorf("store: run %s: %w", id, err)
	}
	if panels.Valid {
		r.Instance.Panels = json.RawMessage(panels.String)
	}
	if err := s.loadTraces(ctx, []*Run{r}, tracePanels); err != nil {
		return nil, fmt.Errorf("store: run %s: %w", id, err)
	}
	s.unstale(r)
	return r, nil
}

// TracePanels returns one trace's panels (nil when it has none), refusing
// with ErrTooLarge (wrapped, naming the size and the cap) a stored blob of
// more than max bytes without reading it. An unknown run or trace is
// ErrNotFound.
func (s *Store) TracePanels(ctx context.Context, id string, trace int, max int64) (json.RawMessage, error) {
	var size sql.NullInt64
	err := s.db.QueryRowContext(ctx, `SELECT length(CAST(t.panels AS BLOB)) FROM traces t JOIN runs r ON r.id = t.run_id
		WHERE t.run_id = ? AND t.idx = ? AND r.entered_us IS NOT NULL`, id, trace).Scan(&size)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: run %s trace %d: %w", id, trace, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: run %s trace %d: %w", id, trace, err)
	}
	if !size.Valid {
		return nil, nil
	}
	if size.Int64 > max {
		return nil, fmt.Errorf("store: run %s trace %d: panels of %d bytes, over the cap of %d: %w", id, trace, size.Int64, max, ErrTooLarge)
	}
	var pan sql.NullString
	if err := s.db.QueryRowContext(ctx, `SELECT panels FROM traces WHERE run_id = ? AND idx = ?`, id, trace).Scan(&pan); err != nil {
		return nil, fmt.Errorf("store: run %s trace %d: %w", id, trace, err)
	}
	if !pan.Valid {
		return nil, nil
	}
	return json.RawMessage(pan.String), nil
}

// User returns a run's user fields alone (name, note, star): what a live
// run's status adds from the store on every poll.
func (s *Store) User(ctx context.Context, id string) (name, note string, starred bool, err error) {
	var star int64
	err = s.db.QueryRowContext(ctx, `SELECT name, note, starred FROM runs WHERE id = ? AND entered_us IS NOT NULL`, id).Scan(&name, &note, &star)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", false, fmt.Errorf("store: run %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return "", "", false, fmt.Errorf("store: run %s: %w", id, err)
	}
	return name, note, star != 0, nil
}

// loadTraces fills the runs' traces (with their panels when asked).
func (s *Store) loadTraces(ctx context.Context, runs []*Run, panels bool) error {
	if len(runs) == 0 {
		return nil
	}
	byID := make(map[string]*Run, len(runs))
	args := make([]any, len(runs))
	for i, r := range runs {
		byID[r.ID] = r
		args[i] = r.ID
		r.Traces = nil
	}
	cols := `run_id, idx, algo, replication, seed, status, records, summary, panels_error, panels IS NOT NULL`
	if panels {
		cols += `, panels`
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+cols+` FROM traces WHERE run_id IN (`+placeholders(len(runs))+`) ORDER BY run_id, idx`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var t Trace
		var runID string
		var sum, pan sql.NullString
		dst := []any{&runID, &t.Index, &t.Algo, &t.Replication, &t.Seed, &t.Status, &t.Records, &sum, &t.PanelsError, &t.HasPanels}
		if panels {
			dst = append(dst, &pan)
		}
		if err := rows.Scan(dst...); err != nil {
			return err
		}
		if sum.Valid {
			t.Summary, err = unmarshalSummary([]byte(sum.String))
			if err != nil {
				return fmt.Errorf("trace %d: %w", t.Index, err)
			}
		}
		if pan.Valid {
			t.Panels = json.RawMessage(pan.String)
		}
		r := byID[runID]
		r.Traces = append(r.Traces, t)
	}
	return rows.Err()
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

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
		if err := s.db.QueryRowContext(ctx, pq.other, pq.otherArgs...).Scan(&beyond); err != nil {
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

// Records returns the records of a trace with indices in [from, to); to < 0
// means to the end. Indices count records from 0 in append order.
func (s *Store) Records(ctx context.Context, id string, trace, from, to int) ([]solver.Record, error) {
	var out []solver.Record
	err := s.EachRecord(ctx, id, trace, from, to, func(_ int, r *solver.Record) error {
		out = append(out, *r)
		return nil
	})
	return out, err
}

// EachRecord calls fn for every record of a trace with index in [from, to)
// (to < 0: to the end), in order, reading a few batches at a time; fn may
// use the store. An error from fn stops the walk and is returned.
func (s *Store) EachRecord(ctx context.Context, id string, trace, from, to int, fn func(i int, r *solver.Record) error) error {
	if from < 0 {
		return spec.Errorf("from", "must be non-negative, got %d", from)
	}
	defer s.reading.Start(id)()
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT records FROM traces WHERE run_id = ? AND idx = ?`, id, trace).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("store: run %s trace %d: %w", id, trace, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("store: reading run %s trace %d: %w", id, trace, err)
	}
	if to < 0 || to > n {
		to = n
	}
	const page = 16
	next := from // first record index not yet delivered
	var recs []solver.Record
	for next < to {
		type batch struct {
			first int
			data  []byte
		}
		var bs []batch
		// the batch holding record next starts at or before it (both
		// queries are range seeks on the primary key)
		var start int
		if err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(first_rec), 0) FROM batches WHERE run_id = ? AND trace = ? AND first_rec <= ?`,
			id, trace, next).Scan(&start); err != nil {
			return fmt.Errorf("store: reading run %s trace %d: %w", id, trace, err)
		}
		rows, err := s.db.QueryContext(ctx, `SELECT first_rec, data FROM batches WHERE run_id = ? AND trace = ? AND first_rec >= ? AND first_rec < ? ORDER BY first_rec LIMIT ?`,
			id, trace, start, to, page)
		if err != nil {
			return fmt.Errorf("store: reading run %s trace %d: %w", id, trace, err)
		}
		for rows.Next() {
			var b batch
			if err := rows.Scan(&b.first, &b.data); err != nil {
				rows.Close()
				return fmt.Errorf("store: reading run %s trace %d: %w", id, trace, err)
			}
			bs = append(bs, b)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
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
			recs, err = decodeBatch(recs[:0], b.data)
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

// Delete deletes runs with their traces and records; unknown ids are
// skipped. It returns the number deleted.
func (s *Store) Delete(ctx context.Context, ids ...string) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	total := 0
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), 500)]
		ids = ids[len(chunk):]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		res, err := s.exec(ctx, `DELETE FROM runs WHERE id IN (`+placeholders(len(chunk))+`)`, args...)
		if err != nil {
			return total, fmt.Errorf("store: deleting runs: %w", err)
		}
		n, _ := res.RowsAffected()
		total += int(n)
	}
	if total > 0 {
		// give the freed pages back to the file system
		if _, err := s.exec(ctx, `PRAGMA incremental_vacuum`); err != nil {
			return total, fmt.Errorf("store: vacuum after delete: %w", err)
		}
		s.truncateWAL(ctx)
	}
	return total, nil
}

// WALTruncateBytes is the size of the write-ahead log over which a delete
// checkpoints it and truncates the file: a large trim writes every page it
// frees to the log, and SQLite's own checkpoints copy the log back into the
// database without ever shrinking the file.
var WALTruncateBytes int64 = 64 << 20

// truncateWAL checkpoints the write-ahead log into the database and
// truncates it when it is over WALTruncateBytes. A reader in the way makes
// the checkpoint give up, leaving the log as it is (the next delete tries
// again): a failure here loses nothing.
func (s *Store) truncateWAL(ctx context.Context) {
	if s.walSize() <= WALTruncateBytes {
		return
	}
	var busy, logPages, done int
	_ = s.db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logPages, &done)
}

// TrimGrace is how long after it ended, or entered the store, a run is
// spared by Trim (a variable so that tests of trimming need not wait).
var TrimGrace = time.Minute

// Trim deletes the unstarred runs beyond the keep that entered this store
// last (by when they entered it, not by the dates a bundle carries), and
// returns the number deleted. It never deletes a starred run, a live one,
// one that ended or entered within TrimGrace (by this store's clock: a
// date in the future does not count as recent), or one whose records are
// being read in this process (EachRecord).
func (s *Store) Trim(ctx context.Context, keep int) (int, error) {
	rule, err := NewTrimRule(keep, now(), &s.reading)
	if err != nil {
		return 0, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, status, ended_us, entered_us FROM runs
		WHERE starred = 0 AND entered_us IS NOT NULL ORDER BY entered_us DESC, id DESC`)
	if err != nil {
		return 0, fmt.Errorf("store: trimming: %w", err)
	}
	var del []string
	for i := 0; rows.Next(); i++ {
		var id, st string
		var ended sql.NullInt64
		var entered int64
		if err := rows.Scan(&id, &st, &ended, &entered); err != nil {
			rows.Close()
			return 0, fmt.Errorf("store: trimming: %w", err)
		}
		var end *int64
		if ended.Valid {
			end = &ended.Int64
		}
		if rule.Deletes(i, id, st, end, entered) {
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

// summaryJSON stores a solver.Summary with its floats exact, non-finite
// ones included (see jsonFloat).
type summaryJSON struct {
	Objective jsonFloat `json:"objective"`
	Gap       jsonFloat `json:"gap"`
	Iters     int       `json:"iters"`
	Passes    jsonFloat `json:"passes"`
	Time      jsonFloat `json:"time_s"`
	Status    string    `json:"status"`
	Message   string    `json:"message"`
}

func marshalSummary(s *solver.Summary) ([]byte, error) {
	return json.Marshal(summaryJSON{jsonFloat(s.Objective), jsonFloat(s.Gap), s.Iters, jsonFloat(s.Passes), jsonFloat(s.Time), s.Status, s.Message})
}

func unmarshalSummary(b []byte) (*solver.Summary, error) {
	var j summaryJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("decoding the stored summary: %w", err)
	}
	return &solver.Summary{Objective: float64(j.Objective), Gap: float64(j.Gap), Iters: j.Iters, Passes: float64(j.Passes),
		Time: float64(j.Time), Status: j.Status, Message: j.Message}, nil
}

// jsonFloat is a float64 in JSON as a number, or as the string "NaN", "Inf"
// or "-Inf" (the convention of fwlab's bundles).
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsNaN(v):
		return []byte(`"NaN"`), nil
	case math.IsInf(v, 1):
		return []byte(`"Inf"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-Inf"`), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

func (f *jsonFloat) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"NaN"`:
		*f = jsonFloat(math.NaN())
	case `"Inf"`:
		*f = jsonFloat(math.Inf(1))
	case `"-Inf"`:
		*f = jsonFloat(math.Inf(-1))
	default:
		v, err := strconv.ParseFloat(string(b), 64)
		if err != nil {
			return fmt.Errorf("not a number: %.20s", b)
		}
		*f = jsonFloat(v)
	}
	return nil
}
