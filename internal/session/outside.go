package session

// A run opened from outside (docs/live.md) is a run whose records come from
// a program fwlab does not run: a client opens it (OpenOutside), appends
// records to its traces in batches (AppendOutside) and ends it with a
// status (EndOutside). It is a Run like any other: its traces keep their
// records through Trace.keep (the recorder's own store, the run store's
// appender and the subscribers' notification), its status changes go
// through Run.changed and the status writer, and its end through
// Trace.finish and persistEnd, so that the pages, the stream, the store,
// History, compare and the exports see no difference. What it has no use
// for it does not take: no instance, no run slot (it never waits in the
// queue), no worker slot, no pause.
//
// A run whose client stops logging without ending it (the program died,
// the machine went to sleep) is ended failed once no batch came for the
// manager's OutsideIdle (default DefaultOutsideIdle), its message saying
// so; cancelling it (the page's Cancel) ends it cancelled, and a manager
// closing ends it interrupted, as any live run.

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/fwlab/fwlab/internal/bundle"
	"github.com/fwlab/fwlab/internal/recordfields"
	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	runstore "github.com/fwlab/fwlab/internal/store"
)

// DefaultOutsideIdle is how long a run opened from outside may go without
// a batch before it is ended failed.
const DefaultOutsideIdle = 10 * time.Minute

// ErrEnded is returned (wrapped, naming the run and how it ended) for a
// write to a run opened from outside that has ended.
var ErrEnded = errors.New("the run has ended")

// ErrNotPausable is returned (wrapped) by Step on a run opened from
// outside: its records come from a program the server does not hold (Pause
// leaves it as it is).
var ErrNotPausable = errors.New("a run opened from outside cannot be paused or stepped")

// ErrNotOutside is returned by the calls of a run opened from outside on
// another run.
var ErrNotOutside = errors.New("the run was not opened from outside")

// EndStatuses are the statuses a client may end a run opened from outside
// with: a trace's final status, as fwlab's own methods report them.
var EndStatuses = []string{solver.StatusConverged, solver.StatusStalled, solver.StatusMaxIters,
	solver.StatusMaxPasses, solver.StatusFailed, solver.StatusCancelled}

// outside is what a run opened from outside adds to a Run.
type outside struct {
	tokenHash [sha256.Size]byte
	idle      time.Duration
	last      atomic.Int64 // when the last batch came (UnixNano)
	beat      atomic.Int64 // when the last heartbeat was stored (outsideshared.go)

	// mu serialises the batches and the end: a batch is checked whole,
	// then kept whole, before the next one or the end is looked at.
	mu     sync.Mutex
	ended  string // the end's status once ended ("" while open)
	lastK  []int  // each trace's last k (-1: no record yet)
	extras []map[string]struct{}
	endC   chan struct{} // closed once ended
}

// OutsideRecord is one record of a batch, for trace Trace (its index).
type OutsideRecord struct {
	Trace int
	Rec   solver.Record
}

// HashToken returns the hash a run opened from outside keeps of its write
// token (the token itself is never kept).
func HashToken(token string) [sha256.Size]byte { return sha256.Sum256([]byte(token)) }

// OpenOutside opens a run from outside: sp (Outside set) names its problem
// label and, as its algorithms, its traces; fstar is the optimal value when
// known. The run starts running at once, with no record; tokenHash
// (HashToken) is what a write must match. Validation failures are
// *spec.FieldError; ErrBusy and ErrTooLarge (wrapped) as for CreateFor,
// its record budget being (iters + 1) × traces.
func (m *Manager) OpenOutside(ctx context.Context, sp spec.Run, fstar *float64, client string, tokenHash [sha256.Size]byte) (*Run, error) {
	budget, recBytes, err := m.checkOutside(&sp, fstar)
	if err != nil {
		return nil, err
	}
	release, err := m.reserve(client, budget, recBytes)
	if err != nil {
		return nil, err
	}

	runCtx, cancel := context.WithCancel(m.baseCtx)
	r := &Run{
		Created: time.Now().UTC(),
		spec:    sp,
		info:    scenarios.Info{FStar: fstar},
		ctx:     runCtx,
		cancel:  cancel,
		m:       m,
		client:  client,
		budget:  budget,
		wake:    make(chan struct{}),
		done:    make(chan struct{}),
		started: true, // no goroutine to launch: the records come from the client
		outside: &outside{tokenHash: tokenHash, idle: m.opts.OutsideIdle, endC: make(chan struct{})},
	}
	o := r.outside
	for i, a := range sp.Algorithms {
		r.traces = append(r.traces, &Trace{Index: i, Algo: a.Algo, run: r, status: StatusRunning})
		o.lastK = append(o.lastK, -1)
		o.extras = append(o.extras, nil)
	}
	r.running = len(r.traces)
	o.last.Store(time.Now().UnixNano())

	id, err := m.putOutside(ctx, r, tokenHash)
	if err != nil {
		release()
		cancel()
		return nil, err
	}
	m.mu.Lock()
	m.unreserveLocked(budget, recBytes)
	if m.closed {
		m.mu.Unlock()
		cancel()
		if id != "" {
			_, _ = m.st.Delete(context.Background(), id)
		}
		return nil, errors.New("session: the manager is closed")
	}
	if m.st != nil {
		r.ID = id
		r.setAppender(runstore.NewAppenderFor(m.st, id, 0))
		r.app.OnError(r.storeFailed)
	} else {
		m.next++
		r.ID = "r" + strconv.Itoa(m.next)
	}
	m.runs[r.ID] = r
	m.order = append(m.order, r)
	m.evictLocked()
	m.wg.Add(1)
	m.mu.Unlock()
	r.beatOutside() // the first beat, on the store's clock
	go r.watchOutside()
	r.changed()
	return r, nil
}

// checkOutside checks the spec of a run opened from outside (normalized in
// place) and its F*, and returns the records it may hold and their bytes,
// within the server's per-run limits.
func (m *Manager) checkOutside(sp *spec.Run, fstar *float64) (int, int64, error) {
	if !sp.Outside {
		return 0, 0, spec.Errorf("outside", "must be true for a run opened from outside")
	}
	if err := sp.Normalize(); err != nil {
		return 0, 0, err
	}
	if fstar != nil && (math.IsNaN(*fstar) || math.IsInf(*fstar, 0)) {
		return 0, 0, spec.Errorf("fstar", "must be a finite number (the optimal value) or absent, got %v", *fstar)
	}
	ntr := len(sp.Algorithms)
	if int64(sp.Iters+1)*int64(ntr) > int64(m.opts.MaxRecords) {
		return 0, 0, spec.Errorf("iters", "(iters + 1) × traces must be at most %d (the server keeps every record), got %d × %d",
			m.opts.MaxRecords, sp.Iters+1, ntr)
	}
	budget := (sp.Iters + 1) * ntr
	recBytes := int64(budget) * RecordBytes
	if recBytes > m.opts.MaxMemory {
		return 0, 0, fmt.Errorf("%w: its %d records need about %s, over the server's memory budget of %s%s",
			ErrTooLarge, budget, mib(recBytes), mib(m.opts.MaxMemory), m.opts.flag("MaxMemory"))
	}
	return budget, recBytes, nil
}

// putOutside stores the run opened from outside, running, with the hash of
// its write token, and returns its id ("" without a store).
func (m *Manager) putOutside(ctx context.Context, r *Run, tokenHash [sha256.Size]byte) (string, error) {
	if m.st == nil {
		return "", nil
	}
	sr := &runstore.Run{
		Spec: r.spec, Version: bundle.ProgramVersion(), Status: runstore.StatusRunning, Created: r.Created,
		Instance: StoredInstance(r.info), TokenHash: tokenHash[:],
	}
	for _, t := range r.traces {
		sr.Traces = append(sr.Traces, runstore.Trace{Index: t.Index, Algo: t.Algo, Status: runstore.StatusRunning})
	}
	id, err := m.st.PutRun(context.WithoutCancel(ctx), sr)
	if err != nil {
		return "", fmt.Errorf("storing the run: %w", err)
	}
	r.persisted = runstore.StatusRunning
	return id, nil
}

// Outside reports whether the run is open from outside in this process
// (live here, so that AppendOutside and EndOutside apply to it). A stored
// run opened from outside says so by its spec's Outside.
func (r *Run) Outside() bool { return r.outside != nil }

// TokenMatches reports, in constant time, whether token is the run's write
// token (false for a run not opened from outside).
func (r *Run) TokenMatches(token string) bool {
	if r.outside == nil {
		return false
	}
	h := HashToken(token)
	return subtle.ConstantTimeCompare(h[:], r.outside.tokenHash[:]) == 1
}

// TraceIndex returns the index of the trace named name.
func (r *Run) TraceIndex(name string) (int, bool) {
	for _, t := range r.traces {
		if t.Algo == name {
			return t.Index, true
		}
	}
	return 0, false
}

// AppendOutside appends a batch of records to a run opened from outside:
// the whole batch is checked first, and kept whole or not at all. Each
// record must be one fwlab's pages can read: finite numbers, passes and
// time_s non-negative, k greater than its trace's previous k and at most
// the spec's iters, at most bundle.MaxExtraMetrics extra metrics per trace.
// A failure is a *spec.FieldError naming records[i] and its field (path
// gives the name of the batch's array), or ErrEnded (wrapped) once the run
// has ended.
func (r *Run) AppendOutside(path string, recs []OutsideRecord) error {
	o := r.outside
	if o == nil {
		return fmt.Errorf("run %s: %w", r.ID, ErrNotOutside)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ended != "" {
		return fmt.Errorf("run %s: %w (%s): it takes no more records", r.ID, ErrEnded, o.ended)
	}
	if r.ctx.Err() != nil {
		// cancelled (or the server is closing): it is ending
		return fmt.Errorf("run %s: %w (%s): it takes no more records", r.ID, ErrEnded, r.RunStatus())
	}
	lastK := append([]int(nil), o.lastK...)
	added := map[int]map[string]struct{}{}
	for i := range recs {
		p := path + "[" + strconv.Itoa(i) + "]"
		tr := recs[i].Trace
		if tr < 0 || tr >= len(r.traces) {
			return spec.Errorf(p+".trace", "must be one of the run's %d traces, got %d", len(r.traces), tr)
		}
		rec := &recs[i].Rec
		if err := checkOutsideRecord(p, rec); err != nil {
			return err
		}
		if rec.K <= lastK[tr] {
			return spec.Errorf(p+".k", "must be greater than trace %q's previous k (%d), got %d", r.traces[tr].Algo, lastK[tr], rec.K)
		}
		if rec.K > r.spec.Iters {
			return spec.Errorf(p+".k", "must be at most the run's iters (%d, given when it was opened), got %d", r.spec.Iters, rec.K)
		}
		lastK[tr] = rec.K
		for _, key := range slices.Sorted(maps.Keys(rec.Extra)) {
			if _, ok := o.extras[tr][key]; ok {
				continue
			}
			if added[tr] == nil {
				added[tr] = map[string]struct{}{}
			}
			added[tr][key] = struct{}{}
			if len(o.extras[tr])+len(added[tr]) > bundle.MaxExtraMetrics {
				return spec.Errorf(p+".extra."+key, "a trace may have at most %d extra metrics (each is a chart); this is one more", bundle.MaxExtraMetrics)
			}
		}
	}
	for tr, keys := range added {
		if o.extras[tr] == nil {
			o.extras[tr] = map[string]struct{}{}
		}
		for k := range keys {
			o.extras[tr][k] = struct{}{}
		}
	}
	o.lastK = lastK
	for i := range recs {
		r.traces[recs[i].Trace].keep(recs[i].Rec)
	}
	o.last.Store(time.Now().UnixNano())
	r.beatOutside()
	return nil
}

// checkOutsideRecord checks what the pages need of a record from outside:
// finite numbers (a page's JSON cannot carry NaN or an infinity), passes
// and time non-negative.
func checkOutsideRecord(p string, rec *solver.Record) error {
	finite := func(field string, v float64) error {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return spec.Errorf(p+"."+field, "must be a finite number, got %v", v)
		}
		return nil
	}
	for i := range recordfields.Fields {
		if f := &recordfields.Fields[i]; f.Kind == recordfields.Float {
			if err := finite(f.JSON, f.Float(rec)); err != nil {
				return err
			}
		}
	}
	if rec.Passes < 0 {
		return spec.Errorf(p+".passes", "must be non-negative, got %v", rec.Passes)
	}
	if rec.Time < 0 {
		return spec.Errorf(p+".time_s", "must be non-negative, got %v", rec.Time)
	}
	for _, f := range recordfields.StructOpts {
		if v := f.OptPtr(rec); v != nil {
			if err := finite(f.JSON, *v); err != nil {
				return err
			}
		}
	}
	for k, v := range rec.Extra {
		if err := finite("extra."+k, v); err != nil {
			return err
		}
	}
	return nil
}

// EndOutside ends a run opened from outside: every trace ends with status
// (one of EndStatuses) and message, its summary the figures of its last
// records; cancelled cancels the run as the page's Cancel does. The run's
// end is then written as any run's (persistEnd), and EndOutside returns
// once it is (or the store refused it: the run is then failed). Ending a
// run that has ended is ErrEnded (wrapped).
func (r *Run) EndOutside(status, message string) error {
	if r.outside == nil {
		return fmt.Errorf("run %s: %w", r.ID, ErrNotOutside)
	}
	known := false
	for _, s := range EndStatuses {
		known = known || s == status
	}
	if !known {
		return spec.Errorf("status", "must be one of %v, got %q", EndStatuses, status)
	}
	if n := utf8.RuneCountInString(message); n > runstore.MaxNote || !utf8.ValidString(message) || strings.IndexByte(message, 0) >= 0 {
		return spec.Errorf("message", "must be valid UTF-8 of at most %d characters without NUL, got %d characters", runstore.MaxNote, n)
	}
	if status == solver.StatusCancelled {
		o := r.outside
		o.mu.Lock()
		ended := o.ended
		o.mu.Unlock()
		if ended != "" {
			return fmt.Errorf("run %s: %w (%s)", r.ID, ErrEnded, ended)
		}
		r.Cancel()
		<-r.done
		return nil
	}
	if err := r.endOutside(status, message); err != nil {
		return err
	}
	<-r.done
	return nil
}

// endOutside ends every trace with status and message, once; the last
// trace's finish writes the run's end.
func (r *Run) endOutside(status, message string) error {
	o := r.outside
	o.mu.Lock()
	if o.ended != "" {
		ended := o.ended
		o.mu.Unlock()
		return fmt.Errorf("run %s: %w (%s)", r.ID, ErrEnded, ended)
	}
	o.ended = status
	close(o.endC)
	o.mu.Unlock()
	for _, t := range r.traces {
		sum := t.lastSummary()
		sum.Status, sum.Message = status, message
		t.finish(sum)
	}
	return nil
}

// watchOutside ends the run when its client goes silent for the idle
// timeout (failed), or when it is cancelled or the manager closes
// (cancelled, which a closing manager reports as interrupted).
func (r *Run) watchOutside() {
	defer r.m.wg.Done()
	o := r.outside
	t := time.NewTimer(o.idle)
	defer t.Stop()
	for {
		select {
		case <-o.endC:
			return
		case <-r.ctx.Done():
			msg := "cancelled"
			if reason := r.cancelReason(); reason != "" {
				msg = reason
			}
			_ = r.endOutside(solver.StatusCancelled, msg)
			return
		case <-t.C:
			if left := o.idle - time.Since(time.Unix(0, o.last.Load())); left > 0 {
				t.Reset(left)
				continue
			}
			msg := fmt.Sprintf("failed: no records and no end came for %v (the idle timeout%s): the program logging the run stopped without ending it",
				o.idle, r.m.opts.flag("OutsideIdle"))
			r.mu.Lock()
			r.reason = msg
			r.mu.Unlock()
			_ = r.endOutside(solver.StatusFailed, msg)
			return
		}
	}
}

// cancelReason returns why the run was cancelled when the user did not
// cancel it (the store failed), else "".
func (r *Run) cancelReason() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reason
}
