package scenarios_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/problems/toy"
	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

var toyNames = []string{"toy-polygon", "simplex", "l1ball", "box"}

func buildToy(t *testing.T, name string, params spec.Params, algos ...spec.Algo) (*spec.Run, scenarios.Instance) {
	t.Helper()
	r := &spec.Run{Problem: name, Params: params, Algorithms: algos}
	if len(algos) == 0 {
		s, ok := scenarios.Lookup(name)
		if !ok {
			t.Fatalf("scenario %s is not registered", name)
		}
		r.Algorithms = append([]spec.Algo(nil), s.Defaults...)
	}
	s, v, err := scenarios.Resolve(r)
	if err != nil {
		t.Fatalf("%s: Resolve: %v", name, err)
	}
	inst, err := s.Build(context.Background(), v, r.Seed)
	if err != nil {
		t.Fatalf("%s: Build: %v", name, err)
	}
	return r, inst
}

func TestToyScenariosRegistered(t *testing.T) {
	for _, name := range toyNames {
		s, ok := scenarios.Lookup(name)
		if !ok {
			t.Fatalf("%s is not registered", name)
		}
		if s.Group != "toy" || s.Title == "" || s.Help == "" {
			t.Errorf("%s: group %q, title %q, help %q", name, s.Group, s.Title, s.Help)
		}
		want := "ssfw-as afw pfw fw fista pgd"
		if name == "box" {
			want += " cd" // the box separates over the coordinates
		}
		if got := strings.Join(s.Algorithms, " "); got != want {
			t.Errorf("%s: algorithms %s", name, got)
		}
		if len(s.Defaults) != 2 || s.Defaults[0].Algo != "ssfw-as" || s.Defaults[1].Algo != "fista" {
			t.Errorf("%s: defaults %+v", name, s.Defaults)
		}
		for _, p := range s.Params {
			if p.Help == "" || strings.Contains(p.Help, "\n") {
				t.Errorf("%s: parameter %s needs a one-line help", name, p.Name)
			}
			if err := p.Check(p.Default); err != nil {
				t.Errorf("%s: default of %s fails its own rule: %v", name, p.Name, err)
			}
		}
	}
}

func TestToyBuildDefaults(t *testing.T) {
	for _, name := range toyNames {
		t.Run(name, func(t *testing.T) {
			_, inst := buildToy(t, name, nil)
			info := inst.Info()
			if info.Blocks != 1 || info.FStar == nil || info.Dim < 2 || info.Samples < 1 {
				t.Fatalf("info %+v", info)
			}
			fw, ok := inst.(*scenarios.FWInstance)
			if !ok || fw.Prox == nil {
				t.Fatalf("want an FWInstance with a proximal view, got %T", inst)
			}
			want := map[string][2]int{"toy-polygon": {2, 50}, "simplex": {30, 200}, "l1ball": {30, 200}, "box": {30, 200}}[name]
			if info.Dim != want[0] || info.Samples != want[1] {
				t.Errorf("dim %d samples %d, want %v", info.Dim, info.Samples, want)
			}
			if _, err := json.Marshal(info); err != nil {
				t.Fatalf("Info is not JSON-encodable: %v", err)
			}
			if name == "toy-polygon" {
				geo, ok := info.Panels["geometry"].(map[string]any)
				if !ok {
					t.Fatalf("no geometry panel: %v", info.Panels)
				}
				for _, k := range []string{"vertices", "Q", "center", "xstar", "fstar"} {
					if _, ok := geo[k]; !ok {
						t.Errorf("geometry panel lacks %q", k)
					}
				}
				if len(geo["vertices"].([][]float64)) != 6 || geo["fstar"].(float64) != *info.FStar {
					t.Errorf("geometry panel %v disagrees with the defaults", geo)
				}
			}
		})
	}
}

func TestToyResolveRejects(t *testing.T) {
	tests := []struct {
		problem string
		params  spec.Params
		algo    string
		field   string
	}{
		{"toy-polygon", spec.Params{"vertices": "2"}, "", "params.vertices"},
		{"toy-polygon", spec.Params{"vertices": "six"}, "", "params.vertices"},
		{"toy-polygon", spec.Params{"target": "middle"}, "", "params.target"},
		{"toy-polygon", spec.Params{"cond": "0.5"}, "", "params.cond"},
		{"toy-polygon", spec.Params{"samples": "0"}, "", "params.samples"},
		{"toy-polygon", spec.Params{"noise": "-0.1"}, "", "params.noise"},
		{"toy-polygon", spec.Params{"cx": "NaN"}, "", "params.cx"},
		{"toy-polygon", spec.Params{"sides": "5"}, "", "params.sides"},
		{"toy-polygon", nil, "bcfw", "algorithms[0].algo"},
		{"simplex", spec.Params{"p": "1"}, "", "params.p"},
		{"simplex", spec.Params{"samples": "100000"}, "", "params.samples"},
		{"l1ball", spec.Params{"radius": "0"}, "", "params.radius"},
		{"box", spec.Params{"lo": "abc"}, "", "params.lo"},
		{"box", spec.Params{"hi": "Inf"}, "", "params.hi"},
	}
	for _, tt := range tests {
		r := &spec.Run{Problem: tt.problem, Params: tt.params, Algorithms: []spec.Algo{{Algo: "afw"}}}
		if tt.algo != "" {
			r.Algorithms = []spec.Algo{{Algo: tt.algo}}
		}
		_, _, err := scenarios.Resolve(r)
		var fe *spec.FieldError
		if !errors.As(err, &fe) || fe.Field != tt.field {
			t.Errorf("%s %v: want an error on %s, got %v", tt.problem, tt.params, tt.field, err)
		}
	}
}

// Rules that depend on several parameters are checked when building.
func TestToyBuildRejects(t *testing.T) {
	tests := []struct {
		problem string
		params  spec.Params
		field   string
		rule    string
	}{
		{"toy-polygon", spec.Params{"points": "0,0;1,1;2,2"}, "params.points", "collinear"},
		{"toy-polygon", spec.Params{"points": "0,0;1,1"}, "params.points", "at least 3"},
		{"toy-polygon", spec.Params{"points": "0,0;1,z;0,1"}, "params.points", "finite"},
		{"simplex", spec.Params{"p": "30", "samples": "20"}, "params.samples", "at least p"},
		{"box", spec.Params{"lo": "1", "hi": "-1"}, "params.hi", "greater than lo"},
	}
	for _, tt := range tests {
		r := &spec.Run{Problem: tt.problem, Params: tt.params, Algorithms: []spec.Algo{{Algo: "afw"}}}
		s, v, err := scenarios.Resolve(r)
		if err != nil {
			t.Fatalf("%s %v: Resolve: %v", tt.problem, tt.params, err)
		}
		_, err = s.Build(context.Background(), v, 1)
		var fe *spec.FieldError
		if !errors.As(err, &fe) || fe.Field != tt.field || !strings.Contains(fe.Msg, tt.rule) {
			t.Errorf("%s %v: want %s (%s), got %v", tt.problem, tt.params, tt.field, tt.rule, err)
		}
	}
}

func TestToyPresetResolves(t *testing.T) {
	p, ok := scenarios.LookupPreset("teach-zigzag")
	if !ok {
		t.Fatal("teach-zigzag is not registered")
	}
	r := p.Spec // Normalize fills in defaults: copy the registered slices first
	r.Algorithms = append([]spec.Algo(nil), p.Spec.Algorithms...)
	s, v, err := scenarios.Resolve(&r)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "toy-polygon" || v.Str("target") != toy.TargetEdge || r.Iters != 300 ||
		len(r.Algorithms) != 2 || r.Algorithms[0].Algo != "afw" || r.Algorithms[1].Algo != "fw" {
		t.Fatalf("preset %+v", r)
	}
	if _, err := s.Build(context.Background(), v, r.Seed); err != nil {
		t.Fatal(err)
	}
}

func runToy(t *testing.T, inst scenarios.Instance, a spec.Algo, lim solver.Limits) (solver.Result, []solver.Record) {
	t.Helper()
	if err := a.Normalize(""); err != nil {
		t.Fatal(err)
	}
	m, err := inst.Method(a, lim, 1)
	if err != nil {
		t.Fatalf("%s: %v", a.Algo, err)
	}
	var recs []solver.Record
	res, err := m.Run(context.Background(), solver.RecorderFunc(func(r solver.Record) { recs = append(recs, r) }))
	if err != nil {
		t.Fatalf("%s: %v", a.Algo, err)
	}
	return res, recs
}

// TestToyZigZag is the teaching preset's claim: on the polygon with the
// optimum inside an edge, away steps converge linearly to F* while vanilla
// FW with open-loop steps is still far after 300 iterations.
func TestToyZigZag(t *testing.T) {
	_, inst := buildToy(t, "toy-polygon", spec.Params{"target": toy.TargetEdge})
	fstar := *inst.Info().FStar
	res, recs := runToy(t, inst, spec.Algo{Algo: "afw"}, solver.Limits{MaxIters: 300, GapTol: 1e-10, EvalEvery: 1})
	s := res.Summary
	t.Logf("afw: %d iterations, gap %.3g, F − F* = %.3g, status %s", s.Iters, s.Gap, s.Objective-fstar, s.Status)
	if s.Gap > 1e-10 || math.Abs(s.Objective-fstar) > 1e-9 {
		t.Errorf("afw: gap %v, |F − F*| = %v after %d iterations", s.Gap, math.Abs(s.Objective-fstar), s.Iters)
	}
	away := 0
	for _, r := range recs {
		if r.Step == solver.StepAway || r.Step == solver.StepDrop {
			away++
		}
		if _, ok := r.Extra["x0"]; !ok {
			t.Fatalf("record %d lacks the iterate's coordinates for the teaching view: %v", r.K, r.Extra)
		}
		// (The starting record, k = 0, carries no problem metrics.)
		if _, ok := r.Extra["dist_xstar"]; r.K > 0 && r.Evaluated() && !ok {
			t.Fatalf("record %d lacks the distance to x*: %v", r.K, r.Extra)
		}
	}
	if away == 0 {
		t.Errorf("afw took no away step")
	}
	last := recs[len(recs)-1].Extra
	xs := inst.Info().Panels["geometry"].(map[string]any)["xstar"].([]float64)
	if math.Hypot(last["x0"]-xs[0], last["x1"]-xs[1]) > 1e-6 || last["dist_xstar"] > 1e-6 {
		t.Errorf("afw ended at (%v, %v), x* = %v", last["x0"], last["x1"], xs)
	}
	res, _ = runToy(t, inst, spec.Algo{Algo: "fw", Stepsize: "open-loop"}, solver.Limits{MaxIters: 300, GapTol: 1e-10, EvalEvery: 1})
	s = res.Summary
	t.Logf("fw open-loop: %d iterations, gap %.3g, F − F* = %.3g, status %s", s.Iters, s.Gap, s.Objective-fstar, s.Status)
	if s.Iters != 300 || s.Gap <= 1e-10 || s.Objective-fstar <= 1e-9 {
		t.Errorf("fw open-loop converged: %+v", s)
	}
}

// TestToyDefaultsReachFStar runs each scenario's default algorithms and
// checks that they approach the instance's exact optimum, certified by the
// gap.
func TestToyDefaultsReachFStar(t *testing.T) {
	for _, name := range toyNames {
		t.Run(name, func(t *testing.T) {
			_, inst := buildToy(t, name, nil)
			fstar := *inst.Info().FStar
			for _, a := range []spec.Algo{{Algo: "ssfw-as"}, {Algo: "fista"}, {Algo: "afw"}, {Algo: "pfw"}} {
				res, _ := runToy(t, inst, a, solver.Limits{MaxIters: 3000, GapTol: 1e-9, EvalEvery: 10})
				s := res.Summary
				t.Logf("%s: %d iterations, %.1f passes, gap %.3g, F − F* = %.3g (%s)", a.Algo, s.Iters, s.Passes, s.Gap, s.Objective-fstar, s.Status)
				if s.Objective < fstar-1e-9*(1+math.Abs(fstar)) {
					t.Errorf("%s: objective %v below F* = %v", a.Algo, s.Objective, fstar)
				}
				if s.Objective-fstar > 1e-7*(1+math.Abs(fstar)) {
					t.Errorf("%s: F − F* = %v after %d iterations", a.Algo, s.Objective-fstar, s.Iters)
				}
			}
		})
	}
}

// TestProxPlaneLeavesRepeatsOut: FISTA on the polygon reaches a fixed point
// within a few dozen iterations; from there its records leave the teaching
// view's points out. Carried forward from the last record that has them
// (as the page does), every record's point still gives that record's exact
// objective, from the geometry panel's closed form, and the last one is the
// run's solution bit for bit.
func TestProxPlaneLeavesRepeatsOut(t *testing.T) {
	_, inst := buildToy(t, "toy-polygon", nil)
	geo := inst.Info().Panels["geometry"].(map[string]any)
	Q, c, off := geo["Q"].([][]float64), geo["center"].([]float64), geo["offset"].(float64)
	F := func(x0, x1 float64) float64 {
		d0, d1 := x0-c[0], x1-c[1]
		return 0.5*(Q[0][0]*d0*d0+2*Q[0][1]*d0*d1+Q[1][1]*d1*d1) + off
	}
	for _, algo := range []string{"fista", "pgd"} {
		res, recs := runToy(t, inst, spec.Algo{Algo: algo}, solver.Limits{MaxIters: 400, EvalEvery: 1})
		keys := []string{"x0", "x1", "at_x0", "at_x1", "from_x0", "from_x1"}
		var shown map[string]float64
		left := 0
		for _, r := range recs {
			if _, ok := r.Extra["x0"]; ok {
				if r.K > 0 {
					for _, k := range keys {
						if _, ok := r.Extra[k]; !ok {
							t.Fatalf("%s: record %d has x0 but not %s: %v", algo, r.K, k, r.Extra)
						}
					}
				}
				shown = r.Extra
			} else {
				if r.K == 0 || shown == nil {
					t.Fatalf("%s: record %d has no point and none came before", algo, r.K)
				}
				left++
			}
			f := F(shown["x0"], shown["x1"])
			if math.Abs(f-*r.Objective) > 1e-12*(1+math.Abs(f)) {
				t.Fatalf("%s: record %d: F at the point shown = %v, objective %v", algo, r.K, f, *r.Objective)
			}
		}
		if shown["x0"] != res.X[0] || shown["x1"] != res.X[1] {
			t.Errorf("%s: last point shown (%v, %v), solution %v", algo, shown["x0"], shown["x1"], res.X)
		}
		t.Logf("%s: %d of %d records leave the points out", algo, left, len(recs))
		if left < len(recs)/2 {
			t.Errorf("%s: only %d of %d records leave repeated points out", algo, left, len(recs))
		}
	}
}
