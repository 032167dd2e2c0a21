package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Parameter importance (the main-effect variance share, η²) in the
// browser against values worked out here: on a study where one axis does
// not matter at all its share is 0 and the other's 1; on an additive one
// the shares are each axis' part of the variance.
func TestSweepImportanceModule(t *testing.T) {
	t.Parallel()
	ts := app(t)
	ctx := newBrowser(t)
	step(t, ctx, "load a page", 20*time.Second, chromedp.Navigate(ts.URL+"/"))
	waitFor(t, ctx, "the script", `!!(window.fwlab && fwlab.modules && fwlab.sweepplots)`, ``, 10*time.Second)
	type result struct {
		Method string
		N      int
		Left   int
		Shares []struct {
			Param string
			Share *float64
		}
	}
	val := func(p *float64) any {
		if p == nil {
			return nil
		}
		return *p
	}
	run := func(cells string, log bool) result {
		return eval[result](t, ctx, fmt.Sprintf(`fwlab.sweepplots.importance([{param: 'a', values: [1, 2, 3]}, {param: 'b', values: ['x', 'y']}], %s, (c) => c.v, %v)`, cells, log))
	}
	// y = 10^a whatever b (on the log scale: y = a): b does not matter
	cells := "["
	for _, a := range []int{1, 2, 3} {
		for _, b := range []string{"x", "y"} {
			cells += fmt.Sprintf(`{values: {a: %d, b: %q}, v: %g},`, a, b, math.Pow(10, float64(a)))
		}
	}
	cells += `{values: {a: 2, b: 'x'}, v: null}]`
	r := run(cells, true)
	if r.Method == "" || r.N != 6 || r.Left != 1 || len(r.Shares) != 2 || r.Shares[0].Share == nil || r.Shares[1].Share == nil ||
		math.Abs(*r.Shares[0].Share-1) > 1e-12 || math.Abs(*r.Shares[1].Share) > 1e-12 {
		t.Errorf("b does not matter: %d cells (%d left out), shares %v and %v; want 1 and 0", r.N, r.Left, val(r.Shares[0].Share), val(r.Shares[1].Share))
	}
	// y = a + 2·[b = y] on a linear scale: variance of a's part 2/3, of
	// b's 1; shares 0.4 and 0.6
	cells = "["
	for _, a := range []int{1, 2, 3} {
		for j, b := range []string{"x", "y"} {
			cells += fmt.Sprintf(`{values: {a: %d, b: %q}, v: %d},`, a, b, a+2*j)
		}
	}
	cells += "]"
	r = run(cells, false)
	want := []float64{(2.0 / 3) / (2.0/3 + 1), 1 / (2.0/3 + 1)}
	for i, w := range want {
		if r.Shares[i].Share == nil || math.Abs(*r.Shares[i].Share-w) > 1e-12 {
			t.Errorf("additive study: share of %s %v, want %v", r.Shares[i].Param, val(r.Shares[i].Share), w)
		}
	}
	// no spread: nothing to explain
	r = run(`[{values: {a: 1, b: 'x'}, v: 5}, {values: {a: 2, b: 'y'}, v: 5}]`, false)
	if r.Shares[0].Share != nil || r.Shares[1].Share != nil {
		t.Errorf("equal outcomes: %+v, want no shares", r)
	}
}

// dragParallel drags the mouse along axis k of the sweep page's parallel
// coordinates from t0 to t1 of its length (0 at the bottom, 1 at the top),
// or clicks it when they are equal.
func dragParallel(t *testing.T, ctx context.Context, k int, t0, t1 float64) {
	t.Helper()
	box := eval[[]float64](t, ctx, fmt.Sprintf(`(() => { const a = document.querySelector('#sweep-parallel-svg .pc-brush-area[data-axis="%d"]'); a.scrollIntoView({block: 'center'}); const r = a.getBoundingClientRect(); return [r.x + r.width / 2, r.y + 4, r.height - 8]; })()`, k))
	y := func(tt float64) float64 { return box[1] + (1-tt)*box[2] }
	acts := []chromedp.Action[chromedp.Void]{chromedp.MouseEvent(chromedp.MousePressed, box[0], y(t0), chromedp.ButtonLeft, chromedp.ClickCount(1))}
	if t1 != t0 {
		for _, f := range []float64{0.25, 0.5, 0.75, 1} {
			acts = append(acts, chromedp.MouseEvent(chromedp.MouseMoved, box[0], y(t0+f*(t1-t0)), chromedp.ButtonLeft))
		}
	}
	acts = append(acts, chromedp.MouseEvent(chromedp.MouseReleased, box[0], y(t1), chromedp.ButtonLeft))
	step(t, ctx, fmt.Sprintf("drag axis %d from %v to %v", k, t0, t1), 10*time.Second, acts...)
}

// A Latin-hypercube study over two ranges, posted to the real server: its
// cells are the drawn points (not a grid), and the page shows every point
// in the parallel coordinates and the slices, with the importance of the
// axes, without a console error.
func TestSampledStudyPage(t *testing.T) {
	t.Parallel()
	url, _ := storeServer(t, filepath.Join(t.TempDir(), "fwlab.db"))
	doc := `{"name":"lhs","base":{"problem":"lasso","params":{"n":"40","p":"20"},"algorithms":[{"algo":"ssfw-as"}],"iters":60,"gap":0.001},
	 "sample":{"kind":"lhs","n":6,"seed":3},
	 "axes":[{"param":"algorithms[0].rho","range":{"min":0.05,"max":0.5,"log":true}},{"param":"algorithms[0].alpha","range":{"min":0.2,"max":0.9}}]}`
	req, _ := http.NewRequest("POST", url+"/api/sweeps", strings.NewReader(doc))
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
	deadline := time.Now().Add(60 * time.Second)
	var sw struct {
		Status string
		Axes   []struct {
			Param  string
			Values []float64
		}
		Cells []struct{ Values map[string]float64 }
	}
	for {
		_ = json.Unmarshal(httpGet(t, url+"/api/sweeps/"+created.ID), &sw)
		if sw.Status == "done" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sweep did not finish: %q", sw.Status)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(sw.Cells) != 6 || len(sw.Axes) != 2 || len(sw.Axes[0].Values) != 6 {
		t.Fatalf("%d cells, axes %+v: want the 6 points drawn", len(sw.Cells), sw.Axes)
	}
	for i, c := range sw.Cells {
		if c.Values["algorithms[0].rho"] != sw.Axes[0].Values[i] || c.Values["algorithms[0].alpha"] != sw.Axes[1].Values[i] {
			t.Errorf("cell %d: %v, want value %d of each axis", i, c.Values, i)
		}
	}
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	step(t, ctx, "open the sweep", 20*time.Second, chromedp.Navigate(url+"/sweeps/"+created.ID))
	waitFor(t, ctx, "the sampled study", `window.fwlab && fwlab.sweep && fwlab.sweep.status === 'done' && fwlab.sweep.kind === 'sampled' && fwlab.sweep.parallel && fwlab.sweep.parallel.lines === 6 && fwlab.sweep.slices.length === 2 && fwlab.sweep.slices.every(s => s.dots + s.censored === 6)`,
		`JSON.stringify(fwlab.sweep)`, 15*time.Second)
	txt := eval[string](t, ctx, `document.querySelector('#sweep-sampled').textContent + ' | ' + document.querySelector('#sweep-importance').textContent`)
	for _, want := range []string{"6 points", "(log)", "main-effect variance share"} {
		if !strings.Contains(txt, want) {
			t.Errorf("the page lacks %q: %q", want, txt)
		}
	}
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}
