package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	rtrace "runtime/trace"
	"slices"
	"strings"
	"testing"
	"time"

	xtrace "golang.org/x/exp/trace"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/fwlab/fwlab/internal/recordfields"
	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/session"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/ssvm"
	"github.com/fwlab/fwlab/internal/store"
)

// BenchmarkOCRPassRecorded is BenchmarkOCRPass (internal/ssvm) with the
// record path in the loop: bcfw at λ = 0.01 on the OCR training set, one
// core, 6 251 records a pass, run as solve runs it (the scenario's method,
// solve's recorder and record writer into a buffered io.Discard) and as a
// serve session runs it (storing the records in SQLite), 7 passes a run
// that evaluates only at k = 0, 1 and the last. Each run is measured by
// pathMeter: the record path is the time inside the recorder's calls plus
// the time the run's other goroutines worked, beyond a run whose records
// are dropped; the method's own pass is the time its goroutine worked
// outside the recorder from the record that ends pass 2 to the one that
// ends pass 6, over 4, in the same run. Read from the same run, the ratio
// does not move with the machine's memory traffic, which changes a run's
// time by a tenth or more from one run to the next (the method reads 50 MB
// a pass). Metrics:
//
//   - PATH-overhead (jsonl, csv, serve): the record path's time per pass
//     over the method's own pass, over all the rounds' runs;
//   - own-floors/pass: the own pass of the run whose records are dropped
//     over the floor of BenchmarkOCRPass measured in the same round (one
//     gonum product X·W of every training letter's emission scores,
//     47 535×129 by 129×26, on one core), the median over the rounds;
//   - PATH-floors/pass: the own pass plus the path's time per pass of the
//     path's run, over the round's floor, the median over the rounds.
func BenchmarkOCRPassRecorded(b *testing.B) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	c, err := ssvm.LoadOCR("")
	if err != nil {
		b.Skipf("OCR data: %v", err)
	}
	tr, _, err := c.Split("train")
	if err != nil {
		b.Fatal(err)
	}
	run := spec.Run{Problem: "ssvm-ocr", Params: spec.Params{"lambda": "0.01"}, Algorithms: []spec.Algo{{Algo: "bcfw"}},
		Iters: spec.MaxIters, EvalEvery: spec.MaxIters}
	_, inst, _, err := buildJobs(context.Background(), &run)
	if err != nil {
		b.Fatal(err)
	}
	// the floor: X·W with the weights stored features × labels, gonum's
	// own product (the meter cuts the products of blas64 into tiles), timed
	// as the runs are (the time it worked on one core)
	f, k, nl := tr.Feat, tr.Labels, tr.Letters()
	rng := rand.New(rand.NewPCG(1, 2))
	w := make([]float64, f*k)
	for i := range w {
		w[i] = rng.NormFloat64()
	}
	e := make([]float64, nl*k)
	floor := func() time.Duration {
		best := time.Duration(1 << 62)
		for range 3 {
			c0 := time.Now()
			gonum.Implementation{}.Dgemm(blas.NoTrans, blas.NoTrans, nl, k, f, 1, tr.X, f, w, k, 0, e, k)
			best = min(best, time.Since(c0))
		}
		return best
	}
	// 7 passes, the window from the end of pass 2 to the end of pass 6
	// holding block steps and their records only
	n := len(tr.Words)
	run.Passes, run.Iters = 7, 8*n // the passes end the run; the server bounds its records by the iterations
	m := newPathMeter(b, inst, run, 2*n, 6*n, 7, 4)
	paths := []struct {
		name string
		run  func() pathRun
	}{
		{"jsonl", func() pathRun { return m.writer("jsonl") }},
		{"csv", func() pathRun { return m.writer("csv") }},
		{"serve", m.served},
	}
	var own []float64
	stats := make([]pathStats, len(paths))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		base := m.dropped()
		floor := float64(floor())
		own = append(own, float64(base.own(m))/floor)
		for j, p := range paths {
			stats[j].add(m, p.run(), base, floor)
		}
	}
	b.ReportMetric(median(own), "own-floors/pass")
	for j, p := range paths {
		b.ReportMetric(median(stats[j].floors), p.name+"-floors/pass")
		b.ReportMetric(stats[j].overhead(), p.name+"-overhead")
	}
}

// pathStats gathers one record path's runs (pathMeter).
type pathStats struct {
	path, own float64   // sums over the runs: the path's time per unit of work, and the method's own
	floors    []float64 // each run's own time plus its path's, per unit of work, over its round's floor
}

// add adds run r of the path, measured beside base (a run whose records
// were dropped) and floor (the round's floor, 0: none).
func (s *pathStats) add(m *pathMeter, r, base pathRun, floor float64) {
	path, own := float64(r.path(base))/m.runUnits, float64(r.own(m))
	s.path += path
	s.own += own
	if floor > 0 {
		s.floors = append(s.floors, (own+path)/floor)
	}
}

// overhead is the path's time over the method's own, over all the runs (a
// collection falls in one run or another, and counts in full).
func (s *pathStats) overhead() float64 { return s.path / s.own }

// pathMeter measures record paths on whole runs of one spec's one trace,
// each run under the execution tracer, its recorder's calls timed
// (timedRecorder).
//
// The record path of a run is the time inside its recorder's calls (less
// the clock's own cost: the time inside the calls of a recorder that does
// nothing), plus the time the run's other goroutines ran beyond those of a
// run whose records are dropped: the session's and the store's (the run's
// end, the writes to SQLite) and the collector's. The method's own time is
// the time its goroutine ran less the time inside the recorder's calls,
// read in the window from record k1 to record k2, which must hold no
// evaluation (an evaluation costs more than an iteration and is not the
// record path). A whole run is runUnits of work, the window winUnits
// (passes, or iterations). The times are on one core (GOMAXPROCS 1): what
// ran is what worked.
//
// Nothing is sampled: every figure is read from clocks in the run (the
// execution trace records when each goroutine runs and makes system
// calls). This replaced CPU profiles, whose hundred samples a second
// found the recorder in some tens of samples a run: a result moved by a
// fifth of itself, and samples in the scheduler were counted as the path.
// The method works on its own goroutine only: gonum's products, which
// would go parallel on goroutines of their own, are cut into tiles it
// computes serially (serialProducts).
type pathMeter struct {
	b                  *testing.B
	inst               *timedInstance
	run                spec.Run
	runUnits, winUnits float64
	mgr                *session.Manager // the serve path: a session storing its runs in SQLite
}

// pathRun is what one run measured (pathMeter).
type pathRun struct {
	calls  int           // the recorder's calls
	inCall time.Duration // time inside them (and in a writer's last flush)
	others time.Duration // time the run's other goroutines worked (readGoTimes)
	win    struct {
		seen      bool
		evaluated bool
		method    time.Duration // time the method's goroutine ran from record k1 to record k2
		inCall    time.Duration // time inside the recorder's calls in between
	}
	clock time.Duration // the time inside a call of a recorder that does nothing: the clock's cost
}

// own is the method's own time per unit of work, read in the window.
func (r pathRun) own(m *pathMeter) time.Duration {
	return time.Duration(float64(r.win.method-r.win.inCall) / m.winUnits)
}

// path is the record path's time over the whole run: base is a run of the
// same spec whose records were dropped.
func (r pathRun) path(base pathRun) time.Duration {
	return r.inCall - time.Duration(r.calls)*base.clock + r.others - base.others
}

func newPathMeter(b *testing.B, inst scenarios.Instance, run spec.Run, k1, k2 int, runUnits, winUnits float64) *pathMeter {
	serialProducts(b)
	st, err := store.Open(filepath.Join(b.TempDir(), "runs.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	mgr := session.NewManager(session.Options{Store: st, Workers: 1})
	b.Cleanup(func() { mgr.Close(context.Background()) })
	return &pathMeter{b: b, inst: &timedInstance{Instance: inst, k1: k1, k2: k2}, run: run, runUnits: runUnits, winUnits: winUnits, mgr: mgr}
}

// dropped measures a run whose records are dropped: the method alone, and
// the clock's cost per call.
func (m *pathMeter) dropped() pathRun {
	r := m.direct(func(string, int, solver.Record) {}, nil)
	r.clock = r.inCall / time.Duration(max(r.calls, 1))
	return r
}

// writer measures a run through solve's recorder and its record writer
// for format.
func (m *pathMeter) writer(format string) pathRun {
	w, enc := writerOf(format)
	return m.direct(w, func() {
		if err := enc.flush(); err != nil {
			m.b.Fatal(err)
		}
	})
}

// direct measures a run of the spec's trace through rec, as solve runs it,
// then flush (the records a writer still holds), timed as a call.
func (m *pathMeter) direct(rec func(string, int, solver.Record), flush func()) pathRun {
	jobs, err := scenarios.Jobs(m.inst.Instance, &m.run)
	if err != nil {
		m.b.Fatal(err)
	}
	j := jobs[0]
	var r pathRun
	m.traced(&r, func() {
		t := m.inst.timed(&r, solver.RecorderFunc(func(rec0 solver.Record) { rec(j.Label, j.Replication, rec0) }))
		runJob(context.Background(), j, t)
		if flush != nil {
			c0 := time.Now()
			flush()
			r.inCall += time.Since(c0)
		}
	})
	return r
}

// served measures a run made by the session, from its creation until it
// is done and stored.
func (m *pathMeter) served() pathRun {
	var r pathRun
	sp := m.run
	sp.Problem = m.inst.register(m.b, m.run.Problem)
	m.traced(&r, func() {
		run, err := m.mgr.Create(context.Background(), sp)
		if err != nil {
			m.b.Fatal(err)
		}
		<-run.Done()
		if st := run.Status(); st.Status != "done" {
			m.b.Fatalf("the session's run ended %s: %s", st.Status, st.Message)
		}
	})
	return r
}

// Marks the goroutines log in a measured run's execution trace.
const (
	markCategory = "fwlab-bench"
	markHarness  = "harness" // the goroutine that measures
	markK1       = "k1"      // the method's goroutine, at record k1
	markK2       = "k2"      // the same, at record k2
)

// traced runs f, which makes one run through the instance's timed methods
// and recorders, under the execution tracer, and fills r's goroutine times
// from the trace. It fails the benchmark unless the run went past the
// window without evaluating in it.
func (m *pathMeter) traced(r *pathRun, f func()) {
	var buf bytes.Buffer
	if err := rtrace.Start(&buf); err != nil {
		m.b.Fatalf("the record path is measured from an execution trace; run the benchmark without -trace: %v", err)
	}
	rtrace.Log(context.Background(), markCategory, markHarness)
	m.inst.next = r
	f()
	rtrace.Stop()
	if !r.win.seen || r.win.evaluated {
		m.b.Fatalf("the run did not reach record %d, or evaluated between records %d and %d", m.inst.k2, m.inst.k1, m.inst.k2)
	}
	gt, err := readGoTimes(&buf)
	if err != nil {
		m.b.Fatal(err)
	}
	r.win.method, r.others = gt.window, gt.others
}

// goTimes is what an execution trace says of a measured run (traced): the
// time the method's goroutine ran between its marks k1 and k2, and the
// time every other goroutine but the harness and the tracer's worked.
type goTimes struct {
	window, others time.Duration
}

// readGoTimes reads a measured run's execution trace. A goroutine works
// while it runs, and while it is in a system call that holds the core: on
// one core, the part of a system call during which another goroutine runs
// is time it waited (for the disk, say), not worked.
func readGoTimes(r io.Reader) (goTimes, error) {
	rd, err := xtrace.NewReader(r)
	if err != nil {
		return goTimes{}, err
	}
	type span struct {
		g        xtrace.GoID
		from, to xtrace.Time
		sys      bool // in a system call
	}
	type open struct {
		at  xtrace.Time
		sys bool
	}
	since := map[xtrace.GoID]open{} // the executing goroutines' current spans
	var spans []span
	var end xtrace.Time
	marks := map[string]xtrace.Time{}    // when a mark was logged
	markedBy := map[string]xtrace.GoID{} // which goroutine logged it
	tracer := map[xtrace.GoID]bool{}     // the tracer's own goroutines
	for {
		ev, err := rd.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			return goTimes{}, err
		}
		end = ev.Time()
		switch ev.Kind() {
		case xtrace.EventLog:
			if l := ev.Log(); l.Category == markCategory {
				marks[l.Message], markedBy[l.Message] = ev.Time(), ev.Goroutine()
			}
		case xtrace.EventStateTransition:
			st := ev.StateTransition()
			if st.Resource.Kind != xtrace.ResourceGoroutine {
				continue
			}
			g := st.Resource.Goroutine()
			from, to := st.Goroutine()
			if o, ok := since[g]; ok && from.Executing() {
				spans = append(spans, span{g, o.at, ev.Time(), o.sys})
				delete(since, g)
			}
			if to.Executing() {
				since[g] = open{ev.Time(), to == xtrace.GoSyscall}
			}
			if _, ok := tracer[g]; !ok {
				for f := range st.Stack.Frames() { // innermost first: the last is where g started
					tracer[g] = strings.HasPrefix(f.Func, "runtime/trace.") || strings.HasPrefix(f.Func, "runtime.trace")
				}
			}
		}
	}
	for g, o := range since { // executing when the trace stopped (the harness)
		spans = append(spans, span{g, o.at, end, o.sys})
	}
	method, ok1 := markedBy[markK1]
	harness, ok2 := markedBy[markHarness]
	if !ok1 || !ok2 || markedBy[markK2] != method {
		return goTimes{}, fmt.Errorf("the execution trace lacks the run's marks (%v)", markedBy)
	}
	overlap := func(a0, a1, b0, b1 xtrace.Time) time.Duration {
		if from, to := max(a0, b0), min(a1, b1); to > from {
			return to.Sub(from)
		}
		return 0
	}
	var running []span
	for _, s := range spans {
		if !s.sys {
			running = append(running, s)
		}
	}
	t1, t2 := marks[markK1], marks[markK2]
	var gt goTimes
	for _, s := range spans {
		d := s.to.Sub(s.from)
		if s.sys {
			for _, o := range running {
				d -= overlap(s.from, s.to, o.from, o.to)
			}
			d = max(d, 0)
		}
		switch s.g {
		case method:
			if !s.sys {
				gt.window += overlap(s.from, s.to, t1, t2)
			}
		case harness:
		default:
			if !tracer[s.g] {
				gt.others += d
			}
		}
	}
	return gt, nil
}

// serialProducts makes gonum's matrix products (the evaluations' X·Wᵀ)
// run on the calling goroutine until the benchmark ends: a product large
// enough to go parallel is computed as tiles too small to (gonum goes
// parallel from four blocks of 64×64), so that a method works on its own
// thread only (pathMeter).
func serialProducts(b *testing.B) {
	prev := blas64.Implementation()
	blas64.Use(serialGemm{Float64: prev})
	b.Cleanup(func() { blas64.Use(prev) })
}

// serialGemm is a BLAS whose Dgemm computes C in tiles of at most
// 128×64, one after another.
type serialGemm struct{ blas.Float64 }

func (g serialGemm) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	const tm, tn = 128, 64
	for i := 0; i < m; i += tm {
		mi := min(tm, m-i)
		ai := a[i:] // columns i… of Aᵀ's storage
		if tA == blas.NoTrans {
			ai = a[i*lda:] // rows i… of A
		}
		for j := 0; j < n; j += tn {
			nj := min(tn, n-j)
			bj := b[j:] // columns j… of B
			if tB != blas.NoTrans {
				bj = b[j*ldb:] // rows j… of Bᵀ's storage
			}
			g.Float64.Dgemm(tA, tB, mi, nj, k, alpha, ai, lda, bj, ldb, beta, c[i*ldc+j:], ldc)
		}
	}
}

// timedInstance is an instance whose methods run measured: as a scenario
// of its own (register), a session's run of it is measured like a run of
// solve's (pathMeter.served).
type timedInstance struct {
	scenarios.Instance
	k1, k2 int
	next   *pathRun // where the next method run by a session is measured
	names  map[string]string
}

// register makes the scenario whose instance is i (a copy of problem's,
// renamed) and returns its name.
func (i *timedInstance) register(b *testing.B, problem string) string {
	if name, ok := i.names[problem]; ok {
		return name
	}
	sc, ok := scenarios.Lookup(problem)
	if !ok {
		b.Fatalf("no scenario %q", problem)
	}
	timed := *sc
	timed.Name = fmt.Sprintf("timed-%s-%p", problem, i)
	timed.Build = func(context.Context, scenarios.Values, int64) (scenarios.Instance, error) { return i, nil }
	scenarios.Register(&timed)
	if i.names == nil {
		i.names = map[string]string{}
	}
	i.names[problem] = timed.Name
	return timed.Name
}

// Method is the instance's method, run measured into i.next.
func (i *timedInstance) Method(a spec.Algo, lim solver.Limits, seed int64) (solver.Method, error) {
	inner, err := i.Instance.Method(a, lim, seed)
	if err != nil {
		return nil, err
	}
	return timedMethod{i: i, inner: inner}, nil
}

// timedMethod runs a method with its recorder's calls timed into the
// instance's next pathRun.
type timedMethod struct {
	i     *timedInstance
	inner solver.Method
}

func (t timedMethod) Run(ctx context.Context, rec solver.Recorder) (solver.Result, error) {
	return t.inner.Run(ctx, t.i.timed(t.i.next, rec))
}

// timed returns rec with its calls timed into r.
func (i *timedInstance) timed(r *pathRun, rec solver.Recorder) solver.Recorder {
	t := &timedRecorder{rec: rec, k1: i.k1, k2: i.k2, r: r}
	if _, ok := rec.(solver.EvalRequester); ok {
		return timedEvalRecorder{t}
	}
	return t
}

// timedRecorder times the calls of a recorder (their wall time: a call is
// short, and on one core it is the method's goroutine's work) and marks
// records k1 and k2 in the execution trace.
type timedRecorder struct {
	rec    solver.Recorder
	k1, k2 int
	r      *pathRun
	inCall time.Duration // at record k1
}

func (t *timedRecorder) Record(rec solver.Record) {
	c0 := time.Now()
	t.rec.Record(rec)
	t.r.inCall += time.Since(c0)
	t.r.calls++
	switch {
	case rec.K == t.k1:
		t.inCall = t.r.inCall
		rtrace.Log(context.Background(), markCategory, markK1)
	case rec.K == t.k2:
		rtrace.Log(context.Background(), markCategory, markK2)
		t.r.win.seen, t.r.win.inCall = true, t.r.inCall-t.inCall
	case rec.K > t.k1 && rec.K < t.k2 && rec.Evaluated():
		t.r.win.evaluated = true
	}
}

// timedEvalRecorder is a timedRecorder of a recorder that asks for
// evaluations (the session's).
type timedEvalRecorder struct{ *timedRecorder }

func (t timedEvalRecorder) EvalNext() bool { return t.rec.(solver.EvalRequester).EvalNext() }

// numbersOnly is a recorder that only writes each record's numbers (its
// passes, time and step size, and its metrics) as solve's JSON writes
// them, into a reused buffer: the part of the record path that no text
// format can leave out.
func numbersOnly() func(string, int, solver.Record) {
	buf := make([]byte, 0, 64)
	return func(_ string, _ int, r solver.Record) {
		buf = solver.AppendJSONFloat(buf[:0], r.Passes)
		buf = solver.AppendJSONFloat(buf, r.Time)
		buf = solver.AppendJSONFloat(buf, r.Gamma)
		for k, v := range r.Extra {
			if !recordfields.IsSlot(k) {
				buf = solver.AppendJSONFloat(buf, v)
			}
		}
	}
}

// writer is solve's recorder with its record writer for format, into a
// buffered io.Discard (a window of records is far longer than the writer
// holds: what it still holds at the window's ends is alike).
func writer(format string) func(string, int, solver.Record) {
	w, _ := writerOf(format)
	return w
}

// writerOf is writer and its record writer, whose held records
// enc.flush encodes.
func writerOf(format string) (w func(string, int, solver.Record), enc *recordWriter) {
	bw := bufio.NewWriterSize(io.Discard, 1<<16)
	enc = newRecordWriter(bw, format, false)
	progress := newProgress(io.Discard)
	return func(algo string, rep int, r solver.Record) {
		enc.write(algo, rep, r)
		progress.show(algo, rep, r)
	}, enc
}

// BenchmarkPolygonRecorded: the record path against the method's own time
// on the toy polygon (its default instance, the target beyond an edge),
// for fw (which zig-zags, every record carrying the teaching view's
// iterate and weights) and fista, runs of 200 000 iterations that evaluate
// only at their first and last, measured as BenchmarkOCRPassRecorded
// measures them (pathMeter), the method's own time read over records
// 50 000 to 150 000. PATH-overhead (jsonl, csv, serve) is the record
// path's time per iteration over the method's own; numbers-overhead is
// what writing the record's numbers alone costs (numbersOnly): a floor of
// any text output of the records. own-ns/iter is the method's own time per
// iteration in a run whose records are dropped. The median over the
// rounds.
func BenchmarkPolygonRecorded(b *testing.B) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, algo := range []string{"fw", "fista"} {
		b.Run(algo, func(b *testing.B) {
			run := spec.Run{Problem: "toy-polygon", Algorithms: []spec.Algo{{Algo: algo}}, Iters: 200_000, EvalEvery: spec.MaxIters}
			_, inst, _, err := buildJobs(context.Background(), &run)
			if err != nil {
				b.Fatal(err)
			}
			m := newPathMeter(b, inst, run, 50_000, 150_000, 200_000, 100_000)
			paths := []struct {
				name string
				run  func() pathRun
			}{
				{"jsonl", func() pathRun { return m.writer("jsonl") }},
				{"csv", func() pathRun { return m.writer("csv") }},
				{"numbers", func() pathRun { return m.direct(numbersOnly(), nil) }},
				{"serve", m.served},
			}
			var own []float64
			stats := make([]pathStats, len(paths))
			for i := 0; i < b.N; i++ {
				base := m.dropped()
				own = append(own, float64(base.own(m)))
				for j, p := range paths {
					stats[j].add(m, p.run(), base, 0)
				}
			}
			b.ReportMetric(median(own), "own-ns/iter")
			for j, p := range paths {
				b.ReportMetric(stats[j].overhead(), p.name+"-overhead")
			}
		})
	}
}

func median(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// TestSerialGemm holds serialGemm to gonum's own product, every transpose,
// on sizes that cut into whole and partial tiles.
func TestSerialGemm(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	fill := func(n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		return x
	}
	ref := blas64.Implementation()
	for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
		for _, tB := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			m, n, k := 300, 150, 37
			lda, ldb := k+3, n+5 // A m×k, B k×n, with padding
			if tA != blas.NoTrans {
				lda = m + 2 // stored k×m
			}
			if tB != blas.NoTrans {
				ldb = k + 1 // stored n×k
			}
			rowsA, rowsB := m, k
			if tA != blas.NoTrans {
				rowsA = k
			}
			if tB != blas.NoTrans {
				rowsB = n
			}
			a, b := fill(rowsA*lda), fill(rowsB*ldb)
			ldc := n + 7
			c0 := fill(m * ldc)
			want, got := append([]float64(nil), c0...), append([]float64(nil), c0...)
			ref.Dgemm(tA, tB, m, n, k, 1.5, a, lda, b, ldb, 0.5, want, ldc)
			serialGemm{Float64: ref}.Dgemm(tA, tB, m, n, k, 1.5, a, lda, b, ldb, 0.5, got, ldc)
			for i := range want {
				if d := math.Abs(want[i] - got[i]); d > 1e-12*(1+math.Abs(want[i])) {
					t.Fatalf("tA %c tB %c: C[%d] = %v, gonum %v", tA, tB, i, got[i], want[i])
				}
			}
		}
	}
}
