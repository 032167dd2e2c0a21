// Package pgstore is the run store on PostgreSQL (pgx v5 and its pool): the
// same store.Backend as the SQLite store, passing the same conformance
// suite (internal/store/storetest), for a dashboard whose runs are shared
// by several processes and machines (ARCHITECTURE.md, "Many machines").
//
// It keeps what the SQLite store keeps in the same form: each appended
// batch of records is one BYTEA in store's compact encoding
// (store.EncodeBatch), summaries in store's JSON, times as microseconds.
// The schema is versioned (the table fwlab_schema) with ordered migrations
// in code; processes that start at once migrate one at a time under an
// advisory lock.
//
// Differences from the SQLite store, all about the store as a whole:
// PostgreSQL is shared, so opening it claims no live runs (Owner is false
// and Recovered 0: the live runs of a process that died are the queue's
// to rescue); IntegrityCheck checks the records' bookkeeping (every trace's
// batches contiguous and adding up to its record count) rather than pages;
// DiskUsage is the database's size. (PostgreSQL's text cannot hold the
// NUL character: names, notes and messages refuse it on both stores.)
package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
)

// Store is an open run store on PostgreSQL. It is safe for concurrent use.
type Store struct {
	pool   *pgxpool.Pool
	url    string
	health healthState

	reading store.ReadTracker // runs whose records EachRecord is reading

	listen listener // LISTEN on Channel for Wake

	counted atomic.Int64 // when compactCounts last folded the counts (Unix nanoseconds)
}

var _ store.Backend = (*Store)(nil)

// IsURL reports whether db names a PostgreSQL database (postgres:// or
// postgresql://) rather than a SQLite file.
func IsURL(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// Open connects to the database at url (postgres://user@host/db?…, as
// libpq reads it) and brings its schema up to date. A database written by
// a newer fwlab is refused.
func Open(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %s: %w", Redact(url), err)
	}
	if _, set := cfg.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"]; !set {
		cfg.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"] = fmt.Sprint(IdleInTransaction.Milliseconds())
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %s: %w", Redact(url), err)
	}
	if err := migrateTo(ctx, pool, len(migrations)); err != nil {
		pool.Close()
		return nil, fmt.Errorf("pgstore: %s: %w", Redact(url), err)
	}
	return &Store{pool: pool, url: url}, nil
}

// IdleInTransaction is how long PostgreSQL lets a connection of the store
// sit inside a transaction without sending a statement before it ends the
// connection, rolling the transaction back (idle_in_transaction_session_timeout,
// set on every connection of the pool unless the URL sets it). No
// transaction of fwlab waits on anything but the database between two
// statements (none is held across solver work), so only a process that was
// stopped (SIGSTOP, a debugger), frozen or cut off mid-transaction meets
// it: the row locks it held are free within this time, so that the rescue
// of its runs and a user's cancel never wait on it for longer. An import,
// which streams a bundle inside its transaction, allows itself longer
// (importIdle).
const IdleInTransaction = 2 * time.Second

// Redact returns url with its password replaced by "xxxxx", for messages.
func Redact(url string) string {
	cfg, err := pgconn.ParseConfig(url)
	if err != nil || cfg.Password == "" {
		return url
	}
	return strings.Replace(url, ":"+cfg.Password+"@", ":xxxxx@", 1)
}

// Pool returns the store's connection pool (the queue shares it).
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Close stops the listener and closes the pool.
func (s *Store) Close() error {
	s.stopListening()
	s.pool.Close()
	return nil
}

// Owner is false: a PostgreSQL store is shared, and no process owns its
// live runs (a server does not mark them interrupted when it starts: they
// may be running on workers).
func (s *Store) Owner() bool { return false }

// Recovered is 0: opening claims no live runs (see the package doc).
func (s *Store) Recovered() int { return 0 }

func micros(t time.Time) int64 { return t.UnixMicro() }

// now is the store's clock (SetClock).
var now = time.Now

// SetClock is store.SetClock for this store.
func SetClock(f func() time.Time) (restore func()) {
	old := now
	now = f
	return func() { now = old }
}

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

// checkText is store.CheckText (which refuses the NUL character that
// PostgreSQL's text cannot hold, on both stores alike).
func checkText(field, s string, max int) error { return store.CheckText(field, s, max) }

// nullJSON stores nil (or JSON null) as SQL NULL.
func nullJSON(m json.RawMessage) *string {
	if m == nil || string(m) == "null" {
		return nil
	}
	s := string(m)
	return &s
}

func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func notFound(what string) error { return fmt.Errorf("store: %s: %w", what, store.ErrNotFound) }

// tx runs fn in a transaction; a storage failure makes the store degraded
// (health.go).
func (s *Store) tx(ctx context.Context, fn func(pgx.Tx) error) error {
	return s.noteWrite(pgx.BeginFunc(ctx, s.pool, fn))
}

// PutRun stores a new run with its traces, as store.Store.PutRun does.
func (s *Store) PutRun(ctx context.Context, r *store.Run) (string, error) {
	if r.Status == "" {
		r.Status = store.StatusQueued
	}
	store.NameNew(r)
	if !store.KnownStatus(r.Status) {
		return "", spec.Errorf("status", "must be one of %s, got %q", strings.Join(store.Statuses, ", "), r.Status)
	}
	if r.Created.IsZero() {
		r.Created = time.Now()
	}
	for _, c := range []struct {
		field, v string
		max      int
	}{{"name", r.Name, store.MaxName}, {"note", r.Note, store.MaxNote}, {"version", r.Version, store.MaxName}} {
		if err := checkText(c.field, c.v, c.max); err != nil {
			return "", err
		}
	}
	if err := store.CheckInstance(r.Instance); err != nil {
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
	if given && !store.ValidID(r.ID) {
		return "", spec.Errorf("id", "must be %d characters of a-z and 2-7, got %q", store.IDLen, r.ID)
	}
	for attempt := 0; ; attempt++ {
		id := r.ID
		if !given {
			id = store.NewID()
		}
		err := s.tx(ctx, func(tx pgx.Tx) error {
			var ended *int64
			if !r.Ended.IsZero() {
				e := micros(r.Ended)
				ended = &e
			}
			var tokenHash []byte
			if len(r.TokenHash) > 0 {
				tokenHash = r.TokenHash
			}
			tag, err := tx.Exec(ctx, `INSERT INTO runs (id, created_us, ended_us, status, problem, spec, version, name, note, starred, dim, samples, blocks, fstar, info_panels, entered_us, outside, token_hash)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18) ON CONFLICT (id) DO NOTHING`,
				id, micros(r.Created), ended, r.Status, r.Spec.Problem, string(sp), r.Version, r.Name, r.Note, r.Starred,
				r.Instance.Dim, r.Instance.Samples, r.Instance.Blocks, r.Instance.FStar, nullJSON(r.Instance.Panels), micros(now()),
				r.Spec.Outside, tokenHash)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				return store.ErrExists
			}
			for _, t := range r.Traces {
				st := t.Status
				if st == "" {
					st = r.Status
				}
				if _, err := tx.Exec(ctx, `INSERT INTO traces (run_id, idx, algo, replication, seed, status) VALUES ($1, $2, $3, $4, $5, $6)`,
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
		case errors.Is(err, store.ErrExists) && !given && attempt < 3:
			continue
		case errors.Is(err, store.ErrExists):
			return "", fmt.Errorf("store: run %s: %w", id, err)
		default:
			return "", fmt.Errorf("store: putting run %s: %w", id, err)
		}
	}
}

// AppendRecords appends recs to the end of a trace in one transaction (the
// trace's row locked, so that concurrent appends queue).
func (s *Store) AppendRecords(ctx context.Context, id string, trace int, recs []solver.Record) error {
	if len(recs) == 0 {
		return nil
	}
	return s.AppendBatches(ctx, id, trace, []store.Batch{{N: len(recs), Blob: store.EncodeBatch(nil, recs)}})
}

// AppendBatches appends encoded batches, in order, to the end of a trace
// in one transaction.
func (s *Store) AppendBatches(ctx context.Context, id string, trace int, bs []store.Batch) error {
	if store.BatchRecords(bs) == 0 {
		return nil
	}
	err := s.tx(ctx, func(tx pgx.Tx) error { return appendIn(ctx, tx, id, trace, bs) })
	if err != nil {
		return fmt.Errorf("store: appending to run %s trace %d: %w", id, trace, err)
	}
	return nil
}

// Channel is the LISTEN/NOTIFY channel on which every appended batch is
// announced, with its run's id as the payload (sent when the batch's
// transaction commits): a server following a run on another machine wakes
// on it and reads the new records.
const Channel = "fwlab_records"

// appendIn appends encoded batches, in order, to the end of a trace, and
// announces them once.
func appendIn(ctx context.Context, tx pgx.Tx, id string, trace int, bs []store.Batch) error {
	var have int
	err := tx.QueryRow(ctx, `SELECT records FROM traces WHERE run_id = $1 AND idx = $2 FOR UPDATE`, id, trace).Scan(&have)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("run %s trace %d: %w", id, trace, store.ErrNotFound)
	}
	if err != nil {
		return err
	}
	for _, b := range bs {
		if b.N == 0 {
			continue
		}
		if _, err := tx.Exec(ctx, `INSERT INTO batches (run_id, trace, first_rec, n, data) VALUES ($1, $2, $3, $4, $5)`,
			id, trace, have, b.N, b.Blob); err != nil {
			return err
		}
		have += b.N
	}
	if _, err := tx.Exec(ctx, `UPDATE traces SET records = $1 WHERE run_id = $2 AND idx = $3`, have, id, trace); err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `SELECT pg_notify($1, $2)`, Channel, id)
	return err
}

// SetStatus sets a run's status and end time (zero: none); its traces
// still live take the status too.
func (s *Store) SetStatus(ctx context.Context, id, status string, ended time.Time) error {
	if !store.KnownStatus(status) {
		return spec.Errorf("status", "must be one of %s, got %q", strings.Join(store.Statuses, ", "), status)
	}
	var end *int64
	if !ended.IsZero() {
		e := micros(ended)
		end = &e
	}
	err := s.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE runs SET status = $1, ended_us = $2 WHERE id = $3`, status, end, id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return store.ErrNotFound
		}
		_, err = tx.Exec(ctx, `UPDATE traces SET status = $1 WHERE run_id = $2 AND status IN ($3, $4, $5)`,
			status, id, store.StatusQueued, store.StatusRunning, store.StatusPaused)
		if err != nil {
			return err
		}
		return notifyControl(ctx, tx, id) // a cancel wakes the run's worker
	})
	if err != nil {
		return fmt.Errorf("store: setting the status of run %s: %w", id, err)
	}
	return nil
}

// exec runs one statement that must change one row of what.
func (s *Store) exec(ctx context.Context, what, doing, q string, args ...any) error {
	tag, err := s.pool.Exec(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("store: %s %s: %w", doing, what, s.noteWrite(err))
	}
	if tag.RowsAffected() == 0 {
		return notFound(what)
	}
	return nil
}

// SetMessage records why a run ended as it did.
func (s *Store) SetMessage(ctx context.Context, id, msg string) error {
	if err := checkText("message", msg, store.MaxNote); err != nil {
		return err
	}
	return s.exec(ctx, "run "+id, "setting the message of", `UPDATE runs SET message = $1 WHERE id = $2`, msg, id)
}

// SetTrace records a trace's end: its status, summary and panels.
func (s *Store) SetTrace(ctx context.Context, id string, trace int, r store.TraceResult) error {
	sum, err := traceResultArgs(r)
	if err != nil {
		return err
	}
	return s.exec(ctx, fmt.Sprintf("run %s trace %d", id, trace), "setting",
		`UPDATE traces SET status = $1, summary = $2, panels = $3, panels_error = $4 WHERE run_id = $5 AND idx = $6`,
		r.Status, sum, nullJSON(r.Panels), r.PanelsError, id, trace)
}

// EndRun writes a run's end in one transaction, as store.Store.EndRun does.
func (s *Store) EndRun(ctx context.Context, id string, e store.Ending) error {
	if err := e.Check(); err != nil {
		return err
	}
	if err := checkText("message", e.Message, store.MaxNote); err != nil {
		return err
	}
	sums := make(map[int]*string, len(e.Traces))
	for i, r := range e.Traces {
		sum, err := traceResultArgs(r)
		if err != nil {
			return fmt.Errorf("store: run %s trace %d: %w", id, i, err)
		}
		sums[i] = sum
	}
	var end *int64
	if !e.Ended.IsZero() {
		us := micros(e.Ended)
		end = &us
	}
	err := s.tx(ctx, func(tx pgx.Tx) error {
		for _, i := range e.TraceOrder() {
			r := e.Traces[i]
			tag, err := tx.Exec(ctx, `UPDATE traces SET status = $1, summary = $2, panels = $3, panels_error = $4 WHERE run_id = $5 AND idx = $6`,
				r.Status, sums[i], nullJSON(r.Panels), r.PanelsError, id, i)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				return fmt.Errorf("trace %d: %w", i, store.ErrNotFound)
			}
		}
		if e.Message != "" {
			if _, err := tx.Exec(ctx, `UPDATE runs SET message = $1 WHERE id = $2`, e.Message, id); err != nil {
				return err
			}
		}
		tag, err := tx.Exec(ctx, `UPDATE runs SET status = $1, ended_us = $2 WHERE id = $3`, e.Status, end, id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return store.ErrNotFound
		}
		_, err = tx.Exec(ctx, `UPDATE traces SET status = $1 WHERE run_id = $2 AND status IN ($3, $4, $5)`,
			e.Status, id, store.StatusQueued, store.StatusRunning, store.StatusPaused)
		if err != nil {
			return err
		}
		return notifyControl(ctx, tx, id)
	})
	if err != nil {
		return fmt.Errorf("store: ending run %s: %w", id, err)
	}
	return nil
}

// traceResultArgs checks a trace's result and returns its summary as the
// store keeps it (nil: none).
func traceResultArgs(r store.TraceResult) (*string, error) {
	if r.Status == "" {
		return nil, spec.Errorf("status", "is required")
	}
	if err := store.CheckJSON("panels", r.Panels); err != nil {
		return nil, err
	}
	if strings.IndexByte(r.PanelsError, 0) >= 0 {
		return nil, spec.Errorf("panels_error", "must not contain the NUL character (PostgreSQL's text cannot hold it)")
	}
	if r.Summary == nil {
		return nil, nil
	}
	b, err := store.MarshalSummary(r.Summary)
	if err != nil {
		return nil, err
	}
	str := string(b)
	return &str, nil
}

// SetInstance records the instance summary of a run.
func (s *Store) SetInstance(ctx context.Context, id string, in store.Instance) error {
	if err := store.CheckInstance(in); err != nil {
		return err
	}
	return s.exec(ctx, "run "+id, "setting the instance of",
		`UPDATE runs SET dim = $1, samples = $2, blocks = $3, fstar = $4, info_panels = $5 WHERE id = $6`,
		in.Dim, in.Samples, in.Blocks, in.FStar, nullJSON(in.Panels), id)
}

// Update applies a user's edit to a run.
func (s *Store) Update(ctx context.Context, id string, e store.Edit) error {
	return s.edit(ctx, "runs", "run", id, e)
}

// edit applies a user's edit (name, note, star) to the row id of table
// (runs or sweeps); an empty edit only checks that the row exists.
func (s *Store) edit(ctx context.Context, table, what, id string, e store.Edit) error {
	var sets []string
	var args []any
	if e.Name != nil {
		if err := checkText("name", *e.Name, store.MaxName); err != nil {
			return err
		}
		args = append(args, *e.Name)
		sets = append(sets, fmt.Sprintf("name = $%d", len(args)))
	}
	if e.Note != nil {
		if err := checkText("note", *e.Note, store.MaxNote); err != nil {
			return err
		}
		args = append(args, *e.Note)
		sets = append(sets, fmt.Sprintf("note = $%d", len(args)))
	}
	if e.Starred != nil {
		args = append(args, *e.Starred)
		sets = append(sets, fmt.Sprintf("starred = $%d", len(args)))
	}
	if len(sets) == 0 {
		sets = []string{"id = id"}
	}
	args = append(args, id)
	return s.exec(ctx, what+" "+id, "updating", fmt.Sprintf(`UPDATE %s SET %s WHERE id = $%d`, table, strings.Join(sets, ", "), len(args)), args...)
}
