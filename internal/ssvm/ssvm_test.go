package ssvm

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
)

// bruteMax enumerates every labelling of length L over K labels.
func bruteMax(E, first, last, trans []float64, K, L int, truth []int) (float64, []int) {
	y := make([]int, L)
	best := math.Inf(-1)
	var arg []int
	for {
		s := Score(E, first, last, trans, K, y)
		if truth != nil {
			s += Loss(truth, y)
		}
		if s > best {
			best, arg = s, append([]int(nil), y...)
		}
		t := 0
		for t < L {
			y[t]++
			if y[t] < K {
				break
			}
			y[t] = 0
			t++
		}
		if t == L {
			return best, arg
		}
	}
}

func TestViterbiMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := 0; trial < 400; trial++ {
		K := 1 + rng.IntN(5)
		L := 1 + rng.IntN(4)
		E := make([]float64, L*K)
		first, last, trans := make([]float64, K), make([]float64, K), make([]float64, K*K)
		for _, v := range [][]float64{E, first, last, trans} {
			for j := range v {
				v[j] = rng.NormFloat64()
			}
		}
		truth := make([]int, L)
		for j := range truth {
			truth[j] = rng.IntN(K)
		}
		dec := newDecoder(K, L)
		for _, tr := range [][]int{nil, truth} {
			y := make([]int, L)
			got := dec.Viterbi(E, first, last, trans, tr, y)
			want, wantY := bruteMax(E, first, last, trans, K, L, tr)
			s := Score(E, first, last, trans, K, y)
			if tr != nil {
				s += Loss(tr, y)
			}
			if math.Abs(got-want) > 1e-12 || math.Abs(s-want) > 1e-12 {
				t.Fatalf("trial %d (K=%d L=%d loss=%v): viterbi %v (labelling %v scores %v), brute force %v at %v", trial, K, L, tr != nil, got, y, s, want, wantY)
			}
		}
	}
}

func TestViterbiTiesGoToLowestLabel(t *testing.T) {
	// All scores zero: every labelling ties, the all-zero labelling wins;
	// with the loss term every all-wrong labelling ties and the lowest wrong
	// label wins at each position.
	K, L := 4, 3
	E, first, last, trans := make([]float64, L*K), make([]float64, K), make([]float64, K), make([]float64, K*K)
	dec := newDecoder(K, L)
	y := make([]int, L)
	dec.Viterbi(E, first, last, trans, nil, y)
	if y[0] != 0 || y[1] != 0 || y[2] != 0 {
		t.Fatalf("plain decoding of zero scores: got %v, want [0 0 0]", y)
	}
	dec.Viterbi(E, first, last, trans, []int{0, 2, 1}, y)
	if want := []int{1, 0, 0}; y[0] != want[0] || y[1] != want[1] || y[2] != want[2] {
		t.Fatalf("loss-augmented decoding of zero scores: got %v, want %v", y, want)
	}
}

func smallChain(t testing.TB, train, test int, lambda float64) *Problem {
	t.Helper()
	c := DefaultChain
	c.Train, c.Test, c.Labels, c.Feat = train, test, 4, 5
	tr, te, err := Chain(c)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewProblem(tr, te, lambda)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPrimalAndGapAtZeroAreOne(t *testing.T) {
	for _, lambda := range []float64{1, 0.01} {
		p := smallChain(t, 40, 10, lambda)
		ev := newEvaluator(p).Evaluate(make([]float64, p.D), 0, true)
		if ev.Primal != 1 || ev.Gap != 1 || ev.Dual != 0 {
			t.Fatalf("λ=%v: at w = 0 want primal 1, gap 1, dual 0 exactly; got %v %v %v", lambda, ev.Primal, ev.Gap, ev.Dual)
		}
	}
}

// recordAll collects the records of a run.
func recordAll(t testing.TB, m *Method) ([]solver.Record, solver.Result) {
	t.Helper()
	var recs []solver.Record
	res, err := m.Run(context.Background(), solver.RecorderFunc(func(r solver.Record) { recs = append(recs, r) }))
	if err != nil {
		t.Fatal(err)
	}
	return recs, res
}

func paperSchedule() solver.Schedule { return solver.Schedule{Kind: "paper", Rho: 0.1, Alpha: 0.5} }

// wFromActive recomputes w = Σ_i Σ_y α_i(y) ψ_i(y)/(λn) and ℓ from the
// active sets, with the feature map directly.
func wFromActive(m *Method) ([]float64, float64) {
	p := m.p
	ds := p.Train
	w := make([]float64, p.D)
	c := 1 / (p.Lambda * float64(p.N()))
	ell := 0.0
	for i, wd := range ds.Words {
		truth := ds.Y[wd.Start : wd.Start+wd.Len]
		for _, at := range m.act[i] {
			p.AddFeatures(w, ds, wd, truth, c*at.weight)
			p.AddFeatures(w, ds, wd, at.y, -c*at.weight)
			ell += at.weight * Loss(truth, at.y) / float64(p.N())
		}
	}
	return w, ell
}

func TestBCFWASInvariants(t *testing.T) {
	for _, sc := range []solver.Schedule{paperSchedule(), {Kind: "constant", M0: 12}} {
		t.Run(sc.Kind, func(t *testing.T) { testBCFWASInvariants(t, sc) })
	}
}

func testBCFWASInvariants(t *testing.T, sched solver.Schedule) {
	p := smallChain(t, 30, 10, 0.05)
	n := p.N()
	m, err := p.NewMethod(Options{Algo: AlgoBCFWAS, Average: true, Schedule: sched,
		Limits: solver.Limits{MaxIters: 60*n + n/2, EvalEvery: n / 3}, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	var evals int
	_, err = m.Run(context.Background(), solver.RecorderFunc(func(r solver.Record) {
		kinds[r.Step]++
		if r.Gamma < 0 {
			t.Fatalf("k=%d: negative step %v", r.K, r.Gamma)
		}
		if r.Gamma > 1 && r.Step != solver.StepAway && r.Step != solver.StepDrop {
			t.Fatalf("k=%d: %s step with γ=%v > 1", r.K, r.Step, r.Gamma)
		}
		if r.Step == solver.StepCollapse && r.Gamma != 1 {
			t.Fatalf("k=%d: full collapse with γ=%v", r.K, r.Gamma)
		}
		// Dual feasibility of every block; no two atoms share their
		// labelling's storage (labellings of atoms that left are reused).
		owner := map[*int]int{}
		for i, as := range m.act {
			sum := 0.0
			seen := map[string]bool{}
			for _, at := range as {
				key := fmt.Sprint(at.y)
				if !(at.weight > 0) || seen[key] {
					t.Fatalf("k=%d block %d: weight %v (duplicate %v)", r.K, i, at.weight, seen[key])
				}
				seen[key] = true
				if j, ok := owner[&at.y[0]]; ok {
					t.Fatalf("k=%d: blocks %d and %d share a labelling's storage", r.K, j, i)
				}
				owner[&at.y[0]] = i
				sum += at.weight
			}
			if math.Abs(sum-1) > 1e-12 {
				t.Fatalf("k=%d block %d: weights sum to %v", r.K, i, sum)
			}
		}
		if !r.Evaluated() {
			return
		}
		evals++
		for _, pair := range [][2]string{{"primal", "dual"}, {"primal_plain", "dual_plain"}} {
			primal, dual := r.Extra[pair[0]], r.Extra[pair[1]]
			gap := *r.Gap
			if pair[0] == "primal_plain" {
				gap = r.Extra["gap_plain"]
			}
			if gap < 0 {
				t.Fatalf("k=%d: negative gap %v", r.K, gap)
			}
			if math.Abs(primal-(dual+gap)) > 1e-9*math.Abs(primal) {
				t.Fatalf("k=%d: %s %v ≠ %s + gap %v", r.K, pair[0], primal, pair[1], dual+gap)
			}
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	w, ell := wFromActive(m)
	for j := range w {
		if math.Abs(w[j]-m.weights()[j]) > 1e-9*(1+math.Abs(w[j])) {
			t.Fatalf("w[%d] = %v, recomputed from the active sets %v", j, m.weights()[j], w[j])
		}
	}
	if math.Abs(ell-m.ell) > 1e-12 {
		t.Fatalf("ℓ = %v, recomputed %v", m.ell, ell)
	}
	if kinds[solver.StepAway]+kinds[solver.StepDrop] == 0 || kinds[solver.StepFW] == 0 {
		t.Fatalf("expected FW and away steps, got %v", kinds)
	}
	t.Logf("step kinds %v, %d evaluations", kinds, evals)
}

func TestSmallChainConvergence(t *testing.T) {
	p := smallChain(t, 20, 10, 1)
	n := p.N()
	run := func(algo string, tol float64) Eval {
		m, err := p.NewMethod(Options{Algo: algo, Average: false, Schedule: paperSchedule(),
			Limits: solver.Limits{MaxIters: 5000 * n, GapTol: tol, EvalEvery: n}, Seed: 11})
		if err != nil {
			t.Fatal(err)
		}
		_, res := recordAll(t, m)
		if res.Summary.Status != solver.StatusConverged {
			t.Fatalf("%s: status %s after %v passes, gap %v (tolerance %v)", algo, res.Summary.Status, res.Summary.Passes, res.Summary.Gap, tol)
		}
		t.Logf("%s: gap %.3g after %.0f passes", algo, res.Summary.Gap, res.Summary.Passes)
		return *m.last
	}
	as := run(AlgoBCFWAS, 1e-6)
	fw := run(AlgoBCFW, 1e-4)
	// Both bracket the optimum: dual ≤ OPT ≤ primal, so each primal is within
	// its own gap of the other's dual.
	if fw.Primal < as.Dual-1e-12 || as.Primal < fw.Dual-1e-12 {
		t.Fatalf("inconsistent brackets: bcfw-as [%v, %v], bcfw [%v, %v]", as.Dual, as.Primal, fw.Dual, fw.Primal)
	}
	if math.Abs(as.Primal-fw.Primal) > as.Gap+fw.Gap || math.Abs(as.Dual-fw.Dual) > as.Gap+fw.Gap {
		t.Fatalf("values disagree beyond the gaps: bcfw-as [%v, %v], bcfw [%v, %v]", as.Dual, as.Primal, fw.Dual, fw.Primal)
	}
}

func TestReproducible(t *testing.T) {
	p := smallChain(t, 25, 5, 0.05)
	for _, algo := range []string{AlgoBCFWAS, AlgoBCFW, AlgoSSG} {
		var runs [2][]solver.Record
		for r := range runs {
			m, err := p.NewMethod(Options{Algo: algo, Average: true, Schedule: paperSchedule(),
				Limits: solver.Limits{MaxIters: 300, EvalEvery: 50}, Seed: 5})
			if err != nil {
				t.Fatal(err)
			}
			runs[r], _ = recordAll(t, m)
		}
		for k := range runs[0] {
			a, b := runs[0][k], runs[1][k]
			if a.Step != b.Step || a.Gamma != b.Gamma || (a.Objective != nil && *a.Objective != *b.Objective) {
				t.Fatalf("%s: runs differ at k=%d: %+v vs %+v", algo, a.K, a, b)
			}
		}
	}
}

func TestBCFWIncrementalW(t *testing.T) {
	p := smallChain(t, 30, 10, 0.05)
	n := p.N()
	m, err := p.NewMethod(Options{Algo: AlgoBCFW, Average: false,
		Limits: solver.Limits{MaxIters: 20*n + n/2, EvalEvery: 1000 * n}, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	recordAll(t, m)
	w := make([]float64, p.D)
	ell := m.recomputeW(w)
	for j := range w {
		if math.Abs(w[j]-m.weights()[j]) > 1e-10*(1+math.Abs(w[j])) {
			t.Fatalf("w[%d] = %v, recomputed from the block marginals %v", j, m.weights()[j], w[j])
		}
	}
	if math.Abs(ell-m.ell) > 1e-12 {
		t.Fatalf("ℓ = %v, recomputed %v", m.ell, ell)
	}
	// Each block's marginals are a distribution at every position.
	K := p.K
	for i, wd := range p.Train.Words {
		mu, mt := m.blockMarg(i), m.transMarg(i)
		for t0 := 0; t0 < wd.Len; t0++ {
			sum := 0.0
			for k := 0; k < K; k++ {
				if mu[t0*K+k] < 0 {
					t.Fatalf("block %d: negative marginal", i)
				}
				sum += mu[t0*K+k]
			}
			if math.Abs(sum-1) > 1e-12 {
				t.Fatalf("block %d position %d: marginals sum to %v", i, t0, sum)
			}
		}
		sum := 0.0
		for _, v := range mt {
			sum += v
		}
		if math.Abs(sum-float64(wd.Len-1)) > 1e-12 {
			t.Fatalf("block %d: transition marginals sum to %v, want %d", i, sum, wd.Len-1)
		}
	}
}

func TestCancelAndErrors(t *testing.T) {
	p := smallChain(t, 20, 0, 0.1)
	if p.Test != nil {
		t.Fatal("an empty test set should be dropped")
	}
	m, err := p.NewMethod(Options{Algo: AlgoBCFWAS, Average: true, Schedule: paperSchedule(),
		Limits: solver.Limits{MaxIters: 1000000, EvalEvery: 100}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	res, err := m.Run(ctx, solver.RecorderFunc(func(r solver.Record) {
		n++
		if _, ok := r.Extra["test_err"]; ok {
			t.Fatal("test error reported without a test set")
		}
		if r.K == 50 {
			cancel()
		}
	}))
	if err != nil || res.Summary.Status != solver.StatusCancelled || n != 51 || res.Summary.Iters != 50 {
		t.Fatalf("cancel: err %v status %s after %d records", err, res.Summary.Status, n)
	}
	ssg, err := p.NewMethod(Options{Algo: AlgoSSG, Limits: solver.Limits{MaxIters: 30, EvalEvery: 10}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	res, _ = ssg.Run(context.Background(), solver.RecorderFunc(func(r solver.Record) {
		if r.Gap != nil {
			t.Fatal("ssg reported a duality gap")
		}
	}))
	if b, err := json.Marshal(res.Summary); err != nil || !strings.Contains(string(b), `"gap":null`) || !strings.Contains(res.Summary.Message, "no duality gap") {
		t.Fatalf("ssg summary %s (%v)", b, err)
	}
	cases := []struct {
		o    Options
		want string
	}{
		{Options{Algo: "afw", Limits: solver.Limits{MaxIters: 1}}, "algo: the structural SVM runs"},
		{Options{Algo: AlgoBCFW}, "iters: must be at least 1"},
		{Options{Algo: AlgoBCFWAS, Schedule: solver.Schedule{Kind: "paper", Rho: 2, Alpha: 0.5}, Limits: solver.Limits{MaxIters: 1}}, "rho must lie strictly between 0 and 1"},
		{Options{Algo: AlgoBCFW, DropTol: 0.5, Limits: solver.Limits{MaxIters: 1}}, "drop tolerance"},
	}
	for _, tc := range cases {
		if _, err := p.NewMethod(tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.o, err, tc.want)
		}
	}
	if _, err := NewProblem(p.Train, nil, 0); err == nil || !strings.Contains(err.Error(), "lambda: must be a positive number") {
		t.Errorf("λ = 0: error %v", err)
	}
	if _, _, err := Chain(ChainConfig{Train: 5, Labels: 9, Feat: 2, MinLen: 1, MaxLen: 2}); err == nil || !strings.Contains(err.Error(), "labels: must be between 2 and 8") {
		t.Errorf("chain labels: error %v", err)
	}
}
