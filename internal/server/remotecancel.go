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
	if !store.Live(r.Status) {
		return false, nil
	}
	return true, s.st.SetStatus(ctx, id, store.StatusCancelled, time.Now())
}
