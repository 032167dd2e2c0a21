package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

const sweepCols = `id, created_us, status, base, axes, name, note, starred`

// UpdateSweep applies a user's edit (name, note, star; the rules of a
// run's) to a sweep.
func (s *Store) UpdateSweep(ctx context.Context, id string, e Edit) error {
	return s.edit(ctx, "sweeps", "sweep", id, e)
}

// CellOf is the sweep cell a run was made for.
type CellOf struct {
	Sweep     string          `json:"sweep"`
	SweepName string          `json:"sweep_name"`
	Index     int             `json:"index"`
	Values    json.RawMessage `json:"values"`
}

// CellsOf returns, for each of the runs that is a sweep's cell, that cell
// (runs of no sweep are absent from the map).
func (s *Store) CellsOf(ctx context.Context, runIDs ...string) (map[string]CellOf, error) {
	out := map[string]CellOf{}
	for len(runIDs) > 0 {
		n := min(len(runIDs), 500)
		part := runIDs[:n]
		runIDs = runIDs[n:]
		args := make([]any, len(part))
		for i, id := range part {
			args[i] = id
		}
		q := `SELECT c.run_id, c.sweep_id, w.name, c.idx, c.vals FROM sweep_cells c JOIN sweeps w ON w.id = c.sweep_id
			WHERE c.run_id IN (?` + strings.Repeat(", ?", len(part)-1) + `)`
		rows, err := s.db.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, fmt.Errorf("store: the sweeps of runs: %w", err)
		}
		for rows.Next() {
			var run string
			var c CellOf
			var vals string
			if err := rows.Scan(&run, &c.Sweep, &c.SweepName, &c.Index, &vals); err != nil {
				rows.Close()
				return nil, fmt.Errorf("store: the sweeps of runs: %w", err)
			}
			c.Values = json.RawMessage(vals)
			out[run] = c
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("store: the sweeps of runs: %w", err)
		}
	}
	return out, nil
}

// sweepFilter is the condition of Filter.Sweep.
func sweepFilter(id string) (string, []any) {
	return "id IN (SELECT run_id FROM sweep_cells WHERE sweep_id = ? AND run_id IS NOT NULL)", []any{id}
}
