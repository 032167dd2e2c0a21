package pgstore

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Path returns the database's URL without its password, for messages.
func (s *Store) Path() string { return Redact(s.url) }

// healthEvery bounds how often Health asks the database.
const healthEvery = time.Second

type healthState struct {
	mu  sync.Mutex
	at  time.Time
	err error
}

// Health reports whether the database answers (a ping, at most every
// second; the answer is kept in between): nil, or an error naming the
// database and the cause.
func (s *Store) Health() error {
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	if time.Since(s.health.at) < healthEvery {
		return s.health.err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	s.health.at = time.Now()
	s.health.err = nil
	if err := s.pool.Ping(ctx); err != nil {
		s.health.err = fmt.Errorf("the run store %s cannot be reached: %w", s.Path(), err)
	}
	return s.health.err
}
