package gflasso

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
	"gonum.org/v1/gonum/mat"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got (JSON) with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got any) {
	t.Helper()
	b, err := json.MarshalIndent(got, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) == string(b)+"\n" {
		return
	}
	if openblasBuild {
		// OpenBLAS sums the products in another order: the same records
		// to rounding.
		var w, g any
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &g); err != nil {
			t.Fatal(err)
		}
		if where := sameToRounding(w, g, 1e-9, ""); where != "" {
			t.Errorf("%s differs beyond rounding with OpenBLAS at %s", path, where)
		}
		return
	}
	t.Errorf("%s changed; if intended, rerun with -update and review the diff.\ngot:\n%s", path, b)
}

// sameToRounding compares decoded JSON values: numbers within
// tol·max(1, |a|, |b|), everything else exactly; it returns where they
// first differ, or "".
func sameToRounding(a, b any, tol float64, at string) string {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		if !ok || math.Abs(x-y) > tol*math.Max(1, math.Max(math.Abs(x), math.Abs(y))) {
			return fmt.Sprintf("%s: %v against %v", at, a, b)
		}
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return at + ": lengths differ"
		}
		for i := range x {
			if w := sameToRounding(x[i], y[i], tol, fmt.Sprintf("%s[%d]", at, i)); w != "" {
				return w
			}
		}
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return at + ": keys differ"
		}
		for k, v := range x {
			if w := sameToRounding(v, y[k], tol, at+"."+k); w != "" {
				return w
			}
		}
	default:
		if fmt.Sprint(a) != fmt.Sprint(b) {
			return fmt.Sprintf("%s: %v against %v", at, a, b)
		}
	}
	return ""
}

// TestGoldenSimulation pins the simulation: a change of the procedure or of
// its random stream is a visible decision.
func TestGoldenSimulation(t *testing.T) {
	s, err := Simulate(DefaultSim(1))
	if err != nil {
		t.Fatal(err)
	}
	sum := func(m *mat.Dense) string { return fmt.Sprintf("%.12g", mat.Sum(m)) }
	var ones []string
	for j := 0; j < 50; j++ {
		row := ""
		for k := 0; k < 20; k++ {
			row += fmt.Sprint(s.B.At(j, k))
		}
		ones = append(ones, row)
	}
	golden(t, "simulate-seed1.json", map[string]any{
		"sum_X": sum(s.X), "sum_Y": sum(s.Y), "X00": fmt.Sprintf("%.12g", s.X.At(0, 0)),
		"Y00": fmt.Sprintf("%.12g", s.Y.At(0, 0)), "B_rows": ones,
	})
}

// TestGoldenSPG pins SPG's first records on the reference instance.
func TestGoldenSPG(t *testing.T) {
	r := loadRef(t)
	p := refProblem(t, r, Options{})
	s, err := NewSPG(p, SPGConfig{Mu: 1e-3, Limits: solver.Limits{MaxIters: 12, EvalEvery: 3}})
	if err != nil {
		t.Fatal(err)
	}
	var recs []solver.Record
	if _, err := s.Run(context.Background(), solver.RecorderFunc(func(rec solver.Record) {
		rec.Time = 0
		recs = append(recs, rec)
	})); err != nil {
		t.Fatal(err)
	}
	golden(t, "spg-ref-mu1e-3.json", recs)
}

// FuzzOracles checks, on random small components drawn from the fuzzer's
// seed, that the enumerated, minimum-cut (when balanced) and LP oracles give
// the same dual norm as the brute-force vertex list.
func FuzzOracles(f *testing.F) {
	for _, s := range []uint64{1, 2, 3, 42} {
		f.Add(s, uint8(4), true)
		f.Add(s, uint8(5), false)
	}
	f.Fuzz(func(t *testing.T, seed uint64, k uint8, mixed bool) {
		n := 1 + int(k)%5
		rng := rand.New(rand.NewPCG(seed, 99))
		c := randomComponent(rng, n, mixed)
		if err := c.enumerate(); err != nil {
			t.Fatal(err)
		}
		verts := bruteVertices(c)
		g := make([]float64, n)
		for a := range g {
			g[a] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(5)-2))
		}
		want := math.Inf(-1)
		for _, v := range verts {
			d := 0.0
			for a := range v {
				d += g[a] * v[a]
			}
			want = math.Max(want, d)
		}
		tol := 1e-9 * math.Max(1, math.Abs(want))
		got, _, _ := c.bestAtom(g, make([]float64, 1<<n))
		if math.Abs(got-want) > tol {
			t.Fatalf("enumerated %v, brute force %v", got, want)
		}
		if lp, _, err := c.lpAtom(g); err != nil || math.Abs(lp-want) > tol {
			t.Fatalf("LP %v (%v), brute force %v", lp, err, want)
		}
		if tau := c.switching(); tau != nil {
			if cs, _ := c.cutAtom(g, tau); math.Abs(cs-want) > tol {
				t.Fatalf("cut %v, brute force %v", cs, want)
			}
		}
	})
}
