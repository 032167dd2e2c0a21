package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/fwlab/fwlab/internal/spec"
)

// Sweep is a base spec with axes over its parameters; each cell is one run.
// The axes and each cell's values are kept as the JSON the sweep layer
// gives (e.g. [{"param": "algorithms[0].rho", "values": [0.05, 0.1]}] and
// {"algorithms[0].rho": 0.05}).
type Sweep struct {
	ID      string
	Created time.Time
	Status  string // a run status: queued, running, done, …
	Base    spec.Run
	Axes    json.RawMessage
	Cells   []Cell // in index order
	// The user's name, note and star, as a run's (Update's rules).
	Name, Note string
	Starred    bool
}

// Cell is one point of a sweep.
type Cell struct {
	Index  int
	Values json.RawMessage
	RunID  string // "" until the cell's run is put (or after it was deleted)
}

// PutSweep stores a new sweep with its cells. An empty ID gets a NewID; the
// id used is returned.
func (s *Store) PutSweep(ctx context.Context, sw *Sweep) (string, error) {
	if sw.Status == "" {
		sw.Status = StatusQueued
	}
	if !knownStatus(sw.Status) {
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
	if err := checkText("name", sw.Name, MaxName); err != nil {
		return "", err
	}
	if err := checkText("note", sw.Note, MaxNote); err != nil {
		return "", err
	}
	base, err := json.Marshal(sw.Base)
	if err != nil {
		return "", fmt.Errorf("store: encoding the sweep's base spec: %w", err)
	}
	given := sw.ID != ""
	if given && !ValidID(sw.ID) {
		return "", spec.Errorf("id", "must be %d characters of a-z and 2-7, got %q", IDLen, sw.ID)
	}
	for attempt := 0; ; attempt++ {
		id := sw.ID
		if !given {
			id = NewID()
		}
		err := s.tx(ctx, func(tx *sql.Tx) error {
			var one int
			switch err := tx.QueryRowContext(ctx, `SELECT 1 FROM sweeps WHERE id = ?`, id).Scan(&one); {
			case err == nil:
				return errExists
			case !errors.Is(err, sql.ErrNoRows):
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO sweeps (id, created_us, status, base, axes, name, note, starred) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
				id, micros(sw.Created), sw.Status, string(base), string(sw.Axes), sw.Name, sw.Note, boolInt(sw.Starred)); err != nil {
				return err
			}
			for _, c := range sw.Cells {
				if _, err := tx.ExecContext(ctx, `INSERT INTO sweep_cells (sweep_id, idx, vals, run_id) VALUES (?, ?, ?, ?)`,
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
		case errors.Is(err, errExists) && !given && attempt < 3:
			continue
		default:
			return "", fmt.Errorf("store: putting sweep %s: %w", id, err)
		}
	}
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// SetSweepStatus sets a sweep's status.
func (s *Store) SetSweepStatus(ctx context.Context, id, status string) error {
	if !knownStatus(status) {
		return spec.Errorf("status", "must be a run status, got %q", status)
	}
	res, err := s.exec(ctx, `UPDATE sweeps SET status = ? WHERE id = ?`, status, id)
	if err != nil {
		return fmt.Errorf("store: sweep %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: sweep %s: %w", id, ErrNotFound)
	}
	return nil
}

// SetCellRun links a sweep's cell to its run.
func (s *Store) SetCellRun(ctx context.Context, id string, cell int, runID string) error {
	res, err := s.exec(ctx, `UPDATE sweep_cells SET run_id = ? WHERE sweep_id = ? AND idx = ?`, nullString(runID), id, cell)
	if err != nil {
		return fmt.Errorf("store: sweep %s cell %d: %w", id, cell, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: sweep %s cell %d: %w", id, cell, ErrNotFound)
	}
	return nil
}

func scanSweep(sc scanner) (*Sweep, error) {
	var sw Sweep
	var created int64
	var base, axes string
	var starred int
	if err := sc.Scan(&sw.ID, &created, &sw.Status, &base, &axes, &sw.Name, &sw.Note, &starred); err != nil {
		return nil, err
	}
	sw.Starred = starred != 0
	sw.Created = fromMicros(created)
	sw.Axes = json.RawMessage(axes)
	if err := json.Unmarshal([]byte(base), &sw.Base); err != nil {
		return nil, fmt.Errorf("sweep %s: decoding the stored base spec: %w", sw.ID, err)
	}
	return &sw, nil
}

// GetSweep returns a sweep with its cells.
func (s *Store) GetSweep(ctx context.Context, id string) (*Sweep, error) {
	sw, err := scanSweep(s.db.QueryRowContext(ctx, `SELECT `+sweepCols+` FROM sweeps WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: sweep %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: sweep %s: %w", id, err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT idx, vals, run_id FROM sweep_cells WHERE sweep_id = ? ORDER BY idx`, id)
	if err != nil {
		return nil, fmt.Errorf("store: sweep %s: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var c Cell
		var vals string
		var run sql.NullString
		if err := rows.Scan(&c.Index, &vals, &run); err != nil {
			return nil, fmt.Errorf("store: sweep %s: %w", id, err)
		}
		c.Values, c.RunID = json.RawMessage(vals), run.String
		sw.Cells = append(sw.Cells, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: sweep %s: %w", id, err)
	}
	return sw, nil
}

// ListSweeps returns a page of sweeps (without their cells), newest first,
// and the number of sweeps.
func (s *Store) ListSweeps(ctx context.Context, offset, limit int) ([]*Sweep, int, error) {
	if offset < 0 {
		return nil, 0, spec.Errorf("offset", "must be non-negative, got %d", offset)
	}
	if limit < 0 || limit > MaxLimit {
		return nil, 0, spec.Errorf("limit", "must be between 0 and %d, got %d", MaxLimit, limit)
	}
	if limit == 0 {
		limit = DefaultLimit
	}
	var total int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sweeps`).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("store: listing sweeps: %w", err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+sweepCols+` FROM sweeps ORDER BY created_us DESC, id DESC LIMIT ? OFFSET ?`, limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("store: listing sweeps: %w", err)
	}
	defer rows.Close()
	var out []*Sweep
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
	res, err := s.exec(ctx, `DELETE FROM sweeps WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("store: deleting sweep %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: sweep %s: %w", id, ErrNotFound)
	}
	return nil
}
