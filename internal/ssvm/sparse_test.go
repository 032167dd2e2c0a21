package ssvm

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/fwlab/fwlab/internal/solver"
)

// viterbiFull is the plain Viterbi recursion scanning every predecessor,
// the reference for the pruned decoder.
func viterbiFull(E, first, last, trans []float64, K int, truth []int, out []int) float64 {
	L := len(out)
	u := func(t int) []float64 {
		v := append([]float64(nil), E[t*K:(t+1)*K]...)
		for k := range v {
			if t == 0 {
				v[k] += first[k]
			}
		}
		for k := range v {
			if t == L-1 {
				v[k] += last[k]
			}
		}
		for k := range v {
			if truth != nil && k != truth[t] {
				v[k] += 1 / float64(L)
			}
		}
		return v
	}
	prev := u(0)
	back := make([]int, L*K)
	for t := 1; t < L; t++ {
		ut := u(t)
		cur := make([]float64, K)
		for k := 0; k < K; k++ {
			best, arg := prev[0]+trans[K*k], 0
			for j := 1; j < K; j++ {
				if s := prev[j] + trans[j+K*k]; s > best {
					best, arg = s, j
				}
			}
			cur[k] = best + ut[k]
			back[t*K+k] = arg
		}
		prev = cur
	}
	best, arg := prev[0], 0
	for k := 1; k < K; k++ {
		if prev[k] > best {
			best, arg = prev[k], k
		}
	}
	out[L-1] = arg
	for t := L - 1; t > 0; t-- {
		out[t-1] = back[t*K+out[t]]
	}
	return best
}

// TestViterbiPruningIsExact compares the pruned decoder with the full scan
// bit for bit: labelling and score, with and without the loss term, on
// continuous scores, on small integers (many ties, which must go to the
// lowest label), on scores of very different scales, and with non-finite
// values (where no pruning is done).
func TestViterbiPruningIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 11))
	gens := map[string]func() float64{
		"normal":   rng.NormFloat64,
		"integers": func() float64 { return float64(rng.IntN(3)) },
		"scales":   func() float64 { return rng.NormFloat64() * math.Pow(10, float64(rng.IntN(7)-3)) },
		"nonfinite": func() float64 {
			switch rng.IntN(40) {
			case 0:
				return math.NaN()
			case 1:
				return math.Inf(1 - 2*rng.IntN(2))
			}
			return rng.NormFloat64()
		},
	}
	for name, gen := range gens {
		for trial := 0; trial < 300; trial++ {
			K := 1 + rng.IntN(26)
			if trial%4 == 0 {
				K = 26 // OCR's alphabet, where the vector kernels run
			}
			L := 1 + rng.IntN(10)
			E := make([]float64, L*K)
			first, last, trans := make([]float64, K), make([]float64, K), make([]float64, K*K)
			for _, v := range [][]float64{E, first, last, trans} {
				for j := range v {
					v[j] = gen()
				}
			}
			// Emission scores dominate on real data: scale them up at times.
			if trial%2 == 0 {
				for j := range E {
					E[j] *= 10
				}
			}
			truth := make([]int, L)
			for j := range truth {
				truth[j] = rng.IntN(K)
			}
			dec := newDecoder(K, L)
			for _, tr := range [][]int{nil, truth} {
				got, want := make([]int, L), make([]int, L)
				gs := dec.Viterbi(E, first, last, trans, tr, got)
				ws := viterbiFull(E, first, last, trans, K, tr, want)
				if math.Float64bits(gs) != math.Float64bits(ws) && !(math.IsNaN(gs) && math.IsNaN(ws)) {
					t.Fatalf("%s trial %d (K=%d L=%d): score %v, full scan %v", name, trial, K, L, gs, ws)
				}
				for j := range got {
					if got[j] != want[j] {
						t.Fatalf("%s trial %d (K=%d L=%d): labelling %v, full scan %v", name, trial, K, L, got, want)
					}
				}
			}
		}
	}
}

// randomRows builds a data set of N letters with F features, a fraction of
// them zero, the others 1 (binary) or random.
func randomRows(rng *rand.Rand, N, F int, density float64, binary bool) *Dataset {
	ds := &Dataset{Name: "rows", Labels: 1, Feat: F, X: make([]float64, N*F), Y: make([]int, N), Words: []Word{{0, N}}}
	for j := range ds.X {
		if rng.Float64() < density {
			ds.X[j] = 1
			if !binary {
				ds.X[j] = rng.NormFloat64()
			}
		}
	}
	return ds
}

// TestSparseRowsMatchDense checks the sparse dot product and update against
// gonum's dense kernels bit for bit, for every feature count from 1 to 140
// (every split into four lanes and a tail), binary and real features, at
// several densities, with weights that include zeros, negative zeros and
// values of very different sizes.
func TestSparseRowsMatchDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for F := 1; F <= 140; F++ {
		for _, binary := range []bool{true, false} {
			for _, density := range []float64{0, 0.2, 0.7, 1} {
				ds := randomRows(rng, 6, F, density, binary)
				sx, err := newSparseRows(ds)
				if err != nil {
					t.Fatal(err)
				}
				if sx.binary != (binary || density == 0) {
					t.Fatalf("F=%d density %v: binary %v, want %v", F, density, sx.binary, binary)
				}
				w := make([]float64, F)
				for f := range w {
					switch rng.IntN(5) {
					case 0:
						w[f] = 0
					case 1:
						w[f] = math.Copysign(0, -1)
					default:
						w[f] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(17)-8))
					}
				}
				for j := 0; j < 6; j++ {
					x := ds.X[j*F : (j+1)*F]
					if got, want := sx.dot(j, w), floats.Dot(w, x); math.Float64bits(got) != math.Float64bits(want) {
						t.Fatalf("F=%d binary %v density %v letter %d: sparse dot %v, dense %v", F, binary, density, j, got, want)
					}
					a := rng.NormFloat64()
					got := make([]float64, F)
					for f := range got {
						got[f] = rng.NormFloat64() // no −0: the documented precondition
					}
					want := append([]float64(nil), got...)
					sx.axpy(j, a, got)
					floats.AddScaled(want, a, x)
					for f := range got {
						if math.Float64bits(got[f]) != math.Float64bits(want[f]) {
							t.Fatalf("F=%d binary %v letter %d: sparse update differs at %d: %v, dense %v", F, binary, j, f, got[f], want[f])
						}
					}
				}
			}
		}
	}
}

// TestSparseEmissionsOCR checks the emission scores of every OCR training
// letter for every label against the dense dot products, bit for bit, and
// that OCR's features are all binary (the pixels and the constant 1).
func TestSparseEmissionsOCR(t *testing.T) {
	p := ocrProblem(t, 0.01)
	if !p.sx.binary {
		t.Fatal("OCR features are not all 0 or 1")
	}
	rng := rand.New(rand.NewPCG(8, 9))
	w := make([]float64, p.D)
	for j := range w {
		w[j] = rng.NormFloat64()
	}
	K := p.K
	wt := make([]float64, K*p.F)
	transposeEmissions(w, wt, K, p.F)
	acc := make([]float64, 4*K)
	for _, wd := range p.Train.Words {
		want := make([]float64, wd.Len*K)
		p.wordEmissions(p.Train, wd, w, want)
		got, gather := make([]float64, wd.Len*K), make([]float64, wd.Len*K)
		p.sx.emissions(wd, K, wt, got, acc)
		p.sx.emissionsGather(wd, K, w, gather)
		for j := range got {
			if math.Float64bits(got[j]) != math.Float64bits(want[j]) || math.Float64bits(gather[j]) != math.Float64bits(want[j]) {
				t.Fatalf("word at %d: emission %d is %v (gathered %v), dense %v", wd.Start, j, got[j], gather[j], want[j])
			}
		}
	}
}

// checkTrans checks a predecessor-major copy of w's transitions bit for
// bit, and that lb and ub bound its rows.
func checkTrans(t *testing.T, p *Problem, w, tT, ub, lb []float64, ok bool) {
	t.Helper()
	K := p.K
	_, _, trans := p.parts(w)
	if !ok {
		t.Fatal("finite transitions reported as non-finite")
	}
	for j := 0; j < K; j++ {
		for k := 0; k < K; k++ {
			v := trans[j+K*k]
			if math.Float64bits(tT[j*K+k]) != math.Float64bits(v) {
				t.Fatalf("transition (%d, %d): copy %v, w has %v", j, k, tT[j*K+k], v)
			}
			if v > ub[j] || v < lb[j] {
				t.Fatalf("transition (%d, %d) = %v outside its row's bounds [%v, %v]", j, k, v, lb[j], ub[j])
			}
		}
	}
}

// TestTransposedWeightsFollowW checks that the copies of w that bcfw and
// bcfw-as score with (emission weights by feature, transitions by
// predecessor with bounds on their rows, and the same for the sampled
// I_J w) stay equal to w bit for bit through block steps and the
// once-per-pass recomputation (w̄: TestLazyAverageMatchesRecursion).
func TestTransposedWeightsFollowW(t *testing.T) {
	p := smallChain(t, 30, 5, 0.05)
	n := p.N()
	for _, algo := range []string{AlgoBCFW, AlgoBCFWAS} {
		m, err := p.NewMethod(Options{Algo: algo, Average: true, Limits: defaultLimits(n), Seed: 5,
			Schedule: solver.Schedule{Kind: "geometric", M0: 5, Growth: 1.01}})
		if err != nil {
			t.Fatal(err)
		}
		wt := make([]float64, p.K*p.F)
		for k := 1; k <= 3*n+7; k++ {
			m.iterate()
			transposeEmissions(m.weights(), wt, p.K, p.F)
			for j := range wt {
				if math.Float64bits(wt[j]) != math.Float64bits(m.wt[j]) {
					t.Fatalf("%s iteration %d: feature-major weight %d is %v, w has %v", algo, k, j, m.wt[j], wt[j])
				}
			}
			checkTrans(t, p, m.weights(), m.tT, m.ub, m.lb, m.transOK)
			if algo == AlgoBCFWAS && m.o.Schedule.Size(k, p.D) < p.D {
				checkTrans(t, p, m.wJ, m.tJT, m.ubJ, m.lbJ, true)
			}
		}
	}
}

// recomputeWDense is w's recomputation from the block marginals as one
// gonum product Rᵀ·X with R = onehot(y) − μ, the reference for the sparse
// accumulation.
func recomputeWDense(m *Method, dst []float64) {
	p := m.p
	K, F := p.K, p.F
	ds := p.Train
	N := ds.Letters()
	c := 1 / (p.Lambda * float64(p.N()))
	R := make([]float64, N*K)
	for j := 0; j < N; j++ {
		for k := 0; k < K; k++ {
			R[j*K+k] = -m.mu[j*K+k]
		}
		R[j*K+ds.Y[j]]++
	}
	zero(dst)
	We := mat.NewDense(K, F, dst[:K*F])
	We.Mul(mat.NewDense(N, K, R).T(), mat.NewDense(N, F, ds.X))
	first, last, trans := p.parts(dst)
	for i, wd := range ds.Words {
		for k := 0; k < K; k++ {
			first[k] += R[wd.Start*K+k]
			last[k] += R[(wd.Start+wd.Len-1)*K+k]
		}
		truth := ds.Y[wd.Start : wd.Start+wd.Len]
		for j, v := range m.transMarg(i) {
			trans[j] -= v
		}
		for t := 0; t+1 < len(truth); t++ {
			trans[truth[t]+K*truth[t+1]]++
		}
	}
	for j := range dst {
		dst[j] *= c
	}
}

// TestRecomputeWMatchesProduct checks the sparse recomputation of w against
// the dense matrix product bit for bit, on the synthetic chain (real
// features) and on OCR (binary), after some passes of bcfw.
func TestRecomputeWMatchesProduct(t *testing.T) {
	probs := map[string]*Problem{"chain": smallChain(t, 40, 5, 0.05)}
	if !testing.Short() {
		probs["ocr"] = ocrProblem(t, 0.01)
	}
	for name, p := range probs {
		n := p.N()
		m, err := p.NewMethod(Options{Algo: AlgoBCFW, Limits: defaultLimits(n), Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		for k := 0; k < 2*n+n/3; k++ {
			m.iterate()
		}
		got, want := make([]float64, p.D), make([]float64, p.D)
		m.recomputeW(got)
		recomputeWDense(m, want)
		for j := range got {
			if math.Float64bits(got[j]) != math.Float64bits(want[j]) {
				t.Fatalf("%s: w[%d] = %v, dense product %v", name, j, got[j], want[j])
			}
		}
	}
}

// TestTransitionSupport checks that every block's recorded support lists,
// in increasing order, every nonzero transition marginal (and only
// nonzero ones) through runs of bcfw and bcfw-as, with and without feature
// sampling.
func TestTransitionSupport(t *testing.T) {
	p := smallChain(t, 30, 5, 0.05)
	n, K := p.N(), p.K
	for _, o := range []Options{
		{Algo: AlgoBCFW},
		{Algo: AlgoBCFWAS, Schedule: solver.Schedule{Kind: "geometric", M0: 5, Growth: 1.01}},
		{Algo: AlgoBCFWAS, Schedule: solver.Schedule{Kind: "paper", Rho: 0.1, Alpha: 0.5}},
	} {
		o.Limits, o.Seed = defaultLimits(n), 6
		m, err := p.NewMethod(o)
		if err != nil {
			t.Fatal(err)
		}
		for k := 1; k <= 10*n; k++ {
			m.iterate()
			if k%7 != 0 && k < 10*n {
				continue
			}
			for i := 0; i < n; i++ {
				mt := m.transMarg(i)
				in := make([]bool, K*K)
				prev := -1
				for _, j := range m.support(i) {
					if int(j) <= prev {
						t.Fatalf("%s iteration %d block %d: support %v not increasing", o.Algo, k, i, m.support(i))
					}
					prev = int(j)
					in[j] = true
					if mt[j] == 0 {
						t.Fatalf("%s iteration %d block %d: support lists %d where the marginal is zero", o.Algo, k, i, j)
					}
				}
				for j, v := range mt {
					if v != 0 && !in[j] {
						t.Fatalf("%s iteration %d block %d: marginal %d = %v missing from the support", o.Algo, k, i, j, v)
					}
				}
			}
		}
	}
}

func TestTransitionsAndUnion(t *testing.T) {
	for _, c := range []struct {
		y    []int
		K    int
		want []int
	}{
		{[]int{0}, 3, []int{}},
		{[]int{2, 1}, 3, []int{5}},
		{[]int{1, 1, 1, 1}, 3, []int{4}},
		{[]int{2, 0, 2, 0, 1}, 3, []int{2, 3, 6}},
		{[]int{0, 1, 0, 1, 2, 2}, 3, []int{1, 3, 7, 8}},
	} {
		got := transitions(c.y, c.K, nil)
		if !slices.Equal(got, c.want) {
			t.Errorf("transitions(%v, %d) = %v, want %v", c.y, c.K, got, c.want)
		}
	}
	for _, c := range []struct {
		a    []uint16
		b    []int
		want []int
	}{
		{nil, nil, []int{}},
		{[]uint16{1, 5}, nil, []int{1, 5}},
		{nil, []int{0, 9}, []int{0, 9}},
		{[]uint16{1, 4, 9}, []int{0, 4, 10}, []int{0, 1, 4, 9, 10}},
		{[]uint16{2, 3}, []int{2, 3}, []int{2, 3}},
	} {
		got := union(c.a, c.b, nil)
		if !slices.Equal(got, c.want) {
			t.Errorf("union(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestSparseRowsRejectsTooManyFeatures(t *testing.T) {
	F := 1<<16 + 1
	ds := &Dataset{Name: "wide", Labels: 2, Feat: F, X: make([]float64, F), Y: []int{0}, Words: []Word{{0, 1}}}
	_, err := newSparseRows(ds)
	if err == nil || !strings.Contains(err.Error(), "features per letter") {
		t.Fatalf("error %v, want one naming the features per letter", err)
	}
}

// TestTransitionArenaRelocation runs bcfw and bcfw-as twice, once with every
// block's room for transition marginals shrunk to its current size and
// the arenas full, so that blocks move and the arenas grow: the runs are
// the same bit for bit.
func TestTransitionArenaRelocation(t *testing.T) {
	p := smallChain(t, 30, 5, 0.05)
	n := p.N()
	for _, algo := range []string{AlgoBCFW, AlgoBCFWAS} {
		o := Options{Algo: algo, Average: true, Limits: defaultLimits(n), Seed: 8,
			Schedule: solver.Schedule{Kind: "paper", Rho: 0.1, Alpha: 0.5}}
		a, err := p.NewMethod(o)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := p.NewMethod(o)
		for i := range b.tCap {
			b.tCap[i] = b.supN[i]
		}
		b.tsup, b.tval = b.tsup[:len(b.tsup):len(b.tsup)], b.tval[:len(b.tval):len(b.tval)]
		start := append([]int32(nil), b.tStart...)
		for k := 0; k < 6*n; k++ {
			a.iterate()
			b.iterate()
		}
		moved := 0
		for i := range start {
			if b.tStart[i] != start[i] {
				moved++
			}
		}
		if moved == 0 {
			t.Fatalf("%s: no block moved", algo)
		}
		for j := range a.w {
			if math.Float64bits(a.weights()[j]) != math.Float64bits(b.weights()[j]) || math.Float64bits(a.avgWeights()[j]) != math.Float64bits(b.avgWeights()[j]) {
				t.Fatalf("%s: w[%d] %v vs %v after moving %d blocks", algo, j, a.weights()[j], b.weights()[j], moved)
			}
		}
		for i := 0; i < n; i++ {
			if !slices.Equal(a.transMarg(i), b.transMarg(i)) {
				t.Fatalf("%s: block %d's transition marginals differ", algo, i)
			}
		}
	}
}
