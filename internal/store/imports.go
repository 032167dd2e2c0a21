package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/fwlab/fwlab/internal/spec"
)

// Import receives one run as it streams in (a bundle being read): its
// traces and records are stored as they come, so that memory stays small
// whatever the run's size, while the run stays invisible (Get, List, User
// and Trim skip it) until Commit gives it its spec and status. Abort, or
// the next owner's Open after a crash, removes what was stored. An Import
// is used by one goroutine.
type Import struct {
	s      *Store
	id     string
	traces int
	done   bool
}

// BeginImport starts an import: a run with a new id, no traces and no
// spec yet. Append its records with AppendRecords and end its traces with
// SetTrace, under Import.ID.
func (s *Store) BeginImport(ctx context.Context) (*Import, error) {
	for attempt := 0; ; attempt++ {
		id := NewID()
		_, err := s.exec(ctx, `INSERT INTO runs (id, created_us, status, problem, spec, version) VALUES (?, ?, ?, '', '{}', '')`,
			id, micros(now()), StatusRunning)
		if err == nil {
			return &Import{s: s, id: id}, nil
		}
		if attempt < 3 && strings.Contains(err.Error(), "UNIQUE") {
			continue
		}
		return nil, fmt.Errorf("store: beginning an import: %w", err)
	}
}

// ID returns the id the imported run has until Commit (which may answer
// another run's id, for a bundle imported before).
func (im *Import) ID() string { return im.id }

// AddTrace adds the next trace (t.Index must be the number of traces added
// so far; its Records, Summary and Panels are ignored, as for PutRun). Its
// algorithm, replication and seed may be left for EndTrace, when a bundle
// names them after its records.
func (im *Import) AddTrace(ctx context.Context, t Trace) error {
	if t.Index != im.traces {
		return spec.Errorf(fmt.Sprintf("traces[%d].index", im.traces), "must be %d (traces in index order), got %d", im.traces, t.Index)
	}
	st := t.Status
	if st == "" {
		st = StatusRunning
	}
	if _, err := im.s.exec(ctx, `INSERT INTO traces (run_id, idx, algo, replication, seed, status) VALUES (?, ?, ?, ?, ?, ?)`,
		im.id, t.Index, t.Algo, t.Replication, t.Seed, st); err != nil {
		return fmt.Errorf("store: importing run %s trace %d: %w", im.id, t.Index, err)
	}
	im.traces++
	return nil
}

// EndTrace sets a trace's algorithm, replication and seed (from t) and
// its result; a result with an empty Status leaves the trace live, to take
// the run's status at Commit.
func (im *Import) EndTrace(ctx context.Context, t Trace, r TraceResult) error {
	if err := checkJSON("panels", r.Panels); err != nil {
		return err
	}
	var sum any
	if r.Summary != nil {
		b, err := marshalSummary(r.Summary)
		if err != nil {
			return fmt.Errorf("store: run %s trace %d: %w", im.id, t.Index, err)
		}
		sum = string(b)
	}
	status := r.Status
	if status == "" {
		status = StatusRunning
	}
	res, err := im.s.exec(ctx, `UPDATE traces SET algo = ?, replication = ?, seed = ?, status = ?, summary = ?, panels = ?, panels_error = ? WHERE run_id = ? AND idx = ?`,
		t.Algo, t.Replication, t.Seed, status, sum, nullJSON(r.Panels), r.PanelsError, im.id, t.Index)
	if err != nil {
		return fmt.Errorf("store: importing run %s trace %d: %w", im.id, t.Index, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: run %s trace %d: %w", im.id, t.Index, ErrNotFound)
	}
	return nil
}

// Commit makes the imported run visible with r's spec, version, user
// fields, instance, status (one of Statuses; live ones are refused) and
// times (r's ID and Traces are ignored), recording when it entered the
// store and its digest. When a run with the same non-empty digest is
// already stored, the import is removed instead and that run's id is
// returned with existing true: importing a bundle twice yields one run.
func (im *Import) Commit(ctx context.Context, r *Run, digest string) (id string, existing bool, err error) {
	if im.done {
		return "", false, errors.New("store: the import has ended")
	}
	if !knownStatus(r.Status) || Live(r.Status) {
		return "", false, spec.Errorf("status", "must be a final status (done, failed, cancelled, interrupted), got %q", r.Status)
	}
	for _, c := range []struct {
		field, v string
		max      int
	}{{"name", r.Name, MaxName}, {"note", r.Note, MaxNote}, {"version", r.Version, MaxName}, {"message", r.Message, MaxNote}} {
		if err := checkText(c.field, c.v, c.max); err != nil {
			return "", false, err
		}
	}
	if err := checkInstance(r.Instance); err != nil {
		return "", false, err
	}
	sp, err := json.Marshal(r.Spec)
	if err != nil {
		return "", false, fmt.Errorf("store: encoding the spec: %w", err)
	}
	created := r.Created
	if created.IsZero() {
		created = now()
	}
	var ended any
	if !r.Ended.IsZero() {
		ended = micros(r.Ended)
	}
	err = im.s.tx(ctx, func(tx *sql.Tx) error {
		if r.Name == "" {
			if err := im.nameFromTraces(ctx, tx, r); err != nil {
				return err
			}
		}
		if digest != "" {
			switch err := tx.QueryRowContext(ctx, `SELECT id FROM runs WHERE digest = ? AND entered_us IS NOT NULL ORDER BY entered_us LIMIT 1`, digest).Scan(&id); {
			case err == nil:
				existing = true
				_, err := tx.ExecContext(ctx, `DELETE FROM runs WHERE id = ?`, im.id)
				return err
			case !errors.Is(err, sql.ErrNoRows):
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE runs SET created_us = ?, ended_us = ?, status = ?, problem = ?, spec = ?, version = ?, name = ?, note = ?,
			dim = ?, samples = ?, blocks = ?, fstar = ?, info_panels = ?, message = ?, digest = ?, entered_us = ?, outside = ? WHERE id = ?`,
			micros(created), ended, r.Status, r.Spec.Problem, string(sp), r.Version, r.Name, r.Note,
			r.Instance.Dim, r.Instance.Samples, r.Instance.Blocks, optFloat(r.Instance.FStar), nullJSON(r.Instance.Panels),
			r.Message, nullString(digest), micros(now()), boolInt(r.Spec.Outside), im.id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE traces SET status = ? WHERE run_id = ? AND status IN (?, ?, ?)`,
			r.Status, im.id, StatusQueued, StatusRunning, StatusPaused)
		id = im.id
		return err
	})
	if err != nil {
		return "", false, fmt.Errorf("store: committing the import of run %s: %w", im.id, err)
	}
	im.done = true
	if existing {
		im.s.vacuum(ctx)
	}
	return id, existing, nil
}

// nameFromTraces gives r, which has no name, its DefaultName from the
// traces imported so far (NameNew).
func (im *Import) nameFromTraces(ctx context.Context, tx *sql.Tx, r *Run) error {
	rows, err := tx.QueryContext(ctx, `SELECT algo FROM traces WHERE run_id = ? AND replication = 0 ORDER BY idx`, im.id)
	if err != nil {
		return err
	}
	defer rows.Close()
	named := *r
	named.Traces = nil
	for rows.Next() {
		var t Trace
		if err := rows.Scan(&t.Algo); err != nil {
			return err
		}
		named.Traces = append(named.Traces, t)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	NameNew(&named)
	r.Name = named.Name
	return nil
}

// Abort removes what the import stored (nothing after Commit).
func (im *Import) Abort(ctx context.Context) error {
	if im.done {
		return nil
	}
	im.done = true
	if _, err := im.s.Delete(ctx, im.id); err != nil {
		return fmt.Errorf("store: removing the partial import %s: %w", im.id, err)
	}
	return nil
}

// vacuum gives freed pages back to the file system, as Delete does; a
// failure only leaves them for later.
func (s *Store) vacuum(ctx context.Context) {
	_, _ = s.exec(ctx, `PRAGMA incremental_vacuum`)
}

// dropPartialImports removes the imports a process died in the middle of
// (runs that never entered the store). Only the file's owner calls it.
func (s *Store) dropPartialImports(ctx context.Context) error {
	res, err := s.exec(ctx, `DELETE FROM runs WHERE entered_us IS NULL`)
	if err != nil {
		return fmt.Errorf("removing unfinished imports: %w", err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		s.vacuum(ctx)
	}
	return nil
}
