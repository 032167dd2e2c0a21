package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
