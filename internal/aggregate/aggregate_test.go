package aggregate

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/fwlab/fwlab/internal/solver"
)

// rec builds a record; obj < 0 means "not evaluated".
func rec(k int, passes, secs, obj, gap float64) solver.Record {
	r := solver.Record{K: k, Passes: passes, Time: secs}
	if obj >= 0 {
		r.Objective = solver.F(obj)
		r.Gap = solver.F(gap)
	}
	return r
}

var traces = [][]solver.Record{
	// objective 100, 10, 1 at k = 1, 2, 3; passes 1, 2, 3; seconds 0.1, 0.2, 0.3
	{rec(1, 1, 0.1, 100, 50), rec(2, 2, 0.2, 10, 5), rec(3, 3, 0.3, 1, 0.5)},
	// evaluated at k = 1 and 3 only, and ended after 3
	{rec(1, 0.5, 0.2, 1000, 10), rec(2, 1, 0.4, -1, 0), rec(3, 1.5, 0.6, 10, 1)},
	// one iteration only
	{rec(1, 2, 1, 10, 1)},
}

func TestByIteration(t *testing.T) {
	tests := []struct {
		name  string
		f     Field
		fstar float64
		want  []Stat
	}{
		{"objective", Objective, 0, []Stat{
			{X: 1, Median: 100, Min: 10, Max: 1000, N: 3},
			{X: 2, Median: 10, Min: 10, Max: 1000, N: 3}, // trace 2 holds 1000, trace 3 holds 10
			{X: 3, Median: 10, Min: 1, Max: 10, N: 3},
		}},
		{"log objective", LogObjective, 0, []Stat{
			{X: 1, Median: 2, Min: 1, Max: 3, N: 3},
			{X: 2, Median: 1, Min: 1, Max: 3, N: 3},
			{X: 3, Median: 1, Min: 0, Max: 1, N: 3},
		}},
		// F* = 10: F − F* is 90, 0, −9 / 990, ·, 0 / 0; the log drops values ≤ 0.
		{"subopt", Subopt, 10, []Stat{
			{X: 1, Median: 90, Min: 0, Max: 990, N: 3},
			{X: 2, Median: 0, Min: 0, Max: 990, N: 3},
			{X: 3, Median: 0, Min: -9, Max: 0, N: 3},
		}},
		{"log subopt", LogSubopt, 10, []Stat{
			{X: 1, Median: (math.Log10(90) + math.Log10(990)) / 2, Min: math.Log10(90), Max: math.Log10(990), N: 2},
			{X: 2, Median: math.Log10(990), Min: math.Log10(990), Max: math.Log10(990), N: 1},
			{X: 3, Median: math.NaN(), Min: math.NaN(), Max: math.NaN(), N: 0},
		}},
		{"gap", Gap, 0, []Stat{
			{X: 1, Median: 10, Min: 1, Max: 50, N: 3},
			{X: 2, Median: 5, Min: 1, Max: 10, N: 3},
			{X: 3, Median: 1, Min: 0.5, Max: 1, N: 3},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ByIteration(traces, tc.f, tc.fstar)
			if !statsEqual(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestOnGrid(t *testing.T) {
	tests := []struct {
		name string
		axis Axis
		grid []float64
		want []Stat
	}{
		// passes: trace 1 at 1, 2, 3; trace 2 at 0.5 (1000) and 1.5 (10); trace 3 at 2 (10).
		{"passes", Passes, []float64{0.25, 0.5, 1, 1.75, 2, 10}, []Stat{
			{X: 0.25, Median: math.NaN(), Min: math.NaN(), Max: math.NaN(), N: 0},
			{X: 0.5, Median: 1000, Min: 1000, Max: 1000, N: 1},
			{X: 1, Median: 550, Min: 100, Max: 1000, N: 2},
			{X: 1.75, Median: 55, Min: 10, Max: 100, N: 2},
			{X: 2, Median: 10, Min: 10, Max: 10, N: 3},
			{X: 10, Median: 10, Min: 1, Max: 10, N: 3},
		}},
		// seconds: trace 1 at 0.1, 0.2, 0.3; trace 2 at 0.2, 0.6; trace 3 at 1.
		{"seconds", Seconds, []float64{0.15, 0.5, 1}, []Stat{
			{X: 0.15, Median: 100, Min: 100, Max: 100, N: 1},
			{X: 0.5, Median: 500.5, Min: 1, Max: 1000, N: 2},
			{X: 1, Median: 10, Min: 1, Max: 10, N: 3},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := OnGrid(traces, tc.axis, tc.grid, Objective, 0)
			if !statsEqual(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestLinearGrid(t *testing.T) {
	if g := LinearGrid(traces, Passes, 5); !reflect.DeepEqual(g, []float64{0.5, 1.125, 1.75, 2.375, 3}) {
		t.Fatalf("passes grid %v", g)
	}
	if g := LinearGrid(nil, Seconds, 5); g != nil {
		t.Fatalf("empty grid %v", g)
	}
}

func TestFieldNames(t *testing.T) {
	for f := Objective; f <= LogGap; f++ {
		g, err := ParseField(f.String())
		if err != nil || g != f {
			t.Fatalf("%v round trip: %v, %v", f, g, err)
		}
	}
	if _, err := ParseField("nope"); err == nil {
		t.Fatal("unknown field accepted")
	}
}

func statsEqual(a, b []Stat) bool {
	if len(a) != len(b) {
		return false
	}
	eq := func(x, y float64) bool {
		return (math.IsNaN(x) && math.IsNaN(y)) || math.Abs(x-y) <= 1e-12*math.Max(1, math.Abs(y))
	}
	for i := range a {
		if a[i].N != b[i].N || !eq(a[i].X, b[i].X) || !eq(a[i].Median, b[i].Median) || !eq(a[i].Min, b[i].Min) || !eq(a[i].Max, b[i].Max) {
			return false
		}
	}
	return true
}

func TestStatJSON(t *testing.T) {
	b, err := json.Marshal([]Stat{{X: 1, Median: 2, Min: 0.5, Max: 3, N: 2}, {X: 4, Median: math.NaN(), Min: math.NaN(), Max: math.NaN()}})
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"x":1,"median":2,"min":0.5,"max":3,"n":2},{"x":4,"median":null,"min":null,"max":null,"n":0}]`
	if string(b) != want {
		t.Fatalf("got %s\nwant %s", b, want)
	}
}
