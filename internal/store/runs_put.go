package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

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

// AppendRecords appends recs to the end of a trace, in one transaction: a
// batch is on disk whole or not at all.
func (s *Store) AppendRecords(ctx context.Context, id string, trace int, recs []solver.Record) error {
	if len(recs) == 0 {
		return nil
	}
	return s.AppendBatches(ctx, id, trace, []Batch{{N: len(recs), Blob: encodeBatch(nil, recs)}})
}

// AppendBatches appends encoded batches, in order, to the end of a trace in
// one transaction: one commit for all of them (an Appender's flush writes a
// trace's batches up to MaxTxBytes at a time).
func (s *Store) AppendBatches(ctx context.Context, id string, trace int, bs []Batch) error {
	if BatchRecords(bs) == 0 {
		return nil
	}
	if s.spent.Load() {
		return fmt.Errorf("store: appending to run %s trace %d: %w", id, trace, s.noteWrite(errSpent))
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var n int
		err := tx.QueryRowContext(ctx, `SELECT records FROM traces WHERE run_id = ? AND idx = ?`, id, trace).Scan(&n)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("run %s trace %d: %w", id, trace, ErrNotFound)
		}
		if err != nil {
			return err
		}
		// one statement for the transaction's rows: parsing it costs more
		// than writing a row of a few hundred records
		ins, err := tx.PrepareContext(ctx, `INSERT INTO batches (run_id, trace, first_rec, n, data) VALUES (?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer ins.Close()
		for _, b := range bs {
			if b.N == 0 {
				continue
			}
			if _, err := ins.ExecContext(ctx, id, trace, n, b.N, b.Blob); err != nil {
				return err
			}
			n += b.N
		}
		_, err = tx.ExecContext(ctx, `UPDATE traces SET records = ? WHERE run_id = ? AND idx = ?`, n, id, trace)
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
	sum, err := traceResultArgs(r)
	if err != nil {
		return err
	}
	var res sql.Result
	err = s.ending(func() (err error) {
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

// traceResultArgs checks a trace's result and returns its summary as the
// store keeps it (nil: none).
func traceResultArgs(r TraceResult) (any, error) {
	if r.Status == "" {
		return nil, spec.Errorf("status", "is required")
	}
	if err := checkJSON("panels", r.Panels); err != nil {
		return nil, err
	}
	if r.Summary == nil {
		return nil, nil
	}
	b, err := marshalSummary(r.Summary)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// EndRun writes a run's end in one transaction: every trace's result, the
// message when there is one, then the run's status and end time (the
// traces still live take the status, as in SetStatus). Either all of it
// is stored or none: a restart never finds a run failed without its
// message. On a full disk it takes the reserve's room (see ReserveBytes).
func (s *Store) EndRun(ctx context.Context, id string, e Ending) error {
	if err := e.Check(); err != nil {
		return err
	}
	sums := make(map[int]any, len(e.Traces))
	for i, r := range e.Traces {
		sum, err := traceResultArgs(r)
		if err != nil {
			return fmt.Errorf("store: run %s trace %d: %w", id, i, err)
		}
		sums[i] = sum
	}
	var end any
	if !e.Ended.IsZero() {
		end = micros(e.Ended)
	}
	err := s.ending(func() error {
		return s.tx(ctx, func(tx *sql.Tx) error {
			for _, i := range e.TraceOrder() {
				r := e.Traces[i]
				res, err := tx.ExecContext(ctx, `UPDATE traces SET status = ?, summary = ?, panels = ?, panels_error = ? WHERE run_id = ? AND idx = ?`,
					r.Status, sums[i], nullJSON(r.Panels), r.PanelsError, id, i)
				if err != nil {
					return err
				}
				if n, _ := res.RowsAffected(); n == 0 {
					return fmt.Errorf("trace %d: %w", i, ErrNotFound)
				}
			}
			if e.Message != "" {
				if _, err := tx.ExecContext(ctx, `UPDATE runs SET message = ? WHERE id = ?`, e.Message, id); err != nil {
					return err
				}
			}
			return setStatusTx(ctx, tx, id, e.Status, end)
		})
	})
	if err != nil {
		return fmt.Errorf("store: ending run %s: %w", id, err)
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
	return s.edit(ctx, "runs", "run", id, e)
}

// edit applies a user's edit (name, note, star) to the row id of table
// (runs or sweeps, named what in errors); an empty edit only checks that
// the row exists.
func (s *Store) edit(ctx context.Context, table, what, id string, e Edit) error {
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
	q := `UPDATE ` + table + ` SET ` + strings.Join(sets, ", ") + ` WHERE id = ?`
	if len(sets) == 0 {
		q = `UPDATE ` + table + ` SET id = id WHERE id = ?` // only checks that the row exists
	}
	res, err := s.exec(ctx, q, append(args, id)...)
	if err != nil {
		return fmt.Errorf("store: updating %s %s: %w", what, id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: %s %s: %w", what, id, ErrNotFound)
	}
	return nil
}
