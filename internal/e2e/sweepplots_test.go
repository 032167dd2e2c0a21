package e2e

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestSweepPlotsModule runs the sweep plots' scales and data in the
// browser against values computed here: numeric axes linear or on a log
// scale over two decades, strings and booleans as evenly spaced
// categories, parallel-coordinate lines for every cell on its axes, and a
// slice's medians per axis value from every replication.
func TestSweepPlotsModule(t *testing.T) {
	t.Parallel()
	ts := app(t)
	ctx := newBrowser(t)
	step(t, ctx, "load a page", 20*time.Second, chromedp.Navigate(ts.URL+"/"))
	waitFor(t, ctx, "the script", `!!(window.fwlab && fwlab.modules && fwlab.sweepplots)`, ``, 10*time.Second)

	type scale struct {
		Kind string     `json:"kind"`
		Pos  []*float64 `json:"pos"`
	}
	at := func(values, probe string) scale {
		return eval[scale](t, ctx, fmt.Sprintf(`(() => { const s = fwlab.sweepplots.axisScale(%s); return {kind: s.kind, pos: %s.map(v => s.pos(v))}; })()`, values, probe))
	}
	near := func(p *float64, want float64) bool { return p != nil && math.Abs(*p-want) < 1e-12 }

	lin := at(`[0.05, 0.1, 0.2]`, `[0.05, 0.1, 0.2, 0.15, 'x']`)
	if lin.Kind != "linear" || !near(lin.Pos[0], 0) || !near(lin.Pos[1], (0.1-0.05)/0.15) || !near(lin.Pos[2], 1) || !near(lin.Pos[3], (0.15-0.05)/0.15) || lin.Pos[4] != nil {
		t.Errorf("linear axis %+v", lin)
	}
	lg := at(`[1, 10, 1000]`, `[1, 10, 1000]`)
	if lg.Kind != "log" || !near(lg.Pos[1], 1.0/3) {
		t.Errorf("log axis %+v, want 10 at a third of 1 … 1000", lg)
	}
	str := at(`['auto', '2', 'backtrack']`, `['auto', '2', 'backtrack', 2, 'nope']`)
	if str.Kind != "category" || !near(str.Pos[0], 0) || !near(str.Pos[1], 0.5) || !near(str.Pos[2], 1) || !near(str.Pos[3], 0.5) || str.Pos[4] != nil {
		t.Errorf("string axis %+v", str)
	}
	bl := at(`[true, false]`, `[true, false]`)
	if bl.Kind != "category" || !near(bl.Pos[0], 0) || !near(bl.Pos[1], 1) {
		t.Errorf("boolean axis %+v", bl)
	}
	if got := eval[string](t, ctx, `[fwlab.sweepplots.valueText('2'), fwlab.sweepplots.valueText(true), fwlab.sweepplots.valueText(0.000012345)].join('|')`); got != "2|true|1.2e-5" {
		t.Errorf("valueText %q", got)
	}

	// Parallel coordinates: each cell on its axes, the outcome last.
	lines := eval[[]struct {
		T   []float64 `json:"t"`
		Out *float64  `json:"out"`
	}](t, ctx, `fwlab.sweepplots.parallelLines([{param: 'a', values: [1, 2, 3]}, {param: 'b', values: ['x', 'y']}],
		[{values: {a: 1, b: 'x'}, v: 1e-3}, {values: {a: 3, b: 'y'}, v: 1e-1}, {values: {a: 2, b: 'z'}, v: 1}, {values: {a: 2, b: 'y'}, v: null}],
		(c) => c.v, true).lines.map(l => ({t: l.t, out: l.out}))`)
	if len(lines) != 3 {
		t.Fatalf("%d lines, want the 3 cells on the axes", len(lines))
	}
	if fmt.Sprint(lines[0].T) != "[0 0]" || fmt.Sprint(lines[1].T) != "[1 1]" || !near(lines[0].Out, 0) || !near(lines[1].Out, 1) || lines[2].Out != nil {
		t.Errorf("lines %+v", lines)
	}

	// A slice: every replication at each value, other axes free; medians
	// computed here.
	rows := `[{values: {a: 1, b: 'x'}, g: 4}, {values: {a: 1, b: 'y'}, g: 1}, {values: {a: 1, b: 'y'}, g: 2},
		{values: {a: 2, b: 'x'}, g: 8}, {values: {a: 2, b: 'y'}, g: null}]`
	got := eval[[]struct {
		Ys     []float64 `json:"ys"`
		Median *float64  `json:"median"`
	}](t, ctx, fmt.Sprintf(`fwlab.sweepplots.sliceData({param: 'a', values: [1, 2, 3]}, %s, 'g')`, rows))
	want := [][]float64{{4, 1, 2}, {8}, {}}
	for i, w := range want {
		if i >= len(got) || len(got[i].Ys) != len(w) {
			t.Fatalf("slice %+v, want %v", got, want)
		}
		s := append([]float64(nil), w...)
		sort.Float64s(s)
		if len(s) == 0 {
			if got[i].Median != nil {
				t.Errorf("value %d: median %v of nothing", i, *got[i].Median)
			}
			continue
		}
		m := s[len(s)/2]
		if len(s)%2 == 0 {
			m = (s[len(s)/2-1] + m) / 2
		}
		if !near(got[i].Median, m) {
			t.Errorf("value %d: median %v, want %v", i, got[i].Median, m)
		}
	}
	_ = strings.Join
}
