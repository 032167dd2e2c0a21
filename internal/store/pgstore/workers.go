package pgstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/fwlab/fwlab/internal/store"
)

// WorkerName is the worker's name in a claim ("name/job/attempt", as
// internal/queue writes it): the claim without its last two parts.
func WorkerName(claim string) string {
	name := claim
	for i := 0; i < 2; i++ {
		j := strings.LastIndexByte(name, '/')
		if j < 0 {
			return claim
		}
		name = name[:j]
	}
	return name
}

// Workers returns the name of the worker that runs or ran each of the runs
// ids that a worker took from the queue (runs the server ran itself, or
// imported, have none and are left out).
func (s *Store) Workers(ctx context.Context, ids []string) (map[string]string, error) {
	out := map[string]string{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT id, claim FROM runs WHERE id = ANY($1) AND claim <> ''`, ids)
	if err != nil {
		return nil, fmt.Errorf("store: reading the runs' workers: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, claim string
		if err := rows.Scan(&id, &claim); err != nil {
			return nil, fmt.Errorf("store: reading the runs' workers: %w", err)
		}
		out[id] = WorkerName(claim)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: reading the runs' workers: %w", err)
	}
	return out, nil
}

// Beats returns the age of the last heartbeat of the worker of each live
// run of ids that a worker holds (runs queued, or run by no worker, are
// left out). The age is taken on the database's clock, on which the
// heartbeat was written (Beat) and by which the rescue goes, so a worker
// or server whose own clock is wrong changes nothing.
func (s *Store) Beats(ctx context.Context, ids []string) (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT id, `+nowUS+` - beat_us FROM runs
		WHERE id = ANY($1) AND claim <> '' AND beat_us IS NOT NULL AND status IN ($2, $3)`, ids, store.StatusRunning, store.StatusPaused)
	if err != nil {
		return nil, fmt.Errorf("store: reading the runs' heartbeats: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var us int64
		if err := rows.Scan(&id, &us); err != nil {
			return nil, fmt.Errorf("store: reading the runs' heartbeats: %w", err)
		}
		out[id] = time.Duration(us) * time.Microsecond
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: reading the runs' heartbeats: %w", err)
	}
	return out, nil
}
