package glm

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
)

// slackPoint returns a feasible point with slack: atoms +j and −j of the
// same coordinate cancel partly, plus a few others and the vertex 0.
func slackPoint(pr *Problem, rng *rand.Rand) ([]float64, *solver.ActiveSet) {
	set := solver.NewActiveSet(pr.zeroVertex())
	x := make([]float64, pr.Dim())
	ws := []float64{0.2, 0.15, 0.1, 0.05}
	vs := []solver.Vertex{pr.vertex(0, false), pr.vertex(0, true), pr.vertex(1+rng.IntN(pr.p-1), rng.IntN(2) == 0), pr.vertex(1, true)}
	rest := 1.0
	for i, v := range vs {
		set.Put(v, ws[i])
		v.AddTo(x, ws[i])
		rest -= ws[i]
	}
	set.Put(pr.zeroVertex(), rest-1) // the start's weight 1 less what the others took
	return x, set
}

// TestReshapeCollapse: the reshape sets t to ‖β‖₁, leaves β and the model's
// z = Xβ alone, lowers the P1 objective by exactly λ·slack, and its new
// representation (the oracle's own vertices, non-negative weights summing to
// one) reproduces the point.
func TestReshapeCollapse(t *testing.T) {
	for _, loss := range losses {
		t.Run(loss.String(), func(t *testing.T) {
			pr := tiny(t, loss, 30, 6, 3)
			rng := rand.New(rand.NewPCG(1, 2))
			x, set := slackPoint(pr, rng)
			if s := set.Sum(); math.Abs(s-1) > 1e-15 {
				t.Fatalf("test set sums to %v", s)
			}
			beta := append([]float64(nil), x[:pr.p]...)
			slack := x[pr.p] - l1(beta)
			if !(slack > 0.1) {
				t.Fatalf("test point has slack %v", slack)
			}
			m := pr.NewModel(x)
			before := pr.P1Value(x)
			dst := &solver.ActiveSet{}
			if !pr.Reshape(0, x, m, set, dst) {
				t.Fatal("Reshape did not move a point with slack")
			}
			for j, v := range beta {
				if x[j] != v {
					t.Fatalf("β_%d moved from %v to %v", j, v, x[j])
				}
			}
			if got, want := x[pr.p], l1(beta); got != want {
				t.Errorf("t = %v, want ‖β‖₁ = %v", got, want)
			}
			after := pr.P1Value(x)
			if d := before - after; math.Abs(d-pr.lambda*slack) > 1e-12*math.Abs(before) {
				t.Errorf("P1 objective dropped by %v, want λ·slack = %v", d, pr.lambda*slack)
			}
			// The model still holds z = Xβ.
			fresh := pr.NewModel(x).(*model)
			for i, z := range m.(*model).z {
				if math.Abs(z-fresh.z[i]) > 1e-12*(1+math.Abs(z)) {
					t.Fatalf("model z_%d = %v, recomputed %v", i, z, fresh.z[i])
				}
			}
			// The representation: oracle vertices, weights ≥ 0 summing to one,
			// Σ μ v = x.
			known := map[string]solver.Vertex{}
			for _, v := range pr.Vertices() {
				known[v.Key] = v
			}
			sum := make([]float64, pr.Dim())
			tot := 0.0
			for i := 0; i < dst.Len(); i++ {
				v, w := dst.Vertex(i)
				kv, ok := known[v.Key]
				if !ok {
					t.Fatalf("vertex key %q is not the oracle's", v.Key)
				}
				if len(kv.Idx) != len(v.Idx) {
					t.Fatalf("vertex %q differs from the oracle's", v.Key)
				}
				for k := range v.Idx {
					if kv.Idx[k] != v.Idx[k] || kv.Val[k] != v.Val[k] {
						t.Fatalf("vertex %q differs from the oracle's", v.Key)
					}
				}
				if w < 0 {
					t.Errorf("weight %v of %q is negative", w, v.Key)
				}
				tot += w
				v.AddTo(sum, w)
			}
			if math.Abs(tot-1) > 1e-14 {
				t.Errorf("weights sum to %v", tot)
			}
			for j := range sum {
				if math.Abs(sum[j]-x[j]) > 1e-13*pr.t {
					t.Errorf("Σ μ v [%d] = %v, x = %v", j, sum[j], x[j])
				}
			}
			// Nothing left to collapse: a second call does not move.
			if pr.Reshape(0, x, m, dst, &solver.ActiveSet{}) {
				t.Error("Reshape moved a point without slack")
			}
		})
	}
}

// TestReshapeKeepSlack: with KeepSlack the problem never reshapes, and
// WithLambda keeps the setting.
func TestReshapeKeepSlack(t *testing.T) {
	s, err := Generate(Squared, 30, 6, 3, 0.5, 3)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := New(Config{Loss: Squared, X: s.X, Y: s.Y, Lambda: 0.5, T: 2, KeepSlack: true})
	if err != nil {
		t.Fatal(err)
	}
	q, err := pr.WithLambda(0.7, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*Problem{pr, q} {
		x, set := slackPoint(p, rand.New(rand.NewPCG(1, 2)))
		t0 := x[p.p]
		if p.Reshape(0, x, p.NewModel(x), set, &solver.ActiveSet{}) || x[p.p] != t0 {
			t.Errorf("λ = %v: KeepSlack problem reshaped", p.lambda)
		}
	}
}

// TestReshapeResidue: a coordinate holding only round-off (what a drop step
// leaves where its atom was) gets no atom, but t still bounds ‖β‖₁ with it.
func TestReshapeResidue(t *testing.T) {
	pr := tiny(t, Squared, 30, 6, 3)
	x, set := slackPoint(pr, rand.New(rand.NewPCG(1, 2)))
	j := -1
	for k := pr.p - 1; k >= 0; k-- {
		if x[k] == 0 {
			j = k
			break
		}
	}
	if j < 0 {
		t.Fatal("test point has no zero coordinate")
	}
	x[j] = -1e-16 * pr.t
	dst := &solver.ActiveSet{}
	if !pr.Reshape(0, x, pr.NewModel(x), set, dst) {
		t.Fatal("Reshape did not move a point with slack")
	}
	for i := 0; i < dst.Len(); i++ {
		if v, _ := dst.Vertex(i); v.Key == "+"+strconv.Itoa(j) || v.Key == "-"+strconv.Itoa(j) {
			t.Errorf("the residue β_%d = %v got the atom %q", j, x[j], v.Key)
		}
	}
	if got, want := x[pr.p], l1(x[:pr.p]); got != want {
		t.Errorf("t = %v, want ‖β‖₁ = %v (with the residue)", got, want)
	}
	if dst.Len() < 2 {
		t.Errorf("the representation has %d atoms; the point's other coordinates need theirs", dst.Len())
	}
}
