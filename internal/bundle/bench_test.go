package bundle

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/pgtest"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
	"github.com/fwlab/fwlab/internal/store/pgstore"
)

// BenchmarkDecode reads a bundle of 4 traces × 25 000 records, against
// encoding/json decoding the same records into []solver.Record (finite
// numbers, no checks) in the same loop: the cost of the strict,
// path-naming decoder. (ns/op counts both.)
func BenchmarkDecode(b *testing.B) {
	bd := testBundle(rand.New(rand.NewPCG(1, 2)), 25_000)
	for i := range bd.Traces {
		for j := range bd.Traces[i].Records {
			r := &bd.Traces[i].Records[j]
			r.Passes, r.Time, r.Gamma, r.Extra = float64(j)*0.01, float64(j)*1e-5, 1/float64(j+1), nil
			for _, p := range []*float64{r.Objective, r.Gap, r.GradErr} {
				if p != nil {
					*p = 1 / float64(j+1)
				}
			}
		}
	}
	var buf bytes.Buffer
	if err := Encode(&buf, bd); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	var plain [][]byte
	for _, t := range bd.Traces {
		p, err := json.Marshal(t.Records)
		if err != nil {
			b.Fatal(err)
		}
		plain = append(plain, p)
	}
	// the baseline and the decoder alternate, so that both see the same
	// load of the machine
	var baseNs, ns time.Duration
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		for _, p := range plain {
			var recs []solver.Record
			if err := json.Unmarshal(p, &recs); err != nil {
				b.Fatal(err)
			}
		}
		t1 := time.Now()
		if _, err := Decode(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
		baseNs += t1.Sub(t0)
		ns += time.Since(t1)
	}
	b.StopTimer()
	b.ReportMetric(float64(ns)/float64(baseNs), "x-json-unmarshal")
	b.ReportMetric(float64(ns.Nanoseconds())/float64(b.N*4*25_000), "ns/record")
}

// runBundle is a long run as a bundle: traces × records records as a
// method writes them (k one by one, passes and times growing, objective,
// gap and step size at full precision, the objective evaluated on every
// record and two extra metrics on every tenth).
func runBundle(traces, records int) *Bundle {
	rng := rand.New(rand.NewPCG(3, 4))
	b := &Bundle{Version: "bench", Status: "done",
		Created: time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC), Ended: time.Date(2026, 2, 3, 5, 5, 6, 0, time.UTC),
		Spec: spec.Run{Problem: "lasso", Replications: traces, Seed: 1, Iters: records,
			Algorithms: []spec.Algo{{Algo: "ssfw-as"}}},
		Info: Info{Dim: 500, Samples: 2000, Blocks: 1, FStar: solver.F(1.25)}}
	for t := 0; t < traces; t++ {
		tr := Trace{Algo: "ssfw-as", Replication: t, Seed: int64(1 + t), Status: solver.StatusMaxIters,
			Summary: &solver.Summary{Objective: 1.25, Gap: 1e-6, Iters: records, Passes: float64(records) / 500, Time: 12.5, Status: solver.StatusMaxIters}}
		tr.Records = make([]solver.Record, records)
		obj, tm := 100.0, 0.0
		for k := range tr.Records {
			tm += 1e-5 * (1 + rng.Float64())
			obj = 1.25 + (obj-1.25)*(1-1e-3*rng.Float64())
			r := solver.Record{K: k, Passes: float64(k) / 500, Time: tm, Step: []string{"fw", "away", "drop"}[rng.IntN(3)],
				Gamma: rng.Float64(), Batch: 500, Active: 1 + rng.IntN(50), FWSteps: k / 2, AwaySteps: k / 3, Drops: k / 7,
				Objective: solver.F(obj), Gap: solver.F((obj - 1.25) * (1 + rng.Float64()))}
			if k%10 == 0 {
				r.Extra = map[string]float64{"nnz": float64(r.Active), "t_slack": rng.Float64()}
			}
			tr.Records[k] = r
		}
		b.Traces = append(b.Traces, tr)
	}
	return b
}

// record writes b into st as a live run does: the run stored first, its
// records through the store's Appender (one Add per record, written in
// batches by its goroutine), then each trace's result and the run's
// status.
func recordLive(ctx context.Context, st store.Backend, b *Bundle) error {
	r := storedRun(b)
	r.Status = store.StatusRunning
	for i, t := range b.Traces {
		r.Traces = append(r.Traces, store.Trace{Index: i, Algo: t.Algo, Replication: t.Replication, Seed: t.Seed})
	}
	id, err := st.PutRun(ctx, r)
	if err != nil {
		return err
	}
	a := store.NewAppenderFor(st, id, 0)
	// the traces run side by side, a record of each in turn
	for j := range b.Traces[0].Records {
		for i := range b.Traces {
			a.Add(i, b.Traces[i].Records[j])
		}
	}
	if err := a.Close(); err != nil {
		return err
	}
	for i, t := range b.Traces {
		if err := st.SetTrace(ctx, id, i, store.TraceResult{Status: t.Status, Summary: t.Summary}); err != nil {
			return err
		}
	}
	return st.SetStatus(ctx, id, store.StatusDone, b.Ended)
}

// BenchmarkImport imports a bundle of 4 traces × 60 000 records (about 56
// MB) into a store and records the same run live into the same store (the
// baseline, alternating with the import so that both see the same load of
// the machine): x-live is the import's time over the live recording's,
// import-rec/s and live-rec/s their records per second. cpu-x-live is the
// same ratio of the process's CPU time (both use more than one goroutine:
// on a busy machine the wall times follow it). Each iteration has a new
// store of its own (SQLite: a file; PostgreSQL: a database of a cluster
// with fsync on).
func BenchmarkImport(b *testing.B) {
	bd := runBundle(4, 60_000)
	var buf bytes.Buffer
	if err := Encode(&buf, bd); err != nil {
		b.Fatal(err)
	}
	doc := buf.Bytes()
	n := 4 * 60_000
	bench := func(b *testing.B, open func() store.Backend) {
		ctx := context.Background()
		var imp, live, impCPU, liveCPU time.Duration
		for i := 0; i < b.N; i++ {
			st := open()
			steps := []func() error{
				func() error {
					t0, c0 := time.Now(), cpuTime()
					res, err := ImportInto(ctx, st, bytes.NewReader(doc))
					imp, impCPU = imp+time.Since(t0), impCPU+cpuTime()-c0
					if err == nil && (res.Existing || res.Records != n) {
						err = fmt.Errorf("imported %+v", res)
					}
					return err
				},
				func() error {
					t0, c0 := time.Now(), cpuTime()
					err := recordLive(ctx, st, bd)
					live, liveCPU = live+time.Since(t0), liveCPU+cpuTime()-c0
					return err
				},
			}
			if i%2 == 1 {
				steps[0], steps[1] = steps[1], steps[0]
			}
			for _, f := range steps {
				if err := f(); err != nil {
					b.Fatal(err)
				}
			}
			st.Close()
		}
		b.ReportMetric(float64(b.N*n)/imp.Seconds(), "import-rec/s")
		b.ReportMetric(float64(b.N*n)/live.Seconds(), "live-rec/s")
		b.ReportMetric(imp.Seconds()/live.Seconds(), "x-live")
		b.ReportMetric(impCPU.Seconds()/liveCPU.Seconds(), "cpu-x-live")
		b.ReportMetric(float64(len(doc)), "bundle-bytes")
	}
	b.Run("sqlite", func(b *testing.B) {
		bench(b, func() store.Backend {
			st, err := store.Open(filepath.Join(b.TempDir(), "fwlab.db"))
			if err != nil {
				b.Fatal(err)
			}
			return st
		})
	})
	b.Run("postgres", func(b *testing.B) {
		c := pgtest.StartDurable(b)
		bench(b, func() store.Backend {
			st, err := pgstore.Open(context.Background(), c.NewDB(b))
			if err != nil {
				b.Fatal(err)
			}
			return st
		})
	})
}
