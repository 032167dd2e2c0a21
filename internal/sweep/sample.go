package sweep

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/fwlab/fwlab/internal/spec"
)

// A study need not be a grid. A sweep document with "sample" draws its
// cells over ranges: every axis gives a range instead of values,
//
//	{"base": RUNSPEC,
//	 "sample": {"kind": "lhs", "n": 20, "seed": 7},
//	 "axes": [{"param": "algorithms[0].rho", "range": {"min": 0.01, "max": 0.5, "log": true}},
//	          {"param": "algorithms[0].alpha", "range": {"min": 0.1, "max": 0.9}}]}
//
// and the cells are n points: "random" draws each coordinate uniformly
// (on a log scale with "log"), "lhs" (Latin hypercube) splits every range
// into n equal strata and puts exactly one point in each stratum of every
// axis, so that n points cover each range evenly. The draw is a function
// of the seed alone. Drawing fills each axis' values with the points'
// coordinates, cell i taking value i of every axis (a sampled study's
// axes are paired, not combined); a document whose ranged axes already
// hold values (a stored or exported study) is taken as drawn.

// Sample says how a study's cells are drawn over its axes' ranges.
type Sample struct {
	Kind string `json:"kind"` // random or lhs
	N    int    `json:"n"`
	Seed uint64 `json:"seed"`
}

// Range is an axis' interval for a sampled study.
type Range struct {
	Min float64 `json:"min"`
	Max float64 `json:"max"`
	// Log draws uniformly in log(value): min must be positive.
	Log bool `json:"log,omitempty"`
	// Int rounds every drawn value to a whole number.
	Int bool `json:"int,omitempty"`
}

// sampled reports whether the document's cells pair its axes' values (a
// sampled study) rather than combining them.
func (d *Doc) sampled() bool {
	for _, a := range d.Axes {
		if a.Range != nil {
			return true
		}
	}
	return d.Sample != nil
}

// draw checks a sampled document and, unless its axes hold drawn values
// already, draws them.
func (d *Doc) draw() error {
	for i, a := range d.Axes {
		f := fmt.Sprintf("axes[%d]", i)
		r := a.Range
		if r == nil {
			return spec.Errorf(f+".range", "a sampled study needs a range on every axis ({\"min\": …, \"max\": …})")
		}
		if !(r.Min < r.Max) || math.IsInf(r.Min, 0) || math.IsInf(r.Max, 0) || math.IsNaN(r.Min) || math.IsNaN(r.Max) {
			return spec.Errorf(f+".range", "min must be below max, both finite, got %v and %v", r.Min, r.Max)
		}
		if r.Log && !(r.Min > 0) {
			return spec.Errorf(f+".range.min", "a log range must start above 0, got %v", r.Min)
		}
	}
	drawn := len(d.Axes[0].Values) > 0
	for i, a := range d.Axes {
		if (len(a.Values) > 0) != drawn || len(a.Values) != len(d.Axes[0].Values) {
			return spec.Errorf(fmt.Sprintf("axes[%d].values", i), "a sampled study's axes hold one value per cell each (%d on axes[0], %d here), or none to draw them", len(d.Axes[0].Values), len(a.Values))
		}
	}
	if drawn {
		for i, a := range d.Axes {
			for j, v := range a.Values {
				x, err := strconv.ParseFloat(string(v), 64)
				if err != nil || x < a.Range.Min || x > a.Range.Max {
					return spec.Errorf(fmt.Sprintf("axes[%d].values[%d]", i, j), "must be a number in the axis' range %v … %v, got %s", a.Range.Min, a.Range.Max, v)
				}
			}
		}
		return nil
	}
	s := d.Sample
	if s == nil {
		return spec.Errorf("sample", "axes with a range need \"sample\": {\"kind\": \"random\" or \"lhs\", \"n\": cells, \"seed\": …}")
	}
	if s.Kind != "random" && s.Kind != "lhs" {
		return spec.Errorf("sample.kind", "must be random or lhs (a Latin hypercube), got %q", s.Kind)
	}
	if s.N < 1 || s.N > MaxCells {
		return spec.Errorf("sample.n", "must be 1 to %d cells, got %d", MaxCells, s.N)
	}
	u := Draw(s.Kind, s.N, len(d.Axes), s.Seed)
	for i := range d.Axes {
		r := d.Axes[i].Range
		vals := make([]json.RawMessage, s.N)
		for j := 0; j < s.N; j++ {
			x := r.Min + u[j][i]*(r.Max-r.Min)
			if r.Log {
				x = math.Exp(math.Log(r.Min) + u[j][i]*(math.Log(r.Max)-math.Log(r.Min)))
			}
			// four significant digits: a value a person can read and type
			x, _ = strconv.ParseFloat(strconv.FormatFloat(x, 'g', 4, 64), 64)
			if r.Int {
				x = math.Round(x)
			}
			x = math.Min(math.Max(x, r.Min), r.Max)
			vals[j] = json.RawMessage(strconv.FormatFloat(x, 'g', -1, 64))
		}
		d.Axes[i].Values = vals
	}
	return nil
}

// Draw returns n points in the unit cube of dim dimensions, each in
// [0, 1): "random" uniform, "lhs" a Latin hypercube (for every dimension,
// exactly one point in each of the n strata [k/n, (k+1)/n)). The points
// are a function of the seed.
func Draw(kind string, n, dim int, seed uint64) [][]float64 {
	rng := rand.New(rand.NewPCG(seed, 0x5eed_f1ab))
	pts := make([][]float64, n)
	for j := range pts {
		pts[j] = make([]float64, dim)
	}
	for i := 0; i < dim; i++ {
		perm := rng.Perm(n)
		for j := 0; j < n; j++ {
			if kind == "lhs" {
				pts[j][i] = (float64(perm[j]) + rng.Float64()) / float64(n)
			} else {
				pts[j][i] = rng.Float64()
			}
		}
	}
	return pts
}
