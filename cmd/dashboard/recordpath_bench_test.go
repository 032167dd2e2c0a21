package main

import (
	"bufio"
	"context"
	"io"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

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
// core, run as solve runs it (the scenario's method, solve's recorder and
// record writer into a buffered io.Discard), 6 251 records a pass. A pass's
// CPU time is read in the recorder at the ends of passes 2 and 6 of a run of
// 7 that evaluates only at k = 0, 1 and the last (so the window holds block
// steps and their records), for a recorder that drops the records (the
// method's own time) and for solve's JSON Lines and CSV writers, the three
// interleaved in every round. Metrics, medians
// over the benchmark's rounds:
//
//   - FORMAT-floors/pass: a recorded pass over the floor of BenchmarkOCRPass
//     measured in the same round (one gonum product X·W of every training
//     letter's emission scores, 47 535×129 by 129×26, on one core);
//   - FORMAT-overhead: the record path's CPU time over the method's own
//     (the pass with FORMAT over the pass with no writer, minus 1);
//   - own-floors/pass: the method's own pass over the floor;
//   - serve-floors/pass and serve-overhead: the same for a serve session
//     storing the records in SQLite: the whole run's CPU time through the
//     session from its first record less the same run's with its records
//     dropped (servePath), per pass, added to the method's own pass; each
//     of the two is the least over the rounds.
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
	sp := newServePath(b, inst, run)
	var own, jl, cs, fls, os []float64
	var ovJ, ovC []float64
	var served pathTimes
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		o := perPass(drop)
		j := perPass(writer("jsonl"))
		s := perPass(writer("csv"))
		served.measure(sp)
		fl := floor()
		own = append(own, float64(o)/float64(fl))
		jl = append(jl, float64(j)/float64(fl))
		cs = append(cs, float64(s)/float64(fl))
		fls, os = append(fls, float64(fl)), append(os, float64(o))
		ovJ = append(ovJ, float64(j)/float64(o)-1)
		ovC = append(ovC, float64(s)/float64(o)-1)
	}
	// the serve path's cost per pass: the whole run through a session and
	// SQLite, less the same run with its records dropped (the evaluations
	// are the same in both), over its 7 passes
	path := float64(served.cost()) / 7
	b.ReportMetric(median(own), "own-floors/pass")
	b.ReportMetric(median(jl), "jsonl-floors/pass")
	b.ReportMetric(median(cs), "csv-floors/pass")
	b.ReportMetric((median(os)+path)/median(fls), "serve-floors/pass")
	b.ReportMetric(median(ovJ), "jsonl-overhead")
	b.ReportMetric(median(ovC), "csv-overhead")
	b.ReportMetric(path/median(os), "serve-overhead")
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

// servePath measures a serve session's record path: the CPU time of a run
// made by a session that stores its records in SQLite, from its first
// record until it is done and stored (every goroutine of the process, on
// one core), less the same run through solve's path with its records
// dropped (the method and its evaluations), from its first record too. The
// session's run starts paused at its first record, so that the instance's
// build (the session builds it from the spec) is done before the clock
// starts.
type servePath struct {
	b    *testing.B
	inst scenarios.Instance
	run  spec.Run
	mgr  *session.Manager
}

func newServePath(b *testing.B, inst scenarios.Instance, run spec.Run) *servePath {
	st, err := store.Open(filepath.Join(b.TempDir(), "runs.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	mgr := session.NewManager(session.Options{Store: st, Workers: 1})
	b.Cleanup(func() { mgr.Close(context.Background()) })
	run.StartPaused = true
	return &servePath{b: b, inst: inst, run: run, mgr: mgr}
}

// pathTimes gathers servePath's two CPU times over the rounds.
type pathTimes struct{ served, dropped []time.Duration }

func (t *pathTimes) measure(p *servePath) {
	t.served = append(t.served, p.served())
	t.dropped = append(t.dropped, p.dropped())
}

// cost is the record path's CPU time of one run through the session: the
// least run through it less the least with the records dropped (a run's
// CPU time only gains from noise).
func (t *pathTimes) cost() time.Duration {
	return slices.Min(t.served) - slices.Min(t.dropped)
}

func (p *servePath) served() time.Duration {
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
	c0 := cpuTime()
	if err := r.Resume(); err != nil {
		p.b.Fatal(err)
	}
	<-r.Done()
	return cpuTime() - c0
}

func (p *servePath) dropped() time.Duration {
	jobs, err := scenarios.Jobs(p.inst, &p.run)
	if err != nil {
		p.b.Fatal(err)
	}
	var c0 time.Duration
	runJob(context.Background(), jobs[0], solver.RecorderFunc(func(r solver.Record) {
		if r.K == 0 {
			c0 = cpuTime()
		}
	}))
	return cpuTime() - c0
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
// buffered io.Discard.
func writer(format string) func(string, int, solver.Record) {
	bw := bufio.NewWriterSize(io.Discard, 1<<16)
	enc := newRecordWriter(bw, format, false)
	progress := newProgress(io.Discard)
	return func(algo string, rep int, r solver.Record) {
		enc.write(algo, rep, r)
		progress.show(algo, rep, r)
	}
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
			sp := newServePath(b, inst, run)
			var ovJ, ovC, ovF, own []float64
			var served pathTimes
			for i := 0; i < b.N; i++ {
				o := window(b, inst, run, 50_000, 150_000, drop)
				j := window(b, inst, run, 50_000, 150_000, writer("jsonl"))
				c := window(b, inst, run, 50_000, 150_000, writer("csv"))
				f := window(b, inst, run, 50_000, 150_000, numbersOnly())
				served.measure(sp)
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
