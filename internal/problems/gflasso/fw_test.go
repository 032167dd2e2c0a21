package gflasso

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
)

func fwConfig(algo string, lim solver.Limits, seed int64) solver.Config {
	cfg := solver.Config{Algorithm: algo, Step: "curvature", Limits: lim, Seed: seed,
		Schedule: solver.Schedule{Kind: "paper", Rho: 0.1, Alpha: 0.5}}
	if algo == "bcfw" {
		cfg.Schedule = solver.Schedule{Kind: "full"}
	}
	return cfg
}

func TestBlockFWReachesReferenceOptimum(t *testing.T) {
	if testing.Short() {
		t.Skip("long run")
	}
	r := loadRef(t)
	p := refProblem(t, r, Options{})
	fs := r.FStar.FStar
	for _, algo := range []string{"bc-ssfw-as", "bcfw"} {
		t.Run(algo, func(t *testing.T) {
			m, err := solver.New(p, fwConfig(algo, solver.Limits{MaxIters: 4000, EvalEvery: 50, GapTol: 1e-6 * fs}, 1))
			if err != nil {
				t.Fatal(err)
			}
			hit := solver.Record{}
			res, err := m.Run(context.Background(), solver.RecorderFunc(func(rec solver.Record) {
				if rec.Objective != nil && hit.K == 0 && *rec.Objective-fs < 1e-6*fs {
					hit = rec
				}
			}))
			if err != nil {
				t.Fatal(err)
			}
			s := res.Summary
			rel := (s.Objective - fs) / fs
			t.Logf("%s: F − F* = %.2g·F*, gap = %.2g·F after %d iterations, %.0f passes, %.2f s (status %s); first within 1e-6 at iteration %d, %.0f passes, %.2f s",
				algo, rel, s.Gap/s.Objective, s.Iters, s.Passes, s.Time, s.Status, hit.K, hit.Passes, hit.Time)
			if math.Abs(rel) > 1e-6 {
				t.Errorf("relative error %v", rel)
			}
			if rel < -1e-12 {
				t.Errorf("objective below the certified optimum: %v", rel)
			}
			if s.Status != solver.StatusConverged || s.Gap > 1e-6*s.Objective {
				t.Errorf("status %s, gap %v (want ≤ 1e-6·F = %v)", s.Status, s.Gap, 1e-6*s.Objective)
			}
			// The reported gap is the certificate: F − F* ≤ gap.
			if s.Objective-fs > s.Gap+1e-9*fs {
				t.Errorf("F − F* = %v exceeds the gap %v", s.Objective-fs, s.Gap)
			}
			if g, err := p.Gap(res.X); err != nil || math.Abs(g-s.Gap) > 1e-6*fs {
				t.Errorf("problem gap at the result %v, summary %v", g, s.Gap)
			}
		})
	}
}

func TestGammaZeroIsPerTaskLasso(t *testing.T) {
	X, Y := mixedData(5, 60, 8)
	const lambda = 3
	p, err := New(X, Y, Options{Lambda: lambda, Gamma: 0, Threshold: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	want := 0.0
	betas := make([][]float64, p.K)
	for c := 0; c < p.K; c++ {
		b, f := lassoCD(X, Y, c, lambda)
		betas[c] = b
		want += f
	}
	m, err := solver.New(p, fwConfig("bc-ssfw-as", solver.Limits{MaxIters: 5000, EvalEvery: 25, GapTol: 1e-10 * want}, 3))
	if err != nil {
		t.Fatal(err)
	}
	res, err := m.Run(context.Background(), solver.RecorderFunc(func(solver.Record) {}))
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.Summary.Objective-want) > 1e-9*want {
		t.Errorf("GFLASSO with γ = 0: F = %.12g, per-task lasso %.12g (status %s)", res.Summary.Objective, want, res.Summary.Status)
	}
	B := p.BOf(res.X)
	for c := 0; c < p.K; c++ {
		for a := 0; a < p.J; a++ {
			if d := math.Abs(B.At(a, c) - betas[c][a]); d > 1e-4 {
				t.Fatalf("task %d row %d: B = %v, lasso β = %v", c, a, B.At(a, c), betas[c][a])
			}
		}
	}
}

func TestBlockTracesIndependentOfWorkers(t *testing.T) {
	r := loadRef(t)
	// bc-ssfw-as samples batches for these 60 iterations; bcfw takes exact
	// gradients, which row blocks share through their component.
	for _, c := range []struct{ blocks, algo string }{{"component", "bc-ssfw-as"}, {"row", "bc-ssfw-as"}, {"row", "bcfw"}} {
		blocks := c.blocks
		p := refProblem(t, r, Options{Blocks: blocks})
		run := func(workers int) []solver.Record {
			cfg := fwConfig(c.algo, solver.Limits{MaxIters: 60, EvalEvery: 7}, 11)
			cfg.Workers = workers
			if blocks == "row" {
				cfg.R = 8
			}
			m, err := solver.New(p, cfg)
			if err != nil {
				t.Fatal(err)
			}
			var recs []solver.Record
			if _, err := m.Run(context.Background(), solver.RecorderFunc(func(rec solver.Record) {
				rec.Time = 0
				recs = append(recs, rec)
			})); err != nil {
				t.Fatal(err)
			}
			return recs
		}
		a, b := run(1), run(4)
		if len(a) != len(b) {
			t.Fatalf("%s: %d and %d records", blocks, len(a), len(b))
		}
		for i := range a {
			ja, _ := json.Marshal(a[i])
			jb, _ := json.Marshal(b[i])
			if string(ja) != string(jb) {
				t.Fatalf("%s: record %d differs between 1 and 4 workers:\n%s\n%s", blocks, i, ja, jb)
			}
		}
	}
}
