package pgstore

import (
	"context"
	"sync"
	"time"
)

// The store's listener: one connection per store LISTENs on Channel and
// wakes the subscribers of the run each notification names, so that a
// server following a worker's run reads it when a batch was committed
// rather than on a timer. It starts with the first subscriber and
// reconnects after a lost connection (subscribers should still read now
// and then: notifications sent while it reconnects are lost).

type listener struct {
	mu     sync.Mutex
	subs   map[string]map[chan struct{}]struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

// Wake returns a channel that receives (without blocking the sender, so
// wake-ups coalesce) each time records of run id are committed, and a
// function that ends the subscription.
func (s *Store) Wake(id string) (<-chan struct{}, func()) {
	c := make(chan struct{}, 1)
	l := &s.listen
	l.mu.Lock()
	if l.subs == nil {
		l.subs = map[string]map[chan struct{}]struct{}{}
	}
	if l.subs[id] == nil {
		l.subs[id] = map[chan struct{}]struct{}{}
	}
	l.subs[id][c] = struct{}{}
	if l.cancel == nil {
		ctx, cancel := context.WithCancel(context.Background())
		l.cancel, l.done = cancel, make(chan struct{})
		go s.listenLoop(ctx, l.done)
	}
	l.mu.Unlock()
	return c, func() {
		l.mu.Lock()
		delete(l.subs[id], c)
		if len(l.subs[id]) == 0 {
			delete(l.subs, id)
		}
		l.mu.Unlock()
	}
}

// stopListening ends the listener (Close).
func (s *Store) stopListening() {
	l := &s.listen
	l.mu.Lock()
	cancel, done := l.cancel, l.done
	l.cancel = nil
	l.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

func (s *Store) listenLoop(ctx context.Context, done chan struct{}) {
	defer close(done)
	for ctx.Err() == nil {
		s.listenOnce(ctx)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second): // the database is away: try again
		}
	}
}

// listenOnce listens on one connection until it fails or ctx ends.
func (s *Store) listenOnce(ctx context.Context) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "LISTEN "+Channel); err != nil {
		return
	}
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			// the connection goes back to the pool closed (the pool drops
			// it), never still listening or in an unknown state
			conn.Conn().Close(context.Background())
			return
		}
		s.listen.mu.Lock()
		for c := range s.listen.subs[n.Payload] {
			select {
			case c <- struct{}{}:
			default:
			}
		}
		s.listen.mu.Unlock()
	}
}
