package scenarios

import (
	"context"
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/fwlab/fwlab/internal/problems/toy"
	"github.com/fwlab/fwlab/internal/spec"
)

// toyAlgorithms are the methods offered on every toy polytope.
var toyAlgorithms = spec.AlgorithmsFor("toy")

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
		toyIntParam("p", "30", 2, toy.MaxP, "dimension of x (generated data)"),
		toyIntParam("samples", "200", 1, toy.MaxSamples, "number of least-squares terms n (at least p; generated data); batches are drawn from them"),
		{Name: "x", Kind: Path, Format: "csv", Default: "", Help: fmt.Sprintf("CSV file of your matrix A (numbers, no header; up to %d columns); replaces the generated data, needs y", toy.MaxDataP)},
		{Name: "y", Kind: Path, Format: "csv", Default: "", Help: "CSV file of your responses y (one column or one row), with x"},
		{Name: "data", Kind: Path, Format: "svmlight", Default: "", Help: "svmlight/LIBSVM file: responses as labels, features as the rows of A; replaces the generated data"},
	}
}

// toyData reads the user's least-squares data (x and y, or data); ok is
// false when none is given.
func toyData(v Values) (rows []float64, n, p int, y []float64, ok bool, err error) {
	x, y, _, ok, err := loadXY(v)
	if err != nil || !ok {
		return nil, 0, 0, nil, false, err
	}
	n, p = x.Dims()
	if n*p > maxEntries {
		return nil, 0, 0, nil, false, spec.Errorf(dataField(v), "%d samples × %d columns exceed the %d entries a least-squares problem holds", n, p, maxEntries)
	}
	return mat.DenseCopyOf(x).RawMatrix().Data, n, p, y, true, nil
}

// dataField names the parameter that carries the user's matrix.
func dataField(v Values) string {
	if v.Str("data") != "" {
		return "params.data"
	}
	return "params.x"
}

// lsqMemory is the expected size of a generated least-squares instance:
// A by rows and by columns, y and the model's vectors (0 with data files,
// whose size is known once read).
func lsqMemory(v Values) int64 {
	if v.Str("x") != "" || v.Str("y") != "" || v.Str("data") != "" {
		return 0
	}
	n, p := int64(v.Int("samples")), int64(v.Int("p"))
	return 16*n*p + 40*n + 16*p
}

// lsqInfo is the instance's description: F* when it is known (generated
// data), and where the data came from.
func lsqInfo(dim, samples int, known bool, fstar float64) Info {
	info := Info{Dim: dim, Samples: samples, Blocks: 1, Panels: map[string]any{"data": "generated"}}
	if known {
		info.FStar = &fstar
	} else {
		info.Panels["data"] = "imported"
	}
	return info
}

func toyInfo(dim, samples int, fstar float64, panels map[string]any) Info {
	return Info{Dim: dim, Samples: samples, Blocks: 1, FStar: &fstar, Panels: panels}
}

func init() {
	registerPolygon()
	registerSimplex()
	registerL1Ball()
	registerBox()
	registerZigzag()
}

// registerPolygon registers the teaching polygon.
func registerPolygon() {
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
}

// registerSimplex registers least squares over the simplex.
func registerSimplex() {
	Register(&Scenario{
		Name:       "simplex",
		Memory:     lsqMemory,
		Title:      "Least squares over the simplex",
		Help:       "Least squares over the probability simplex in R^p, with the optimum on a face of about p/5 vertices.",
		Group:      "toy",
		Params:     toyLSQParams(),
		Algorithms: toyAlgorithms,
		Defaults:   toyDefaults(),
		Build: func(ctx context.Context, v Values, seed int64) (Instance, error) {
			rows, n, p, y, imported, err := toyData(v)
			if err != nil {
				return nil, errf("simplex", err)
			}
			var s *toy.Simplex
			if imported {
				s, err = toy.NewSimplexData(ctx, rows, n, p, y)
			} else {
				s, err = toy.NewSimplex(ctx, v.Int("p"), v.Int("samples"), seed)
			}
			if err != nil {
				return nil, toyParamErr("simplex", err)
			}
			return &FWInstance{Problem: s, Prox: s, Coefficients: true, Meta: lsqInfo(s.Dim(), s.Samples(), s.KnownOptimum(), s.FStar())}, nil
		},
	})
}

// registerL1Ball registers least squares over an l1 ball.
func registerL1Ball() {
	Register(&Scenario{
		Name:   "l1ball",
		Memory: lsqMemory,
		Title:  "Least squares over an l1 ball",
		Help:   "Least squares over {‖x‖₁ ≤ radius} in R^p, with a sparse optimum on the ball's surface.",
		Group:  "toy",
		Params: append(toyLSQParams(),
			Param{Name: "radius", Kind: Float, Default: "1", Help: "radius of the l1 ball", Min: 0, MinExcl: true, HasMin: true, Max: 1e6, HasMax: true}),
		Algorithms: toyAlgorithms,
		Defaults:   toyDefaults(),
		Build: func(ctx context.Context, v Values, seed int64) (Instance, error) {
			rows, n, p, y, imported, err := toyData(v)
			if err != nil {
				return nil, errf("l1ball", err)
			}
			var b *toy.L1Ball
			if imported {
				b, err = toy.NewL1BallData(ctx, rows, n, p, y, v.Float("radius"))
			} else {
				b, err = toy.NewL1Ball(ctx, v.Int("p"), v.Int("samples"), v.Float("radius"), seed)
			}
			if err != nil {
				return nil, toyParamErr("l1ball", err)
			}
			return &FWInstance{Problem: b, Prox: b, Coefficients: true, Meta: lsqInfo(b.Dim(), b.Samples(), b.KnownOptimum(), b.FStar())}, nil
		},
	})
}

// registerBox registers least squares over a box.
func registerBox() {
	Register(&Scenario{
		Name:   "box",
		Memory: lsqMemory,
		Title:  "Least squares over a box",
		Help:   "Least squares over [lo, hi]^p, whose 2^p corners are dense vertices; the optimum has coordinates at both bounds and inside.",
		Group:  "toy",
		Params: append(toyLSQParams(),
			toyFloatParam("lo", "-1", -1e6, 1e6, "lower bound of every coordinate"),
			toyFloatParam("hi", "1", -1e6, 1e6, "upper bound of every coordinate (greater than lo)")),
		Algorithms: append(append([]string{}, toyAlgorithms...), "cd"),
		Defaults:   toyDefaults(),
		Build: func(ctx context.Context, v Values, seed int64) (Instance, error) {
			rows, n, p, y, imported, err := toyData(v)
			if err != nil {
				return nil, errf("box", err)
			}
			var b *toy.Box
			if imported {
				b, err = toy.NewBoxData(ctx, rows, n, p, y, v.Float("lo"), v.Float("hi"))
			} else {
				b, err = toy.NewBox(ctx, v.Int("p"), v.Int("samples"), v.Float("lo"), v.Float("hi"), seed)
			}
			if err != nil {
				return nil, toyParamErr("box", err)
			}
			return &FWInstance{Problem: b, Prox: b, Coefficients: true, Meta: lsqInfo(b.Dim(), b.Samples(), b.KnownOptimum(), b.FStar())}, nil
		},
	})
}

// registerZigzag registers the teaching preset of away steps against the zig-zag.
func registerZigzag() {
	RegisterPreset(&Preset{
		Name:  "teach-zigzag",
		Title: "Away steps vs zig-zag",
		Help:  "The minimiser lies inside an edge of a hexagon: vanilla Frank-Wolfe zig-zags between the edge's vertices and converges slowly, away steps drop the wrong vertex and converge linearly.",
		Spec: spec.Run{
			Problem:    "toy-polygon",
			Params:     spec.Params{"target": toy.TargetEdge},
			Algorithms: []spec.Algo{{Algo: "afw"}, {Algo: "fw"}},
			Iters:      300,
			// a lecture steps through every iteration: each shows its F and gap
			EvalEvery: 1,
		},
	})
}
