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
//
// A write that fails stops the appender for good: the run's records in the
// store stay a whole prefix of what was added (a later batch is never
// written after a lost one, which would renumber it), Err and Close return
// the failure, and the function given to OnError is called once.
type Appender struct {
	s        recordWriter
	id       string
	interval time.Duration

	mu      sync.Mutex
	pending map[int][]solver.Record
	err     error // the first write failure
	closed  bool
	onError func(error)

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
	if !a.closed && a.err == nil {
		a.pending[trace] = append(a.pending[trace], recs...)
	}
	a.mu.Unlock()
}

// OnError sets fn to be called, once and from the goroutine that wrote,
// when a write first fails (right away if one already has). fn must not
// call the appender's Flush or Close.
func (a *Appender) OnError(fn func(error)) {
	a.mu.Lock()
	err := a.err
	a.onError = fn
	a.mu.Unlock()
	if err != nil && fn != nil {
		fn(err)
	}
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
	if len(batches) == 0 || a.err != nil {
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
				a.fail(err)
				return err // the rest would leave a hole
			}
			recs = recs[n:]
		}
	}
	return a.Err()
}

// fail records the first write failure, drops what is buffered and tells
// the OnError function.
func (a *Appender) fail(err error) {
	a.mu.Lock()
	first := a.err == nil
	if first {
		a.err = err
		a.pending = map[int][]solver.Record{}
	}
	fn := a.onError
	a.mu.Unlock()
	if first && fn != nil {
		fn(err)
	}
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
