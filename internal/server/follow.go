package server

import (
	"time"

	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/store"
)

// FollowInterval is how often the stream of a run live on another process
// (a worker's run in a shared PostgreSQL store) reads it again when no
// notification woke it sooner.
const FollowInterval = time.Second

// following reports whether run, read from the store, is live elsewhere:
// not this server's (not in its memory), still live in a store that this
// process does not own (a shared PostgreSQL store). Its stream follows the
// store rather than the run's goroutines.
func (s *Server) following(run *session.Run) bool {
	if _, mine := s.mgr.Live(run.ID); mine {
		return false
	}
	return !s.st.Owner() && store.Live(run.RunStatus())
}

// reread reads a followed run again from the store: the records stored
// since, its status and its traces' results.
func (s *Server) reread(run *session.Run) *session.Run {
	if fresh, ok := s.mgr.Get(run.ID); ok && len(fresh.Traces()) == len(run.Traces()) {
		return fresh
	}
	return run
}

// waker is a store that wakes a reader when a run's records are committed
// (pgstore: LISTEN/NOTIFY).
type waker interface {
	Wake(id string) (<-chan struct{}, func())
}

// wakeups returns the store's wake-ups for run id (nil when it has none)
// and the function that ends them.
func (s *Server) wakeups(id string) (<-chan struct{}, func()) {
	if w, ok := s.st.(waker); ok {
		return w.Wake(id)
	}
	return nil, func() {}
}
