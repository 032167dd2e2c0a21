package server

import (
	"context"
	"time"

	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/store"
)

// workerLister is a store whose runs may run on worker processes (the
// PostgreSQL store): it names the worker of each run a worker ran, and
// tells how long ago the worker of each live run last beat (on the
// database's clock).
type workerLister interface {
	Workers(ctx context.Context, ids []string) (map[string]string, error)
	Beats(ctx context.Context, ids []string) (map[string]time.Duration, error)
}

// attachWorkers names the worker of each row a worker ran, and the
// heartbeat of a live row's worker (History shows both); a store without
// workers leaves them empty.
func (s *Server) attachWorkers(ctx context.Context, rows []RunRow) error {
	wl, ok := s.st.(workerLister)
	if !ok || len(rows) == 0 {
		return nil
	}
	ids := make([]string, len(rows))
	for i := range rows {
		ids[i] = rows[i].ID
	}
	names, err := wl.Workers(ctx, ids)
	if err != nil {
		return err
	}
	beats, err := wl.Beats(ctx, ids)
	if err != nil {
		return err
	}
	for i := range rows {
		rows[i].Worker = names[rows[i].ID]
		rows[i].WorkerBeat = s.workerBeat(beats, rows[i].ID)
	}
	return nil
}

// withWorker names the worker of a run's status, and its heartbeat while
// the run is live (the run page shows them).
func (s *Server) withWorker(ctx context.Context, st session.Status) session.Status {
	if wl, ok := s.st.(workerLister); ok {
		if names, err := wl.Workers(ctx, []string{st.ID}); err == nil {
			st.Worker = names[st.ID]
		}
		if beats, err := wl.Beats(ctx, []string{st.ID}); err == nil {
			st.WorkerBeat = s.workerBeat(beats, st.ID)
		}
	}
	return st
}

// workerBeat describes the heartbeat of run id's worker (nil: no worker
// holds it).
func (s *Server) workerBeat(beats map[string]time.Duration, id string) *store.WorkerBeat {
	age, ok := beats[id]
	if !ok {
		return nil
	}
	b := store.NewWorkerBeat(age, s.opts.RescueAfter)
	return &b
}

// attachCellWorkers names the worker of each live cell's run and its
// heartbeat (the sweep page shows them).
func (s *Server) attachCellWorkers(ctx context.Context, cells []sweepCell) {
	wl, ok := s.st.(workerLister)
	if !ok {
		return
	}
	var ids []string
	for _, c := range cells {
		if c.Run != "" && store.Live(c.Status) {
			ids = append(ids, c.Run)
		}
	}
	if len(ids) == 0 {
		return
	}
	names, err := wl.Workers(ctx, ids)
	if err != nil {
		return
	}
	beats, err := wl.Beats(ctx, ids)
	if err != nil {
		return
	}
	for i := range cells {
		if c := &cells[i]; c.Run != "" && store.Live(c.Status) {
			c.Worker, c.WorkerBeat = names[c.Run], s.workerBeat(beats, c.Run)
		}
	}
}
