package pgstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/fwlab/fwlab/internal/store"
)

// EndTrace records the result of one trace of a claimed run that has
// ended while the run goes on (its other traces still run), so that its
// page and History read it ended, as they read a trace of a run in the
// server's own memory. One statement: nothing is written once the claim is
// lost or the run has ended (its end is then Finish's or the cancel's).
// The run's followers are woken.
func (s *Store) EndTrace(ctx context.Context, id, claim string, trace int, r store.TraceResult) error {
	if r.Status == "" {
		return fmt.Errorf("store: ending run %s trace %d: no status", id, trace)
	}
	if err := store.CheckJSON("panels", r.Panels); err != nil {
		return err
	}
	var sum *string
	if r.Summary != nil {
		b, err := store.MarshalSummary(r.Summary)
		if err != nil {
			return fmt.Errorf("store: run %s trace %d: %w", id, trace, err)
		}
		str := string(b)
		sum = &str
	}
	_, err := s.pool.Exec(ctx, `WITH u AS (UPDATE traces SET status = $1, summary = $2, panels = $3, panels_error = $4
			WHERE run_id = $5 AND idx = $6 AND EXISTS (SELECT 1 FROM runs WHERE id = $5 AND claim = $7 AND status IN ($9, $10, $11))
			RETURNING run_id)
		SELECT pg_notify($8, run_id) FROM u`,
		r.Status, sum, nullJSON(r.Panels), strings.ReplaceAll(r.PanelsError, "\x00", ""), id, trace, claim, Channel,
		store.StatusQueued, store.StatusRunning, store.StatusPaused)
	if err != nil {
		return fmt.Errorf("store: ending run %s trace %d: %w", id, trace, err)
	}
	return nil
}
