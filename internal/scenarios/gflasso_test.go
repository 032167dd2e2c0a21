package scenarios

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

func gflassoRefDir(t *testing.T) string {
	t.Helper()
	dir, _ := os.Getwd()
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
	p := filepath.Join(dir, "..", "shared", "data", "reference", "gflasso-paper-s101")
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set, so this is a failure: reference instance not available: %v", err)
		}
		t.Skipf("reference instance not available: %v", err)
	}
	return p
}

func buildGFLASSO(t *testing.T, params spec.Params, seed int64) (*GFLASSOInstance, error) {
	t.Helper()
	s, ok := Lookup("gflasso")
	if !ok {
		t.Fatal("gflasso not registered")
	}
	v, err := s.Values(params)
	if err != nil {
		return nil, err
	}
	inst, err := s.Build(context.Background(), v, seed)
	if err != nil {
		return nil, err
	}
	return inst.(*GFLASSOInstance), nil
}

func TestGFLASSOScenarioDefaults(t *testing.T) {
	inst, err := buildGFLASSO(t, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	info := inst.Info()
	pan := info.Panels
	B := pan["B_true"].([][]float64)
	if len(B) != 50 || len(B[0]) != 20 {
		t.Fatalf("B_true is %d×%d", len(B), len(B[0]))
	}
	// Chen et al.'s procedure at J = 50: 5 rows per group, 3 per pair of
	// adjacent groups, none for triples with two groups.
	ones := 0
	for _, r := range B {
		for _, v := range r {
			if v != 0 && v != 1 {
				t.Fatalf("B_true entry %v", v)
			}
			if v == 1 {
				ones++
			}
		}
	}
	if ones < 100 || ones > 160 {
		t.Fatalf("%d ones in B_true", ones)
	}
	comps := pan["components"].([][]int)
	if len(comps) != 2 || len(comps[0]) != 10 || len(comps[1]) != 10 {
		t.Fatalf("components %v, want the two 10-task groups", comps)
	}
	if info.Blocks != 2 || info.Samples != 200 || info.Dim != 2*(50*10+1) {
		t.Fatalf("info %+v", info)
	}
	if _, err := json.Marshal(info); err != nil {
		t.Fatal(err)
	}
	// Every algorithm runs and the coefficient matrix has the right shape.
	for _, a := range []string{"bc-ssfw-as", "bcfw", "spg"} {
		al := spec.Algo{Algo: a}
		if err := al.Normalize(""); err != nil {
			t.Fatal(err)
		}
		m, err := inst.Method(al, solver.Limits{MaxIters: 5, EvalEvery: 1}, 1)
		if err != nil {
			t.Fatalf("%s: %v", a, err)
		}
		res, err := m.Run(context.Background(), solver.RecorderFunc(func(solver.Record) {}))
		if err != nil {
			t.Fatalf("%s: %v", a, err)
		}
		if cb := inst.CoefMatrix(res.X); len(cb) != 50 || len(cb[0]) != 20 {
			t.Fatalf("%s: B is %d×%d", a, len(cb), len(cb[0]))
		}
		if res.Summary.Iters != 5 {
			t.Fatalf("%s: %+v", a, res.Summary)
		}
	}
}

func TestGFLASSOScenarioImport(t *testing.T) {
	dir := gflassoRefDir(t)
	xp, yp := filepath.Join(dir, "X.csv"), filepath.Join(dir, "Y.csv")
	inst, err := buildGFLASSO(t, spec.Params{"x": xp, "y": yp}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := inst.Info().Panels["B_true"]; ok {
		t.Fatal("imported data has no true B")
	}
	var ref struct {
		Edges      []json.RawMessage
		Components [][]int
	}
	b, _ := os.ReadFile(filepath.Join(dir, "instance.json"))
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	g := inst.P.Graph()
	if len(g.Edges) != len(ref.Edges) || len(g.Components) != len(ref.Components) {
		t.Fatalf("%d edges, %d components; reference %d, %d", len(g.Edges), len(g.Components), len(ref.Edges), len(ref.Components))
	}
	if e := inst.P.EnumeratedComponents(); !e[0] || !e[1] {
		t.Fatalf("enumerated components %v", e)
	}
	// enum_max below the component size switches to the minimum-cut oracle
	// (the components' edges are all positive), which gives the same
	// vertices.
	lp, err := buildGFLASSO(t, spec.Params{"x": xp, "y": yp, "enum_max": "9"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if e := lp.P.OracleKinds(); e[0] != "cut" || e[1] != "cut" {
		t.Fatalf("oracles with enum_max 9: %v", e)
	}
	gr := make([]float64, inst.P.Blocks()[0].Size)
	for i := range gr {
		gr[i] = math.Sin(float64(i)) * 100
	}
	gr[len(gr)-1] = 1
	if a, b := inst.P.LMO(0, gr), lp.P.LMO(0, gr); a.Key != b.Key || !reflect.DeepEqual(a.Val, b.Val) {
		t.Fatalf("enumerated oracle %v, LP oracle %v", a, b)
	}

	// Errors name the field and the files.
	tmp := t.TempDir()
	short := filepath.Join(tmp, "Y3.csv")
	if err := os.WriteFile(short, []byte("1,2\n3,4\n5,6\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(tmp, "bad.csv")
	if err := os.WriteFile(bad, []byte("1,2\n3,x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		params spec.Params
		field  string
		has    []string
	}{
		{"x without y", spec.Params{"x": xp}, "params.y", nil},
		{"y without x", spec.Params{"y": yp}, "params.x", nil},
		{"row mismatch", spec.Params{"x": xp, "y": short}, "params.y", []string{"X.csv", "Y3.csv", "200", "3"}},
		{"bad number", spec.Params{"x": xp, "y": bad}, "params.y", []string{"bad.csv:2"}},
		{"missing file", spec.Params{"x": filepath.Join(tmp, "none.csv"), "y": yp}, "params.x", []string{"none.csv"}},
		{"lambda zero", spec.Params{"lambda": "0"}, "params.lambda", []string{"> 0"}},
		{"lambda denormal", spec.Params{"lambda": "5e-324"}, "params.lambda", []string{"too small"}},
		{"bad bound", spec.Params{"bound": "tight"}, "params.bound", nil},
		{"too many entries", spec.Params{"n": "1000000", "j": "100"}, "params.n", []string{"n·j, n·k and j·k"}},
		{"gradient too slow", spec.Params{"n": "20000", "j": "1000", "k": "1000"}, "params.n", []string{"n·j·k = 2e+10", "lower n, j or k"}},
		{"graph too slow", spec.Params{"n": "2000", "j": "1", "k": "10000"}, "params.n", []string{"n·k² = 2e+11"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := buildGFLASSO(t, tc.params, 1)
			var fe *spec.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("error %v, want a field error on %s", err, tc.field)
			}
			for _, s := range tc.has {
				if !strings.Contains(err.Error(), s) {
					t.Fatalf("error %q does not mention %q", err, s)
				}
			}
		})
	}
}

func TestGFLASSOSimulatedAgreement(t *testing.T) {
	if testing.Short() {
		t.Skip("long run")
	}
	// Simulated instances of the paper's setup (other seeds than the
	// reference's): bc-ssfw-as certifies F* to 1e-7 with its duality gap;
	// bcfw certifies its own result to 1e-6·F with its gap and agrees with
	// bc-ssfw-as to 1e-6; SPG with a small μ and a long run agrees to 1e-5.
	//
	// bcfw runs on the finer blocks of ARCHITECTURE.md, "GFLASSO", one per (row, component).
	// On component blocks its iterate mixes far atoms of a whole component,
	// t_C stays above Ω_C(B_C), and without away steps that slack shrinks
	// only sublinearly: after 20 000 iterations F − F* is still 2e-5 to 8e-5
	// of F* on seeds 1, 2, 3 and 5 (docs/paper-figures.md, "bcfw wants row blocks"). With a
	// block and a t per row, it certifies 1e-6·F within about 3000.
	run := func(t *testing.T, inst *GFLASSOInstance, a spec.Algo, lim solver.Limits) solver.Summary {
		t.Helper()
		if err := a.Normalize(""); err != nil {
			t.Fatal(err)
		}
		m, err := inst.Method(a, lim, 2)
		if err != nil {
			t.Fatal(err)
		}
		res, err := m.Run(context.Background(), solver.RecorderFunc(func(solver.Record) {}))
		if err != nil {
			t.Fatal(err)
		}
		return res.Summary
	}
	for _, seed := range []int64{1, 2, 3, 4, 5} {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			t.Parallel()
			comp, err := buildGFLASSO(t, nil, seed)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := buildGFLASSO(t, spec.Params{"blocks": "row"}, seed)
			if err != nil {
				t.Fatal(err)
			}
			bc := run(t, comp, spec.Algo{Algo: "bc-ssfw-as"}, solver.Limits{MaxIters: 5000, EvalEvery: 10, GapTol: 1e-4})
			fstar := bc.Objective - bc.Gap // certified lower bound on F*
			if bc.Status != solver.StatusConverged || bc.Gap > 1e-7*fstar {
				t.Fatalf("bc-ssfw-as: %+v", bc)
			}
			fw := run(t, rows, spec.Algo{Algo: "bcfw"}, solver.Limits{MaxIters: 8000, EvalEvery: 50, GapTol: 1e-6 * fstar})
			sp := run(t, comp, spec.Algo{Algo: "spg", Mu: 1e-5}, solver.Limits{MaxIters: 80000, EvalEvery: 80000})
			t.Logf("F* ≥ %.12g; bc-ssfw-as %.12g (gap %.2g, %d it), bcfw %.12g (gap %.2g, %d it), spg %.12g",
				fstar, bc.Objective, bc.Gap, bc.Iters, fw.Objective, fw.Gap, fw.Iters, sp.Objective)
			if fw.Status != solver.StatusConverged || fw.Gap > 1e-6*fw.Objective {
				t.Errorf("bcfw: no gap certificate ≤ 1e-6·F: %+v", fw)
			}
			for _, c := range []struct {
				name string
				obj  float64
				tol  float64
			}{{"bcfw", fw.Objective, 1e-6}, {"spg", sp.Objective, 1e-5}} {
				if rel := (c.obj - fstar) / fstar; rel > c.tol || rel < -1e-12 {
					t.Errorf("%s: F − F* = %.3g·F*, want within [0, %g]", c.name, rel, c.tol)
				}
			}
		})
	}
}

func TestFigure1Small(t *testing.T) {
	d, err := Figure1(context.Background(), Figure1Options{Replications: 2, Iters: 60, EvalEvery: 10, GridPoints: 7, FStarIters: 3000, FStarTol: 1e-9})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Algorithms) != 3 || d.Algorithms[0].Algo != "bc-ssfw-as" || d.Algorithms[1].Algo != "bc-ssfw-as"+SlackCollapseSuffix || d.Algorithms[2].Algo != "spg" {
		t.Fatalf("algorithms %+v", d.Algorithms)
	}
	for _, a := range d.Algorithms {
		its := a.LogObjective.Iterations
		if n := len(its); n < 7 || its[n-1].X != 60 { // (0,) 1, 10, …, 60
			t.Fatalf("%s: iteration points %+v", a.Algo, its)
		}
		if len(a.LogObjective.Passes) != 7 || len(a.LogSubopt.Seconds) != 7 || len(a.Final) != 2 {
			t.Fatalf("%s: series lengths", a.Algo)
		}
		for _, s := range a.LogObjective.Iterations {
			if s.N != 2 || s.Min > s.Median || s.Median > s.Max {
				t.Fatalf("%s: %+v", a.Algo, s)
			}
		}
	}
	if len(d.BTrue) != 50 || len(d.BSPG) != 50 || len(d.BBCSSFWAS) != 50 || len(d.Corr) != 20 {
		t.Fatal("matrix shapes")
	}
	if !(d.FStar > 0) || d.FStarGap > 1e-9*d.FStar*20 {
		t.Fatalf("F* = %v with gap %v", d.FStar, d.FStarGap)
	}
	if _, err := json.Marshal(d); err != nil {
		t.Fatal(err)
	}
}
