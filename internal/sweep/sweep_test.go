package sweep_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/session/sessiontest"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/sweep"
)

func init() { sessiontest.Register() }

const base = `{"problem":"test-fake","params":{"n":"50"},"algorithms":[{"algo":"fw"},{"algo":"afw"}],"replications":2,"iters":50}`

func TestCellsAreEveryCombination(t *testing.T) {
	d, err := sweep.Decode(strings.NewReader(`{"base":` + base + `,"axes":[{"param":"params.n","values":[10,20,30]},{"param":"seed","values":[4,5]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	cells, err := d.Cells()
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 6 {
		t.Fatalf("%d cells, want 6", len(cells))
	}
	for i, c := range cells {
		wantN := []string{"10", "20", "30"}[i/2]
		wantSeed := int64(4 + i%2)
		if c.Index != i || c.Spec.Params["n"] != wantN || c.Spec.Seed != wantSeed || c.Spec.Replications != 2 || len(c.Spec.Algorithms) != 2 {
			t.Errorf("cell %d: %+v", i, c.Spec)
		}
		var v map[string]float64
		if err := json.Unmarshal(c.ValuesJSON(d.Axes), &v); err != nil || v["seed"] != float64(wantSeed) {
			t.Errorf("cell %d values %s (%v)", i, c.ValuesJSON(d.Axes), err)
		}
	}
}

func TestCellsNameTheFault(t *testing.T) {
	for _, tc := range []struct{ axes, field string }{
		{`[{"param":"params.nope","values":[1]}]`, "axes[0].param"},
		{`[{"param":"bogus","values":[1]}]`, "axes[0].param"},
		{`[{"param":"algorithms[5].rho","values":[0.1]}]`, "axes[0].param"},
		{`[{"param":"params.n","values":[1]},{"param":"params.n","values":[2]}]`, "axes[1].param"},
		{`[{"param":"params.n","values":[10, -3]}]`, "axes[0].values[1]"},
		{`[{"param":"iters","values":["x"]}]`, "axes[0].values[0]"},
		{`[]`, "axes"},
		{`[{"param":"seed","values":[]}]`, "axes[0].values"},
		{`[{"param":"algorithms","values":[1]}]`, "axes[0].param"},
	} {
		d, err := sweep.Decode(strings.NewReader(`{"base":` + base + `,"axes":` + tc.axes + `}`))
		if err == nil {
			_, err = d.Cells()
		}
		var fe *spec.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%s: got %v, want a field error on %s", tc.axes, err, tc.field)
		}
	}
	if _, err := sweep.Decode(strings.NewReader(`{"base":` + base + `,"axes":[],"extra":1}`)); err == nil {
		t.Error("an unknown field is accepted")
	}
}

func rec(k int, passes, gap float64) solver.Record {
	o := 1 + gap
	return solver.Record{K: k, Passes: passes, Time: passes / 10, Objective: &o, Gap: &gap}
}

func TestSummaryIsTheMedianOverReplications(t *testing.T) {
	traces := [][]solver.Record{
		{rec(0, 0, 1), rec(1, 1, 0.1), rec(2, 2, 0.01)},
		{rec(0, 0, 1), rec(1, 1, 0.001), rec(2, 2, 0.0001)},
		{rec(0, 0, 1), rec(1, 1, 0.5), rec(2, 2, 0.2)},
	}
	var outs []sweep.Outcome
	for _, tr := range traces {
		outs = append(outs, sweep.TraceOutcome(func(fn func(*solver.Record) bool) {
			for i := range tr {
				if !fn(&tr[i]) {
					return
				}
			}
		}, 0.01))
	}
	s := sweep.Summarize(outs)
	// Final gaps 0.01, 0.0001, 0.2: median 0.01; passes to 0.01: 2, 1, never: median 2.
	if s.FinalGap == nil || *s.FinalGap != 0.01 || *s.FinalObjective != 1.01 || s.PassesToGap == nil || *s.PassesToGap != 2 || *s.SecondsToGap != 0.2 {
		t.Fatalf("summary %+v", s)
	}
	// two of the three reached 0.01; the third is censored where it ended
	if s.Reached != 2 || s.Replications != 3 || outs[2].Reached() || outs[2].PassesAtEnd != 2 || !outs[0].Reached() {
		t.Fatalf("reached %d of %d; the third ended at %v passes (reached %v)", s.Reached, s.Replications, outs[2].PassesAtEnd, outs[2].Reached())
	}
	// one of three: no median
	if s := sweep.Summarize([]sweep.Outcome{outs[0], outs[2], outs[2]}); s.PassesToGap != nil || s.Reached != 1 {
		t.Fatalf("reached by 1 of 3: %+v", s)
	}
	// Two of three never reach 1e-3: no median.
	if s := sweep.Summarize([]sweep.Outcome{outs[0], outs[2], outs[1]}); s.PassesToGap == nil {
		t.Fatal("lost the median")
	}
	none := sweep.Summarize([]sweep.Outcome{{Objective: math.NaN(), Gap: math.NaN(), PassesToGap: math.Inf(1), SecondsToGap: math.Inf(1)}})
	if none.FinalGap != nil || none.PassesToGap != nil {
		t.Fatalf("a trace never evaluated has a summary %+v", none)
	}
	if m := sweep.Median([]float64{3, 1, 2, 10}); m != 2.5 {
		t.Errorf("median %v", m)
	}
}

// FuzzSweepDecode: any document gets cells or a field error, never a panic;
// cells stay within MaxCells and each spec is valid.
func FuzzSweepDecode(f *testing.F) {
	for _, s := range []string{
		`{"base":` + base + `,"axes":[{"param":"params.n","values":[10,20]},{"param":"seed","values":[1,2]}]}`,
		`{"base":` + base + `,"axes":[{"param":"algorithms[0].rho","values":[0.1]}]}`,
		`{"base":` + base + `,"axes":[{"param":"algorithms[9].x[3]","values":[{}]}]}`,
		`{"base":` + base + `,"axes":[{"param":"algorithms[0].L","values":["auto",2]},{"param":"algorithms[1].caratheodory","values":[true,false]}]}`,
		`{"base":{},"axes":[]}`, `{"axes":[{"param":"[0]","values":[null]}]}`, `[]`, ``, `{"base":` + base + `,"axes":[{"param":"params.n.x","values":["a"]}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := sweep.Decode(bytes.NewReader(b))
		if err != nil {
			return
		}
		cells, err := d.Cells()
		if err != nil {
			var fe *spec.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("a non-field error %T: %v", err, err)
			}
			return
		}
		if len(cells) == 0 || len(cells) > sweep.MaxCells {
			t.Fatalf("%d cells", len(cells))
		}
		axes, _ := json.Marshal(d.Axes)
		for i, l := range d.Labels() {
			if l == "" {
				t.Fatalf("axis %d has no label", i)
			}
		}
		if sweep.Describe(cells[0].ValuesJSON(d.Axes), axes, &d.Base) == "" {
			t.Fatal("a cell described as nothing")
		}
		for _, c := range cells {
			sp := c.Spec
			if err := sp.Normalize(); err != nil {
				t.Fatalf("cell %d spec invalid: %v", c.Index, err)
			}
		}
	})
}
