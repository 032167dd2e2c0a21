package e2e

// A study whose replications partly reach the gap target, in the browser
// against the real server and run store: the heat map's cells, the slices
// and the cells' CSV agree on how many replications reached the gap and on
// the medians, which exist only where the middle replication reached it
// (a replication that never did counts as +∞, never left out).

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

const censoredDoc = `{"name":"censored","base":{"problem":"lasso","params":{"n":"40","p":"20"},"algorithms":[{"algo":"ssfw-as"}],"replications":3,"seed":5,"iters":120,"gap":1e-12},
 "axes":[{"param":"algorithms[0].L","values":["auto","50"]},{"param":"algorithms[0].rho","values":[0.1,0.5]}]}`

// csvMedian is the median of n replications' times of which ys reached
// the gap, the others +∞; NaN when it is not finite.
func csvMedian(ys []float64, n int) float64 {
	v := append([]float64(nil), ys...)
	sort.Float64s(v)
	for len(v) < n {
		v = append(v, math.Inf(1))
	}
	if n == 0 {
		return math.NaN()
	}
	m := v[n/2]
	if n%2 == 0 {
		m = (v[n/2-1] + v[n/2]) / 2
	}
	if math.IsInf(m, 0) {
		return math.NaN()
	}
	return m
}

type tally struct {
	ys []float64
	n  int
}

func (t tally) median() float64 { return csvMedian(t.ys, t.n) }

func TestSweepCensoredReplicationsAgree(t *testing.T) {
	t.Parallel()
	url, _ := storeServer(t, filepath.Join(t.TempDir(), "fwlab.db"))
	req, _ := http.NewRequest("POST", url+"/api/sweeps", bytes.NewReader([]byte(censoredDoc)))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var created struct{ ID string }
	_ = json.NewDecoder(res.Body).Decode(&created)
	res.Body.Close()
	if res.StatusCode != 201 || created.ID == "" {
		t.Fatalf("POST sweep: %d", res.StatusCode)
	}
	id := created.ID
	deadline := time.Now().Add(120 * time.Second)
	for {
		var sw struct{ Status string }
		_ = json.Unmarshal(httpGet(t, url+"/api/sweeps/"+id), &sw)
		if sw.Status == "done" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sweep did not finish: %q", sw.Status)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// A gap target some but not all replications of a cell reach: one of
	// the replications' final gaps.
	type row struct {
		Cell     int                        `json:"cell"`
		Values   map[string]json.RawMessage `json:"values"`
		FinalGap *float64                   `json:"final_gap"`
		Reached  *bool                      `json:"reached"`
	}
	var all struct{ Rows []row }
	_ = json.Unmarshal(httpGet(t, url+"/api/sweeps/"+id+"/cells?format=json"), &all)
	var gaps []float64
	for _, r := range all.Rows {
		if r.FinalGap != nil {
			gaps = append(gaps, *r.FinalGap)
		}
	}
	sort.Float64s(gaps)
	target := ""
	for _, g := range gaps {
		cand := strconv.FormatFloat(g*(1+1e-9), 'g', -1, 64)
		var at struct{ Rows []row }
		_ = json.Unmarshal(httpGet(t, url+"/api/sweeps/"+id+"/cells?format=json&gap="+cand), &at)
		reached, n := map[int]int{}, map[int]int{}
		for _, r := range at.Rows {
			n[r.Cell]++
			if r.Reached != nil && *r.Reached {
				reached[r.Cell]++
			}
		}
		// a cell reached by 2 of its 3 replications (a median, and one
		// censored) and one reached by none to 2 (no median)
		twoOfThree, fewer := 0, 0
		for c := range n {
			if reached[c] == 2 && n[c] == 3 {
				twoOfThree++
			} else if reached[c] < 2 {
				fewer++
			}
		}
		if twoOfThree >= 1 && fewer >= 1 {
			target = cand
			break
		}
	}
	if target == "" {
		t.Fatalf("no gap target that 2 of 3 replications of one cell and fewer of another reach, among the final gaps %v", gaps)
	}
	// The CSV: counts and medians per cell and per axis value.
	body := httpGet(t, url+"/api/sweeps/"+id+"/cells?format=csv&gap="+target)
	recs, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[strings.SplitN(h, "(", 2)[0]] = i
	}
	for _, h := range []string{"cell", "algorithms[0].L", "algorithms[0].rho", "passes_to_gap", "reached", "passes_at_end"} {
		if _, ok := col[h]; !ok {
			t.Fatalf("the CSV lacks the column %q: %q", h, recs[0])
		}
	}
	cells := map[string]*tally{}
	slices := map[string]*tally{}
	add := func(m map[string]*tally, k string, r []string) {
		tl := m[k]
		if tl == nil {
			tl = &tally{}
			m[k] = tl
		}
		tl.n++
		if r[col["reached"]] == "true" {
			y, err := strconv.ParseFloat(r[col["passes_to_gap"]], 64)
			if err != nil {
				t.Fatalf("a replication that reached the gap has passes %q", r[col["passes_to_gap"]])
			}
			tl.ys = append(tl.ys, y)
		} else if r[col["passes_to_gap"]] != "" || r[col["passes_at_end"]] == "" {
			t.Fatalf("a replication that did not reach the gap: passes %q, ended at %q", r[col["passes_to_gap"]], r[col["passes_at_end"]])
		}
	}
	for _, r := range recs[1:] {
		l, rho := r[col["algorithms[0].L"]], r[col["algorithms[0].rho"]]
		add(cells, l+"|"+rho, r)
		add(slices, "algorithms[0].L="+l, r)
		add(slices, "algorithms[0].rho="+rho, r)
	}

	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	step(t, ctx, "open the sweep", 20*time.Second, chromedp.Navigate(url+"/sweeps/"+id))
	waitFor(t, ctx, "the drawn sweep", `window.fwlab && fwlab.sweep && fwlab.sweep.status === 'done' && fwlab.sweep.parallel`, `JSON.stringify(fwlab.sweep)`, 15*time.Second)
	choose(t, ctx, "#outcome", "passes_to_gap")
	choose(t, ctx, "#gap-target", target)
	waitFor(t, ctx, "the outcome at the new target", `fwlab.sweep.gap === `+target+` && fwlab.sweep.rowsGap === `+target+` && fwlab.sweep.outcome === 'passes_to_gap' && fwlab.sweep.cells.every(c => c.reached != null) && fwlab.sweep.slices.length === 2 && fwlab.sweep.slices.every(s => s.data.every(d => d.n === 6)) && fwlab.sweep.cells.some(c => c.reached > 0 && c.reached < c.replications)`,
		`JSON.stringify({cells: fwlab.sweep.cells, slices: fwlab.sweep.slices})`, 20*time.Second)

	close := func(a, b float64) bool {
		return (math.IsNaN(a) && math.IsNaN(b)) || math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b))
	}
	num := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	// The heat map's cells.
	type pageCell struct {
		Values       map[string]json.RawMessage
		Value        *float64
		Reached      int
		Replications int
	}
	pcs := eval[[]pageCell](t, ctx, `fwlab.sweep.cells`)
	if len(pcs) != 4 {
		t.Fatalf("%d cells on the page", len(pcs))
	}
	for _, c := range pcs {
		var l any
		_ = json.Unmarshal(c.Values["algorithms[0].L"], &l)
		k := fmt.Sprint(l) + "|" + string(c.Values["algorithms[0].rho"])
		want := cells[k]
		if want == nil {
			t.Fatalf("cell %s is not in the CSV", k)
		}
		if c.Reached != len(want.ys) || c.Replications != want.n || !close(num(c.Value), want.median()) {
			t.Errorf("cell %s: the heat map says %d of %d reached, median %v; the CSV %d of %d, median %v", k, c.Reached, c.Replications, num(c.Value), len(want.ys), want.n, want.median())
		}
	}
	texts := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#heatmap td.hm-cell')).map(td => td.dataset.reached + '/' + td.dataset.n + '|' + td.textContent)`)
	for _, tx := range texts {
		p := strings.SplitN(tx, "|", 2)
		kn := strings.Split(p[0], "/")
		if !strings.Contains(p[1], "reached in "+kn[0]+" of "+kn[1]) {
			t.Errorf("a heat-map cell reads %q, want it to say it was reached in %s of %s", p[1], kn[0], kn[1])
		}
	}
	// The slices: a point per axis value, with its counts and median.
	type point struct {
		V       any
		Reached int
		N       int
		Median  *float64
	}
	sl := eval[[][]point](t, ctx, `fwlab.sweep.slices.map(s => s.data)`)
	params := []string{"algorithms[0].L", "algorithms[0].rho"}
	for i, pts := range sl {
		for _, p := range pts {
			k := params[i] + "=" + fmt.Sprint(p.V)
			want := slices[k]
			if want == nil {
				t.Fatalf("slice point %s is not in the CSV", k)
			}
			if p.Reached != len(want.ys) || p.N != want.n || !close(num(p.Median), want.median()) {
				t.Errorf("slice %s: %d of %d reached, median %v; the CSV: %d of %d, median %v", k, p.Reached, p.N, num(p.Median), len(want.ys), want.n, want.median())
			}
		}
	}
	censored := 0
	for _, tl := range slices {
		censored += tl.n - len(tl.ys)
	}
	if got := eval[int](t, ctx, `document.querySelectorAll('#sweep-slices path.slice-censored').length`); got != censored {
		t.Errorf("%d censored marks in the slices, want %d (every replication that did not reach the gap, on both slices)", got, censored)
	}
	if got := eval[int](t, ctx, `document.querySelectorAll('#sweep-slices text.slice-reached').length`); got != 4 {
		t.Errorf("%d reached counts under the slices' values, want 4", got)
	}
	// The colour scale of nearly equal values (the final objectives of
	// one problem) is not stretched over the whole palette without a word.
	choose(t, ctx, "#outcome", "final_objective")
	waitFor(t, ctx, "the final objectives", `fwlab.sweep.outcome === 'final_objective' && fwlab.sweep.cells.every(c => c.value != null)`, `JSON.stringify(fwlab.sweep.cells)`, 10*time.Second)
	type scale struct {
		Values  []float64
		Lo, Hi  float64
		Widened bool
		Note    string
	}
	sc := eval[scale](t, ctx, `({values: fwlab.sweep.cells.map(c => c.value), lo: fwlab.sweep.range.lo, hi: fwlab.sweep.range.hi, widened: !!fwlab.sweep.range.widened, note: (document.querySelector('#hm-widened') || {}).textContent || ''})`)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range sc.Values {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	// (the final objective is on a linear scale: within 10 % is small)
	big := math.Max(math.Abs(lo), math.Abs(hi))
	small := hi-lo < 0.1*big
	if small != sc.Widened || small != (sc.Note != "") {
		t.Errorf("values %v (%.3g %% apart): colour range %v–%v, widened %v, note %q", sc.Values, 100*(hi-lo)/big, sc.Lo, sc.Hi, sc.Widened, sc.Note)
	}
	if small && (sc.Hi-sc.Lo < 0.1*big*(1-1e-9) || sc.Lo > lo || sc.Hi < hi) {
		t.Errorf("nearly equal values %v–%v spread over a colour range %v–%v, under 10 %% of them", lo, hi, sc.Lo, sc.Hi)
	}
	t.Logf("final objectives %v: colour range %v–%v, %q", sc.Values, sc.Lo, sc.Hi, sc.Note)
	// Brushing the parallel coordinates: a drag over the top half of ρ's
	// axis keeps the cells of ρ = 0.5 (its top), a click clears it.
	choose(t, ctx, "#outcome", "final_gap")
	waitFor(t, ctx, "the final gaps", `fwlab.sweep.outcome === 'final_gap' && fwlab.sweep.parallel.lines === 4 && fwlab.sweep.parallel.kept === 4`, `JSON.stringify(fwlab.sweep.parallel)`, 10*time.Second)
	dragParallel(t, ctx, 1, 1.01, 0.6) // from just over the top (the brush clamps to 1)
	waitFor(t, ctx, "the brushed lines", `fwlab.sweep.parallel.kept === 2 && document.querySelectorAll('#sweep-parallel-svg polyline.pc-dim').length === 2 && !!document.querySelector('#sweep-parallel-svg rect.pc-brush')`,
		`JSON.stringify(fwlab.sweep.parallel) + ' ' + document.querySelectorAll('#sweep-parallel-svg polyline.pc-dim').length`, 10*time.Second)
	kept := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#sweep-parallel-svg polyline.pc-line:not(.pc-dim) title')).map(e => e.textContent)`)
	for _, k := range kept {
		if !strings.Contains(k, "ρ of ssfw-as = 0.5") {
			t.Errorf("a line kept by the brush over ρ = 0.5: %q", k)
		}
	}
	// brushing the outcome's axis too: both brushes hold
	dragParallel(t, ctx, 2, 1.01, -0.01)
	waitFor(t, ctx, "two brushes", `fwlab.sweep.parallel.kept === 2 && document.querySelectorAll('#sweep-parallel-svg rect.pc-brush').length === 2`, `JSON.stringify(fwlab.sweep.parallel)`, 10*time.Second)
	dragParallel(t, ctx, 1, 0.5, 0.5)
	waitFor(t, ctx, "ρ's brush cleared", `fwlab.sweep.parallel.kept === 4 && document.querySelectorAll('#sweep-parallel-svg rect.pc-brush').length === 1`, `JSON.stringify(fwlab.sweep.parallel)`, 10*time.Second)
	// the importance of the axes, named by its method
	imp := eval[string](t, ctx, `document.querySelector('#sweep-importance').textContent`)
	for _, want := range []string{"Parameter importance", "main-effect variance share", "ρ of ssfw-as", "L of ssfw-as", "%"} {
		if !strings.Contains(imp, want) {
			t.Errorf("the importance lacks %q: %q", want, imp)
		}
	}
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}
