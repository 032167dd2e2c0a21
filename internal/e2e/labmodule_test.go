package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestLabModule runs the history, compare and sweep pages' logic that needs
// no page (spec diff, sweep cells on their axes, medians, the colour
// scale, sweep values as typed, sizes in words) in the browser, against
// values computed here independently.
func TestLabModule(t *testing.T) {
	t.Parallel()
	ts := app(t)
	ctx := newBrowser(t)
	step(t, ctx, "load a page", 20*time.Second, chromedp.Navigate(ts.URL+"/"))
	waitFor(t, ctx, "the script", `!!(window.fwlab && fwlab.modules && fwlab.lab)`, ``, 10*time.Second)

	t.Run("specDiff", func(t *testing.T) {
		a := `{"problem":"toy-polygon","params":{"n":1000,"sigma":0.5},"seed":0,"iters":200,"algorithms":[{"algo":"ssfw-as","rho":0.1,"schedule":"paper"},{"algo":"fista"}]}`
		b := `{"problem":"toy-polygon","params":{"n":1000,"sigma":5e-1},"seed":0,"iters":300,"algorithms":[{"algo":"ssfw-as","rho":0.05,"schedule":"paper"}]}`
		type row struct {
			Key    string `json:"key"`
			Values []any  `json:"values"`
			Differ bool   `json:"differ"`
		}
		rows := eval[[]row](t, ctx, fmt.Sprintf(`fwlab.lab.specDiff([%s, %s]).map(r => ({key: r.key, values: r.values.map(v => v === undefined ? '(none)' : v), differ: r.differ}))`, a, b))
		// Independently: flatten both specs here and compare.
		flat := func(s string) map[string]string {
			var m map[string]any
			if err := json.Unmarshal([]byte(s), &m); err != nil {
				t.Fatal(err)
			}
			out := map[string]string{}
			for k, v := range m {
				switch k {
				case "params":
					for pk, pv := range v.(map[string]any) {
						out["params."+pk] = fmt.Sprint(pv)
					}
				case "algorithms":
					for i, a := range v.([]any) {
						for ak, av := range a.(map[string]any) {
							out[fmt.Sprintf("algorithms[%d].%s", i, ak)] = fmt.Sprint(av)
						}
					}
				default:
					out[k] = fmt.Sprint(v)
				}
			}
			return out
		}
		fa, fb := flat(a), flat(b)
		keys := map[string]bool{}
		for k := range fa {
			keys[k] = true
		}
		for k := range fb {
			keys[k] = true
		}
		if len(rows) != len(keys) {
			t.Fatalf("specDiff gave %d rows %v, want %d", len(rows), rows, len(keys))
		}
		var differ []string
		for _, r := range rows {
			va, oka := fa[r.Key]
			vb, okb := fb[r.Key]
			want := oka != okb || va != vb
			if r.Differ != want {
				t.Errorf("%s: differ = %v, want %v (%q vs %q)", r.Key, r.Differ, want, va, vb)
			}
			if r.Differ {
				differ = append(differ, r.Key)
			}
		}
		sort.Strings(differ)
		if got := strings.Join(differ, ","); got != "algorithms[0].rho,algorithms[1].algo,iters" {
			t.Errorf("differing parameters %s", got)
		}
		if rows[0].Key != "problem" {
			t.Errorf("the first row is %q, want problem", rows[0].Key)
		}
		if !eval[bool](t, ctx, `fwlab.lab.differentInstances([{spec:{problem:'a',params:{n:1},seed:0}},{spec:{problem:'a',params:{n:2},seed:0}}]) && !fwlab.lab.differentInstances([{spec:{problem:'a',params:{n:1},seed:0},instance:{dim:2}},{spec:{problem:'a',params:{n:1},seed:0},instance:{dim:2}}])`) {
			t.Error("differentInstances: n = 1 and n = 2 must differ, two equal specs must not")
		}
	})

	t.Run("median", func(t *testing.T) {
		rng := rand.New(rand.NewSource(3))
		for n := 0; n < 12; n++ {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = math.Round(rng.NormFloat64()*1000) / 10
			}
			b, _ := json.Marshal(xs)
			got := eval[*float64](t, ctx, fmt.Sprintf(`fwlab.lab.median(%s.concat([null]))`, b))
			if n == 0 {
				if got != nil {
					t.Errorf("median of nothing = %v, want null", *got)
				}
				continue
			}
			// Brute force: the value with as many below as above.
			want := medianOf(xs)
			if got == nil || math.Abs(*got-want) > 1e-12 {
				t.Errorf("median(%v) = %v, want %v", xs, got, want)
			}
		}
	})

	t.Run("sweepGrid", func(t *testing.T) {
		// Cells in a scrambled order, one missing, one per-algorithm.
		sweep := `{"axes":[{"param":"algorithms[0].rho","values":[0.05,0.1,0.2]},{"param":"params.n","values":[100,200]}],
		"cells":[
		 {"values":{"algorithms[0].rho":0.2,"params.n":200},"run":"c5","status":"done","summary":{"final_gap":6,"per_algo":{"fista":{"final_gap":60}}}},
		 {"values":{"algorithms[0].rho":0.05,"params.n":100},"run":"c0","status":"done","summary":{"final_gap":1}},
		 {"values":{"algorithms[0].rho":0.1,"params.n":100},"run":"c1","status":"running","summary":null},
		 {"values":{"algorithms[0].rho":0.1,"params.n":200},"run":"c4","status":"done","summary":{"final_gap":5}},
		 {"values":{"algorithms[0].rho":0.05,"params.n":200},"run":"c3","status":"done","summary":{"final_gap":4}},
		 {"values":{"algorithms[0].rho":0.3,"params.n":200},"run":"stray","status":"done","summary":{"final_gap":9}}]}`
		type slot struct {
			Run   string   `json:"run"`
			Value *float64 `json:"value"`
		}
		var got struct {
			Rows, Cols int
			Grid       [][]slot
			Stray      []string
		}
		js := func(algo string) string {
			return fmt.Sprintf(`(() => { const g = fwlab.lab.sweepGrid(%s, 'final_gap', %q); return {Rows: g.rows, Cols: g.cols, Grid: g.grid.map(r => r.map(s => ({run: s.cell ? s.cell.run : '', value: s.value}))), Stray: g.stray.map(c => c.run)}; })()`, sweep, algo)
		}
		got = eval[struct {
			Rows, Cols int
			Grid       [][]slot
			Stray      []string
		}](t, ctx, js(""))
		want := [][]string{{"c0", "c1", ""}, {"c3", "c4", "c5"}}
		vals := [][]float64{{1, math.NaN(), math.NaN()}, {4, 5, 6}}
		if got.Rows != 2 || got.Cols != 3 || len(got.Grid) != 2 {
			t.Fatalf("grid %+v", got)
		}
		for j := range want {
			for i := range want[j] {
				s := got.Grid[j][i]
				if s.Run != want[j][i] {
					t.Errorf("slot (%d,%d) holds %q, want %q", j, i, s.Run, want[j][i])
				}
				if v := vals[j][i]; math.IsNaN(v) != (s.Value == nil) || (s.Value != nil && *s.Value != v) {
					t.Errorf("slot (%d,%d) value %v, want %v", j, i, s.Value, v)
				}
			}
		}
		if len(got.Stray) != 1 || got.Stray[0] != "stray" {
			t.Errorf("stray cells %v", got.Stray)
		}
		fista := eval[*float64](t, ctx, fmt.Sprintf(`fwlab.lab.sweepGrid(%s, 'final_gap', 'fista').grid[1][2].value`, sweep))
		if fista == nil || *fista != 60 {
			t.Errorf("per-algorithm outcome %v, want 60", fista)
		}
	})

	t.Run("shade", func(t *testing.T) {
		// On a log scale 1e-6…1e-2, 1e-4 is halfway; on a linear scale
		// 0…10, 2.5 is a quarter; out-of-range values clamp; a
		// non-positive value has no place on a log scale.
		cases := []struct {
			expr string
			want float64
		}{
			{`fwlab.lab.shade(1e-4, {lo: 1e-6, hi: 1e-2}, true)`, 0.5},
			{`fwlab.lab.shade(1e-6, {lo: 1e-6, hi: 1e-2}, true)`, 0},
			{`fwlab.lab.shade(2.5, {lo: 0, hi: 10}, false)`, 0.25},
			{`fwlab.lab.shade(20, {lo: 0, hi: 10}, false)`, 1},
			{`fwlab.lab.shade(3, {lo: 3, hi: 3}, false)`, 0.5},
		}
		for _, c := range cases {
			if got := eval[float64](t, ctx, c.expr); math.Abs(got-c.want) > 1e-12 {
				t.Errorf("%s = %v, want %v", c.expr, got, c.want)
			}
		}
		if !eval[bool](t, ctx, `fwlab.lab.shade(0, {lo: 1e-6, hi: 1}, true) === null && fwlab.lab.colour(null) === '#d9dde2' && fwlab.lab.colour(0) === '#440154' && fwlab.lab.colour(1) === '#fde725'`) {
			t.Error("log scale of 0, or the colour ramp's ends")
		}
		r := eval[map[string]float64](t, ctx, `fwlab.lab.gridRange([[{value: 3}, {value: null}], [{value: -1}, {value: 0.5}]], true)`)
		if r["lo"] != 0.5 || r["hi"] != 3 {
			t.Errorf("gridRange on a log scale = %v, want 0.5…3 (the negative value left out)", r)
		}
	})

	t.Run("parseValues", func(t *testing.T) {
		cases := []struct {
			text, kind, values, err string
		}{
			{"0.05, 0.1 0.2", "float", "[0.05,0.1,0.2]", ""},
			{"1,2;5", "int", "[1,2,5]", ""},
			{"1, 2.5", "int", "", `"2.5" is not an integer`},
			{"1, x", "float", "", `"x" is not a number`},
			{"", "float", "", "give at least one value"},
			{"1, 1.0", "float", "", "a value is given twice"},
		}
		for _, c := range cases {
			got := eval[map[string]any](t, ctx, fmt.Sprintf(`fwlab.lab.parseValues(%q, %q)`, c.text, c.kind))
			if c.err != "" {
				if got["error"] != c.err {
					t.Errorf("parseValues(%q, %s) = %v, want error %q", c.text, c.kind, got, c.err)
				}
				continue
			}
			b, _ := json.Marshal(got["values"])
			if string(b) != c.values {
				t.Errorf("parseValues(%q, %s) = %s, want %s", c.text, c.kind, b, c.values)
			}
		}
		body := eval[map[string]any](t, ctx, `fwlab.lab.sweepBody({problem: 'toy-polygon', start_paused: true, algorithms: [{algo: 'afw'}]}, [{param: 'seed', values: [1, 2]}, {param: '', values: []}])`)
		b, _ := json.Marshal(body)
		if string(b) != `{"axes":[{"param":"seed","values":[1,2]}],"base":{"algorithms":[{"algo":"afw"}],"problem":"toy-polygon"}}` {
			t.Errorf("sweepBody = %s", b)
		}
	})

	t.Run("fmtBytes", func(t *testing.T) {
		for _, c := range []struct {
			n    float64
			want string
		}{{0, "0 bytes"}, {1023, "1023 bytes"}, {1536, "1.5 KB"}, {5 << 20, "5.0 MB"}, {300 << 20, "300 MB"}, {3 << 30, "3.0 GB"}} {
			if got := eval[string](t, ctx, fmt.Sprintf(`fwlab.lab.fmtBytes(%v)`, c.n)); got != c.want {
				t.Errorf("fmtBytes(%v) = %q, want %q", c.n, got, c.want)
			}
		}
	})
}
