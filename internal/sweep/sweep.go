// Package sweep turns a sweep document — a base run spec and one or two
// axes over its parameters — into the run specs of its cells, and
// summarises a cell's run into the outcomes a sweep page plots: the final
// objective and gap, and the passes and seconds taken to reach a gap, each
// the median over the run's replications.
//
// A sweep document:
//
//	{"base": RUNSPEC,
//	 "axes": [{"param": "algorithms[0].rho", "values": [0.05, 0.1, 0.2]},
//	          {"param": "params.n", "values": [100, 200]}],
//	 "name": "ρ against n"}
//
// A param path names a top-level spec field (seed, iters, passes, gap,
// eval_every, replications), a problem parameter (params.NAME) or a field of
// one of the base spec's algorithms (algorithms[i].FIELD). The cells are
// every combination of the axes' values, the first axis varying slowest;
// or, in a sampled study (sample.go), points drawn over the axes' ranges.
// The server runs each cell as one run through its queue; `solve -sweep`
// runs them one after another and writes one bundle per cell.
package sweep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
)

// Limits of a sweep document.
const (
	MaxAxes        = 2
	MaxSampledAxes = 6   // axes of a random or Latin-hypercube study
	MaxValues      = 50  // values of one axis of a grid
	MaxCells       = 100 // cells of a sweep
)

// Axis is one parameter of a sweep and the values it takes.
type Axis struct {
	Param  string            `json:"param"`
	Values []json.RawMessage `json:"values"`
	// Range is the interval a sampled study draws the axis' values from
	// (see Sample).
	Range *Range `json:"range,omitempty"`
}

// Doc is a sweep document.
type Doc struct {
	Base spec.Run `json:"base"`
	Axes []Axis   `json:"axes"`
	// Name and Note are the user's, as a run's (optional).
	Name string `json:"name,omitempty"`
	Note string `json:"note,omitempty"`
	// Sample draws the cells over the axes' ranges instead of combining
	// their values (a random or Latin-hypercube study).
	Sample *Sample `json:"sample,omitempty"`
}

// Cell is one point of a sweep: its values (by param path) and its spec.
type Cell struct {
	Index  int
	Values map[string]json.RawMessage
	Spec   spec.Run
}

// ValuesJSON returns the cell's values as a JSON object, keys in axis order.
func (c *Cell) ValuesJSON(axes []Axis) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, a := range axes {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(a.Param)
		b.Write(k)
		b.WriteByte(':')
		b.Write(c.Values[a.Param])
	}
	b.WriteByte('}')
	return b.Bytes()
}

// Decode reads a sweep document (one JSON object, known fields only); a
// failure is a *spec.FieldError naming the field where it can.
func Decode(r io.Reader) (*Doc, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var d Doc
	if err := dec.Decode(&d); err != nil {
		var fe *spec.FieldError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &fe):
			if !strings.HasPrefix(fe.Field, "base") {
				fe = &spec.FieldError{Field: "base." + fe.Field, Msg: fe.Msg}
			}
			return nil, fe
		case errors.As(err, &te):
			return nil, spec.Errorf(te.Field, "must be a JSON %s", te.Type.Kind())
		case errors.Is(err, io.EOF):
			return nil, spec.Errorf("", "the sweep document is empty")
		}
		msg := err.Error()
		if i := strings.Index(msg, "unknown field "); i >= 0 {
			return nil, spec.Errorf(strings.Trim(msg[i+len("unknown field "):], `"`), "unknown field (check its spelling)")
		}
		return nil, spec.Errorf("", "the sweep document is not valid JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, spec.Errorf("", "the sweep document must be one JSON object, found more after it")
	}
	return &d, nil
}

// Cells validates the document and returns its cells, every combination of
// the axes' values (the first axis varying slowest), each with a complete,
// validated spec. Errors are *spec.FieldError naming base.FIELD, axes,
// axes[i].param (an unknown or repeated path) or axes[i].values[j] (a value
// that makes an invalid spec).
func (d *Doc) Cells() ([]Cell, error) { return d.CellsChecked(nil) }

// CellsChecked is Cells with a further check of every cell's spec (a
// server's per-run limits, say): a value that fails it alone on the base
// spec is named as axes[i].values[j] with its param and value, a
// combination that fails as the last axis' value with the whole cell.
func (d *Doc) CellsChecked(check func(spec.Run) error) ([]Cell, error) {
	if check == nil {
		check = func(spec.Run) error { return nil }
	}
	paired := d.sampled()
	if len(d.Axes) == 0 || (len(d.Axes) > MaxAxes && !paired) || len(d.Axes) > MaxSampledAxes {
		return nil, spec.Errorf("axes", "must hold one or two axes (up to %d in a sampled study), got %d", MaxSampledAxes, len(d.Axes))
	}
	if paired {
		if err := d.draw(); err != nil {
			return nil, err
		}
	}
	// Resolve fills in defaults: on a copy, so that an axis over the
	// algorithm is not held to the defaults of the base's algorithm.
	base := d.Base
	base.Algorithms = append([]spec.Algo(nil), d.Base.Algorithms...)
	base.Params = maps.Clone(d.Base.Params)
	if _, _, err := scenarios.Resolve(&base); err != nil {
		return nil, prefixed("base", err)
	}
	total := 1
	for i, a := range d.Axes {
		f := fmt.Sprintf("axes[%d]", i)
		if _, err := parsePath(a.Param); err != nil {
			return nil, spec.Errorf(f+".param", "%v", err)
		}
		for j := 0; j < i; j++ {
			if d.Axes[j].Param == a.Param {
				return nil, spec.Errorf(f+".param", "repeats axes[%d].param %q", j, a.Param)
			}
		}
		if len(a.Values) == 0 || (len(a.Values) > MaxValues && !paired) {
			return nil, spec.Errorf(f+".values", "must hold 1 to %d values, got %d", MaxValues, len(a.Values))
		}
		if !paired {
			total *= len(a.Values)
		} else {
			total = len(a.Values)
		}
		// Each value alone on the base spec names its own fault.
		for j, v := range a.Values {
			sp, err := apply(d.Base, map[string]json.RawMessage{a.Param: v})
			if err != nil {
				return nil, axisError(i, j, a.Param, err)
			}
			if err := check(sp); err != nil {
				return nil, limitError(i, j, a.Param+" = "+string(v), err)
			}
		}
	}
	if total > MaxCells {
		return nil, spec.Errorf("axes", "make %d cells, at most %d are allowed", total, MaxCells)
	}
	cells := make([]Cell, 0, total)
	idx := make([]int, len(d.Axes))
	for n := 0; n < total; n++ {
		rem := n
		for i := len(d.Axes) - 1; i >= 0; i-- {
			if paired {
				idx[i] = n // cell n takes value n of every axis
				continue
			}
			idx[i] = rem % len(d.Axes[i].Values)
			rem /= len(d.Axes[i].Values)
		}
		vals := map[string]json.RawMessage{}
		for i, a := range d.Axes {
			vals[a.Param] = a.Values[idx[i]]
		}
		sp, err := apply(d.Base, vals)
		if err != nil {
			// Each value was valid alone: the combination is at fault.
			return nil, axisError(len(d.Axes)-1, idx[len(d.Axes)-1], "", fmt.Errorf("with %s: %w", describe(d.Axes, idx), err))
		}
		if err := check(sp); err != nil {
			return nil, limitError(len(d.Axes)-1, idx[len(d.Axes)-1], describe(d.Axes, idx), err)
		}
		cells = append(cells, Cell{Index: n, Values: vals, Spec: sp})
	}
	return cells, nil
}

func describe(axes []Axis, idx []int) string {
	var parts []string
	for i, a := range axes {
		parts = append(parts, a.Param+" = "+string(a.Values[idx[i]]))
	}
	return strings.Join(parts, ", ")
}

// axisError names axes[i].param when err says the path is unknown, else
// axes[i].values[j].
func axisError(i, j int, param string, err error) error {
	var fe *spec.FieldError
	msg := err.Error()
	if errors.As(err, &fe) {
		msg = fe.Msg
		if fe.Field != "" && fe.Field != param {
			msg = fe.Field + ": " + fe.Msg
		}
		if param != "" && (errors.Is(err, errUnknownPath) || (fe.Field == param && strings.Contains(strings.ToLower(fe.Msg), "unknown"))) {
			return spec.Errorf(fmt.Sprintf("axes[%d].param", i), "%s", msg)
		}
	}
	if errors.Is(err, errUnknownPath) {
		return spec.Errorf(fmt.Sprintf("axes[%d].param", i), "%s", msg)
	}
	return spec.Errorf(fmt.Sprintf("axes[%d].values[%d]", i, j), "%s", msg)
}

// limitError names axes[i].values[j] for a cell spec that is valid but
// over a limit, with the values that make it so.
func limitError(i, j int, values string, err error) error {
	msg := err.Error()
	var fe *spec.FieldError
	if errors.As(err, &fe) {
		msg = fe.Msg
		if fe.Field != "" {
			msg = fe.Field + " " + fe.Msg
		}
	}
	return spec.Errorf(fmt.Sprintf("axes[%d].values[%d]", i, j), "with %s the cell's run is over a limit: %s", values, msg)
}

func prefixed(prefix string, err error) error {
	var fe *spec.FieldError
	if errors.As(err, &fe) {
		f := prefix
		if fe.Field != "" {
			f += "." + fe.Field
		}
		return &spec.FieldError{Field: f, Msg: fe.Msg}
	}
	return spec.Errorf(prefix, "%v", err)
}

var errUnknownPath = errors.New("unknown parameter path")

// step is one part of a param path: a field name, or an index.
type step struct {
	name  string
	index int // -1 for a name
}

// parsePath splits a param path: name(.name|[i])*.
func parsePath(p string) ([]step, error) {
	if p == "" {
		return nil, errors.New("is required (a spec field such as seed, params.NAME or algorithms[0].FIELD)")
	}
	if len(p) > 100 {
		return nil, errors.New("must be at most 100 characters")
	}
	var out []step
	rest := p
	for rest != "" {
		switch {
		case rest[0] == '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, fmt.Errorf("%q: missing ]", p)
			}
			n, err := strconv.Atoi(rest[1:end])
			if err != nil || n < 0 || n > 1000 {
				return nil, fmt.Errorf("%q: the index must be a small non-negative integer", p)
			}
			out = append(out, step{index: n})
			rest = rest[end+1:]
		default:
			rest = strings.TrimPrefix(rest, ".")
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			name := rest[:end]
			if name == "" {
				return nil, fmt.Errorf("%q: an empty name", p)
			}
			out = append(out, step{name: name, index: -1})
			rest = rest[end:]
		}
	}
	if out[0].index >= 0 {
		return nil, fmt.Errorf("%q must start with a field name", p)
	}
	return out, nil
}

// apply returns base with the values set at their paths, validated.
func apply(base spec.Run, vals map[string]json.RawMessage) (spec.Run, error) {
	raw, err := json.Marshal(base)
	if err != nil {
		return spec.Run{}, err
	}
	var root map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		return spec.Run{}, err
	}
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, path := range keys {
		steps, err := parsePath(path)
		if err != nil {
			return spec.Run{}, fmt.Errorf("%w: %v", errUnknownPath, err)
		}
		var v any
		vd := json.NewDecoder(bytes.NewReader(vals[path]))
		vd.UseNumber()
		if err := vd.Decode(&v); err != nil {
			return spec.Run{}, spec.Errorf(path, "not a JSON value: %v", err)
		}
		if err := set(root, steps, v, path); err != nil {
			return spec.Run{}, err
		}
	}
	b, err := json.Marshal(root)
	if err != nil {
		return spec.Run{}, err
	}
	var sp spec.Run
	sd := json.NewDecoder(bytes.NewReader(b))
	sd.DisallowUnknownFields()
	if err := sd.Decode(&sp); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return spec.Run{}, spec.Errorf(te.Field, "must be a JSON %s", te.Type.Kind())
		}
		var fe *spec.FieldError
		if errors.As(err, &fe) {
			return spec.Run{}, fe
		}
		if strings.Contains(err.Error(), "unknown field") {
			return spec.Run{}, fmt.Errorf("%w: %v", errUnknownPath, err)
		}
		return spec.Run{}, err
	}
	if _, _, err := scenarios.Resolve(&sp); err != nil {
		return spec.Run{}, err
	}
	return sp, nil
}

// set puts v at the path in the decoded spec: the path's containers must
// exist (an algorithm index within the base's algorithms), except params,
// which is made when the base has none.
func set(root map[string]any, steps []step, v any, path string) error {
	var cur any = root
	for i, s := range steps {
		last := i == len(steps)-1
		if s.index >= 0 {
			arr, ok := cur.([]any)
			if !ok || s.index >= len(arr) {
				return fmt.Errorf("%w: %q: the base spec has no element %d there", errUnknownPath, path, s.index)
			}
			if last {
				arr[s.index] = v
				return nil
			}
			cur = arr[s.index]
			continue
		}
		obj, ok := cur.(map[string]any)
		if !ok {
			return fmt.Errorf("%w: %q: %s is not an object", errUnknownPath, path, s.name)
		}
		if last {
			if i == 0 && (s.name == "problem" || s.name == "algorithms" || s.name == "params") {
				return fmt.Errorf("%w: %q: sweep over a value (params.NAME, algorithms[i].FIELD), not a whole part of the spec", errUnknownPath, path)
			}
			if i == 2 && steps[0].name == "algorithms" && stringFields()[s.name] {
				switch t := v.(type) {
				case json.Number:
					v = t.String()
				case bool:
					v = strconv.FormatBool(t)
				}
			}
			obj[s.name] = v
			return nil
		}
		next, ok := obj[s.name]
		if !ok && s.name == "params" && i == 0 {
			next = map[string]any{}
			obj[s.name] = next
		}
		if next == nil {
			return fmt.Errorf("%w: %q: the base spec has no %s", errUnknownPath, path, s.name)
		}
		cur = next
	}
	return nil
}

// Outcome is what one trace reached.
type Outcome struct {
	Objective, Gap            float64 // at the last evaluated record; NaN if none
	PassesToGap, SecondsToGap float64 // at the first record with gap ≤ the target; +Inf if never
	// PassesAtEnd, SecondsAtEnd are where the trace ended (its last
	// record): a trace that never reached the gap is censored there, it
	// would have needed more; NaN for a trace with no record.
	PassesAtEnd, SecondsAtEnd float64
}

// Reached says whether the trace reached the gap target.
func (o Outcome) Reached() bool { return !math.IsInf(o.PassesToGap, 1) }

// TraceOutcome walks a trace's records (each calls fn on every record in
// order until it returns false) and returns its outcome for the gap target.
func TraceOutcome(each func(fn func(r *solver.Record) bool), gapTarget float64) Outcome {
	o := Outcome{Objective: math.NaN(), Gap: math.NaN(), PassesToGap: math.Inf(1), SecondsToGap: math.Inf(1), PassesAtEnd: math.NaN(), SecondsAtEnd: math.NaN()}
	each(func(r *solver.Record) bool {
		o.PassesAtEnd, o.SecondsAtEnd = r.Passes, r.Time
		if r.Objective != nil {
			o.Objective = *r.Objective
		}
		if r.Gap != nil {
			o.Gap = *r.Gap
			if math.IsInf(o.PassesToGap, 1) && *r.Gap <= gapTarget {
				o.PassesToGap, o.SecondsToGap = r.Passes, r.Time
			}
		}
		return true
	})
	return o
}

// Summary is a cell's outcome: medians over replications; nil where no
// median exists (never evaluated, or the gap not reached by the middle
// replication, both middle ones for an even count: 2 of 3, 4 of 6); and how
// many of the replications reached the gap.
type Summary struct {
	FinalObjective *float64 `json:"final_objective"`
	FinalGap       *float64 `json:"final_gap"`
	PassesToGap    *float64 `json:"passes_to_gap"`
	SecondsToGap   *float64 `json:"seconds_to_gap"`
	// Reached of Replications traces reached the gap target.
	Reached      int `json:"reached"`
	Replications int `json:"replications"`
}

// Summarize returns the medians of the outcomes. A trace that never reached
// the gap counts as +Inf, so the median is finite exactly when the middle
// replication (both middle ones, for an even count) reached it.
func Summarize(os []Outcome) Summary {
	pick := func(f func(Outcome) float64) *float64 {
		var v []float64
		for _, o := range os {
			if x := f(o); !math.IsNaN(x) {
				v = append(v, x)
			}
		}
		m := Median(v)
		if math.IsNaN(m) || math.IsInf(m, 0) {
			return nil
		}
		return &m
	}
	reached := 0
	for _, o := range os {
		if o.Reached() {
			reached++
		}
	}
	return Summary{
		Reached: reached, Replications: len(os),
		FinalObjective: pick(func(o Outcome) float64 { return o.Objective }),
		FinalGap:       pick(func(o Outcome) float64 { return o.Gap }),
		PassesToGap:    pick(func(o Outcome) float64 { return o.PassesToGap }),
		SecondsToGap:   pick(func(o Outcome) float64 { return o.SecondsToGap }),
	}
}

// Median returns the median of v (the mean of the middle two for an even
// count; NaN for none). v is sorted in place.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	sort.Float64s(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	a, b := v[n/2-1], v[n/2]
	if math.IsInf(a, 1) || math.IsInf(b, 1) {
		return math.Max(a, b)
	}
	return (a + b) / 2
}
