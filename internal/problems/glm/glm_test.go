package glm

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/fwlab/fwlab/internal/solver"
)

var losses = []Loss{Squared, Logistic, Poisson}

// tiny builds a small problem of the loss with generated data.
func tiny(t *testing.T, loss Loss, n, p int, seed int64) *Problem {
	t.Helper()
	s, err := Generate(loss, n, p, min(3, p), 0.5, seed)
	if err != nil {
		t.Fatal(err)
	}
	lam := 0.5
	pr, err := New(Config{Loss: loss, X: s.X, Y: s.Y, Lambda: lam, T: 2})
	if err != nil {
		t.Fatal(err)
	}
	return pr
}

// randomFeasible returns a feasible point as a random convex combination of
// a few vertices, scaled down so that Poisson stays moderate.
func randomFeasible(pr *Problem, rng *rand.Rand, shrink float64) []float64 {
	vs := pr.Vertices()
	x := make([]float64, pr.Dim())
	w := make([]float64, 4)
	tot := 0.0
	for i := range w {
		w[i] = rng.Float64()
		tot += w[i]
	}
	for i := range w {
		vs[rng.IntN(len(vs))].AddTo(x, shrink*w[i]/tot)
	}
	return x
}

// directObjective evaluates the penalised objective with naive loops.
func directObjective(pr *Problem, x []float64) float64 {
	s := 0.0
	for i := 0; i < pr.n; i++ {
		z := 0.0
		for j := 0; j < pr.p; j++ {
			z += pr.x[i*pr.p+j] * x[j]
		}
		y := pr.y[i]
		switch pr.loss {
		case Squared:
			s += 0.5 * (y - z) * (y - z)
		case Logistic:
			s += math.Log(1 + math.Exp(-y*z))
		case Poisson:
			s += math.Exp(z) - y*z
		}
	}
	for j := 0; j < pr.p; j++ {
		s += pr.lambda * math.Abs(x[j])
	}
	return s
}

func TestObjectiveDirect(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, loss := range losses {
		pr := tiny(t, loss, 30, 8, 3)
		for trial := 0; trial < 20; trial++ {
			x := randomFeasible(pr, rng, 0.2)
			got, want := pr.Objective(x), directObjective(pr, x)
			if math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
				t.Errorf("%v: Objective %v, direct %v", loss, got, want)
			}
			// the P1 value uses t instead of ‖β‖₁
			if d := pr.P1Value(x) - got; math.Abs(d-pr.lambda*(x[pr.p]-l1(x[:pr.p]))) > 1e-10 {
				t.Errorf("%v: P1Value − Objective = %v, want λ·slack", loss, d)
			}
		}
	}
}

func TestLMOBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, loss := range losses {
		pr := tiny(t, loss, 10, 7, 1)
		vs := pr.Vertices()
		for trial := 0; trial < 500; trial++ {
			g := make([]float64, pr.Dim())
			integer := trial%2 == 1 // integer directions exercise the tie rules exactly
			for i := range g {
				if integer {
					g[i] = float64(rng.IntN(7) - 3)
				} else {
					g[i] = rng.NormFloat64()
				}
			}
			got := pr.LMO(0, g)
			// brute force: first strict minimum in enumeration order, with the
			// value computed as T·(g_t + s·g_j) like the oracle's ordering
			best, bestVal := vs[0], 0.0
			for _, v := range vs[1:] {
				val := v.Dot(g)
				if val < bestVal-1e-12*(1+math.Abs(bestVal)) {
					best, bestVal = v, val
				}
			}
			if integer && got.Key != best.Key {
				t.Fatalf("%v: g = %v: LMO %s, brute force %s", loss, g, got.Key, best.Key)
			}
			if gv := got.Dot(g); gv > bestVal+1e-12*(1+math.Abs(bestVal)) {
				t.Fatalf("%v: LMO value %v above brute-force minimum %v", loss, gv, bestVal)
			}
			again := pr.LMO(0, append([]float64(nil), g...))
			if again.Key != got.Key || !sameVertex(again, got) {
				t.Fatal("LMO not deterministic")
			}
		}
	}
}

func TestGradientFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, loss := range losses {
		pr := tiny(t, loss, 25, 6, 2)
		x := randomFeasible(pr, rng, 0.3)
		m := pr.NewModel(x)
		g := make([]float64, pr.Dim())
		m.Gradient(0, g, x, nil)
		for j := range x {
			h := 1e-6
			xp := append([]float64(nil), x...)
			xm := append([]float64(nil), x...)
			xp[j] += h
			xm[j] -= h
			fd := (pr.P1Value(xp) - pr.P1Value(xm)) / (2 * h)
			if math.Abs(fd-g[j]) > 1e-6*math.Max(1, math.Abs(fd)) {
				t.Errorf("%v: ∂F/∂x_%d = %v, finite difference %v", loss, j, g[j], fd)
			}
		}
		// the proximal view's gradient is the β part
		gb := make([]float64, pr.P())
		s := pr.Smooth(x[:pr.p], gb)
		if math.Abs(s+pr.lambda*l1(x[:pr.p])-pr.Objective(x)) > 1e-10*math.Abs(s) {
			t.Errorf("%v: Smooth + λ‖β‖₁ ≠ Objective", loss)
		}
		for j := range gb {
			if math.Abs(gb[j]-g[j]) > 1e-12*math.Max(1, math.Abs(g[j])) {
				t.Errorf("%v: Smooth gradient %v ≠ model gradient %v", loss, gb[j], g[j])
			}
		}
	}
}

// subsets calls fn with every m-subset of [0, n).
func subsets(n, m int, fn func([]int)) {
	idx := make([]int, m)
	var rec func(start, k int)
	rec = func(start, k int) {
		if k == m {
			fn(append([]int(nil), idx...))
			return
		}
		for i := start; i < n; i++ {
			idx[k] = i
			rec(i+1, k+1)
		}
	}
	rec(0, 0)
}

func TestBatchAverageIsFullGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, loss := range losses {
		pr := tiny(t, loss, 6, 4, 4)
		x := randomFeasible(pr, rng, 0.5)
		m := pr.NewModel(x)
		full := make([]float64, pr.Dim())
		m.Gradient(0, full, x, nil)
		d := solver.Direction{XCoef: -1, Terms: []solver.Term{{Coef: 1, V: pr.Vertices()[3]}}}
		fullDelta := m.Line(0, x, d, nil).Delta(0.3)
		for _, bs := range []int{1, 2, 3, 6} {
			avg := make([]float64, pr.Dim())
			avgDelta, cnt := 0.0, 0
			g := make([]float64, pr.Dim())
			subsets(6, bs, func(J []int) {
				m.Gradient(0, g, x, J)
				for j := range g {
					avg[j] += g[j]
				}
				avgDelta += m.Line(0, x, d, J).Delta(0.3)
				cnt++
			})
			for j := range avg {
				avg[j] /= float64(cnt)
				if math.Abs(avg[j]-full[j]) > 1e-12*math.Max(1, math.Abs(full[j])) {
					t.Errorf("%v m=%d: batch average %v, full gradient %v", loss, bs, avg[j], full[j])
				}
			}
			avgDelta /= float64(cnt)
			if math.Abs(avgDelta-fullDelta) > 1e-12*math.Max(1, math.Abs(fullDelta)) {
				t.Errorf("%v m=%d: batch Delta average %v, full %v", loss, bs, avgDelta, fullDelta)
			}
		}
	}
}

func TestModelDrift(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, loss := range losses {
		pr := tiny(t, loss, 40, 15, 5)
		vs := pr.Vertices()
		x := make([]float64, pr.Dim())
		m := pr.NewModel(x)
		for k := 0; k < 5000; k++ {
			v := vs[rng.IntN(len(vs))]
			if rng.IntN(3) == 0 && k > 0 {
				// away-like: x ← (1+γ)x − γu with small γ, u some vertex
				gam := 0.1 * rng.Float64()
				for i := range x {
					x[i] *= 1 + gam
				}
				v.AddTo(x, -gam)
				m.Scale(0, 1+gam)
				m.Add(0, -gam, v)
			} else {
				gam := rng.Float64()
				for i := range x {
					x[i] *= 1 - gam
				}
				v.AddTo(x, gam)
				m.Scale(0, 1-gam)
				m.Add(0, gam, v)
			}
		}
		inc := append([]float64(nil), m.(*model).z...)
		m.Reset(x)
		ref := m.(*model).z
		num, den := 0.0, 0.0
		for i := range ref {
			num += (inc[i] - ref[i]) * (inc[i] - ref[i])
			den += ref[i] * ref[i]
		}
		rel := math.Sqrt(num / math.Max(den, 1e-300))
		t.Logf("%v: relative drift of z after 5000 updates: %.2e", loss, rel)
		if rel > 1e-12 {
			t.Errorf("%v: drift %v > 1e-12", loss, rel)
		}
	}
}

func TestLineCurvatureDescent(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, loss := range losses {
		pr := tiny(t, loss, 30, 8, 6)
		vs := pr.Vertices()
		for trial := 0; trial < 200; trial++ {
			x := randomFeasible(pr, rng, 0.3)
			m := pr.NewModel(x)
			var d solver.Direction
			gmax := 1.0
			switch trial % 3 {
			case 0:
				d = solver.Direction{XCoef: -1, Terms: []solver.Term{{Coef: 1, V: vs[rng.IntN(len(vs))]}}}
			case 1:
				d = solver.Direction{XCoef: 1, Terms: []solver.Term{{Coef: -1, V: vs[rng.IntN(len(vs))]}}}
				gmax = 3 * rng.Float64()
			default:
				d = solver.Direction{Terms: []solver.Term{{Coef: 1, V: vs[rng.IntN(len(vs))]}, {Coef: -1, V: vs[rng.IntN(len(vs))]}}}
				gmax = 0.5
			}
			var batch []int
			if trial%2 == 1 {
				batch = rng.Perm(pr.n)[:1+rng.IntN(pr.n)]
			}
			g := make([]float64, pr.Dim())
			m.Gradient(0, g, x, batch)
			dx := make([]float64, pr.Dim())
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
			l := m.Line(0, x, d, batch)
			M := l.Curvature(gmax)
			if M < 0 || math.IsNaN(M) {
				t.Fatalf("%v: curvature %v", loss, M)
			}
			for s := 1; s <= 20; s++ {
				gam := gmax * float64(s) / 20
				dl := l.Delta(gam)
				bound := gam*slope + 0.5*M*gam*gam
				if dl > bound+1e-9*math.Max(1, math.Abs(bound)) {
					t.Fatalf("%v trial %d: Delta(%v) = %v exceeds the descent bound %v (M = %v)", loss, trial, gam, dl, bound, M)
				}
				if batch == nil {
					xg := append([]float64(nil), x...)
					for i := range xg {
						xg[i] += gam * dx[i]
					}
					direct := pr.P1Value(xg) - pr.P1Value(x)
					if math.Abs(direct-dl) > 1e-9*math.Max(1, math.Abs(pr.P1Value(x))) {
						t.Fatalf("%v: Delta %v, direct difference %v", loss, dl, direct)
					}
				}
			}
			if loss == Squared {
				// exact for the squared loss: Delta = γφ'(0) + ½Mγ²
				gam := gmax
				if r := l.Delta(gam) - (gam*slope + 0.5*M*gam*gam); math.Abs(r) > 1e-9*math.Max(1, M) {
					t.Fatalf("squared loss: curvature not exact (residual %v)", r)
				}
			}
		}
	}
}

func TestPoissonCurvatureOverflow(t *testing.T) {
	pr, err := New(Config{Loss: Poisson, X: mat.NewDense(2, 1, []float64{1, 2}), Y: []float64{1, 0}, Lambda: 1, T: 1000})
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, 2)
	m := pr.NewModel(x)
	l := m.Line(0, x, solver.Direction{XCoef: -1, Terms: []solver.Term{{Coef: 1, V: pr.Vertices()[1]}}}, nil)
	if c := l.Curvature(1); !math.IsInf(c, 1) {
		t.Errorf("curvature over a segment reaching z = 2000: %v, want +Inf", c)
	}
	if c := l.Curvature(1e-3); math.IsInf(c, 0) || c <= 0 {
		t.Errorf("curvature over a short segment: %v, want finite and positive", c)
	}
	if pr.LipschitzBound() != math.MaxFloat64 {
		t.Errorf("Poisson Lipschitz bound with T = 1000 should saturate, got %v", pr.LipschitzBound())
	}
}

func TestLogisticLabels(t *testing.T) {
	s, err := Generate(Logistic, 20, 5, 2, 1, 9)
	if err != nil {
		t.Fatal(err)
	}
	y01 := make([]float64, len(s.Y))
	for i, y := range s.Y {
		if y > 0 {
			y01[i] = 1
		}
	}
	a, err := New(Config{Loss: Logistic, X: s.X, Y: s.Y, Lambda: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(Config{Loss: Logistic, X: s.X, Y: y01, Lambda: 1})
	if err != nil {
		t.Fatal(err)
	}
	x := []float64{0.3, -0.2, 0, 0.1, 0, 1}
	if a.Objective(x) != b.Objective(x) {
		t.Errorf("0/1 labels give %v, ±1 labels %v", b.Objective(x), a.Objective(x))
	}
	bad := append([]float64(nil), s.Y...)
	bad[6] = 0.5
	_, err = New(Config{Loss: Logistic, X: s.X, Y: bad, Lambda: 1, YSource: "labels.csv"})
	if err == nil || err.Error() != "labels.csv: row 7: label 0.5 must be -1 or +1 (or 0/1, with 0 read as -1)" {
		t.Errorf("bad label: error %v", err)
	}
}

func TestConfigErrors(t *testing.T) {
	x := mat.NewDense(3, 2, []float64{1, 2, 3, 4, 5, 6})
	cases := []struct {
		cfg  Config
		want string
	}{
		{Config{Loss: Squared, X: x, Y: []float64{1, 2}, Lambda: 1, YSource: "y.csv"}, "y.csv: has 2 responses, but X has 3 rows"},
		{Config{Loss: Squared, X: x, Y: []float64{1, 2, 3}, Lambda: 0}, "lambda: must be a finite number > 0, got 0"},
		{Config{Loss: Squared, X: x, Y: []float64{1, 2, 3}, Lambda: 1, T: -1}, "T: must be a finite number ≥ 0 (0: the safe bound), got -1"},
		{Config{Loss: Poisson, X: x, Y: []float64{1, -2, 3}, Lambda: 1}, "y: row 2: count -2 must be ≥ 0"},
	}
	for _, c := range cases {
		if _, err := New(c.cfg); err == nil || err.Error() != c.want {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
}

func TestSafeT(t *testing.T) {
	// Poisson: F(0) = n, Σ inf = Σ_{y>0} (y − y log y).
	x := mat.NewDense(3, 1, []float64{1, 2, 3})
	pr, err := New(Config{Loss: Poisson, X: x, Y: []float64{0, 1, 4}, Lambda: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := (3 - (0 + 1 + (4 - 4*math.Log(4)))) / 2
	if math.Abs(pr.T()-want) > 1e-14 {
		t.Errorf("safe T %v, want %v", pr.T(), want)
	}
	lg, _ := New(Config{Loss: Logistic, X: x, Y: []float64{1, -1, 1}, Lambda: 0.5})
	if math.Abs(lg.T()-3*math.Log(2)/0.5) > 1e-14 {
		t.Errorf("logistic safe T %v", lg.T())
	}
	sq, _ := New(Config{Loss: Squared, X: x, Y: []float64{1, 2, 2}, Lambda: 3, T: 0.25})
	if sq.T() != 0.25 || sq.SafeT() != 4.5/3 {
		t.Errorf("squared T %v safe %v", sq.T(), sq.SafeT())
	}
}

func TestLipschitzBound(t *testing.T) {
	// The bound must dominate ‖X‖₂² computed by an SVD, times sup f″.
	for _, loss := range []Loss{Squared, Logistic} {
		pr := tiny(t, loss, 50, 12, 7)
		var svd mat.SVD
		X := mat.NewDense(pr.n, pr.p, pr.x)
		if !svd.Factorize(X, mat.SVDNone) {
			t.Fatal("SVD failed")
		}
		s := svd.Values(nil)[0]
		exact := s * s * loss.maxCurv()
		b := pr.LipschitzBound()
		if b < exact || b > 1.06*exact {
			t.Errorf("%v: bound %v, exact %v", loss, b, exact)
		}
	}
}

func TestSoftThresholdAndLift(t *testing.T) {
	dst := make([]float64, 5)
	SoftThreshold(dst, []float64{3, -3, 0.5, -0.5, 1}, 1)
	want := []float64{2, -2, 0, 0, 0}
	for i := range want {
		if dst[i] != want[i] {
			t.Fatalf("soft threshold %v, want %v", dst, want)
		}
	}
	x := mat.NewDense(2, 2, []float64{1, 0, 0, 1})
	pr, _ := New(Config{Loss: Squared, X: x, Y: []float64{1, 1}, Lambda: 1, T: 2})
	lx := make([]float64, 3)
	pr.Lift(lx, []float64{0.5, -0.25})
	if lx[0] != 0.5 || lx[1] != -0.25 || lx[2] != 0.75 {
		t.Errorf("lift %v", lx)
	}
	pr.Lift(lx, []float64{3, -1})
	if lx[0] != 1.5 || lx[1] != -0.5 || lx[2] != 2 {
		t.Errorf("lift beyond T: %v, want (1.5, -0.5, 2)", lx)
	}
}

func TestGenerateDeterministic(t *testing.T) {
	for _, loss := range losses {
		a, _ := Generate(loss, 20, 10, 3, 1, 42)
		b, _ := Generate(loss, 20, 10, 3, 1, 42)
		if !mat.Equal(a.X, b.X) || len(a.Support) != 3 {
			t.Fatalf("%v: not deterministic", loss)
		}
		for i := range a.Y {
			if a.Y[i] != b.Y[i] {
				t.Fatalf("%v: responses differ", loss)
			}
		}
		if loss == Poisson {
			for _, y := range a.Y {
				if y < 0 || y != math.Trunc(y) {
					t.Fatalf("poisson response %v", y)
				}
			}
		}
	}
	if _, err := Generate(Squared, 5, 3, 4, 1, 1); err == nil || !strings.Contains(err.Error(), "k must") {
		t.Errorf("k > p: %v", err)
	}
}

func sameVertex(a, b solver.Vertex) bool {
	if a.Key != b.Key || len(a.Idx) != len(b.Idx) {
		return false
	}
	for i := range a.Idx {
		if a.Idx[i] != b.Idx[i] || a.Val[i] != b.Val[i] {
			return false
		}
	}
	return true
}

func TestWithLambda(t *testing.T) {
	s, _ := Generate(Poisson, 30, 5, 2, 0, 3)
	a, err := New(Config{Loss: Poisson, X: s.X, Y: s.Y, Lambda: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := a.WithLambda(2.5, 0)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := New(Config{Loss: Poisson, X: s.X, Y: s.Y, Lambda: 2.5})
	if math.Abs(b.T()-c.T()) > 1e-12*c.T() || b.Lambda() != 2.5 {
		t.Errorf("WithLambda T %v, fresh %v", b.T(), c.T())
	}
	x := []float64{0.1, 0, -0.2, 0, 0, 0.3}
	if b.Objective(x) != c.Objective(x) {
		t.Errorf("objective %v, fresh %v", b.Objective(x), c.Objective(x))
	}
	if _, err := a.WithLambda(0, 0); err == nil {
		t.Error("λ = 0 accepted")
	}
}

func TestExtraSupport(t *testing.T) {
	x := mat.NewDense(1, 4, []float64{1, 1, 1, 1})
	pr, _ := New(Config{Loss: Squared, X: x, Y: []float64{1}, Lambda: 1})
	e := pr.Extra([]float64{0.5, 1e-17, 0, -0.25, 1})
	if e["nnz"] != 2 || e["t_slack"] != 0.25 {
		t.Errorf("extra %v, want nnz 2 (the 1e-17 residue ignored) and slack 0.25", e)
	}
}

// The oracle with a zero β-gradient and a negative t-gradient must pick a
// vertex T·(±e_j, 1) (value T·g_t < 0), not 0.
func TestLMOZeroBetaGradient(t *testing.T) {
	syn, err := Generate(Squared, 20, 4, 2, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := New(Config{Loss: Squared, X: syn.X, Y: syn.Y, Lambda: 1})
	if err != nil {
		t.Fatal(err)
	}
	g := make([]float64, pr.Dim())
	g[pr.P()] = -1
	v := pr.LMO(0, g)
	best := 0.0
	for _, u := range pr.Vertices() {
		best = math.Min(best, u.Dot(g))
	}
	if got := v.Dot(g); got != best {
		t.Fatalf("LMO value %v (vertex %s), the minimum over the vertices is %v", got, v.Key, best)
	}
}

func TestTinyLambdaRejected(t *testing.T) {
	syn, err := Generate(Squared, 20, 4, 2, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(Config{Loss: Squared, X: syn.X, Y: syn.Y, Lambda: 1e-310})
	if err == nil || !strings.Contains(err.Error(), "lambda") {
		t.Fatalf("error %v, want one naming lambda", err)
	}
}
