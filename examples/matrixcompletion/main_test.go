package main

import (
	"context"
	"github.com/fwlab/fwlab/internal/server"
	"github.com/fwlab/fwlab/internal/store"
	"math"
	"math/rand/v2"
	"net/http/httptest"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/fwlab/fwlab/fw"
	"github.com/fwlab/fwlab/fw/methods"
)

// sigmaMax is the largest singular value of the R×C matrix g, by gonum's
// SVD: the reference the power iterations are checked against.
func sigmaMax(t *testing.T, g []float64, r, c int) float64 {
	var svd mat.SVD
	if !svd.Factorize(mat.NewDense(r, c, append([]float64(nil), g...)), mat.SVDNone) {
		t.Fatal("the SVD did not factorize")
	}
	return svd.Values(nil)[0]
}

// TestOracleIsTheTopSingularPair: <G, LMO(G)> = −δ·σ_max(G) (gonum's SVD),
// and the same G gives the same atom, key and bits.
func TestOracleIsTheTopSingularPair(t *testing.T) {
	p, _ := NewCompletion(12, 9, 2, 0.5, 3)
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 5; trial++ {
		g := make([]float64, p.Dim())
		for i := range g {
			g[i] = rng.NormFloat64()
		}
		v := p.LMO(0, g)
		want := -p.Delta * sigmaMax(t, g, p.R, p.C)
		if got := v.Dot(g); math.Abs(got-want) > 1e-8*math.Abs(want) {
			t.Errorf("<G, LMO(G)> = %v, want −δσ_max = %v", got, want)
		}
		w := p.LMO(0, g)
		if w.Key != v.Key || len(w.Val) != len(v.Val) {
			t.Fatalf("the same G gave atoms %s and %s", v.Key, w.Key)
		}
		for i := range v.Val {
			if v.Val[i] != w.Val[i] {
				t.Fatalf("the same G gave atoms that differ at %d", i)
			}
		}
	}
}

// TestCompletionRuns: afw and fw on the example's problem report the gap
// computed independently at the last iterate, <∇F(X), X> + δ·σ_max(∇F(X))
// (gonum's SVD), and F(X) − F* ≤ gap with F* = 0 (M lies on the ball);
// afw's active set keeps atoms it meets again (fewer atoms than
// iterations).
func TestCompletionRuns(t *testing.T) {
	p, _ := NewCompletion(12, 12, 2, 0.6, 2)
	for _, algo := range []string{"afw", "fw"} {
		var last fw.Record
		res, err := methods.Run(context.Background(), p, methods.Options{Algorithm: algo, MaxIters: 300},
			fw.RecorderFunc(func(r fw.Record) { last = r }))
		if err != nil {
			t.Fatal(err)
		}
		g := make([]float64, p.Dim())
		p.NewModel(res.X).Gradient(0, g, res.X, nil)
		gap := 0.0
		for i := range g {
			gap += g[i] * res.X[i]
		}
		gap += p.Delta * sigmaMax(t, g, p.R, p.C)
		if math.Abs(gap-res.Summary.Gap) > 1e-9+1e-6*gap {
			t.Errorf("%s: reported gap %v, computed %v", algo, res.Summary.Gap, gap)
		}
		if f := p.Objective(res.X); f > gap+1e-12 || f > 1e-3 {
			t.Errorf("%s: F = %v with gap %v", algo, f, gap)
		}
		if algo == "afw" && last.Active >= res.Summary.Iters {
			t.Errorf("afw: %d active atoms after %d iterations", last.Active, res.Summary.Iters)
		}
	}
}

// With a dashboard's address, both methods' records are logged there as
// one run of two traces, every record the method reports, ended with the
// methods' status.
func TestLogsLiveToADashboard(t *testing.T) {
	srv, err := server.New(server.Options{UploadDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer func() {
		ts.Close()
		_ = srv.Close()
	}()
	ctx := context.Background()
	p, full := NewCompletion(12, 10, 2, 0.6, 3)
	if err := solve(ctx, p, full, ts.URL); err != nil {
		t.Fatal(err)
	}
	runs, _, err := srv.Manager().Store().List(ctx, store.Filter{Limit: 10})
	if err != nil || len(runs) != 1 {
		t.Fatalf("%d runs stored (%v), want the example's one", len(runs), err)
	}
	r, err := srv.Manager().Store().Get(ctx, runs[0].ID)
	if err != nil || !r.Outside || len(r.Traces) != 2 || r.Traces[0].Algo != "afw" || r.Traces[1].Algo != "fw" {
		t.Fatalf("the run: %v %+v", err, r)
	}
	for i, algo := range []string{"afw", "fw"} {
		want, _, err := methods.Collect(ctx, p, methods.Options{Algorithm: algo, MaxIters: 1000})
		if err != nil {
			t.Fatal(err)
		}
		got, err := srv.Manager().Store().Records(ctx, r.ID, i, 0, -1)
		if err != nil || len(got) != len(want) {
			t.Fatalf("%s: %d records stored (%v), the method reports %d", algo, len(got), err, len(want))
		}
		if *got[len(got)-1].Gap != *want[len(want)-1].Gap {
			t.Errorf("%s: the last gap stored %g, the method's %g", algo, *got[len(got)-1].Gap, *want[len(want)-1].Gap)
		}
	}
}
