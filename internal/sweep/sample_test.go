package sweep_test

import (
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/fwlab/fwlab/internal/sweep"
)

const sampledDoc = `{"base": {"problem": "lasso", "params": {"n": "40", "p": "20"}, "algorithms": [{"algo": "ssfw-as"}], "iters": 50},
 "sample": {"kind": "%s", "n": %d, "seed": 7},
 "axes": [{"param": "algorithms[0].rho", "range": {"min": 0.01, "max": 0.5, "log": true}},
          {"param": "algorithms[0].alpha", "range": {"min": 0.1, "max": 0.9}},
          {"param": "iters", "range": {"min": 20, "max": 80, "int": true}}]}`

func decodeSampled(t *testing.T, kind string, n int) *sweep.Doc {
	t.Helper()
	doc := strings.Replace(strings.Replace(sampledDoc, "%s", kind, 1), "%d", strconv.Itoa(n), 1)
	d, err := sweep.Decode(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// A Latin hypercube over three ranges: n cells, each axis' values in its
// range, exactly one in each of its n strata (on the log scale for a log
// range), every cell's spec carrying its values; the same seed draws the
// same study.
func TestLatinHypercubeStudy(t *testing.T) {
	const n = 20
	d := decodeSampled(t, "lhs", n)
	cells, err := d.Cells()
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != n {
		t.Fatalf("%d cells, want %d", len(cells), n)
	}
	for i, a := range d.Axes {
		if len(a.Values) != n {
			t.Fatalf("axis %d holds %d values", i, len(a.Values))
		}
		strata := make([]int, n)
		for j, v := range a.Values {
			x, err := strconv.ParseFloat(string(v), 64)
			if err != nil || x < a.Range.Min || x > a.Range.Max {
				t.Fatalf("axis %d value %d: %s outside %v … %v", i, j, v, a.Range.Min, a.Range.Max)
			}
			u := (x - a.Range.Min) / (a.Range.Max - a.Range.Min)
			if a.Range.Log {
				u = math.Log(x/a.Range.Min) / math.Log(a.Range.Max/a.Range.Min)
			}
			if a.Range.Int {
				if x != math.Round(x) {
					t.Errorf("axis %d value %v is not whole", i, x)
				}
				continue // rounding moves values across strata
			}
			// values are rounded to four significant digits: a stratum's
			// edge may move by that much
			k := int(math.Min(u*n, n-1))
			strata[k]++
			if rel := u*n - math.Floor(u*n); (rel < 1e-3 || rel > 1-1e-3) && strata[k] > 1 {
				strata[k]--
				strata[min(k+1, n-1)]++
			}
			if json.Valid(v) == false {
				t.Errorf("value %q is not JSON", v)
			}
		}
		if !a.Range.Int {
			for k, c := range strata {
				if c != 1 {
					t.Errorf("axis %d (%s): stratum %d of %d holds %d points, want 1: %s", i, a.Param, k, n, c, a.Values)
					break
				}
			}
		}
	}
	for j, c := range cells {
		if c.Spec.Iters != mustInt(t, d.Axes[2].Values[j]) || string(c.Values["algorithms[0].rho"]) != string(d.Axes[0].Values[j]) {
			t.Fatalf("cell %d: iters %d, values %s; axes' value %d: %s, %s", j, c.Spec.Iters, c.Values, j, d.Axes[2].Values[j], d.Axes[0].Values[j])
		}
		if c.Spec.Algorithms[0].Rho != mustFloat(t, d.Axes[0].Values[j]) {
			t.Fatalf("cell %d: rho %v, want %s", j, c.Spec.Algorithms[0].Rho, d.Axes[0].Values[j])
		}
	}
	// the same seed, the same study; a stored study (values drawn) is
	// taken as it is
	again := decodeSampled(t, "lhs", n)
	if _, err := again.Cells(); err != nil {
		t.Fatal(err)
	}
	for i := range d.Axes {
		for j := range d.Axes[i].Values {
			if string(again.Axes[i].Values[j]) != string(d.Axes[i].Values[j]) {
				t.Fatalf("the same seed drew %s, then %s", d.Axes[i].Values[j], again.Axes[i].Values[j])
			}
		}
	}
	b, _ := json.Marshal(d.Axes)
	stored := sweep.Doc{Base: d.Base}
	if err := json.Unmarshal(b, &stored.Axes); err != nil {
		t.Fatal(err)
	}
	sc, err := stored.Cells()
	if err != nil || len(sc) != n || string(sc[5].Values["algorithms[0].alpha"]) != string(d.Axes[1].Values[5]) {
		t.Fatalf("the stored study: %d cells, %v", len(sc), err)
	}
}

// Random sampling draws uniform points: over many, each half of the unit
// interval holds about half of them; a Latin hypercube's strata hold one
// each exactly.
func TestDrawUniformAndStratified(t *testing.T) {
	pts := sweep.Draw("random", 4000, 2, 3)
	for i := 0; i < 2; i++ {
		low := 0
		for _, p := range pts {
			if p[i] < 0 || p[i] >= 1 {
				t.Fatalf("point %v outside [0, 1)", p)
			}
			if p[i] < 0.5 {
				low++
			}
		}
		// a binomial(4000, 1/2) is within 4 sd (126) of 2000
		if low < 1874 || low > 2126 {
			t.Errorf("dimension %d: %d of 4000 below 1/2", i, low)
		}
	}
	lhs := sweep.Draw("lhs", 37, 3, 9)
	for i := 0; i < 3; i++ {
		var ks []int
		for _, p := range lhs {
			ks = append(ks, int(p[i]*37))
		}
		sort.Ints(ks)
		for k, v := range ks {
			if v != k {
				t.Fatalf("dimension %d: strata %v, want 0 … 36 once each", i, ks)
			}
		}
	}
}

// Bad sampled documents are refused naming the field and the rule.
func TestSampledStudyErrors(t *testing.T) {
	base := `"base": {"problem": "lasso", "params": {"n": "40", "p": "20"}, "algorithms": [{"algo": "ssfw-as"}]}`
	for _, c := range []struct{ doc, field, msg string }{
		{`{` + base + `, "sample": {"kind": "sobol", "n": 5}, "axes": [{"param": "algorithms[0].rho", "range": {"min": 0.1, "max": 0.5}}]}`, "sample.kind", "random or lhs"},
		{`{` + base + `, "sample": {"kind": "lhs", "n": 500}, "axes": [{"param": "algorithms[0].rho", "range": {"min": 0.1, "max": 0.5}}]}`, "sample.n", "1 to 100"},
		{`{` + base + `, "sample": {"kind": "lhs", "n": 5}, "axes": [{"param": "algorithms[0].rho", "range": {"min": 0.5, "max": 0.1}}]}`, "axes[0].range", "below max"},
		{`{` + base + `, "sample": {"kind": "lhs", "n": 5}, "axes": [{"param": "algorithms[0].rho", "range": {"min": 0, "max": 0.5, "log": true}}]}`, "axes[0].range.min", "above 0"},
		{`{` + base + `, "sample": {"kind": "lhs", "n": 5}, "axes": [{"param": "algorithms[0].rho", "values": [0.1]}]}`, "axes[0].range", "range on every axis"},
		{`{` + base + `, "axes": [{"param": "algorithms[0].rho", "range": {"min": 0.1, "max": 0.5}}]}`, "sample", "random"},
		{`{` + base + `, "sample": {"kind": "lhs", "n": 5}, "axes": [{"param": "algorithms[0].rho", "range": {"min": 1.5, "max": 3}}]}`, "axes[0].values[0]", "between 0 and 1"},
	} {
		d, err := sweep.Decode(strings.NewReader(c.doc))
		if err == nil {
			_, err = d.Cells()
		}
		if err == nil || !strings.Contains(err.Error(), c.field) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %v, want %s: …%s…", c.doc, err, c.field, c.msg)
		}
	}
}

func mustFloat(t *testing.T, v json.RawMessage) float64 {
	t.Helper()
	x, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func mustInt(t *testing.T, v json.RawMessage) int {
	return int(mustFloat(t, v))
}
