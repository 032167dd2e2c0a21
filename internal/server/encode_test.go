package server

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fwlab/fwlab/internal/solver"
)

// The hand-written encoder must agree with encoding/json on every finite
// record (same keys, same omissions, same values).
func TestAppendRecordMatchesEncodingJSON(t *testing.T) {
	cases := []solver.Record{
		{},
		{K: 1, Passes: 0.5, Time: 1e-7, Step: solver.StepFW, Gamma: 1, Batch: 3, Active: 2},
		{K: 7, Passes: 12345.678, Time: 3, Step: solver.StepDrop, Gamma: 0.25, Drops: 1, Active: 4,
			Objective: solver.F(1e-300), Gap: solver.F(-0.0), GradErr: solver.F(2.5e21)},
		{K: 9, Step: solver.StepBlock, FWSteps: 3, AwaySteps: 2, Drops: 1, Cleanups: 5,
			Objective: solver.F(-4), Gap: solver.F(0), Extra: map[string]float64{"test_err": 0.1, "dual": -3, "a\"b<": 1}},
	}
	for i, rec := range cases {
		var want, got any
		wb, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		gb := appendRecord(nil, &rec, nil)
		if err := json.Unmarshal(wb, &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(gb, &got); err != nil {
			t.Fatalf("case %d: %s is not JSON: %v", i, gb, err)
		}
		wj, _ := json.Marshal(want)
		gj, _ := json.Marshal(got)
		if string(wj) != string(gj) {
			t.Errorf("case %d:\n got %s\nwant %s", i, gb, wb)
		}
	}
}

func TestNonFiniteNumbersBecomeNull(t *testing.T) {
	rec := solver.Record{K: 1, Gamma: math.NaN(), Objective: solver.F(math.Inf(1)), Gap: solver.F(math.Inf(-1)),
		Extra: map[string]float64{"x": math.NaN()}}
	b := appendRecord(nil, &rec, &tags{trace: 2, algo: "fw", replication: 1})
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if m["gamma"] != nil || m["objective"] != nil || m["gap"] != nil || m["extra"].(map[string]any)["x"] != nil {
		t.Errorf("non-finite values not null: %s", b)
	}
	if m["trace"] != 2.0 || m["algo"] != "fw" || m["replication"] != 1.0 {
		t.Errorf("tags: %s", b)
	}
	row := string(appendCSV(nil, &rec, &tags{algo: "a,b"}, []string{"x", "y"}))
	if !strings.HasPrefix(row, `0,"a,b",0,1,0,0,,,`) || !strings.HasSuffix(row, ",,,,,\n") {
		t.Errorf("csv row %q", row)
	}
	if h := string(appendCSVHeader(nil, []string{"x", "w:a,b"})); h != csvHeader[:len(csvHeader)-1]+`,extra.x,"extra.w:a,b"`+"\n" {
		t.Errorf("csv header %q", h)
	}
}

// FuzzAppendString: the JSON string encoder's output parses back to the
// input (invalid UTF-8 replaced by U+FFFD, as encoding/json does).
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "fw", `a"b\c`, "line\nbreak\t\x00\x1f", "<&>", "\u2028\u2029", "héllo", "\xff\xfe", "日本"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := appendString(nil, s)
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%q encodes to %s, not JSON: %v", s, b, err)
		}
		want := strings.ToValidUTF8(s, "\uFFFD")
		if !utf8.ValidString(s) {
			// encoding/json replaces each invalid byte; compare with it.
			wb, _ := json.Marshal(s)
			_ = json.Unmarshal(wb, &want)
		}
		if got != want {
			t.Fatalf("%q → %s → %q", s, b, got)
		}
	})
}
