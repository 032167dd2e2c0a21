package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
)

// PutSweep stores a new sweep with its cells. An empty ID gets a NewID.
func (s *Store) PutSweep(ctx context.Context, sw *store.Sweep) (string, error) {
	if sw.Status == "" {
		sw.Status = store.StatusQueued
	}
	if !store.KnownStatus(sw.Status) {
		return "", spec.Errorf("status", "must be a run status, got %q", sw.Status)
	}
	if sw.Created.IsZero() {
		sw.Created = time.Now()
	}
	if sw.Axes == nil || !json.Valid(sw.Axes) {
		return "", spec.Errorf("axes", "must be valid JSON")
	}
	for i, c := range sw.Cells {
		if c.Index != i {
			return "", spec.Errorf(fmt.Sprintf("cells[%d].index", i), "must be %d, got %d", i, c.Index)
		}
		if c.Values == nil || !json.Valid(c.Values) {
			return "", spec.Errorf(fmt.Sprintf("cells[%d].values", i), "must be valid JSON")
		}
	}
	if err := checkText("name", sw.Name, store.MaxName); err != nil {
		return "", err
	}
	if err := checkText("note", sw.Note, store.MaxNote); err != nil {
		return "", err
	}
	base, err := json.Marshal(sw.Base)
	if err != nil {
		return "", fmt.Errorf("store: encoding the sweep's base spec: %w", err)
	}
	given := sw.ID != ""
	if given && !store.ValidID(sw.ID) {
		return "", spec.Errorf("id", "must be %d characters of a-z and 2-7, got %q", store.IDLen, sw.ID)
	}
	for attempt := 0; ; attempt++ {
		id := sw.ID
		if !given {
			id = store.NewID()
		}
		err := s.tx(ctx, func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, `INSERT INTO sweeps (id, created_us, status, base, axes, name, note, starred) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING`,
				id, micros(sw.Created), sw.Status, string(base), string(sw.Axes), sw.Name, sw.Note, sw.Starred)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				return store.ErrExists
			}
			for _, c := range sw.Cells {
				if _, err := tx.Exec(ctx, `INSERT INTO sweep_cells (sweep_id, idx, vals, run_id) VALUES ($1, $2, $3, $4)`,
					id, c.Index, string(c.Values), nullString(c.RunID)); err != nil {
					return err
				}
			}
			return nil
		})
		switch {
		case err == nil:
			sw.ID = id
			return id, nil
		case errors.Is(err, store.ErrExists) && !given && attempt < 3:
			continue
		default:
			return "", fmt.Errorf("store: putting sweep %s: %w", id, err)
		}
	}
}

// SetSweepStatus sets a sweep's status.
func (s *Store) SetSweepStatus(ctx context.Context, id, status string) error {
	if !store.KnownStatus(status) {
		return spec.Errorf("status", "must be a run status, got %q", status)
	}
	return s.exec(ctx, "sweep "+id, "setting the status of", `UPDATE sweeps SET status = $1 WHERE id = $2`, status, id)
}

// SetCellRun links a sweep's cell to its run ("" unlinks).
func (s *Store) SetCellRun(ctx context.Context, id string, cell int, runID string) error {
	return s.exec(ctx, fmt.Sprintf("sweep %s cell %d", id, cell), "linking",
		`UPDATE sweep_cells SET run_id = $1 WHERE sweep_id = $2 AND idx = $3`, nullString(runID), id, cell)
}

func scanSweep(row pgx.Row) (*store.Sweep, error) {
	var sw store.Sweep
	var created int64
	var base, axes string
	if err := row.Scan(&sw.ID, &created, &sw.Status, &base, &axes, &sw.Name, &sw.Note, &sw.Starred); err != nil {
		return nil, err
	}
	sw.Created = fromMicros(created)
	sw.Axes = json.RawMessage(axes)
	if err := json.Unmarshal([]byte(base), &sw.Base); err != nil {
		return nil, fmt.Errorf("sweep %s: decoding the stored base spec: %w", sw.ID, err)
	}
	return &sw, nil
}

// GetSweep returns a sweep with its cells.
func (s *Store) GetSweep(ctx context.Context, id string) (*store.Sweep, error) {
	sw, err := scanSweep(s.pool.QueryRow(ctx, `SELECT `+sweepCols+` FROM sweeps WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("sweep " + id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: sweep %s: %w", id, err)
	}
	rows, err := s.pool.Query(ctx, `SELECT idx, vals, run_id FROM sweep_cells WHERE sweep_id = $1 ORDER BY idx`, id)
	if err != nil {
		return nil, fmt.Errorf("store: sweep %s: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var c store.Cell
		var vals string
		var run *string
		if err := rows.Scan(&c.Index, &vals, &run); err != nil {
			return nil, fmt.Errorf("store: sweep %s: %w", id, err)
		}
		c.Values = json.RawMessage(vals)
		if run != nil {
			c.RunID = *run
		}
		sw.Cells = append(sw.Cells, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: sweep %s: %w", id, err)
	}
	return sw, nil
}

// ListSweeps returns a page of sweeps (without their cells), newest first,
// and the number of sweeps.
func (s *Store) ListSweeps(ctx context.Context, offset, limit int) ([]*store.Sweep, int, error) {
	if offset < 0 {
		return nil, 0, spec.Errorf("offset", "must be non-negative, got %d", offset)
	}
	if limit < 0 || limit > store.MaxLimit {
		return nil, 0, spec.Errorf("limit", "must be between 0 and %d, got %d", store.MaxLimit, limit)
	}
	if limit == 0 {
		limit = store.DefaultLimit
	}
	var total int
	if err := s.pool.QueryRow(ctx, `SELECT COUNT(*) FROM sweeps`).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("store: listing sweeps: %w", err)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+sweepCols+` FROM sweeps ORDER BY created_us DESC, id COLLATE "C" DESC LIMIT $1 OFFSET $2`, limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("store: listing sweeps: %w", err)
	}
	defer rows.Close()
	var out []*store.Sweep
	for rows.Next() {
		sw, err := scanSweep(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("store: listing sweeps: %w", err)
		}
		out = append(out, sw)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("store: listing sweeps: %w", err)
	}
	return out, total, nil
}

// DeleteSweep deletes a sweep and its cells (not the cells' runs).
func (s *Store) DeleteSweep(ctx context.Context, id string) error {
	return s.exec(ctx, "sweep "+id, "deleting", `DELETE FROM sweeps WHERE id = $1`, id)
}

const sweepCols = `id, created_us, status, base, axes, name, note, starred`

// UpdateSweep applies a user's edit (name, note, star; a run's rules) to a
// sweep.
func (s *Store) UpdateSweep(ctx context.Context, id string, e store.Edit) error {
	return s.edit(ctx, "sweeps", "sweep", id, e)
}

// CellsOf returns, for each of the runs that is a sweep's cell, that cell.
func (s *Store) CellsOf(ctx context.Context, runIDs ...string) (map[string]store.CellOf, error) {
	out := map[string]store.CellOf{}
	if len(runIDs) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT c.run_id, c.sweep_id, w.name, c.idx, c.vals FROM sweep_cells c JOIN sweeps w ON w.id = c.sweep_id
		WHERE c.run_id = ANY($1)`, runIDs)
	if err != nil {
		return nil, fmt.Errorf("store: the sweeps of runs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var run, vals string
		var c store.CellOf
		if err := rows.Scan(&run, &c.Sweep, &c.SweepName, &c.Index, &vals); err != nil {
			return nil, fmt.Errorf("store: the sweeps of runs: %w", err)
		}
		c.Values = json.RawMessage(vals)
		out[run] = c
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: the sweeps of runs: %w", err)
	}
	return out, nil
}
