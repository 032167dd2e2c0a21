package scenarios

import (
	"context"
	"errors"

	"github.com/fwlab/fwlab/internal/problems/toy"
	"github.com/fwlab/fwlab/internal/spec"
)

// toyAlgorithms are the methods offered on every toy polytope.
var toyAlgorithms = []string{"ssfw-as", "afw", "pfw", "fw", "fista", "pgd"}

func toyDefaults() []spec.Algo { return []spec.Algo{{Algo: "ssfw-as"}, {Algo: "fista"}} }

// toyParamErr turns a toy constructor's field error into one naming the
// params field; other errors get the scenario's name.
func toyParamErr(name string, err error) error {
	var fe *spec.FieldError
	if errors.As(err, &fe) {
		return spec.Errorf("params."+fe.Field, "%s", fe.Msg)
	}
	return errf(name, err)
}

func toyIntParam(name, def string, lo, hi float64, help string) Param {
	return Param{Name: name, Kind: Int, Default: def, Help: help, Min: lo, Max: hi, HasMin: true, HasMax: true}
}

func toyFloatParam(name, def string, lo, hi float64, help string) Param {
	return Param{Name: name, Kind: Float, Default: def, Help: help, Min: lo, Max: hi, HasMin: true, HasMax: true}
}

func toyLSQParams() []Param {
	return []Param{
		toyIntParam("p", "30", 2, toy.MaxP, "dimension of x"),
		toyIntParam("samples", "200", 1, toy.MaxSamples, "number of least-squares terms n (at least p); batches are drawn from them"),
	}
}

func toyInfo(dim, samples int, fstar float64, panels map[string]any) Info {
	return Info{Dim: dim, Samples: samples, Blocks: 1, FStar: &fstar, Panels: panels}
}

func init() {
	Register(&Scenario{
		Name:  "toy-polygon",
		Title: "Quadratic over a polygon",
		Help:  "A strongly convex quadratic over a 2-D polygon whose minimiser sits at a vertex, inside an edge (where vanilla Frank-Wolfe zig-zags) or in the interior; drawn with its level sets.",
		Group: "toy",
		Params: []Param{
			toyIntParam("vertices", "6", 3, toy.MaxVertices, "vertex count of a regular polygon (ignored when points are given)"),
			{Name: "points", Kind: String, Default: "", Help: "your own points x1,y1;x2,y2;… (the polygon is their convex hull)"},
			{Name: "target", Kind: Choice, Default: toy.TargetEdge, Help: "where the quadratic's centre lies: beyond a vertex, beyond an edge, inside, or at (cx, cy)",
				Choices: []string{toy.TargetOutside, toy.TargetEdge, toy.TargetInside, toy.TargetCustom}},
			toyFloatParam("cx", "0", -toy.MaxCoord, toy.MaxCoord, "x of the centre (target custom)"),
			toyFloatParam("cy", "0", -toy.MaxCoord, toy.MaxCoord, "y of the centre (target custom)"),
			toyFloatParam("cond", "4", 1, toy.MaxCond, "condition number of the quadratic (level sets become thin ellipses)"),
			toyIntParam("samples", "50", 1, toy.MaxPolygonSamples, "number of noisy copies of the centre; batches average over them"),
			toyFloatParam("noise", "0.3", 0, toy.MaxNoise, "spread of the sample centres (0: every batch gradient is exact)"),
		},
		Algorithms: toyAlgorithms,
		Defaults:   toyDefaults(),
		Build: func(_ context.Context, v Values, seed int64) (Instance, error) {
			pg, err := toy.NewPolygon(toy.PolygonConfig{
				Vertices: v.Int("vertices"), Points: v.Str("points"), Target: v.Str("target"),
				CX: v.Float("cx"), CY: v.Float("cy"), Cond: v.Float("cond"),
				Samples: v.Int("samples"), Noise: v.Float("noise"),
			}, seed)
			if err != nil {
				return nil, toyParamErr("toy-polygon", err)
			}
			return &FWInstance{Problem: pg, Prox: pg,
				Meta: toyInfo(2, pg.Samples(), pg.FStar(), map[string]any{"geometry": pg.Geometry()})}, nil
		},
	})
	Register(&Scenario{
		Name:       "simplex",
		Title:      "Least squares over the simplex",
		Help:       "Least squares over the probability simplex in R^p, with the optimum on a face of about p/5 vertices.",
		Group:      "toy",
		Params:     toyLSQParams(),
		Algorithms: toyAlgorithms,
		Defaults:   toyDefaults(),
		Build: func(ctx context.Context, v Values, seed int64) (Instance, error) {
			s, err := toy.NewSimplex(ctx, v.Int("p"), v.Int("samples"), seed)
			if err != nil {
				return nil, toyParamErr("simplex", err)
			}
			return &FWInstance{Problem: s, Prox: s, Meta: toyInfo(s.Dim(), s.Samples(), s.FStar(), nil)}, nil
		},
	})
	Register(&Scenario{
		Name:  "l1ball",
		Title: "Least squares over an l1 ball",
		Help:  "Least squares over {‖x‖₁ ≤ radius} in R^p, with a sparse optimum on the ball's surface.",
		Group: "toy",
		Params: append(toyLSQParams(),
			Param{Name: "radius", Kind: Float, Default: "1", Help: "radius of the l1 ball", Min: 0, MinExcl: true, HasMin: true, Max: 1e6, HasMax: true}),
		Algorithms: toyAlgorithms,
		Defaults:   toyDefaults(),
		Build: func(ctx context.Context, v Values, seed int64) (Instance, error) {
			b, err := toy.NewL1Ball(ctx, v.Int("p"), v.Int("samples"), v.Float("radius"), seed)
			if err != nil {
				return nil, toyParamErr("l1ball", err)
			}
			return &FWInstance{Problem: b, Prox: b, Meta: toyInfo(b.Dim(), b.Samples(), b.FStar(), nil)}, nil
		},
	})
	Register(&Scenario{
		Name:  "box",
		Title: "Least squares over a box",
		Help:  "Least squares over [lo, hi]^p, whose 2^p corners are dense vertices; the optimum has coordinates at both bounds and inside.",
		Group: "toy",
		Params: append(toyLSQParams(),
			toyFloatParam("lo", "-1", -1e6, 1e6, "lower bound of every coordinate"),
			toyFloatParam("hi", "1", -1e6, 1e6, "upper bound of every coordinate (greater than lo)")),
		Algorithms: toyAlgorithms,
		Defaults:   toyDefaults(),
		Build: func(ctx context.Context, v Values, seed int64) (Instance, error) {
			b, err := toy.NewBox(ctx, v.Int("p"), v.Int("samples"), v.Float("lo"), v.Float("hi"), seed)
			if err != nil {
				return nil, toyParamErr("box", err)
			}
			return &FWInstance{Problem: b, Prox: b, Meta: toyInfo(b.Dim(), b.Samples(), b.FStar(), nil)}, nil
		},
	})
	RegisterPreset(&Preset{
		Name:  "teach-zigzag",
		Title: "Away steps vs zig-zag",
		Help:  "The minimiser lies inside an edge of a hexagon: vanilla Frank-Wolfe zig-zags between the edge's vertices and converges slowly, away steps drop the wrong vertex and converge linearly.",
		Spec: spec.Run{
			Problem:    "toy-polygon",
			Params:     spec.Params{"target": toy.TargetEdge},
			Algorithms: []spec.Algo{{Algo: "afw"}, {Algo: "fw"}},
			Iters:      300,
		},
	})
}
