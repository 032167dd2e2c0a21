package spec_test

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/spec"
)

// fieldErr asserts that err is a *spec.FieldError on field whose message
// contains every one of want.
func fieldErr(t *testing.T, err error, field string, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one on %s", field)
	}
	fe, ok := err.(*spec.FieldError)
	if !ok {
		t.Fatalf("error %v (%T) is not a *spec.FieldError", err, err)
	}
	if fe.Field != field {
		t.Fatalf("error names field %q, want %q (message: %s)", fe.Field, field, fe.Msg)
	}
	for _, w := range want {
		if !strings.Contains(fe.Msg, w) {
			t.Fatalf("message %q lacks %q", fe.Msg, w)
		}
	}
	if got := fe.Error(); got != field+": "+fe.Msg {
		t.Fatalf("Error() = %q, want the field, a colon and the message", got)
	}
}

func TestAlgoNormalizeDefaults(t *testing.T) {
	full := func(algo, step string) spec.Algo {
		return spec.Algo{Algo: algo, Stepsize: step, L: "auto", Schedule: "full",
			Rho: spec.DefaultRho, Alpha: spec.DefaultAlpha, M0: spec.DefaultM0, Growth: spec.DefaultGrowth}
	}
	stoch := func(algo string) spec.Algo {
		a := full(algo, spec.DefaultStepsize)
		a.Schedule = spec.DefaultSchedule
		return a
	}
	tests := []struct {
		in, want spec.Algo
	}{
		{spec.Algo{Algo: "ssfw-as"}, stoch("ssfw-as")},
		{spec.Algo{Algo: "bc-ssfw-as"}, stoch("bc-ssfw-as")},
		{spec.Algo{Algo: "bcfw-as"}, stoch("bcfw-as")},
		{spec.Algo{Algo: "afw"}, full("afw", "curvature")},
		{spec.Algo{Algo: "pfw"}, full("pfw", "curvature")},
		{spec.Algo{Algo: "fw"}, full("fw", "open-loop")},
		{spec.Algo{Algo: "fista"}, full("fista", "curvature")},
		{spec.Algo{Algo: "bcfw"}, full("bcfw", "curvature")},
		// given values are kept
		{spec.Algo{Algo: "fw", Stepsize: "short", L: "2.5"}, func() spec.Algo { a := full("fw", "short"); a.L = "2.5"; return a }()},
		{spec.Algo{Algo: "ssfw-as", Schedule: "geometric", Rho: 0.3, Alpha: 0.9, M0: 7, Growth: 2, R: 3, Workers: 2, Caratheodory: true, Mu: 0.5, Eps: 1e-3},
			spec.Algo{Algo: "ssfw-as", Stepsize: "curvature", L: "auto", Schedule: "geometric", Rho: 0.3, Alpha: 0.9, M0: 7, Growth: 2, R: 3, Workers: 2, Caratheodory: true, Mu: 0.5, Eps: 1e-3}},
		{spec.Algo{Algo: "afw", Stepsize: "backtrack", Schedule: "full"}, full("afw", "backtrack")},
		{spec.Algo{Algo: "cd", Path: 10}, func() spec.Algo { a := full("cd", "curvature"); a.Path = 10; return a }()},
		{spec.Algo{Algo: "cd", Path: spec.MaxPath}, func() spec.Algo { a := full("cd", "curvature"); a.Path = spec.MaxPath; return a }()},
	}
	for _, tc := range tests {
		got := tc.in
		if err := got.Normalize("algorithms[0]."); err != nil {
			t.Fatalf("%+v: %v", tc.in, err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Normalize(%+v)\n got  %+v\n want %+v", tc.in, got, tc.want)
		}
		// normalising twice changes nothing
		again := got
		if err := again.Normalize(""); err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("second Normalize of %+v: %v, %+v", got, err, again)
		}
	}
}

func TestAlgoNormalizeRejects(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name  string
		in    spec.Algo
		field string
		want  []string
	}{
		{"unknown algo", spec.Algo{Algo: "newton"}, "algo", []string{`unknown algorithm "newton"`, strings.Join(spec.AlgoNames, ", ")}},
		{"empty algo", spec.Algo{}, "algo", []string{`unknown algorithm ""`}},
		{"algo case", spec.Algo{Algo: "AFW"}, "algo", []string{"unknown algorithm"}},
		{"stepsize unknown", spec.Algo{Algo: "afw", Stepsize: "exact"}, "stepsize", []string{"must be paper, curvature or backtrack", `"exact"`}},
		{"open-loop not fw", spec.Algo{Algo: "afw", Stepsize: "open-loop"}, "stepsize", []string{"rule of fw only"}},
		{"short not fw", spec.Algo{Algo: "ssfw-as", Stepsize: "short"}, "stepsize", []string{"rule of fw only"}},
		{"L zero", spec.Algo{Algo: "afw", L: "0"}, "L", []string{`must be a positive number or "auto"`, `"0"`}},
		{"L negative", spec.Algo{Algo: "afw", L: "-1"}, "L", []string{"positive number"}},
		{"L text", spec.Algo{Algo: "afw", L: "big"}, "L", []string{"positive number", `"big"`}},
		{"L NaN", spec.Algo{Algo: "afw", L: "NaN"}, "L", []string{"positive number"}},
		{"L Inf", spec.Algo{Algo: "afw", L: "+Inf"}, "L", []string{"positive number"}},
		{"cd L", spec.Algo{Algo: "cd", L: "2"}, "L", []string{"cd needs no Lipschitz constant", `"2"`}},
		{"cd stepsize", spec.Algo{Algo: "cd", Stepsize: "backtrack"}, "stepsize", []string{"cd minimises each coordinate exactly", `"backtrack"`}},
		{"L overflow", spec.Algo{Algo: "afw", L: "1e400"}, "L", []string{"positive number"}},
		{"schedule unknown", spec.Algo{Algo: "ssfw-as", Schedule: "linear"}, "schedule", []string{"must be paper, constant, geometric or full", `"linear"`}},
		{"schedule on deterministic", spec.Algo{Algo: "afw", Schedule: "paper"}, "schedule", []string{"afw uses full gradients", "only ssfw-as, bc-ssfw-as and bcfw-as"}},
		{"schedule on fw", spec.Algo{Algo: "fw", Schedule: "geometric"}, "schedule", []string{"fw uses full gradients"}},
		{"rho one", spec.Algo{Algo: "ssfw-as", Rho: 1}, "rho", []string{"strictly between 0 and 1", "got 1"}},
		{"rho negative", spec.Algo{Algo: "ssfw-as", Rho: -0.5}, "rho", []string{"strictly between 0 and 1"}},
		{"rho NaN", spec.Algo{Algo: "ssfw-as", Rho: nan}, "rho", []string{"strictly between 0 and 1"}},
		{"alpha one", spec.Algo{Algo: "ssfw-as", Alpha: 1}, "alpha", []string{"strictly between 0 and 1"}},
		{"alpha big", spec.Algo{Algo: "ssfw-as", Alpha: 3}, "alpha", []string{"strictly between 0 and 1", "got 3"}},
		{"alpha Inf", spec.Algo{Algo: "ssfw-as", Alpha: inf}, "alpha", []string{"strictly between 0 and 1"}},
		{"m0 negative", spec.Algo{Algo: "ssfw-as", M0: -2}, "m0", []string{"must be at least 1", "got -2"}},
		{"growth one", spec.Algo{Algo: "ssfw-as", Growth: 1}, "growth", []string{"greater than 1", "got 1"}},
		{"growth below one", spec.Algo{Algo: "ssfw-as", Growth: 0.5}, "growth", []string{"greater than 1"}},
		{"growth Inf", spec.Algo{Algo: "ssfw-as", Growth: inf}, "growth", []string{"greater than 1"}},
		{"growth NaN", spec.Algo{Algo: "ssfw-as", Growth: nan}, "growth", []string{"greater than 1"}},
		{"r negative", spec.Algo{Algo: "bc-ssfw-as", R: -1}, "r", []string{"at least 1 (or 0 for all blocks)", "got -1"}},
		{"workers negative", spec.Algo{Algo: "bcfw", Workers: -4}, "workers", []string{"at least 1 (or 0 for the number of CPUs)"}},
		{"mu negative", spec.Algo{Algo: "spg", Mu: -1}, "mu", []string{"positive number"}},
		{"mu NaN", spec.Algo{Algo: "spg", Mu: nan}, "mu", []string{"positive number"}},
		{"eps negative", spec.Algo{Algo: "spg", Eps: -1e-3}, "eps", []string{"positive number"}},
		{"eps Inf", spec.Algo{Algo: "spg", Eps: inf}, "eps", []string{"positive number"}},
		{"path negative", spec.Algo{Algo: "cd", Path: -1}, "path", []string{"between 0 (none) and 1000", "got -1"}},
		{"path too long", spec.Algo{Algo: "cd", Path: 1001}, "path", []string{"between 0 (none) and 1000", "got 1001"}},
		{"path not cd", spec.Algo{Algo: "fista", Path: 5}, "path", []string{"a setting of cd only", "for fista", "got 5"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.in
			fieldErr(t, a.Normalize("algorithms[2]."), "algorithms[2]."+tc.field, tc.want...)
			b := tc.in
			fieldErr(t, b.Normalize(""), tc.field, tc.want...)
		})
	}
}

func TestAlgoLValue(t *testing.T) {
	for _, tc := range []struct {
		l    string
		want float64
	}{{"", 0}, {"auto", 0}, {"2.5", 2.5}, {"1e3", 1000}} {
		a := spec.Algo{L: tc.l}
		if got := a.LValue(); got != tc.want {
			t.Errorf("LValue(%q) = %v, want %v", tc.l, got, tc.want)
		}
	}
}

func TestStochastic(t *testing.T) {
	for _, n := range spec.AlgoNames {
		want := n == "ssfw-as" || n == "bc-ssfw-as" || n == "bcfw-as"
		if spec.Stochastic(n) != want {
			t.Errorf("Stochastic(%s) = %v", n, !want)
		}
	}
	if spec.Stochastic("nope") {
		t.Error("an unknown algorithm is not stochastic")
	}
}

// validRun is a run that passes Normalize, to be broken one field at a time.
func validRun() spec.Run {
	return spec.Run{Problem: "lasso", Algorithms: []spec.Algo{{Algo: "ssfw-as"}, {Algo: "fista"}}}
}

func TestRunNormalizeDefaults(t *testing.T) {
	r := validRun()
	if err := r.Normalize(); err != nil {
		t.Fatal(err)
	}
	if r.Replications != 1 || r.Iters != spec.DefaultIters || r.EvalEvery != spec.DefaultEval || r.Seed != 0 || r.Passes != 0 || r.Gap != 0 {
		t.Fatalf("defaults not filled: %+v", r)
	}
	if r.Algorithms[0].Schedule != "paper" || r.Algorithms[1].Schedule != "full" || r.Algorithms[0].Stepsize != "curvature" {
		t.Fatalf("algorithm defaults not filled: %+v", r.Algorithms)
	}
	again := r
	again.Algorithms = append([]spec.Algo(nil), r.Algorithms...)
	if err := again.Normalize(); err != nil || !reflect.DeepEqual(again, r) {
		t.Fatalf("Normalize is not idempotent: %v\n%+v\n%+v", err, again, r)
	}
	// given values are kept, limits at their bounds accepted
	r = validRun()
	r.Replications, r.Seed, r.Iters, r.Passes, r.Gap, r.EvalEvery = spec.MaxReplications, 42, spec.MaxIters, 2.5, 1e-6, 7
	if err := r.Normalize(); err != nil {
		t.Fatal(err)
	}
	if r.Replications != spec.MaxReplications || r.Seed != 42 || r.Iters != spec.MaxIters || r.Passes != 2.5 || r.Gap != 1e-6 || r.EvalEvery != 7 {
		t.Fatalf("given values changed: %+v", r)
	}
	r = validRun()
	r.Algorithms = make([]spec.Algo, spec.MaxAlgorithms)
	for i := range r.Algorithms {
		r.Algorithms[i].Algo = "afw"
	}
	if err := r.Normalize(); err != nil {
		t.Fatalf("%d algorithms: %v", spec.MaxAlgorithms, err)
	}
}

func TestRunNormalizeRejects(t *testing.T) {
	tests := []struct {
		name   string
		change func(r *spec.Run)
		field  string
		want   []string
	}{
		{"no problem", func(r *spec.Run) { r.Problem = "" }, "problem", []string{"is required"}},
		{"no algorithms", func(r *spec.Run) { r.Algorithms = nil }, "algorithms", []string{"at least one algorithm"}},
		{"too many algorithms", func(r *spec.Run) {
			r.Algorithms = make([]spec.Algo, spec.MaxAlgorithms+1)
			for i := range r.Algorithms {
				r.Algorithms[i].Algo = "fw"
			}
		}, "algorithms", []string{"at most 8 algorithms", "got 9"}},
		{"bad second algorithm", func(r *spec.Run) { r.Algorithms[1].Algo = "sgd" }, "algorithms[1].algo", []string{"unknown algorithm"}},
		{"bad first algorithm param", func(r *spec.Run) { r.Algorithms[0].Rho = 2 }, "algorithms[0].rho", []string{"strictly between 0 and 1"}},
		{"replications negative", func(r *spec.Run) { r.Replications = -1 }, "replications", []string{"between 1 and 100", "got -1"}},
		{"replications too many", func(r *spec.Run) { r.Replications = spec.MaxReplications + 1 }, "replications", []string{"between 1 and 100", "got 101"}},
		{"seed negative", func(r *spec.Run) { r.Seed = -3 }, "seed", []string{"non-negative", "got -3"}},
		{"iters negative", func(r *spec.Run) { r.Iters = -1 }, "iters", []string{"between 1 and 10000000"}},
		{"iters too many", func(r *spec.Run) { r.Iters = spec.MaxIters + 1 }, "iters", []string{"between 1 and 10000000", "got 10000001"}},
		{"passes negative", func(r *spec.Run) { r.Passes = -0.5 }, "passes", []string{"non-negative number (0: no limit)"}},
		{"passes NaN", func(r *spec.Run) { r.Passes = math.NaN() }, "passes", []string{"non-negative number"}},
		{"passes Inf", func(r *spec.Run) { r.Passes = math.Inf(1) }, "passes", []string{"non-negative number"}},
		{"gap negative", func(r *spec.Run) { r.Gap = -1e-9 }, "gap", []string{"non-negative number (0: no gap test)"}},
		{"gap Inf", func(r *spec.Run) { r.Gap = math.Inf(1) }, "gap", []string{"non-negative number"}},
		{"eval_every negative", func(r *spec.Run) { r.EvalEvery = -2 }, "eval_every", []string{"at least 1", "got -2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := validRun()
			tc.change(&r)
			fieldErr(t, r.Normalize(), tc.field, tc.want...)
		})
	}
}

func TestParamsUnmarshal(t *testing.T) {
	var p spec.Params
	in := `{"s":"text","i":3,"f":-1.5e-3,"big":1e400,"t":true,"no":false,"empty":"","nul":null,"pad":" 7 "}`
	if err := json.Unmarshal([]byte(in), &p); err != nil {
		t.Fatal(err)
	}
	want := spec.Params{"s": "text", "i": "3", "f": "-1.5e-3", "big": "1e400", "t": "true", "no": "false",
		"empty": "", "nul": "", "pad": " 7 "}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("got %#v\nwant %#v", p, want)
	}
	if got := p.Keys(); !reflect.DeepEqual(got, []string{"big", "empty", "f", "i", "no", "nul", "pad", "s", "t"}) {
		t.Fatalf("Keys() = %v, want sorted names", got)
	}
	// numbers keep their literal text, so a value reaches the parameter's
	// own parser unrounded
	for _, lit := range []string{"0.1", "1e-300", "123456789012345678901234567890", "-0"} {
		var q spec.Params
		if err := json.Unmarshal([]byte(`{"x":`+lit+`}`), &q); err != nil || q["x"] != lit {
			t.Fatalf("%s: %v, %q", lit, err, q["x"])
		}
	}
	// inside a Run
	var r spec.Run
	if err := json.Unmarshal([]byte(`{"problem":"lasso","params":{"n":100,"lambda":"0.5"}}`), &r); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.Params, spec.Params{"n": "100", "lambda": "0.5"}) {
		t.Fatalf("run params %#v", r.Params)
	}
}

func TestParamsUnmarshalRejects(t *testing.T) {
	for _, tc := range []struct{ in, key string }{
		{`{"n":[1,2]}`, "n"},
		{`{"n":{"a":1}}`, "n"},
		{`{"n":[]}`, "n"},
		{`{"ok":1,"points":[[0,0],[1,0]]}`, "points"},
	} {
		var p spec.Params
		fieldErr(t, p.UnmarshalJSON([]byte(tc.in)), "params."+tc.key, "must be a string, a number or a boolean")
		var r spec.Run
		fieldErr(t, json.Unmarshal([]byte(`{"problem":"x","params":`+tc.in+`}`), &r), "params."+tc.key, "must be a string, a number or a boolean")
	}
	// not an object at all: the decoder's own error
	for _, in := range []string{`[1]`, `"a"`, `3`, `{`} {
		var p spec.Params
		if err := p.UnmarshalJSON([]byte(in)); err == nil {
			t.Errorf("%s: accepted as params", in)
		}
	}
}

func TestFieldErrorJSON(t *testing.T) {
	b, err := json.Marshal(spec.Errorf("params.n", "must be %s, got %q", "a whole number", "x"))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"field":"params.n","error":"must be a whole number, got \"x\""}` {
		t.Fatalf("encoded as %s", b)
	}
}

// FuzzRunNormalize decodes arbitrary JSON as a Run and normalises it: never a
// panic, every error a FieldError naming a field, and a normalised run is a
// fixed point (normalising again, or after a JSON round trip, changes nothing).
func FuzzRunNormalize(f *testing.F) {
	for _, s := range []string{
		`{"problem":"lasso","algorithms":[{"algo":"ssfw-as"}]}`,
		`{"problem":"toy-polygon","params":{"target":"edge","cond":8},"algorithms":[{"algo":"afw"},{"algo":"fw","stepsize":"short","L":"2"}],"iters":300}`,
		`{"problem":"p","algorithms":[{"algo":"bc-ssfw-as","schedule":"geometric","m0":4,"growth":1.5,"r":2}],"replications":3,"seed":9,"passes":1.5,"gap":1e-6,"eval_every":10}`,
		`{"problem":"p","algorithms":[{"algo":"ssfw-as","rho":1}]}`,
		`{"problem":"p","algorithms":[{"algo":"fw","L":"-1"}],"seed":-1}`,
		`{"problem":"p","params":{"a":[1]},"algorithms":[]}`,
		`{"problem":"p","algorithms":[{"algo":"spg","mu":0.1,"eps":1e-3,"no_average":true}],"iters":-5}`,
		`{"problem":"toy-polygon","algorithms":[{"algo":"afw"}],"iters":50,"start_paused":true}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var r spec.Run
		if err := json.Unmarshal(data, &r); err != nil {
			return
		}
		err := r.Normalize()
		if err != nil {
			var fe *spec.FieldError
			if !errors.As(err, &fe) || fe.Field == "" || fe.Msg == "" {
				t.Fatalf("Normalize(%s) = %v (%T), want a FieldError naming a field", data, err, err)
			}
			return
		}
		if r.Problem == "" || len(r.Algorithms) == 0 || r.Iters < 1 || r.EvalEvery < 0 || r.Replications < 1 {
			t.Fatalf("accepted run %+v breaks a rule", r)
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("marshal %+v: %v", r, err)
		}
		var back spec.Run
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("unmarshal %s: %v", b, err)
		}
		if err := back.Normalize(); err != nil {
			t.Fatalf("the normalised run %s is rejected: %v", b, err)
		}
		if len(back.Params) == 0 && len(r.Params) == 0 {
			back.Params = r.Params
		}
		if !reflect.DeepEqual(back, r) {
			t.Fatalf("round trip changed the run:\n%+v\n%+v", r, back)
		}
		for _, a := range r.Algorithms {
			if a.L != "auto" {
				if l, err := strconv.ParseFloat(a.L, 64); err != nil || !(l > 0) || math.IsInf(l, 0) {
					t.Fatalf("accepted L %q", a.L)
				}
			}
		}
	})
}

// The baselines that are not methods of the paper are known algorithms,
// and cd is one of them.
func TestNotInPaper(t *testing.T) {
	if spec.NotInPaper["cd"] == "" {
		t.Error("cd is not marked as a baseline outside the paper")
	}
	for a := range spec.NotInPaper {
		found := false
		for _, n := range spec.AlgoNames {
			found = found || n == a
		}
		if !found {
			t.Errorf("NotInPaper names %q, which is not one of AlgoNames", a)
		}
	}
}

// The table's rules are the spec's: every algorithm takes its default
// step-size rule and each rule it lists, and refuses every other rule some
// algorithm takes, naming the field and the algorithms that take it.
func TestAlgorithmTableStepsizes(t *testing.T) {
	var all []string
	for _, a := range spec.Algorithms {
		for _, r := range a.Stepsizes {
			if !slices.Contains(all, r) {
				all = append(all, r)
			}
		}
	}
	for _, a := range spec.Algorithms {
		d := spec.Algo{Algo: a.Name}
		if err := d.Normalize(""); err != nil || d.Stepsize != a.Stepsize || spec.Stochastic(a.Name) != a.Stochastic {
			t.Fatalf("%s: default %q, %v", a.Name, d.Stepsize, err)
		}
		for _, r := range all {
			x := spec.Algo{Algo: a.Name, Stepsize: r}
			err := x.Normalize("")
			if takes := slices.Contains(a.Stepsizes, r); takes != (err == nil) {
				t.Errorf("%s with %s: %v (the table says it takes it: %v)", a.Name, r, err, takes)
				continue
			}
			if err != nil && (err.(*spec.FieldError).Field != "stepsize" || !strings.Contains(err.Error(), a.Name) && !strings.Contains(err.Error(), "rule of")) {
				t.Errorf("%s with %s: %v", a.Name, r, err)
			}
		}
	}
}
