package store

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/fwlab/fwlab/internal/solver"
)

// DefaultFlushInterval is how often an Appender writes: the most a crash
// can lose of a streaming run.
const DefaultFlushInterval = 250 * time.Millisecond

// MaxBatchRecords bounds the records of one batch an Appender writes: a
// reader decodes a batch whole.
const MaxBatchRecords = 4096

// Appender streams one run's records to the store: Add buffers them (it
// never waits for the database, so a solver's Recorder may call it), and a
// goroutine appends each trace's buffered records as one batch every
// interval. Close writes what is left.
type Appender struct {
	s        recordWriter
	id       string
	interval time.Duration

	mu      sync.Mutex
	pending map[int][]solver.Record
	err     error // the first write failure
	closed  bool

	wmu  sync.Mutex // one writer at a time (the loop or Flush)
	stop chan struct{}
	done chan struct{}
}

// NewAppender starts an appender for run id, writing every interval
// (≤ 0: DefaultFlushInterval).
func (s *Store) NewAppender(id string, interval time.Duration) *Appender {
	if interval <= 0 {
		interval = DefaultFlushInterval
	}
	a := &Appender{s: s, id: id, interval: interval, pending: map[int][]solver.Record{},
		stop: make(chan struct{}), done: make(chan struct{})}
	go a.loop()
	return a
}

// Add buffers records of a trace (copied; the Extra maps are shared, as
// records never change once made). After Close it does nothing.
func (a *Appender) Add(trace int, recs ...solver.Record) {
	a.mu.Lock()
	if !a.closed {
		a.pending[trace] = append(a.pending[trace], recs...)
	}
	a.mu.Unlock()
}

func (a *Appender) loop() {
	defer close(a.done)
	t := time.NewTicker(a.interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			a.Flush(context.Background())
		case <-a.stop:
			return
		}
	}
}

// Flush writes everything buffered so far and returns the first write
// failure the appender has met (a failed batch is dropped, not retried).
func (a *Appender) Flush(ctx context.Context) error {
	a.wmu.Lock()
	defer a.wmu.Unlock()
	a.mu.Lock()
	batches := a.pending
	if len(batches) == 0 {
		// Nothing to write. Keeping the (live) buffer past the unlock would
		// read records Add puts there meanwhile: written now, they would
		// stay buffered and be written again by the next Flush.
		a.mu.Unlock()
		return a.Err()
	}
	a.pending = map[int][]solver.Record{}
	a.mu.Unlock()
	// traces in index order, so that writes are repeatable
	for _, trace := range slices.Sorted(maps.Keys(batches)) {
		recs := batches[trace]
		// Batches of at most MaxBatchRecords keep a reader's decoding small.
		for len(recs) > 0 {
			n := min(len(recs), MaxBatchRecords)
			if err := a.s.AppendRecords(ctx, a.id, trace, recs[:n]); err != nil {
				a.mu.Lock()
				if a.err == nil {
					a.err = err
				}
				a.mu.Unlock()
				break // the rest would leave a hole
			}
			recs = recs[n:]
		}
	}
	return a.Err()
}

// Err returns the first write failure, if any.
func (a *Appender) Err() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

// Close stops the appender and writes what is left; it returns the first
// write failure. Call it before setting the run's final status.
func (a *Appender) Close() error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return a.Err()
	}
	a.closed = true
	a.mu.Unlock()
	close(a.stop)
	<-a.done
	return a.Flush(context.Background())
}
