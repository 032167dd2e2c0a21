package recordfields

import (
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/fw"
	"github.com/fwlab/fwlab/internal/solver"
)

// The table covers solver.Record exactly: each struct field declared once,
// with its Go type, its JSON tag's name and its omitempty.
func TestTableCoversRecord(t *testing.T) {
	rt := reflect.TypeOf(solver.Record{})
	declaredGo := map[string]*Field{}
	for i := range Fields {
		f := &Fields[i]
		if f.Go == "" {
			continue
		}
		if declaredGo[f.Go] != nil {
			t.Errorf("solver.Record.%s declared twice", f.Go)
		}
		declaredGo[f.Go] = f
	}
	for i := 0; i < rt.NumField(); i++ {
		sf := rt.Field(i)
		f := declaredGo[sf.Name]
		if f == nil {
			t.Errorf("solver.Record.%s (%s) is not declared in internal/recordfields", sf.Name, sf.Type)
			continue
		}
		delete(declaredGo, sf.Name)
		name, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name != f.JSON {
			t.Errorf("solver.Record.%s: JSON tag %q, declared %q", sf.Name, name, f.JSON)
		}
		if omit := strings.Contains(opts, "omitempty"); omit != f.Omit {
			t.Errorf("solver.Record.%s: omitempty %v, declared Omit %v", sf.Name, omit, f.Omit)
		}
		if sf.Type != goTypes[f.Kind] {
			t.Errorf("solver.Record.%s is %s, declared %s", sf.Name, sf.Type, f.Kind)
		}
	}
	for name := range declaredGo {
		t.Errorf("declared field %s is not in solver.Record", name)
	}
}

// The wire contract of today's fields: the CSV columns and the wall-clock
// fields (a build that adds a field adds it after these).
func TestDeclaredNamesAreStable(t *testing.T) {
	const csv = "k,passes,time_s,step,gamma,batch,active,fw_steps,away_steps,drops,cleanups,objective,gap,grad_err"
	if got := strings.Join(CSVHeader(), ","); !strings.HasPrefix(got, csv) || Version == 1 && got != csv {
		t.Errorf("CSV columns %s, want %s", got, csv)
	}
	if got := strings.Join(WallClock, ","); got != "time_s" {
		t.Errorf("wall-clock fields %s, want time_s", got)
	}
}

// Every field's accessors reach the struct's own field, and the JSON
// encoder writes what encoding/json would name it.
func TestAccessorsReachTheirField(t *testing.T) {
	var r solver.Record
	K, Gap, Step, Passes := ByJSON("k"), ByJSON("gap"), ByJSON("step"), ByJSON("passes")
	K.SetInt(&r, 7)
	Gap.SetOpt(&r, 0.5)
	Step.SetStr(&r, solver.StepAway)
	Passes.SetFloat(&r, 1.25)
	if r.K != 7 || r.Gap == nil || *r.Gap != 0.5 || r.Step != solver.StepAway || r.Passes != 1.25 {
		t.Fatalf("set through the table: %+v", r)
	}
	Gap.ClearOpt(&r)
	if r.Gap != nil {
		t.Fatal("ClearOpt left the gap")
	}
	recs := RandRecords(rand.New(rand.NewPCG(5, 6)), 200, false)
	st := JSONStyle{Float: func(b []byte, f float64) []byte { return append(b, '0') }, Str: func(b []byte, s string) []byte { return append(b, `""`...) }}
	for i := range recs {
		b := string(AppendJSON(nil, &recs[i], &st))
		for j := range Fields {
			f := &Fields[j]
			has := strings.Contains(b, `"`+f.JSON+`":`)
			if want := !(f.Omit && f.Zero(&recs[i])); has != want {
				t.Fatalf("record %d: %s written %v, want %v: %s", i, f.JSON, has, want, b)
			}
		}
	}
}

// A declaration error is found when the table is built, naming the field.
func TestBuildRefusesBadDeclarations(t *testing.T) {
	for _, c := range []struct {
		f    []Field
		want string
	}{
		{[]Field{{Go: "Nope", JSON: "nope", Kind: Int}}, "no field Nope"},
		{[]Field{{Go: "K", JSON: "k", Kind: Float}}, "declared float64"},
		{[]Field{{Go: "Extra", JSON: "extra", Kind: Metrics}, {JSON: "x", Kind: Int, Since: 2}}, `slot field "x"`},
		{[]Field{{Go: "K", JSON: "k", Kind: Int}, {Go: "K", JSON: "k", Kind: Int}}, "repeated JSON name"},
	} {
		func() {
			defer func() {
				p, _ := recover().(string)
				if !strings.Contains(p, c.want) {
					t.Errorf("%+v: panic %q, want %q", c.f, p, c.want)
				}
			}()
			build(c.f)
		}()
	}
}

// The policy's table of fields is the one `go generate` writes from the
// declaration.
func TestCompatibilityDocIsCurrent(t *testing.T) {
	if Version != 1 {
		t.Skip("a test build with an added field: the committed page describes the declaration without it")
	}
	doc, err := os.ReadFile("../../docs/compatibility.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := ReplaceDoc(string(doc))
	if err != nil {
		t.Fatal(err)
	}
	if want != string(doc) {
		t.Errorf("docs/compatibility.md's table of fields is not the declaration's: run go generate ./internal/recordfields")
	}
}

type requester struct {
	ask bool
	got []solver.Record
}

func (r *requester) Record(x solver.Record) { r.got = append(r.got, x) }
func (r *requester) EvalNext() bool         { return r.ask }

// The recorder that sets the produced fields passes on the session's
// requests for an evaluation (a paused run's steps), and the records.
func TestProducingKeepsEvalRequests(t *testing.T) {
	for _, ask := range []bool{false, true} {
		r := &requester{ask: ask}
		p := producing{r}
		if solver.EvalRequested(p) != ask {
			t.Errorf("EvalNext %v, want %v", !ask, ask)
		}
		p.Record(solver.Record{K: 3, Objective: solver.F(1)})
		if len(r.got) != 1 || r.got[0].K != 3 {
			t.Errorf("records passed on: %+v", r.got)
		}
	}
}

// Package fw's Record.AppendJSON is the one `go generate` writes from the
// declaration: regenerating changes nothing.
func TestFWRecordJSONIsCurrent(t *testing.T) {
	if len(buildExtra) > 0 {
		t.Skip("a test build with an added field: the committed encoder is the declaration's without it")
	}
	got, err := os.ReadFile("../../" + FWRecordJSONFile)
	if err != nil {
		t.Fatal(err)
	}
	want, err := FWRecordJSON()
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%s is not what the declaration generates: run go generate ./internal/recordfields", FWRecordJSONFile)
	}
}

// fwStyle is what fw.Record's JSON writes by the declaration's rules: a
// non-finite Float as 0, a non-finite optional number or metric as absent.
var fwStyle = JSONStyle{
	Float: func(b []byte, f float64) []byte {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			f = 0
		}
		return fw.AppendJSONFloat(b, f)
	},
	Str:  fw.AppendJSONString,
	Keep: func(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) },
}

// The generated encoder writes what the table's own encoder writes with
// fw's style, field for field, on records exercising every declared field
// (values JSON cannot hold included).
func TestFWRecordJSONFollowsTheTable(t *testing.T) {
	if len(Slots) > 0 {
		t.Skip("a test build with a slot field: fw.Record's JSON writes it among the metrics")
	}
	recs := RandRecords(rand.New(rand.NewPCG(7, 8)), 5000, true)
	for i := range recs {
		got := recs[i].AppendJSON(nil)
		want := append(AppendJSON([]byte{'{'}, &recs[i], &fwStyle), '}')
		if string(got) != string(want) {
			t.Fatalf("record %d:\n fw    %s\n table %s", i, got, want)
		}
	}
}
