package server

import (
	"context"

	"github.com/fwlab/fwlab/internal/session"
)

// workerLister is a store whose runs may run on worker processes (the
// PostgreSQL store): it names the worker of each run a worker ran.
type workerLister interface {
	Workers(ctx context.Context, ids []string) (map[string]string, error)
}

// attachWorkers names the worker of each row a worker ran (History shows
// it); a store without workers leaves them empty.
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
	for i := range rows {
		rows[i].Worker = names[rows[i].ID]
	}
	return nil
}

// withWorker names the worker of a run's status (the run page shows it).
func (s *Server) withWorker(ctx context.Context, st session.Status) session.Status {
	if wl, ok := s.st.(workerLister); ok {
		if names, err := wl.Workers(ctx, []string{st.ID}); err == nil {
			st.Worker = names[st.ID]
		}
	}
	return st
}
