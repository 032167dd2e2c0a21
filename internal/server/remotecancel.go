package server

import (
	"context"
	"errors"
	"time"

	"github.com/fwlab/fwlab/internal/store"
)

// cancelRemote cancels a live run of a shared store that this server does
// not run (a run queued for, or running on, a worker process): its status
// becomes cancelled in the store, so a queued run never starts and a
// running one stops on its worker at its next heartbeat, its records kept
// (as `dashboard cancel` does). ok is false for any other run, which the
// server's own sessions handle.
func (s *Server) cancelRemote(ctx context.Context, id string) (ok bool, err error) {
	if ok, err := s.remoteLive(ctx, id); !ok || err != nil {
		return false, err
	}
	return true, s.st.SetStatus(ctx, id, store.StatusCancelled, time.Now())
}

// remoteLive says whether run id is a live run of a shared store that this
// server does not run: queued for, or running on, a worker process.
func (s *Server) remoteLive(ctx context.Context, id string) (bool, error) {
	if s.st.Owner() {
		return false, nil
	}
	if _, live := s.mgr.Live(id); live {
		return false, nil
	}
	r, err := s.st.Get(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return store.Live(r.Status), nil
}

// sweepCanceller is a store whose sweeps' cells may run on worker
// processes (the PostgreSQL store): it cancels a sweep and its live cells
// in one transaction, waking their workers.
type sweepCanceller interface {
	CancelSweep(ctx context.Context, id string) (int, error)
}

// cancelRemoteSweep cancels a live sweep of a shared store that this server
// does not run (its cells queued for worker processes by a front end, or by
// `dashboard submit`): its live cells are cancelled, a queued one never
// starts and a running one stops on its worker. ok is false for any other
// sweep.
func (s *Server) cancelRemoteSweep(ctx context.Context, sw *store.Sweep) (ok bool, err error) {
	c, isCanceller := s.st.(sweepCanceller)
	if !isCanceller || s.st.Owner() || !store.Live(sw.Status) {
		return false, nil
	}
	if _, err := c.CancelSweep(ctx, sw.ID); err != nil {
		return false, err
	}
	return true, nil
}
