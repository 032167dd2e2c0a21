package sweep

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/fwlab/fwlab/internal/spec"
)

// words name the spec's fields for people: a sweep's axes are labelled
// with them ("ρ of ssfw-as", "problem's n") rather than with their paths.
var words = map[string]string{
	// algorithm fields
	"algo": "algorithm", "stepsize": "stepsize", "L": "L", "schedule": "schedule",
	"rho": "ρ", "alpha": "α", "m0": "m₀", "growth": "batch growth", "r": "blocks per iteration",
	"workers": "workers", "caratheodory": "Carathéodory bound", "mu": "μ", "eps": "ε",
	"no_average": "plain iterate", "path": "λ-path stages", "slack": "slack rule",
	// run fields
	"seed": "seed", "iters": "iterations", "passes": "pass limit", "gap": "gap target",
	"eval_every": "evaluation interval", "replications": "replications",
}

// Label names a param path in words for the base spec: algorithms[i].rho
// is "ρ of ALGO" (with "#i+1" when two of the base's algorithms share the
// name), params.n is "problem's n", a run field its word; an unknown path
// is itself.
func Label(path string, base *spec.Run) string {
	steps, err := parsePath(path)
	if err != nil {
		return path
	}
	switch {
	case len(steps) == 3 && steps[0].name == "algorithms" && steps[1].index >= 0 && steps[2].index < 0:
		w := words[steps[2].name]
		if w == "" {
			w = steps[2].name
		}
		i := steps[1].index
		if base == nil || i >= len(base.Algorithms) {
			return fmt.Sprintf("%s of algorithm %d", w, i+1)
		}
		name := base.Algorithms[i].Algo
		same := 0
		for _, a := range base.Algorithms {
			if a.Algo == name {
				same++
			}
		}
		if same > 1 {
			name = fmt.Sprintf("%s #%d", name, i+1)
		}
		return w + " of " + name
	case len(steps) == 2 && steps[0].name == "params" && steps[1].index < 0:
		return "problem's " + steps[1].name
	case len(steps) == 1:
		if w := words[steps[0].name]; w != "" {
			return w
		}
	}
	return path
}

// Labels returns the label of every axis, in order.
func (d *Doc) Labels() []string {
	out := make([]string, len(d.Axes))
	for i, a := range d.Axes {
		out[i] = Label(a.Param, &d.Base)
	}
	return out
}

// LabelsOf labels axes kept as JSON ([{"param", "values"}, …]) for the base.
func LabelsOf(axes json.RawMessage, base *spec.Run) []string {
	var as []Axis
	if json.Unmarshal(axes, &as) != nil {
		return nil
	}
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = Label(a.Param, base)
	}
	return out
}

// ValueText writes an axis value for people: a string without its quotes,
// a number or boolean as in JSON.
func ValueText(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(v))
}

// stringFields are the json names of spec.Algo's string fields: a number
// or boolean swept over one of them (L = 2) is taken as its text.
var stringFields = sync.OnceValue(func() map[string]bool {
	out := map[string]bool{}
	t := reflect.TypeOf(spec.Algo{})
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Type.Kind() == reflect.String {
			out[name] = true
		}
	}
	return out
})

// Describe writes a cell's values in words, axis by axis: "ρ of ssfw-as =
// 0.1, problem's n = 200" (values of axes kept as JSON).
func Describe(values, axes json.RawMessage, base *spec.Run) string {
	var as []Axis
	var vals map[string]json.RawMessage
	if json.Unmarshal(axes, &as) != nil || json.Unmarshal(values, &vals) != nil {
		return string(values)
	}
	parts := make([]string, 0, len(as))
	for _, a := range as {
		parts = append(parts, Label(a.Param, base)+" = "+ValueText(vals[a.Param]))
	}
	return strings.Join(parts, ", ")
}
