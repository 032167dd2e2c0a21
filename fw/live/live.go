// Package live logs the iterates of a solver fwlab does not run into a
// running fwlab dashboard, where they show live like any run's: the run
// page draws them as they arrive, History lists the run (marked as opened
// from outside), and it compares and exports like any other.
//
// Three calls do it:
//
//	run, err := live.Open(ctx, "http://localhost:8080", live.RunInfo{Problem: "my lasso", Traces: []string{"pgd"}})
//	…
//	run.Record("pgd", rec) // once per iteration
//	…
//	run.End("converged")
//
// The record is fwlab's own, fw.Record. A method of fw/methods logs
// through Recorder:
//
//	res, err := methods.Run(ctx, p, methods.Options{Algorithm: "afw"}, run.Recorder("afw"))
//
// Record only queues the record: a background goroutine sends the queued
// records in one HTTP request per batch, when FlushRecords are waiting or
// every FlushInterval, so that logging costs the solver about a microsecond
// per record or less (BenchmarkLiveRecord measures it). The protocol underneath is plain JSON over HTTP,
// described in docs/live.md for clients in other languages.
//
// The server checks every batch (finite numbers, k increasing within each
// trace and at most the run's Iters, known trace names) and keeps it whole
// or not at all. A batch it refuses, or one that cannot be sent, stops the
// logging: Record, Flush and End then return that error, which names the
// record and the field at fault. Nothing is retried, so that no record is
// ever sent twice.
package live

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fwlab/fwlab/fw"
)

// Defaults of RunInfo's batching.
const (
	DefaultFlushRecords  = 1024
	DefaultFlushInterval = 250 * time.Millisecond
	// DefaultMaxPending is the number of queued records at which Record
	// waits for a batch to be sent (the server may take at most 10 000
	// records in a batch).
	DefaultMaxPending = 8192
	// MaxBatchBytes bounds the body of one request (the dashboard takes
	// 1 MiB by default): a longer batch is sent in several requests.
	MaxBatchBytes = 512 << 10
)

// RunInfo describes a run to open.
type RunInfo struct {
	// Problem is the run's problem, a free label (1 to 200 characters).
	Problem string
	// Traces names the run's traces, one per algorithm logged (1 to 8
	// distinct names of 1 to 64 characters, without " + ").
	Traces []string
	// FStar is the optimal value when known: the pages then draw F − F*.
	FStar *float64
	// Iters is the largest k a trace may log (0: the server's default,
	// 10 000).
	Iters int
	// Name and Note are the run's name and note in History ("": the
	// name is "problem: traces").
	Name, Note string

	// FlushRecords sends a batch once this many records wait (0:
	// DefaultFlushRecords; at most DefaultMaxPending).
	FlushRecords int
	// FlushInterval sends what waits at least this often (0:
	// DefaultFlushInterval).
	FlushInterval time.Duration
	// Client sends the requests (nil: a client with a 30 s timeout).
	Client *http.Client
}

// Run is a run opened on a dashboard. Its methods may be called from
// several goroutines.
type Run struct {
	// ID is the run's id; Page the address of its page on the dashboard.
	ID, Page string

	base, token string
	client      *http.Client
	names       map[string]int
	traceJSON   [][]byte // each trace's name, as JSON
	flushAt     int
	interval    time.Duration

	mu      sync.Mutex
	space   *sync.Cond // signalled when the queue is taken
	queue   queue
	spare   queue // the last batch sent, reused for the next queue (guarded by flushMu)
	closed  bool
	err     atomic.Pointer[error]
	kick    chan struct{}
	ending  chan struct{} // closed by EndWith: the sender returns
	stopped chan struct{} // closed when the sender has returned
	flushMu sync.Mutex    // one batch in flight at a time, in order
	enc     []byte        // the last batch's encoding (guarded by flushMu)

	// For the benchmark of the sender's cost: nanoseconds Record waited
	// for the dashboard, and the sender spent encoding.
	waited, encoded atomic.Int64
}

// queue holds queued records: their values copied out of the caller's
// pointers and maps, the extra metrics of all in one slice.
type queue struct {
	items  []item
	extras []metric
}

// item, its fill (newItem, queue.addMetrics) and its JSON (appendItem)
// are generated from the record's declaration (internal/recordfields):
// record_gen.go.

// metric is an extra metric of a queued record.
type metric struct {
	key string
	v   float64
}

// Open opens a run on the dashboard at baseURL (for example
// "http://localhost:8080") and starts its sender.
func Open(ctx context.Context, baseURL string, info RunInfo) (*Run, error) {
	body, err := json.Marshal(map[string]any{
		"problem": info.Problem, "traces": info.Traces, "fstar": info.FStar, "iters": info.Iters,
		"name": info.Name, "note": info.Note,
	})
	if err != nil {
		return nil, fmt.Errorf("live: encoding the run: %w", err)
	}
	r := &Run{
		base:     strings.TrimSuffix(baseURL, "/"),
		client:   info.Client,
		names:    map[string]int{},
		flushAt:  info.FlushRecords,
		interval: info.FlushInterval,
		kick:     make(chan struct{}, 1),
		ending:   make(chan struct{}),
		stopped:  make(chan struct{}),
	}
	if r.client == nil {
		r.client = &http.Client{Timeout: 30 * time.Second}
	}
	if r.flushAt <= 0 || r.flushAt > DefaultMaxPending {
		r.flushAt = DefaultFlushRecords
	}
	if r.interval <= 0 {
		r.interval = DefaultFlushInterval
	}
	r.space = sync.NewCond(&r.mu)
	var opened struct {
		ID     string   `json:"id"`
		Token  string   `json:"token"`
		Page   string   `json:"page"`
		Traces []string `json:"traces"`
	}
	if err := r.post(ctx, "/api/live/runs", "", body, &opened); err != nil {
		return nil, err
	}
	r.ID, r.token, r.Page = opened.ID, opened.Token, r.base+opened.Page
	for i, name := range opened.Traces {
		r.names[name] = i
		b, _ := json.Marshal(name)
		r.traceJSON = append(r.traceJSON, b)
	}
	go r.sender()
	return r, nil
}

// Recorder returns a fw.Recorder that queues each record it receives for
// trace, as Record does: the recorder a method of fw/methods reports to. A
// record refused stops the logging as for Record; Flush and End return the
// error.
func (r *Run) Recorder(trace string) fw.Recorder {
	return fw.RecorderFunc(func(rec fw.Record) { _ = r.Record(trace, rec) })
}

// Record queues rec for trace (one of RunInfo.Traces). A record with no
// Step is sent with the step "none". Record waits only when
// DefaultMaxPending records are queued already (the dashboard is slower
// than the solver). It returns the error that stopped the logging, if any
// (see the package documentation), or an error for an unknown trace or a
// run that has ended.
func (r *Run) Record(trace string, rec fw.Record) error {
	if e := r.err.Load(); e != nil {
		return *e
	}
	i, ok := r.names[trace]
	if !ok {
		return fmt.Errorf("live: run %s has no trace %q", r.ID, trace)
	}
	it := newItem(int32(i), &rec)
	if it.step == "" {
		it.step = "none"
	}
	r.mu.Lock()
	if len(r.queue.items) >= DefaultMaxPending {
		start := time.Now()
		for len(r.queue.items) >= DefaultMaxPending && !r.closed && r.err.Load() == nil {
			r.space.Wait()
		}
		r.waited.Add(int64(time.Since(start)))
	}
	if r.closed {
		r.mu.Unlock()
		return fmt.Errorf("live: run %s has ended", r.ID)
	}
	q := &r.queue
	q.addMetrics(&it, &rec)
	q.items = append(q.items, it)
	n := len(q.items)
	r.mu.Unlock()
	if n >= r.flushAt {
		select {
		case r.kick <- struct{}{}:
		default:
		}
	}
	return nil
}

// Flush sends the queued records now and returns once the dashboard has
// stored them (or the error that stopped the logging).
func (r *Run) Flush(ctx context.Context) error {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	return r.flushLocked(ctx)
}

// End sends the queued records and ends the run with status: converged,
// stalled, max_iters, max_passes, failed or cancelled (what fwlab's own
// methods report). It is EndWith without a context or a message.
func (r *Run) End(status string) error {
	return r.EndWith(context.Background(), status, "")
}

// EndWith sends the queued records and ends the run with status and
// message (shown with each trace's result), and stops the sender. When the
// logging stopped on an error, the run is ended failed with that error as
// its message, and the error is returned.
func (r *Run) EndWith(ctx context.Context, status, message string) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return fmt.Errorf("live: run %s has ended", r.ID)
	}
	r.closed = true
	r.space.Broadcast()
	r.mu.Unlock()
	close(r.ending)
	<-r.stopped
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	ferr := r.flushLocked(ctx)
	if ferr != nil {
		status, message = fw.StatusFailed, ferr.Error()
	}
	body, err := json.Marshal(map[string]string{"status": status, "message": message})
	if err != nil {
		return fmt.Errorf("live: encoding the end: %w", err)
	}
	if err := r.post(ctx, "/api/live/runs/"+r.ID+"/end", r.token, body, nil); err != nil {
		return errors.Join(ferr, err)
	}
	return ferr
}

// sender sends a batch when enough records wait, or every interval, until
// the run ends.
func (r *Run) sender() {
	defer close(r.stopped)
	t := time.NewTicker(r.interval)
	defer t.Stop()
	for {
		select {
		case <-r.ending:
			return
		case <-r.kick:
		case <-t.C:
		}
		_ = r.Flush(context.Background())
	}
}

// flushLocked sends what is queued, in requests of at most MaxBatchBytes
// (r.flushMu held).
func (r *Run) flushLocked(ctx context.Context) error {
	r.mu.Lock()
	batch := r.queue
	r.queue = queue{items: r.spare.items[:0], extras: r.spare.extras[:0]}
	r.space.Broadcast()
	r.mu.Unlock()
	defer func() { r.spare = batch }()
	for from := 0; from < len(batch.items); {
		if e := r.err.Load(); e != nil {
			return *e
		}
		start := time.Now()
		b, n := r.encode(r.enc[:0], &batch, from)
		r.encoded.Add(int64(time.Since(start)))
		r.enc = b
		from += n
		if err := r.post(ctx, "/api/live/runs/"+r.ID+"/records", r.token, b, nil); err != nil {
			r.err.CompareAndSwap(nil, &err)
			r.mu.Lock()
			r.space.Broadcast()
			r.mu.Unlock()
			return *r.err.Load()
		}
	}
	if e := r.err.Load(); e != nil {
		return *e
	}
	return nil
}

// encode appends to b the JSON of the queue's records from index from on,
// as many as fit in MaxBatchBytes (one at least), and says how many.
func (r *Run) encode(b []byte, q *queue, from int) ([]byte, int) {
	b = append(b, `{"records":[`...)
	for i := from; i < len(q.items); i++ {
		it := &q.items[i]
		if i > from {
			if len(b) > MaxBatchBytes-4<<10 {
				return append(b, "]}"...), i - from
			}
			b = append(b, ',')
		}
		b = append(b, `{"trace":`...)
		b = append(b, r.traceJSON[it.trace]...)
		b = appendItem(b, it, q.extras)
		b = append(b, '}')
	}
	return append(b, "]}"...), len(q.items) - from
}

// appendNum appends v as JSON, a non-finite value as the string "NaN",
// "Inf" or "-Inf" (which the server refuses naming the field, rather than
// the whole body as invalid JSON).
func appendNum(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, `"NaN"`...)
	case math.IsInf(v, 1):
		return append(b, `"Inf"`...)
	case math.IsInf(v, -1):
		return append(b, `"-Inf"`...)
	}
	return fw.AppendFloat(b, v, 'g')
}

// appendStr appends s as a JSON string.
func appendStr(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// Error is a request the dashboard refused: its HTTP status, and the
// field and rule its answer names.
type Error struct {
	Status int    // the HTTP status
	Field  string // the field at fault ("records[12].k"), "" for none
	Msg    string // the rule broken
}

// Error says what the dashboard answered: the status, the field and the
// rule.
func (e *Error) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("live: the dashboard answered %d: %s", e.Status, e.Msg)
	}
	return fmt.Sprintf("live: the dashboard answered %d: %s: %s", e.Status, e.Field, e.Msg)
}

// post sends body as JSON to path (with the write token when given) and
// decodes a successful answer into out (when not nil).
func (r *Run) post(ctx context.Context, path, token string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.base+path, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("live: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return fmt.Errorf("live: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("live: reading the answer to %s: %w", path, err)
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error string `json:"error"`
			Field string `json:"field"`
		}
		if json.Unmarshal(data, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(data))
		}
		return &Error{Status: resp.StatusCode, Field: e.Field, Msg: e.Error}
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("live: the answer to %s: %w", path, err)
		}
	}
	return nil
}
