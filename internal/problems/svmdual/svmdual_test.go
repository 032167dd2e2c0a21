package svmdual

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/fwlab/fwlab/internal/solver"
)

func tiny(t *testing.T, l, d int, seed int64) *Problem {
	t.Helper()
	z, y, err := Generate(l, d, 2, seed)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := New(z, y, 0.7, "")
	if err != nil {
		t.Fatal(err)
	}
	return pr
}

func randomBox(pr *Problem, rng *rand.Rand) []float64 {
	x := make([]float64, pr.l)
	for i := range x {
		x[i] = pr.c * rng.Float64()
	}
	return x
}

// direct evaluates ½‖Σ α_i y_i z_i‖² − Σα from the examples, naively.
func direct(z *mat.Dense, y, alpha []float64) float64 {
	l, d := z.Dims()
	w := make([]float64, d)
	sum := 0.0
	for i := 0; i < l; i++ {
		for j := 0; j < d; j++ {
			w[j] += alpha[i] * y[i] * z.At(i, j)
		}
		sum += alpha[i]
	}
	s := 0.0
	for _, v := range w {
		s += v * v
	}
	return 0.5*s - sum
}

func TestObjectiveAndAccuracyDirect(t *testing.T) {
	z, y, _ := Generate(15, 4, 3, 1)
	pr, err := New(z, y, 2, "")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for trial := 0; trial < 20; trial++ {
		a := randomBox(pr, rng)
		if got, want := pr.Objective(a), direct(z, y, a); math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Errorf("objective %v, direct %v", got, want)
		}
		// accuracy: sign(wᵀz_i) against y_i, computed from the examples
		w := make([]float64, 4)
		for i := 0; i < 15; i++ {
			for j := 0; j < 4; j++ {
				w[j] += a[i] * y[i] * z.At(i, j)
			}
		}
		ok := 0
		for i := 0; i < 15; i++ {
			s := 0.0
			for j := 0; j < 4; j++ {
				s += w[j] * z.At(i, j)
			}
			if (s >= 0) == (y[i] > 0) {
				ok++
			}
		}
		if got := pr.Extra(a)["train_acc"]; got != float64(ok)/15 {
			t.Errorf("train_acc %v, direct %v", got, float64(ok)/15)
		}
	}
}

func TestLMOBruteForce(t *testing.T) {
	pr := tiny(t, 6, 3, 2)
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 300; trial++ {
		g := make([]float64, pr.l)
		for i := range g {
			if trial%2 == 0 {
				g[i] = rng.NormFloat64()
			} else {
				g[i] = float64(rng.IntN(3) - 1) // ties at 0
			}
		}
		got := pr.LMO(0, g)
		var best solver.Vertex
		bestVal := math.Inf(1)
		for mask := uint64(0); mask < 1<<6; mask++ {
			v := pr.Corner(mask)
			if val := v.Dot(g); val < bestVal-1e-15 {
				best, bestVal = v, val
			}
		}
		if got.Key != best.Key {
			t.Fatalf("g = %v: LMO %s, brute force %s", g, got.Key, best.Key)
		}
	}
}

func TestGradientFiniteDifferences(t *testing.T) {
	pr := tiny(t, 9, 5, 3)
	rng := rand.New(rand.NewPCG(5, 6))
	x := randomBox(pr, rng)
	m := pr.NewModel(x)
	g := make([]float64, pr.l)
	m.Gradient(0, g, x, nil)
	gs := make([]float64, pr.l)
	if s := pr.Smooth(x, gs); s != pr.Objective(x) {
		t.Errorf("Smooth %v ≠ Objective %v", s, pr.Objective(x))
	}
	for i := range x {
		h := 1e-6
		xp := append([]float64(nil), x...)
		xm := append([]float64(nil), x...)
		xp[i] += h
		xm[i] -= h
		fd := (pr.Objective(xp) - pr.Objective(xm)) / (2 * h)
		if math.Abs(fd-g[i]) > 1e-7*math.Max(1, math.Abs(fd)) {
			t.Errorf("∂/∂α_%d = %v, finite difference %v", i, g[i], fd)
		}
		if math.Abs(gs[i]-g[i]) > 1e-13*math.Max(1, math.Abs(g[i])) {
			t.Errorf("Smooth gradient %v, model %v", gs[i], g[i])
		}
	}
}

func TestBatchAverage(t *testing.T) {
	pr := tiny(t, 7, 5, 4)
	rng := rand.New(rand.NewPCG(7, 8))
	x := randomBox(pr, rng)
	m := pr.NewModel(x)
	full := make([]float64, pr.l)
	m.Gradient(0, full, x, nil)
	d := solver.Direction{XCoef: -1, Terms: []solver.Term{{Coef: 1, V: pr.Corner(0b1010011)}}}
	fullDelta := m.Line(0, x, d, nil).Delta(0.4)
	for _, bs := range []int{1, 2, 3, 5} {
		avg := make([]float64, pr.l)
		g := make([]float64, pr.l)
		avgDelta, cnt := 0.0, 0
		var rec func(start int, J []int)
		rec = func(start int, J []int) {
			if len(J) == bs {
				m.Gradient(0, g, x, J)
				for i := range g {
					avg[i] += g[i]
				}
				avgDelta += m.Line(0, x, d, J).Delta(0.4)
				cnt++
				return
			}
			for j := start; j < pr.d; j++ {
				rec(j+1, append(J, j))
			}
		}
		rec(0, nil)
		for i := range avg {
			if a := avg[i] / float64(cnt); math.Abs(a-full[i]) > 1e-12*math.Max(1, math.Abs(full[i])) {
				t.Errorf("m=%d: batch average %v, full %v", bs, a, full[i])
			}
		}
		if a := avgDelta / float64(cnt); math.Abs(a-fullDelta) > 1e-12*math.Max(1, math.Abs(fullDelta)) {
			t.Errorf("m=%d: Delta average %v, full %v", bs, a, fullDelta)
		}
	}
}

func TestModelDrift(t *testing.T) {
	pr := tiny(t, 20, 6, 5)
	rng := rand.New(rand.NewPCG(9, 10))
	x := make([]float64, pr.l)
	m := pr.NewModel(x)
	for k := 0; k < 5000; k++ {
		v := pr.Corner(rng.Uint64() & (1<<20 - 1))
		gam := rng.Float64()
		if k%3 == 2 {
			gam = -0.1 * rng.Float64() // away-like
		}
		for i := range x {
			x[i] *= 1 - gam
		}
		v.AddTo(x, gam)
		m.Scale(0, 1-gam)
		m.Add(0, gam, v)
	}
	inc := append([]float64(nil), m.(*model).z...)
	m.Reset(x)
	num, den := 0.0, 0.0
	for j, r := range m.(*model).z {
		num += (inc[j] - r) * (inc[j] - r)
		den += r * r
	}
	rel := math.Sqrt(num / den)
	t.Logf("relative drift after 5000 updates: %.2e", rel)
	if rel > 1e-12 {
		t.Errorf("drift %v", rel)
	}
}

func TestLineExact(t *testing.T) {
	pr := tiny(t, 8, 4, 6)
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := 0; trial < 100; trial++ {
		x := randomBox(pr, rng)
		m := pr.NewModel(x)
		d := solver.Direction{Terms: []solver.Term{{Coef: 1, V: pr.Corner(rng.Uint64() & 255)}, {Coef: -1, V: pr.Corner(rng.Uint64() & 255)}}}
		if trial%2 == 0 {
			d = solver.Direction{XCoef: -1, Terms: []solver.Term{{Coef: 1, V: pr.Corner(rng.Uint64() & 255)}}}
		}
		var batch []int
		if trial%3 == 0 {
			batch = rng.Perm(pr.d)[:2]
		}
		g := make([]float64, pr.l)
		m.Gradient(0, g, x, batch)
		dx := make([]float64, pr.l)
		for i := range dx {
			dx[i] = d.XCoef * x[i]
		}
		for _, tm := range d.Terms {
			tm.V.AddTo(dx, tm.Coef)
		}
		slope := 0.0
		for i := range g {
			slope += g[i] * dx[i]
		}
		ln := m.Line(0, x, d, batch)
		M := ln.Curvature(1)
		for _, gam := range []float64{0.1, 0.5, 1} {
			want := gam*slope + 0.5*M*gam*gam
			if r := ln.Delta(gam) - want; math.Abs(r) > 1e-10*math.Max(1, M) {
				t.Fatalf("Delta(%v) − (γφ'(0) + ½Mγ²) = %v", gam, r)
			}
			if batch == nil {
				xg := append([]float64(nil), x...)
				for i := range xg {
					xg[i] += gam * dx[i]
				}
				if r := pr.Objective(xg) - pr.Objective(x) - ln.Delta(gam); math.Abs(r) > 1e-10*math.Max(1, math.Abs(pr.Objective(x))) {
					t.Fatalf("Delta differs from the objective difference by %v", r)
				}
			}
		}
	}
}

func TestProxAndErrors(t *testing.T) {
	pr := tiny(t, 4, 2, 7)
	dst := make([]float64, 4)
	pr.Prox(dst, []float64{-1, 0.3, 5, 0.7}, 1)
	if dst[0] != 0 || dst[1] != 0.3 || dst[2] != 0.7 || dst[3] != 0.7 {
		t.Errorf("prox %v", dst)
	}
	z := mat.NewDense(2, 1, []float64{1, 2})
	if _, err := New(z, []float64{1, 2}, 1, "train.svm"); err == nil || err.Error() != "train.svm: row 2: label 2 must be -1 or +1 (or 0/1, with 0 read as -1)" {
		t.Errorf("bad label: %v", err)
	}
	if _, err := New(z, []float64{1, 0}, 0, ""); err == nil || err.Error() != "C: must be a finite number > 0, got 0" {
		t.Errorf("C = 0: %v", err)
	}
	if _, err := New(z, []float64{1}, 1, "y.csv"); err == nil || err.Error() != "y.csv: has 1 labels, but there are 2 examples" {
		t.Errorf("length: %v", err)
	}
	// 0 labels read as −1
	a, _ := New(z, []float64{1, 0}, 1, "")
	b, _ := New(z, []float64{1, -1}, 1, "")
	if a.Objective([]float64{0.3, 0.8}) != b.Objective([]float64{0.3, 0.8}) {
		t.Error("0/1 labels differ from ±1")
	}
}

func TestLipschitz(t *testing.T) {
	pr := tiny(t, 30, 6, 8)
	var svd mat.SVD
	if !svd.Factorize(mat.NewDense(pr.d, pr.l, pr.a), mat.SVDNone) {
		t.Fatal("svd")
	}
	s := svd.Values(nil)[0]
	if b := pr.LipschitzBound(); b < s*s || b > 1.06*s*s {
		t.Errorf("bound %v, ‖A‖² = %v", b, s*s)
	}
}
