package queue

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
)

// streamer writes a claimed run's records to the store in batches, as the
// server's appender does: Add buffers (never waiting for the database, so
// the solver's Recorder may call it) and a goroutine appends each trace's
// buffer as one batch every interval. The first failure stops it for
// good: what is stored stays a whole prefix of what was added.
type streamer struct {
	st       *pgstore.Store
	id       string
	claim    string
	interval time.Duration
	written  func(n int) // counts records stored (metrics)

	mu      sync.Mutex
	pending map[int][]solver.Record
	err     error
	failed  chan struct{} // closed on the first failure

	wmu  sync.Mutex
	stop chan struct{}
	done chan struct{}
}

func newStreamer(st *pgstore.Store, id, claim string, interval time.Duration, written func(int)) *streamer {
	s := &streamer{st: st, id: id, claim: claim, interval: interval, written: written,
		pending: map[int][]solver.Record{}, failed: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	go s.loop()
	return s
}

func (s *streamer) add(trace int, r solver.Record) {
	s.mu.Lock()
	if s.err == nil {
		s.pending[trace] = append(s.pending[trace], r)
	}
	s.mu.Unlock()
}

func (s *streamer) loop() {
	defer close(s.done)
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			s.flush(context.Background())
		case <-s.stop:
			return
		}
	}
}

// flush writes what is buffered and returns the first failure.
func (s *streamer) flush(ctx context.Context) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	batches := s.pending
	if len(batches) == 0 || s.err != nil {
		err := s.err
		s.mu.Unlock()
		return err
	}
	s.pending = map[int][]solver.Record{}
	s.mu.Unlock()
	for _, trace := range slices.Sorted(maps.Keys(batches)) {
		recs := batches[trace]
		for len(recs) > 0 {
			n := min(len(recs), store.MaxBatchRecords)
			if err := s.st.AppendClaimed(ctx, s.id, s.claim, trace, recs[:n]); err != nil {
				s.mu.Lock()
				if s.err == nil {
					s.err = err
					s.pending = map[int][]solver.Record{}
					close(s.failed)
				}
				s.mu.Unlock()
				return err
			}
			if s.written != nil {
				s.written(n)
			}
			recs = recs[n:]
		}
	}
	return nil
}

// err0 returns the first failure.
func (s *streamer) err0() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// close stops the loop and writes what is left.
func (s *streamer) close(ctx context.Context) error {
	close(s.stop)
	<-s.done
	return s.flush(ctx)
}
