package bundle

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"sync"
	"time"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/store"
)

// Put stores a decoded bundle as a new run and returns its id (a new one:
// ids are never taken from a bundle). A bundle without a status is done;
// one of a run that was live (queued, running, paused) is interrupted. A
// failure part-way removes what was stored; a process killed part-way
// leaves a run that the store's next owner marks interrupted.
func Put(ctx context.Context, st store.Backend, b *Bundle) (string, error) {
	status := finalStatus(b.Status)
	r := storedRun(b)
	// running while the records go in: an import cut short is marked
	// interrupted, not taken for a whole run
	r.Status = store.StatusRunning
	for i, t := range b.Traces {
		r.Traces = append(r.Traces, store.Trace{Index: i, Algo: t.Algo, Replication: t.Replication, Seed: t.Seed})
	}
	id, err := st.PutRun(ctx, r)
	if err != nil {
		return "", err
	}
	fail := func(err error) (string, error) {
		if _, derr := st.Delete(context.WithoutCancel(ctx), id); derr != nil {
			return "", fmt.Errorf("%w (and removing the partial run %s: %v)", err, id, derr)
		}
		return "", err
	}
	const chunk = 4096
	end := store.Ending{Traces: map[int]store.TraceResult{}, Status: status, Ended: b.Ended}
	for i, t := range b.Traces {
		for lo := 0; lo < len(t.Records); lo += chunk {
			if err := st.AppendRecords(ctx, id, i, t.Records[lo:min(lo+chunk, len(t.Records))]); err != nil {
				return fail(err)
			}
		}
		if t.Summary != nil || t.Panels != nil || t.PanelsError != "" || t.Status != "" {
			end.Traces[i] = store.TraceResult{Status: traceStatus(&t, status), Summary: t.Summary, Panels: t.Panels, PanelsError: t.PanelsError}
		}
	}
	if err := st.EndRun(ctx, id, end); err != nil {
		return fail(err)
	}
	return id, nil
}

// Imported is what Import did.
type Imported struct {
	ID       string // the run: new, or the one stored before from the same bundle
	Existing bool   // the bundle had been imported before: nothing new was kept
	Problem  string
	Traces   int
	Records  int
	Digest   string // the bundle's content digest (see contentDigest)
}

// Import reads one bundle from r straight into the store as a new run,
// decoding it as a stream (a few thousand records at a time, whatever its
// size) and checking it as Decode does; it returns the run's id. A bundle
// imported before (the same content digest) is not stored twice: the first
// run's id comes back with Existing set. A bundle without a status is done;
// one of a run that was live is interrupted. Until it ends the run is not
// visible; a failure (a malformed bundle, the reader's error, ctx's end)
// removes what was stored and returns the error (a *Error naming the path
// of the field for a malformed bundle).
func Import(ctx context.Context, st store.Importer, r io.Reader) (*Imported, error) {
	im, err := st.StreamImport(ctx)
	if err != nil {
		return nil, err
	}
	ss := newStoreSink(ctx, im)
	d := newDecoder(r, ss)
	d.skipAggregates, d.keepForms = true, true
	fail := func(err error) (*Imported, error) {
		ss.finish()
		if aerr := im.Abort(context.WithoutCancel(ctx)); aerr != nil {
			return nil, fmt.Errorf("%w (and %v)", err, aerr)
		}
		return nil, err
	}
	b, err := d.bundle()
	if err != nil {
		return fail(err)
	}
	if err := ss.finish(); err != nil {
		return fail(err)
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	b.Traces = ss.traces
	digest, err := ss.dig.sum(b)
	if err != nil {
		return fail(err)
	}
	run := storedRun(b)
	run.Status = finalStatus(b.Status)
	run.Ended = b.Ended
	id, existing, err := im.Commit(ctx, run, digest)
	if err != nil {
		return fail(err)
	}
	out := &Imported{ID: id, Existing: existing, Problem: b.Spec.Problem, Traces: len(ss.traces), Digest: digest}
	for _, m := range d.metas {
		out.Records += m.n
	}
	return out, nil
}

// storedRun is a bundle's run as the store keeps it (without traces,
// status or end).
func storedRun(b *Bundle) *store.Run {
	r := &store.Run{
		Spec:     b.Spec,
		Instance: store.Instance{Dim: b.Info.Dim, Samples: b.Info.Samples, Blocks: b.Info.Blocks, FStar: b.Info.FStar, Panels: b.Info.Panels},
		Version:  b.Version,
		Name:     b.Name,
		Note:     b.Note,
		Created:  b.Created,
	}
	if r.Created.IsZero() {
		// a bundle from solve records when it ended
		r.Created = b.Ended
	}
	if r.Created.IsZero() {
		r.Created = time.Now()
	}
	return r
}

// finalStatus is the status a bundle's run is stored with: done when it
// has none, interrupted when it was live (nothing runs it here).
func finalStatus(s string) string {
	switch {
	case s == "":
		return store.StatusDone
	case store.Live(s):
		return store.StatusInterrupted
	}
	return s
}

// storeSink writes a bundle's traces into an import as they are read,
// keeping only their descriptions, and computes the bundle's content
// digest. As a live run's Appender does, it writes from a goroutine of its
// own, a batch of records at a time, while the records that follow are
// read; a third goroutine digests each batch once written. The import's
// calls are made by the writer alone, the digest's by the digester alone,
// each in the order the decoder made them, with at most sinkChunks chunks
// of records on their way. The first failure stops the writing (and the
// digest), and the decoder at its next call.
//
// The digest encodes each record as Encode writes it, with the numbers
// the reader read in the encoder's form copied as read (numberForms): only
// the others are written again.
type storeSink struct {
	ctx    context.Context
	im     store.RunImport
	dig    *contentDigest // read by the caller after finish
	traces []Trace        // without records

	ops      chan sinkOp       // to the writer
	digests  chan sinkOp       // from the writer to the digester
	free     chan *recordBatch // batches for the decoder to fill
	done     chan struct{}     // closed when both have ended
	finished bool

	mu  sync.Mutex
	err error // the first failure
}

// sinkOp is one call of the import and what it adds to the digest; batch
// (if any) goes back to free once both have run (or been skipped after a
// failure).
type sinkOp struct {
	call   func() error
	digest func()
	batch  *recordBatch
}

// sinkChunks is how many chunks of records may be on their way (about
// 0.7 MB each): enough that neither goroutine waits for the other at a
// hiccup of the machine's scheduling.
const sinkChunks = 8

func newStoreSink(ctx context.Context, im store.RunImport) *storeSink {
	s := &storeSink{ctx: ctx, im: im, dig: newContentDigest(), ops: make(chan sinkOp, 2*sinkChunks), digests: make(chan sinkOp, 2*sinkChunks),
		free: make(chan *recordBatch, sinkChunks), done: make(chan struct{})}
	for range sinkChunks {
		s.free <- nil
	}
	go s.write()
	go s.digest()
	return s
}

func (s *storeSink) write() {
	defer close(s.digests)
	for op := range s.ops {
		if s.failure() == nil {
			if err := op.call(); err != nil {
				s.fail(err)
			}
		}
		s.digests <- op
	}
}

func (s *storeSink) digest() {
	defer close(s.done)
	for op := range s.digests {
		if op.digest != nil && s.failure() == nil {
			op.digest()
		}
		if op.batch != nil {
			op.batch.reset()
			s.free <- op.batch
		}
	}
}

func (s *storeSink) fail(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
}

func (s *storeSink) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// submit hands a call to the writer.
func (s *storeSink) submit(op sinkOp) error {
	if err := s.failure(); err != nil {
		return err
	}
	select {
	case s.ops <- op:
		return nil
	case <-s.ctx.Done():
		if op.batch != nil {
			s.free <- op.batch
		}
		return s.ctx.Err()
	}
}

// finish waits for the writer and the digester to end and returns the
// first failure. The import and the digest are the caller's again.
func (s *storeSink) finish() error {
	if !s.finished {
		s.finished = true
		close(s.ops)
		<-s.done
	}
	return s.failure()
}

func (s *storeSink) beginTrace(i int) error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	s.traces = append(s.traces, Trace{})
	return s.submit(sinkOp{call: func() error { return s.im.AddTrace(s.ctx, store.Trace{Index: i}) }})
}

// records hands b to the writer and the digester as it is (no copy) and
// returns a free batch (empty, or nil) for the decoder to fill next.
func (s *storeSink) records(i int, b *recordBatch) (*recordBatch, error) {
	if err := s.failure(); err != nil {
		return nil, err
	}
	var next *recordBatch
	select {
	case next = <-s.free:
	case <-s.ctx.Done():
		return nil, s.ctx.Err()
	}
	return next, s.submit(sinkOp{call: func() error { return s.im.AppendRecords(s.ctx, i, b.recs) },
		digest: func() {
			for j := range b.recs {
				s.dig.record(&b.recs[j], &b.forms, j)
			}
		}, batch: b})
}

func (s *storeSink) endTrace(i int, t *Trace) error {
	s.traces[i] = *t
	res := store.TraceResult{Summary: t.Summary, Panels: t.Panels, PanelsError: t.PanelsError}
	if t.Status != "" || t.Summary != nil && t.Summary.Status != "" {
		res.Status = traceStatus(t, "")
	}
	tr := store.Trace{Index: i, Algo: t.Algo, Replication: t.Replication, Seed: t.Seed}
	return s.submit(sinkOp{call: func() error { return s.im.EndTrace(s.ctx, tr, res) }, digest: func() { s.dig.endTrace(i) }})
}

// traceStatus is a trace's status: its own, its summary's, or the run's;
// a live one is interrupted.
func traceStatus(t *Trace, run string) string {
	switch {
	case store.Live(t.Status):
		return store.StatusInterrupted
	case t.Status != "":
		return t.Status
	case t.Summary != nil && t.Summary.Status != "":
		return t.Summary.Status
	}
	return run
}

// FromStore returns a stored run as a bundle, every record included.
func FromStore(ctx context.Context, st store.Backend, id string) (*Bundle, error) {
	r, err := st.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	b := fromRun(r)
	for i, t := range r.Traces {
		if b.Traces[i].Records, err = st.Records(ctx, id, t.Index, 0, -1); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// WriteStored writes a stored run as a bundle to w, reading its records
// from the store as they are written (a few batches at a time), so that
// exporting a long run does not hold it in memory.
func WriteStored(ctx context.Context, w io.Writer, st store.Backend, id string) error {
	r, err := st.Get(ctx, id)
	if err != nil {
		return err
	}
	b := fromRun(r)
	return encode(w, b, func(i int, emit func(*solver.Record) error) error {
		return st.EachRecord(ctx, id, r.Traces[i].Index, 0, -1, func(_ int, rec *solver.Record) error { return emit(rec) })
	})
}

// fromRun is a stored run as a bundle without its records.
func fromRun(r *store.Run) *Bundle {
	b := &Bundle{
		Version: r.Version,
		Status:  r.Status,
		Created: r.Created,
		Ended:   r.Ended,
		Name:    store.GivenName(r), // a default name comes back on import
		Note:    r.Note,
		Spec:    r.Spec,
		Info:    Info{Dim: r.Instance.Dim, Samples: r.Instance.Samples, Blocks: r.Instance.Blocks, FStar: r.Instance.FStar, Panels: r.Instance.Panels},
	}
	for _, t := range r.Traces {
		b.Traces = append(b.Traces, Trace{Algo: t.Algo, Replication: t.Replication, Seed: t.Seed, Status: t.Status,
			Summary: t.Summary, Panels: t.Panels, PanelsError: t.PanelsError})
	}
	return b
}

// ProgramVersion describes the running fwlab for a bundle's "version": the
// module version (or "(devel)") and, when the build knows it, the commit,
// marked "+dirty" for a modified work tree.
func ProgramVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		v += " " + rev
		if dirty {
			v += "+dirty"
		}
	}
	return v
}
