package scenarios

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/ssvm"
)

// wantFieldErr asserts that err is a *spec.FieldError on field whose message
// contains every one of want.
func wantFieldErr(t *testing.T, err error, field string, want ...string) {
	t.Helper()
	fe, ok := err.(*spec.FieldError)
	if !ok {
		t.Fatalf("error %v (%T), want a *spec.FieldError on %s", err, err, field)
	}
	if fe.Field != field {
		t.Fatalf("error on %q (%s), want %q", fe.Field, fe.Msg, field)
	}
	for _, w := range want {
		if !strings.Contains(fe.Msg, w) {
			t.Fatalf("message %q lacks %q", fe.Msg, w)
		}
	}
}

func TestParamRule(t *testing.T) {
	tests := []struct {
		p    Param
		want string
	}{
		{Param{Kind: Int}, "must be a whole number"},
		{Param{Kind: Float}, "must be a number"},
		{Param{Kind: Int, Min: 1, HasMin: true}, "must be a whole number ≥ 1"},
		{Param{Kind: Int, Min: 0, HasMin: true, MinExcl: true}, "must be a whole number > 0"},
		{Param{Kind: Int, Max: 8, HasMax: true}, "must be a whole number ≤ 8"},
		{Param{Kind: Int, Min: 2, Max: 8, HasMin: true, HasMax: true}, "must be a whole number ≥ 2 and ≤ 8"},
		{Param{Kind: Float, Min: 0, HasMin: true}, "must be a number ≥ 0"},
		{Param{Kind: Float, Min: 0, HasMin: true, MinExcl: true}, "must be a number > 0"},
		{Param{Kind: Float, Max: 1, HasMax: true, MaxExcl: true}, "must be a number < 1"},
		{Param{Kind: Float, Min: -1e6, Max: 2.5e-3, HasMin: true, HasMax: true, MinExcl: true, MaxExcl: true}, "must be a number > -1e+06 and < 0.0025"},
		{Param{Kind: Float, Min: 0, Max: 1, HasMin: true, HasMax: true, MaxExcl: true}, "must be a number ≥ 0 and < 1"},
		// the exclusive flags mean nothing without their bound
		{Param{Kind: Float, MinExcl: true, MaxExcl: true}, "must be a number"},
		{Param{Kind: Choice, Choices: []string{"train", "small"}}, "must be one of train, small"},
		{Param{Kind: Bool}, "must be true or false"},
		{Param{Kind: Path}, "must be a readable file path"},
		{Param{Kind: String}, ""},
	}
	for _, tc := range tests {
		if got := tc.p.Rule(); got != tc.want {
			t.Errorf("Rule(%+v) = %q, want %q", tc.p, got, tc.want)
		}
	}
}

func TestParamCheck(t *testing.T) {
	intIn := Param{Name: "n", Kind: Int, Min: 2, Max: 8, HasMin: true, HasMax: true}
	intEx := Param{Name: "n", Kind: Int, Min: 2, Max: 8, HasMin: true, HasMax: true, MinExcl: true, MaxExcl: true}
	intFree := Param{Name: "n", Kind: Int}
	fMin := Param{Name: "c", Kind: Float, Min: 0, HasMin: true, MinExcl: true}
	fMax := Param{Name: "c", Kind: Float, Max: 1, HasMax: true}
	fBoth := Param{Name: "c", Kind: Float, Min: -1, Max: 1, HasMin: true, HasMax: true}
	fFree := Param{Name: "c", Kind: Float}
	choice := Param{Name: "split", Kind: Choice, Choices: []string{"train", "small"}}
	boolean := Param{Name: "flag", Kind: Bool}
	str := Param{Name: "points", Kind: String}
	path := Param{Name: "data", Kind: Path}
	tests := []struct {
		p    Param
		v    string
		okay bool
	}{
		{intIn, "2", true}, {intIn, "8", true}, {intIn, "5", true}, {intIn, " 5 ", true},
		{intIn, "1", false}, {intIn, "9", false}, {intIn, "5.0", false}, {intIn, "5.5", false},
		{intIn, "1e1", false}, {intIn, "", false}, {intIn, "five", false}, {intIn, "0x5", false},
		{intIn, "99999999999999999999", false},
		{intEx, "2", false}, {intEx, "3", true}, {intEx, "7", true}, {intEx, "8", false},
		{intFree, "-9223372036854775808", true}, {intFree, "0", true}, {intFree, "+4", true}, {intFree, "1.0", false},
		{fMin, "0", false}, {fMin, "-0", false}, {fMin, "5e-324", true}, {fMin, "1e300", true}, {fMin, "-1", false},
		{fMax, "1", true}, {fMax, "1.0000000000000002", false}, {fMax, "-1e300", true},
		{fBoth, "-1", true}, {fBoth, "1", true}, {fBoth, "0.5", true}, {fBoth, "-1.5", false}, {fBoth, "2", false},
		{fFree, "NaN", false}, {fFree, "nan", false}, {fFree, "Inf", false}, {fFree, "-Inf", false}, {fFree, "+Infinity", false},
		{fFree, "1e400", false}, {fFree, "", false}, {fFree, "1,5", false}, {fFree, " -2.5e3\t", true}, {fFree, "7", true},
		{choice, "train", true}, {choice, "small", true}, {choice, " small ", true}, {choice, "Train", false}, {choice, "", false}, {choice, "test", false},
		{boolean, "true", true}, {boolean, "false", true}, {boolean, "1", true}, {boolean, "0", true}, {boolean, "yes", false}, {boolean, "", false},
		{str, "", true}, {str, "anything at all; 1,2", true},
		{path, "", true}, {path, "/no/such/file", true}, // read (and named in the error) at build time
	}
	for _, tc := range tests {
		err := tc.p.Check(tc.v)
		if tc.okay {
			if err != nil {
				t.Errorf("%+v: Check(%q) = %v, want nil", tc.p, tc.v, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%+v: Check(%q) accepted, want %s", tc.p, tc.v, tc.p.Rule())
			continue
		}
		// the message states the rule and quotes the (trimmed) value
		wantFieldErr(t, err, "params."+tc.p.Name, tc.p.Rule(), `got "`+strings.TrimSpace(tc.v)+`"`)
	}
}

// testScenario is an unregistered scenario for the Values tests.
func testScenario() *Scenario {
	return &Scenario{
		Name: "demo",
		Params: []Param{
			{Name: "n", Kind: Int, Default: "10", Min: 1, HasMin: true},
			{Name: "c", Kind: Float, Default: "0.5", Min: 0, HasMin: true, MinExcl: true},
			{Name: "mode", Kind: Choice, Default: "a", Choices: []string{"a", "b"}},
			{Name: "data", Kind: Path, Default: ""},
			{Name: "flag", Kind: Bool, Default: "false"},
		},
	}
}

func TestScenarioValues(t *testing.T) {
	s := testScenario()
	defaults := Values{"n": "10", "c": "0.5", "mode": "a", "data": "", "flag": "false"}
	for _, p := range []spec.Params{nil, {}} {
		v, err := s.Values(p)
		if err != nil || !reflect.DeepEqual(v, defaults) {
			t.Fatalf("Values(%v) = %v, %v; want the defaults %v", p, v, err, defaults)
		}
	}
	v, err := s.Values(spec.Params{"n": " 3 ", "mode": "b", "flag": "true", "c": "2e-3"})
	if err != nil {
		t.Fatal(err)
	}
	if v.Int("n") != 3 || v.Str("mode") != "b" || !v.Bool("flag") || v.Float("c") != 2e-3 || v.Str("data") != "" {
		t.Fatalf("values %v", v)
	}
	if v["n"] != "3" {
		t.Fatalf("value stored untrimmed: %q", v["n"])
	}
	// unknown names are rejected and the known ones listed
	_, err = s.Values(spec.Params{"n": "3", "lamda": "1"})
	wantFieldErr(t, err, "params.lamda", "unknown parameter for problem demo", "known: n, c, mode, data, flag")
	// a bad value names its parameter and rule
	_, err = s.Values(spec.Params{"c": "0"})
	wantFieldErr(t, err, "params.c", "must be a number > 0", `got "0"`)
	_, err = s.Values(spec.Params{"mode": "z"})
	wantFieldErr(t, err, "params.mode", "must be one of a, b")
	// several bad keys: the first in sorted order is reported, every time
	for i := 0; i < 5; i++ {
		_, err = s.Values(spec.Params{"zz": "1", "aa": "1", "mode": "z"})
		wantFieldErr(t, err, "params.aa", "unknown parameter")
	}
}

func TestResolve(t *testing.T) {
	r := spec.Run{Problem: "toy-polygon", Params: spec.Params{"cond": "8"}, Algorithms: []spec.Algo{{Algo: "afw"}, {Algo: "fista"}}}
	s, v, err := Resolve(&r)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "toy-polygon" || v.Float("cond") != 8 || v.Int("vertices") != 6 {
		t.Fatalf("resolved %s with %v", s.Name, v)
	}
	if r.Iters != spec.DefaultIters || r.Algorithms[0].Stepsize != spec.DefaultStepsize {
		t.Fatalf("Resolve did not normalise the run in place: %+v", r)
	}
	lim := LimitsOf(&r)
	if lim != (solver.Limits{MaxIters: r.Iters, MaxPasses: r.Passes, GapTol: r.Gap, EvalEvery: r.EvalEvery}) {
		t.Fatalf("LimitsOf = %+v", lim)
	}

	tests := []struct {
		name  string
		run   spec.Run
		field string
		want  []string
	}{
		{"generic rule first", spec.Run{Problem: "toy-polygon", Algorithms: []spec.Algo{{Algo: "afw"}}, Iters: -1}, "iters", nil},
		{"unknown problem", spec.Run{Problem: "lasso2", Algorithms: []spec.Algo{{Algo: "afw"}}}, "problem",
			[]string{`unknown problem "lasso2"`, strings.Join(Names(), ", ")}},
		{"bad param", spec.Run{Problem: "toy-polygon", Params: spec.Params{"cond": "0.5"}, Algorithms: []spec.Algo{{Algo: "afw"}}}, "params.cond", []string{"≥ 1"}},
		{"unknown param", spec.Run{Problem: "lasso", Params: spec.Params{"vertices": "4"}, Algorithms: []spec.Algo{{Algo: "afw"}}}, "params.vertices", []string{"unknown parameter for problem lasso"}},
		{"algorithm of another problem", spec.Run{Problem: "toy-polygon", Algorithms: []spec.Algo{{Algo: "afw"}, {Algo: "bcfw"}}}, "algorithms[1].algo",
			[]string{"bcfw does not apply to problem toy-polygon", "ssfw-as, afw, pfw, fw, fista, pgd"}},
		{"ssvm algorithm on a model", spec.Run{Problem: "lasso", Algorithms: []spec.Algo{{Algo: "bcfw-as"}}}, "algorithms[0].algo", []string{"does not apply to problem lasso"}},
		{"model algorithm on ssvm", spec.Run{Problem: "ssvm-chain", Algorithms: []spec.Algo{{Algo: "bcfw"}, {Algo: "bcfw-as"}, {Algo: "afw"}}}, "algorithms[2].algo", []string{"afw does not apply to problem ssvm-chain"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.run
			s, v, err := Resolve(&r)
			if s != nil || v != nil {
				t.Fatalf("a failed Resolve returned %v, %v", s, v)
			}
			wantFieldErr(t, err, tc.field, tc.want...)
		})
	}
}

func TestRegisterDuplicatePanics(t *testing.T) {
	before := Names()
	for _, f := range []func(){
		func() { Register(&Scenario{Name: "lasso"}) },
		func() { RegisterPreset(&Preset{Name: "teach-zigzag"}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("a duplicate registration did not panic")
				}
			}()
			f()
		}()
	}
	if !reflect.DeepEqual(Names(), before) {
		t.Fatalf("a rejected registration changed the catalogue: %v", Names())
	}
	s, _ := Lookup("lasso")
	if s.Build == nil {
		t.Fatal("the registered lasso was replaced")
	}
}

func TestLookupPresetIsACopy(t *testing.T) {
	name := "teach-zigzag"
	orig, ok := LookupPreset(name)
	if !ok {
		t.Fatalf("preset %s missing", name)
	}
	want, _ := json.Marshal(orig)
	c, _ := LookupPreset(name)
	c.Spec.Algorithms[0].Algo = "pgd"
	c.Spec.Algorithms = append(c.Spec.Algorithms, spec.Algo{Algo: "pfw"})
	c.Spec.Params["target"] = "inside"
	c.Spec.Params["extra"] = "1"
	c.Title = "changed"
	if _, _, err := Resolve(&c.Spec); err == nil {
		t.Fatal("the changed copy should not resolve (unknown param)")
	}
	for _, p := range Presets() {
		if p.Name == name {
			p.Spec.Algorithms[1].Algo = "pgd"
			p.Spec.Params["target"] = "vertex"
		}
	}
	again, _ := LookupPreset(name)
	got, _ := json.Marshal(again)
	if string(got) != string(want) {
		t.Fatalf("changing copies changed the registered preset:\n%s\n%s", want, got)
	}
	if _, ok := LookupPreset("no-such-preset"); ok {
		t.Fatal("unknown preset found")
	}
}

func TestCatalogueOrder(t *testing.T) {
	all := All()
	if len(all) == 0 {
		t.Fatal("no scenarios registered")
	}
	for i := 1; i < len(all); i++ {
		a, b := all[i-1], all[i]
		if a.Group > b.Group || (a.Group == b.Group && a.Name >= b.Name) {
			t.Fatalf("All() not sorted by group then name at %s/%s, %s/%s", a.Group, a.Name, b.Group, b.Name)
		}
	}
	names := Names()
	if !sort.StringsAreSorted(names) || len(names) != len(all) {
		t.Fatalf("Names() = %v", names)
	}
	ps := Presets()
	for i := 1; i < len(ps); i++ {
		if ps[i-1].Name >= ps[i].Name {
			t.Fatalf("Presets() not sorted: %s, %s", ps[i-1].Name, ps[i].Name)
		}
	}
}

// TestScenariosWellFormed checks every registered scenario's declaration.
func TestScenariosWellFormed(t *testing.T) {
	for _, s := range All() {
		t.Run(s.Name, func(t *testing.T) {
			if s.Title == "" || s.Help == "" || s.Group == "" || s.Build == nil {
				t.Fatalf("title %q, help %q, group %q, build set %v", s.Title, s.Help, s.Group, s.Build != nil)
			}
			seen := map[string]bool{}
			for _, p := range s.Params {
				if p.Name == "" || seen[p.Name] {
					t.Fatalf("parameter name %q empty or repeated", p.Name)
				}
				seen[p.Name] = true
				if strings.TrimSpace(p.Help) == "" || strings.Contains(p.Help, "\n") {
					t.Errorf("%s: help must be one non-empty line, got %q", p.Name, p.Help)
				}
				if err := p.Check(p.Default); err != nil {
					t.Errorf("%s: the default breaks the parameter's own rule: %v", p.Name, err)
				}
				if (p.Kind == Choice) != (len(p.Choices) > 0) {
					t.Errorf("%s: kind %d with choices %v", p.Name, p.Kind, p.Choices)
				}
				if p.HasMin && p.HasMax && p.Min > p.Max {
					t.Errorf("%s: empty range [%v, %v]", p.Name, p.Min, p.Max)
				}
			}
			if len(s.Algorithms) == 0 || len(s.Defaults) == 0 {
				t.Fatalf("algorithms %v, defaults %v", s.Algorithms, s.Defaults)
			}
			for _, a := range s.Algorithms {
				if !slices.Contains(spec.AlgoNames, a) {
					t.Errorf("algorithm %q is not one of spec.AlgoNames", a)
				}
			}
			for _, a := range s.Defaults {
				if !s.Supports(a.Algo) {
					t.Errorf("default algorithm %s is not among the supported %v", a.Algo, s.Algorithms)
				}
			}
		})
	}
}

// ocrAbsent reports why the OCR data cannot be found, or "" when it can
// (the ssvm-ocr scenario finds it the same way, through ssvm.ResolveOCR).
func ocrAbsent() string {
	if _, err := ssvm.ResolveOCR(""); err != nil {
		return err.Error()
	}
	return ""
}

// TestScenarioDefaultsRun resolves every scenario's proposed run with the
// default values, builds it, and runs every algorithm the scenario lists for
// a few iterations.
func TestScenarioDefaultsRun(t *testing.T) {
	ctx := context.Background()
	for _, s := range All() {
		t.Run(s.Name, func(t *testing.T) {
			if s.Name == "ssvm-ocr" {
				if why := ocrAbsent(); why != "" {
					if os.Getenv("CI") != "" {
						t.Fatalf("CI is set, so this is a failure: OCR data absent: %s", why)
					}
					t.Skipf("OCR data absent: %s", why)
				}
			}
			r := spec.Run{Problem: s.Name, Algorithms: append([]spec.Algo(nil), s.Defaults...), Iters: 3}
			_, v, err := Resolve(&r)
			if err != nil {
				t.Fatalf("the scenario's own defaults do not resolve: %v", err)
			}
			inst, err := s.Build(ctx, v, r.Seed)
			if err != nil {
				t.Fatalf("build with the defaults: %v", err)
			}
			info := inst.Info()
			if info.Dim < 1 || info.Samples < 1 || info.Blocks < 1 {
				t.Fatalf("info %+v", info)
			}
			if fw, ok := inst.(*FWInstance); ok {
				if info.Dim != fw.Problem.Dim() || info.Samples != fw.Problem.Samples() || info.Blocks != len(fw.Problem.Blocks()) {
					t.Fatalf("info %+v disagrees with the problem: dim %d, samples %d, blocks %d",
						info, fw.Problem.Dim(), fw.Problem.Samples(), len(fw.Problem.Blocks()))
				}
			}
			if _, err := json.Marshal(info); err != nil {
				t.Fatalf("info is not JSON-encodable: %v", err)
			}
			algos := s.Algorithms
			if s.Name == "ssvm-ocr" { // a full decoding pass over 6251 words per evaluation
				algos = []string{s.Defaults[0].Algo}
				r.Iters = 1
			}
			for _, name := range algos {
				a := spec.Algo{Algo: name}
				if err := a.Normalize(""); err != nil {
					t.Fatal(err)
				}
				m, err := inst.Method(a, LimitsOf(&r), 1)
				if err != nil {
					t.Fatalf("%s is listed but not built: %v", name, err)
				}
				var recs []solver.Record
				res, err := m.Run(ctx, solver.RecorderFunc(func(rc solver.Record) { recs = append(recs, rc) }))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				// The solver package's methods report the start as k = 0; the
				// structural SVM's and spg start at k = 1 (the contract leaves
				// the start record optional).
				if len(recs) == 0 || recs[0].K > 1 || res.Summary.Status == solver.StatusFailed || res.Summary.Iters != r.Iters {
					t.Fatalf("%s: %d records, summary %+v", name, len(recs), res.Summary)
				}
				first := recs[0].K
				for i, rc := range recs {
					if rc.K != first+i {
						t.Fatalf("%s: record %d has k = %d", name, i, rc.K)
					}
				}
			}
		})
	}
}

// TestPresetsResolve resolves every registered preset's spec.
func TestPresetsResolve(t *testing.T) {
	ps := Presets()
	if len(ps) == 0 {
		t.Fatal("no presets registered")
	}
	for _, p := range ps {
		if p.Title == "" || p.Help == "" {
			t.Errorf("%s: title %q, help %q", p.Name, p.Title, p.Help)
		}
		r := p.Spec
		if _, _, err := Resolve(&r); err != nil {
			t.Errorf("preset %s does not resolve: %v", p.Name, err)
		}
	}
}

// FuzzRunJSON decodes arbitrary bytes as a run spec and resolves it against
// the catalogue: never a panic, and every error a *spec.FieldError naming a
// field.
func FuzzRunJSON(f *testing.F) {
	for _, s := range []string{
		`{"problem":"lasso","algorithms":[{"algo":"ssfw-as"}]}`,
		`{"problem":"toy-polygon","params":{"target":"custom","cx":0.5,"cy":-1,"cond":8},"algorithms":[{"algo":"afw"},{"algo":"fw","stepsize":"short","L":"2"}],"iters":300}`,
		`{"problem":"ssvm-chain","params":{"labels":3,"minlen":4,"maxlen":2},"algorithms":[{"algo":"bcfw-as","schedule":"geometric","m0":4}]}`,
		`{"problem":"svm-dual","params":{"C":0},"algorithms":[{"algo":"pgd"}]}`,
		`{"problem":"simplex","params":{"p":"1e3"},"algorithms":[{"algo":"bcfw"}]}`,
		`{"problem":"box","params":{"lo":[1]},"algorithms":[{"algo":"afw"}]}`,
		`{"problem":"ssvm-ocr","params":{"split":"test","data":""},"algorithms":[{"algo":"ssg"}],"replications":101}`,
		`{"problem":"l1ball","params":{"radius":"NaN","nope":true},"algorithms":[{"algo":"fista"}]}`,
		`{"problem":"","algorithms":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var r spec.Run
		if err := json.Unmarshal(data, &r); err != nil {
			return
		}
		s, v, err := Resolve(&r)
		if err != nil {
			fe, ok := err.(*spec.FieldError)
			if !ok || fe.Field == "" || fe.Msg == "" {
				t.Fatalf("Resolve(%s) = %v (%T), want a *spec.FieldError naming a field", data, err, err)
			}
			return
		}
		if s == nil || v == nil || s.Name != r.Problem {
			t.Fatalf("Resolve(%s) = %v, %v", data, s, v)
		}
		for _, p := range s.Params {
			if _, ok := v[p.Name]; !ok {
				t.Fatalf("value of %s missing", p.Name)
			}
			if err := p.Check(v[p.Name]); err != nil {
				t.Fatalf("resolved value breaks its rule: %v", err)
			}
		}
		if len(v) != len(s.Params) {
			t.Fatalf("values %v hold names the scenario does not declare", v)
		}
		for _, a := range r.Algorithms {
			if !s.Supports(a.Algo) {
				t.Fatalf("%s accepted on %s", a.Algo, s.Name)
			}
		}
	})
}

// TestDefaultBudget: a spec without iteration or pass limits takes its
// problem's (ssvm-ocr: passes, since one evaluation costs passes), a spec
// that gives either keeps what it gives, and the other problems take
// spec.DefaultIters.
func TestDefaultBudget(t *testing.T) {
	s, ok := Lookup("ssvm-ocr")
	if !ok || s.Passes <= 0 || s.Iters <= 0 {
		t.Fatalf("ssvm-ocr has no default budget: %+v", s)
	}
	for _, c := range []struct {
		in, want spec.Run
	}{
		{spec.Run{Problem: "ssvm-ocr"}, spec.Run{Problem: "ssvm-ocr", Iters: s.Iters, Passes: s.Passes}},
		{spec.Run{Problem: "ssvm-ocr", Iters: 500}, spec.Run{Problem: "ssvm-ocr", Iters: 500}},
		{spec.Run{Problem: "ssvm-ocr", Passes: 2}, spec.Run{Problem: "ssvm-ocr", Passes: 2}},
		{spec.Run{Problem: "lasso"}, spec.Run{Problem: "lasso", Iters: spec.DefaultIters}},
		{spec.Run{Problem: "no-such-problem"}, spec.Run{Problem: "no-such-problem"}},
	} {
		got := c.in
		ApplyBudget(&got)
		if got.Iters != c.want.Iters || got.Passes != c.want.Passes {
			t.Errorf("ApplyBudget(%+v) = iters %d, passes %v; want %d, %v", c.in, got.Iters, got.Passes, c.want.Iters, c.want.Passes)
		}
	}
	// Resolve applies it (the chain's data is built in, OCR's may be absent:
	// Resolve does not build).
	r := spec.Run{Problem: "ssvm-ocr", Algorithms: []spec.Algo{{Algo: "bcfw"}}}
	if _, _, err := Resolve(&r); err != nil {
		t.Fatal(err)
	}
	if r.Iters != s.Iters || r.Passes != s.Passes {
		t.Errorf("Resolve: iters %d, passes %v", r.Iters, r.Passes)
	}
	r = spec.Run{Problem: "ssvm-chain", Algorithms: []spec.Algo{{Algo: "bcfw"}}}
	if _, _, err := Resolve(&r); err != nil || r.Iters != spec.DefaultIters || r.Passes != 0 {
		t.Errorf("ssvm-chain: iters %d, passes %v, %v", r.Iters, r.Passes, err)
	}
}
