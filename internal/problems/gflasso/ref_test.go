package gflasso

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/fwlab/fwlab/internal/dataio"
	"gonum.org/v1/gonum/mat"
)

// refDir locates ../shared/data/reference/<name> from the module root.
func refDir(t testing.TB, name string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			if os.Getenv("CI") != "" {
				t.Fatalf("CI is set, so this is a failure: module root not found")
			}
			t.Skip("module root not found")
		}
		dir = parent
	}
	p := filepath.Join(dir, "..", "shared", "data", "reference", name)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set, so this is a failure: reference instance not available: %v", err)
		}
		t.Skipf("reference instance not available: %v", err)
	}
	return p
}

type refInstance struct {
	X, Y, BStar, BTrue *mat.Dense
	Inst               struct {
		Gamma, Lambda, Threshold float64
		Edges                    []Edge
		Components               [][]int
	}
	FStar struct {
		FStar  float64   `json:"F_star"`
		THat   []float64 `json:"T_bound_per_component_halfPXY"`
		TNorm  float64   `json:"T_bound_half_yy"`
		PerCmp []float64 `json:"F_star_per_component"`
	}
}

func loadRef(t testing.TB) *refInstance {
	t.Helper()
	dir := refDir(t, "gflasso-paper-s101")
	r := &refInstance{}
	var err error
	for name, dst := range map[string]**mat.Dense{"X.csv": &r.X, "Y.csv": &r.Y, "B_star.csv": &r.BStar, "B_true.csv": &r.BTrue} {
		if *dst, err = dataio.ReadCSV(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	for name, dst := range map[string]any{"instance.json": &r.Inst, "fstar.json": &r.FStar} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, dst); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func refProblem(t testing.TB, r *refInstance, opt Options) *Problem {
	t.Helper()
	opt.Lambda, opt.Gamma, opt.Threshold = r.Inst.Lambda, r.Inst.Gamma, r.Inst.Threshold
	p, err := New(r.X, r.Y, opt)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReferenceInstance(t *testing.T) {
	r := loadRef(t)
	p := refProblem(t, r, Options{})
	// Objective at the reference solution.
	if got := p.F(r.BStar); math.Abs(got-r.FStar.FStar) > 1e-9*r.FStar.FStar {
		t.Errorf("F(B*) = %.12g, reference F* = %.12g", got, r.FStar.FStar)
	}
	// Graph and components.
	g := p.Graph()
	if len(g.Edges) != len(r.Inst.Edges) {
		t.Fatalf("%d edges, reference %d", len(g.Edges), len(r.Inst.Edges))
	}
	for i, e := range g.Edges {
		w := r.Inst.Edges[i]
		if e.M != w.M || e.L != w.L || e.Sign != w.Sign || math.Abs(e.R-w.R) > 1e-12 || math.Abs(e.W-w.W) > 1e-12 {
			t.Fatalf("edge %d: %+v, reference %+v", i, e, w)
		}
	}
	if len(g.Components) != len(r.Inst.Components) {
		t.Fatalf("components %v, reference %v", g.Components, r.Inst.Components)
	}
	for i := range g.Components {
		if len(g.Components[i]) != len(r.Inst.Components[i]) {
			t.Fatalf("components %v, reference %v", g.Components, r.Inst.Components)
		}
		for j := range g.Components[i] {
			if g.Components[i][j] != r.Inst.Components[i][j] {
				t.Fatalf("components %v, reference %v", g.Components, r.Inst.Components)
			}
		}
	}
	// Bounds T_C.
	if !p.HatBound() {
		t.Fatal("rank X = J expected")
	}
	for i, T := range p.Bounds() {
		if math.Abs(T-r.FStar.THat[i]) > 1e-9*T {
			t.Errorf("T_%d = %.12g, reference ½‖P_X Y_C‖² = %.12g", i, T, r.FStar.THat[i])
		}
	}
	pn := refProblem(t, r, Options{Bound: "norm"})
	sum := 0.0
	for _, T := range pn.Bounds() {
		sum += T
	}
	if math.Abs(sum-r.FStar.TNorm) > 1e-9*sum {
		t.Errorf("Σ T_C (norm) = %.12g, reference ½‖Y‖² = %.12g", sum, r.FStar.TNorm)
	}
	// The lifted B* is feasible and its FW gap is tiny (B* is optimal to
	// ~1e-12; the gap certificate bounds P1(x) − F* from above).
	x := make([]float64, p.Dim())
	if !p.Lift(x, r.BStar) {
		t.Fatal("lifted B* is infeasible")
	}
	if obj := p.Objective(x); math.Abs(obj-r.FStar.FStar) > 1e-9*r.FStar.FStar {
		t.Errorf("Objective(lift(B*)) = %v", obj)
	}
	if gap, err := p.Gap(x); err != nil || gap < -1e-9 || gap > 1e-6*r.FStar.FStar {
		t.Errorf("gap at lifted B* = %v", gap)
	}
}
