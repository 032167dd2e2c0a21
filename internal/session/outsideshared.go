package session

import (
	"context"
	"log/slog"
	"time"
)

// A run opened from outside on a store that several front ends share
// (PostgreSQL) lives in the memory of the front end that opened it. So
// that a front end that stops without ending its runs (killed, its machine
// gone) does not leave them running for ever, the front end holding such
// a run beats on it while batches come, and every front end ends the runs
// whose beat has gone stale (docs/live.md, "Many servers").

// sharedOutside is a store shared by front ends: pgstore.Store.
type sharedOutside interface {
	BeatOutside(ctx context.Context, id string) error
	EndOrphanOutside(ctx context.Context, after time.Duration) ([]string, error)
}

// orphanAfter is how long after its last beat a run opened from outside
// is taken for orphaned: its idle timeout and a fifth more. A front end
// beats at most every tenth of the timeout while batches come, and ends a
// silent run itself at the timeout, so a run held by a live front end is
// never taken.
func orphanAfter(idle time.Duration) time.Duration { return idle + idle/5 }

// beatOutside beats for r when the last beat is older than a tenth of its
// idle timeout (or there was none), on a shared store.
func (r *Run) beatOutside() {
	sh, ok := r.m.st.(sharedOutside)
	if !ok || r.ID == "" {
		return
	}
	o := r.outside
	now := time.Now().UnixNano()
	if last := o.beat.Load(); last != 0 && now-last < int64(o.idle/10) {
		return
	}
	o.beat.Store(now)
	if err := sh.BeatOutside(context.Background(), r.ID); err != nil {
		slog.Warn("a run opened from outside: its heartbeat was not stored", "run", r.ID, "err", err)
	}
}

// startOrphanEnder ends, until the manager closes, the runs opened from
// outside that no live front end holds, on a shared store.
func (m *Manager) startOrphanEnder() {
	sh, ok := m.st.(sharedOutside)
	if !ok {
		return
	}
	idle := m.opts.OutsideIdle
	interval := min(max(idle/10, 100*time.Millisecond), time.Minute)
	m.every(interval, func() bool {
		ids, err := sh.EndOrphanOutside(m.baseCtx, orphanAfter(idle))
		switch {
		case err != nil && m.baseCtx.Err() == nil:
			slog.Warn("looking for runs opened from outside whose server stopped", "err", err)
		case len(ids) > 0:
			slog.Info("ended failed: runs opened from outside whose server stopped", "runs", ids)
		}
		return true
	})
}
