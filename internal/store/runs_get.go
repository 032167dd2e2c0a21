package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

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
