package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"gonum.org/v1/gonum/mat"

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
// serve session runs it (storing the records in SQLite). The method's own
// pass is the CPU time from the record that ends pass 2 to the one that
// ends pass 6 of a run of 7 that evaluates only at k = 0, 1 and the last,
// over 4, read in a recorder that drops the records. The record path's
// cost is its share of whole runs of the same 7 passes through it, read
// from their CPU profiles (recordPath; per round four runs through each
// writer and six through the session, the mean over all rounds), over 7.
// Read from the same runs, the split does not move with the machine's
// memory traffic, as the difference of two runs' times does: a record
// path of a few per cent of a run whose CPU time varies by some per cent
// from one run to the next (the method reads 50 MB a pass). Metrics:
//
//   - PATH-overhead (jsonl, csv, serve): the record path's CPU time per
//     pass over the method's own pass;
//   - own-floors/pass: the method's own pass over the floor of
//     BenchmarkOCRPass measured in the same round (one gonum product X·W
//     of every training letter's emission scores, 47 535×129 by 129×26,
//     on one core), the median over the rounds;
//   - PATH-floors/pass: own-floors/pass plus the path's CPU time per pass
//     over the floor.
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
	// the floor: X·W with the weights stored features × labels
	f, k, nl := tr.Feat, tr.Labels, tr.Letters()
	rng := rand.New(rand.NewPCG(1, 2))
	w := make([]float64, f*k)
	for i := range w {
		w[i] = rng.NormFloat64()
	}
	X, W, E := mat.NewDense(nl, f, tr.X), mat.NewDense(f, k, w), mat.NewDense(nl, k, nil)
	E.Mul(X, W)
	floor := func() time.Duration {
		best := time.Duration(1 << 62)
		for range 3 {
			c0 := cpuTime()
			E.Mul(X, W)
			best = min(best, cpuTime()-c0)
		}
		return best
	}
	// perPass runs 7 passes through rec and returns the CPU time from the
	// record that ends pass 2 to the one that ends pass 6, over 4: the
	// window holds block steps and their records only (the run evaluates at
	// k = 0, 1 and 7n), read twice, from the recorder itself
	n := len(tr.Words)
	run.Passes, run.Iters = 7, 8*n // the passes end the run; the server bounds its records by the iterations
	perPass := func(rec func(string, int, solver.Record)) time.Duration {
		return window(b, inst, run, 2*n, 6*n, rec) / 4
	}
	drop := func(string, int, solver.Record) {}
	sp := newServePath(b, run)
	var own, fls, os []float64
	var jsonl, csv, served pathTimes
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		o := perPass(drop)
		jsonl.measure(&writerPath{b: b, inst: inst, run: run, format: "jsonl"}, 4)
		csv.measure(&writerPath{b: b, inst: inst, run: run, format: "csv"}, 4)
		served.measure(sp, 6)
		fl := floor()
		own = append(own, float64(o)/float64(fl))
		fls, os = append(fls, float64(fl)), append(os, float64(o))
	}
	b.ReportMetric(median(own), "own-floors/pass")
	for _, p := range []struct {
		name string
		t    *pathTimes
	}{{"jsonl", &jsonl}, {"csv", &csv}, {"serve", &served}} {
		// the path's cost per pass: its share of a run, over the run's 7 passes
		path := float64(p.t.cost()) / 7
		b.ReportMetric(median(own)+path/median(fls), p.name+"-floors/pass")
		b.ReportMetric(path/median(os), p.name+"-overhead")
	}
}

// window runs the spec's one trace on inst through rec and returns the CPU
// time from record k1 to record k2, read in the recorder; the run must go
// past k2 without evaluating in between (evaluations cost more than an
// iteration: they are not the record path).
func window(b *testing.B, inst scenarios.Instance, run spec.Run, k1, k2 int, rec func(string, int, solver.Record)) time.Duration {
	jobs, err := scenarios.Jobs(inst, &run)
	if err != nil {
		b.Fatal(err)
	}
	j := jobs[0]
	var c1, c2 time.Duration
	evaluated := false
	res := runJob(context.Background(), j, solver.RecorderFunc(func(r solver.Record) {
		rec(j.Label, j.Replication, r)
		switch {
		case r.K == k1:
			c1 = cpuTime()
		case r.K == k2:
			c2 = cpuTime()
		case r.K > k1 && r.K < k2 && r.Evaluated():
			evaluated = true
		}
	}))
	if c1 == 0 || c2 == 0 || evaluated {
		b.Fatalf("the run ended %s after %d iterations (%s), or evaluated between %d and %d", res.Summary.Status, res.Summary.Iters, res.Summary.Message, k1, k2)
	}
	return c2 - c1
}

// servePath is a serve session's record path: a run made by a session
// that stores its records in SQLite (every goroutine of the process on one
// core), from its first record until it is done and stored. The session's
// run starts paused at its first record, so that the instance's build is
// done before the profile starts.
type servePath struct {
	b   *testing.B
	run spec.Run
	mgr *session.Manager
}

func newServePath(b *testing.B, run spec.Run) *servePath {
	st, err := store.Open(filepath.Join(b.TempDir(), "runs.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	mgr := session.NewManager(session.Options{Store: st, Workers: 1})
	b.Cleanup(func() { mgr.Close(context.Background()) })
	run.StartPaused = true
	return &servePath{b: b, run: run, mgr: mgr}
}

// pathTimes gathers a record path's CPU time in each run measured.
type pathTimes struct{ path []time.Duration }

// measure profiles runs runs through p.
func (t *pathTimes) measure(p profiledRun, runs int) {
	for range runs {
		t.path = append(t.path, p.measure())
	}
}

// profiledRun is a run through a record path whose measure returns the
// path's CPU time in one run (recordPath).
type profiledRun interface{ measure() time.Duration }

// cost is the record path's CPU time of one run through the session: the
// mean over the runs (each is a count of a hundred or so profile samples).
func (t *pathTimes) cost() time.Duration {
	var sum time.Duration
	for _, d := range t.path {
		sum += d
	}
	return sum / time.Duration(max(len(t.path), 1))
}

func (p *servePath) measure() time.Duration {
	r, err := p.mgr.Create(context.Background(), p.run)
	if err != nil {
		p.b.Fatal(err)
	}
	// paused at the first record of every trace
	for {
		st := r.Status()
		if st.Status == "paused" && st.Records == len(st.Traces) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	return recordPath(p.b, func() {
		if err := r.Resume(); err != nil {
			p.b.Fatal(err)
		}
		<-r.Done()
	})
}

// writerPath is solve's record path with its writer for format: the
// spec's one trace on inst through solve's recorder and writer into a
// buffered io.Discard.
type writerPath struct {
	b      *testing.B
	inst   scenarios.Instance
	run    spec.Run
	format string
}

func (p *writerPath) measure() time.Duration {
	jobs, err := scenarios.Jobs(p.inst, &p.run)
	if err != nil {
		p.b.Fatal(err)
	}
	j := jobs[0]
	w, enc := writerOf(p.format)
	return recordPath(p.b, func() {
		runJob(context.Background(), j, solver.RecorderFunc(func(r solver.Record) { w(j.Label, j.Replication, r) }))
		enc.flush() // the records still held
	})
}

// recordPath runs f under the CPU profiler and returns the record path's
// share of the CPU time f took (every goroutine of the process): the CPU
// time times the share of the profile's samples that are not the method's
// own work. A sample is the path's when it is in a recorder (the session's
// Trace.record, which stores each record, seals the chunks and hands them
// to the store's appender, or solve's writer and its flush of the records
// it still holds) or in a goroutine of the session, the store or the
// runtime (the appender's writes to SQLite, the run's end, the garbage
// collector); every other sample is the method's:
// in the goroutine that runs it or in one it started (a worker pool,
// gonum's parallel products).
func recordPath(b *testing.B, f func()) time.Duration {
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		b.Fatalf("the record path is measured from a CPU profile; run the benchmark without -cpuprofile: %v", err)
	}
	c0 := cpuTime()
	f()
	cpu := cpuTime() - c0
	pprof.StopCPUProfile()
	prof, err := profile.Parse(&buf)
	if err != nil {
		b.Fatal(err)
	}
	var path, all int64
	for _, s := range prof.Sample {
		all += s.Value[0]
		if inRecordPath(s) {
			path += s.Value[0]
		}
	}
	if all == 0 {
		return 0
	}
	return time.Duration(float64(cpu) * float64(path) / float64(all))
}

// inRecordPath reports whether a profile sample is the record path's (see
// recordPath).
func inRecordPath(s *profile.Sample) bool {
	for _, loc := range s.Location {
		for _, l := range loc.Line {
			switch l.Function.Name {
			case "github.com/fwlab/fwlab/internal/session.(*Trace).record",
				"github.com/fwlab/fwlab/cmd/dashboard.writerOf.func1",
				"github.com/fwlab/fwlab/cmd/dashboard.(*recordWriter).flush":
				return true
			}
		}
	}
	if len(s.Location) == 0 {
		return true
	}
	outer := s.Location[len(s.Location)-1].Line
	if len(outer) == 0 {
		return true
	}
	root := outer[len(outer)-1].Function.Name
	return strings.HasPrefix(root, "runtime.") ||
		strings.HasPrefix(root, "github.com/fwlab/fwlab/internal/session.") && root != "github.com/fwlab/fwlab/internal/session.(*Trace).execute" ||
		strings.HasPrefix(root, "github.com/fwlab/fwlab/internal/store.")
}

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
// iterate and weights) and fista, over records 50 000 to 150 000 of a run
// that evaluates only at its first and last iterations. FORMAT-overhead is
// the record path's CPU time over the method's own, as in
// BenchmarkOCRPassRecorded; serve-overhead the same for a serve session
// storing the whole run's 200 000 records in SQLite (servePath), over the
// method's own time for as many iterations. numbers-overhead is what
// writing the record's numbers alone costs (numbersOnly): a floor of any
// text output of the records.
func BenchmarkPolygonRecorded(b *testing.B) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, algo := range []string{"fw", "fista"} {
		b.Run(algo, func(b *testing.B) {
			run := spec.Run{Problem: "toy-polygon", Algorithms: []spec.Algo{{Algo: algo}}, Iters: 200_000, EvalEvery: spec.MaxIters}
			_, inst, _, err := buildJobs(context.Background(), &run)
			if err != nil {
				b.Fatal(err)
			}
			drop := func(string, int, solver.Record) {}
			sp := newServePath(b, run)
			var ovJ, ovC, ovF, own []float64
			var served pathTimes
			for i := 0; i < b.N; i++ {
				o := window(b, inst, run, 50_000, 150_000, drop)
				j := window(b, inst, run, 50_000, 150_000, writer("jsonl"))
				c := window(b, inst, run, 50_000, 150_000, writer("csv"))
				f := window(b, inst, run, 50_000, 150_000, numbersOnly())
				served.measure(sp, 2)
				own = append(own, float64(o)/1e5)
				ovJ = append(ovJ, float64(j)/float64(o)-1)
				ovC = append(ovC, float64(c)/float64(o)-1)
				ovF = append(ovF, float64(f)/float64(o)-1)
			}
			b.ReportMetric(median(own), "own-ns/iter")
			b.ReportMetric(median(ovJ), "jsonl-overhead")
			b.ReportMetric(median(ovC), "csv-overhead")
			// the serve path over the whole run of 200 000 records,
			// against the method's own time for as many iterations
			b.ReportMetric(float64(served.cost())/(2e5*median(own)), "serve-overhead")
			b.ReportMetric(median(ovF), "numbers-overhead")
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
