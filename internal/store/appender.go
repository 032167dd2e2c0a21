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

// Appender streams one run's records to the store: Add encodes them into
// their trace's batch and AddBatch takes a batch its caller encoded
// already (neither waits for the database, so a solver's Recorder may call
// them, and it keeps no record: a record costs the appender its encoded
// bytes only), and a goroutine appends each trace's batches every
// interval. Close writes what is left. A caller that holds records back to
// hand them over encoded (the session seals its chunks of a trace's
// records once, for its own copy and the store's) sets BeforeWrite to hand
// over what it holds before each write.
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
	pending map[int]*traceBatches // by trace
	err     error                 // the first write failure
	closed  bool
	closing bool // Close has begun
	onError func(error)
	before  func() // hands over held records before each write (BeforeWrite)

	wmu  sync.Mutex // one writer at a time (the loop or Flush)
	stop chan struct{}
	done chan struct{}
}

// traceBatches is a trace's records not yet written: the batches full
// (MaxBatchRecords) and the one being filled.
type traceBatches struct {
	full []Batch
	open BatchEncoder
}

// take returns the trace's batches, the one being filled sealed, and
// leaves none.
func (t *traceBatches) take() []Batch {
	out := t.full
	if n := t.open.Len(); n > 0 {
		out = append(out, Batch{N: n, Blob: t.open.AppendBlob(nil)})
	}
	t.full = nil
	return out
}

// NewAppender starts an appender for run id, writing every interval
// (≤ 0: DefaultFlushInterval).
func (s *Store) NewAppender(id string, interval time.Duration) *Appender {
	if interval <= 0 {
		interval = DefaultFlushInterval
	}
	a := &Appender{s: s, id: id, interval: interval, pending: map[int]*traceBatches{},
		stop: make(chan struct{}), done: make(chan struct{})}
	go a.loop()
	return a
}

// Add encodes records of a trace into its batch, which is full at
// MaxBatchRecords (a reader decodes a batch whole). After Close it does
// nothing.
func (a *Appender) Add(trace int, recs ...solver.Record) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed || a.err != nil {
		return
	}
	t := a.pending[trace]
	if t == nil {
		t = &traceBatches{}
		a.pending[trace] = t
	}
	for i := range recs {
		t.open.Add(&recs[i])
		if n := t.open.Len(); n == MaxBatchRecords {
			t.full = append(t.full, Batch{N: n, Blob: t.open.AppendBlob(nil)})
		}
	}
}

// AddBatch queues b, a batch of a trace's next records encoded by the
// caller (a BatchEncoder's blob, at most MaxBatchRecords records), after
// the records added before it. The appender keeps b.Blob as it is and
// writes it as one batch: the caller must not change it. After Close it
// does nothing.
func (a *Appender) AddBatch(trace int, b Batch) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed || a.err != nil || b.N == 0 {
		return
	}
	t := a.pending[trace]
	if t == nil {
		t = &traceBatches{}
		a.pending[trace] = t
	}
	if n := t.open.Len(); n > 0 {
		t.full = append(t.full, Batch{N: n, Blob: t.open.AppendBlob(nil)})
	}
	t.full = append(t.full, b)
}

// BeforeWrite sets fn to be called at the start of every write (each
// interval's, Flush's and Close's last), before the batches are taken: a
// caller that holds records back hands them over there with Add or
// AddBatch. fn runs on the writing goroutine and must not call Flush or
// Close. Set it before the first write.
func (a *Appender) BeforeWrite(fn func()) {
	a.wmu.Lock()
	a.before = fn
	a.wmu.Unlock()
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
	if a.before != nil {
		a.before()
	}
	a.mu.Lock()
	if a.err != nil {
		a.mu.Unlock()
		return a.Err()
	}
	// the batches so far, taken under the lock: Add goes on with new ones
	batches := map[int][]Batch{}
	for trace, t := range a.pending {
		if b := t.take(); len(b) > 0 {
			batches[trace] = b
		}
	}
	a.mu.Unlock()
	// traces in index order, so that writes are repeatable
	for _, trace := range slices.Sorted(maps.Keys(batches)) {
		for bs := batches[trace]; len(bs) > 0; {
			n := txBatches(bs)
			if err := a.s.AppendBatches(ctx, a.id, trace, bs[:n]); err != nil {
				a.fail(err)
				return err // the rest would leave a hole
			}
			bs = bs[n:]
		}
	}
	return a.Err()
}

// MaxTxBytes bounds the blobs an Appender writes in one transaction: a
// flush's batches of a trace go in as few transactions as this allows (a
// commit costs more than a batch), and a write that fails (a full disk)
// loses no more than that of what the flush held.
const MaxTxBytes = 1 << 20

// txBatches is how many of bs, from the first, one transaction writes: at
// least one, and no more than MaxTxBytes of blobs unless one batch is
// larger.
func txBatches(bs []Batch) int {
	size := len(bs[0].Blob)
	n := 1
	for n < len(bs) && size+len(bs[n].Blob) <= MaxTxBytes {
		size += len(bs[n].Blob)
		n++
	}
	return n
}

// fail records the first write failure, drops what is buffered and tells
// the OnError function.
func (a *Appender) fail(err error) {
	a.mu.Lock()
	first := a.err == nil
	if first {
		a.err = err
		a.pending = map[int]*traceBatches{}
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
	if a.closing {
		a.mu.Unlock()
		return a.Err()
	}
	a.closing = true
	a.mu.Unlock()
	close(a.stop)
	<-a.done
	// what the caller holds back comes in before Add and AddBatch stop
	a.wmu.Lock()
	if a.before != nil {
		a.before()
	}
	a.wmu.Unlock()
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	return a.Flush(context.Background())
}
