package e2e

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// fillShare is the JS share of a canvas's pixels that carry the polygon's
// fill colour (#eef3fa).
const fillShare = `((id) => { const c = document.getElementById(id); const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; let n = 0; for (let i = 0; i < d.length; i += 4) if (d[i] === 238 && d[i + 1] === 243 && d[i + 2] === 250) n++; return n / (c.width * c.height); })`

var evaluatedStats = regexp.MustCompile(`F = -?[0-9][0-9.e+-]* · gap = [0-9][0-9.e+-]*`)

// TestTeachingViewLectureHall: a run started paused shows at k = 0 two
// polygons side by side, one per trace under one slider, each drawn with
// its iterate, and F and the gap of k = 0; each single step shows F and
// the gap of that step (the run's cadence would evaluate every 50th); the
// wheel zooms both polygons about the pointer, a drag pans, Reset view
// restores them; presentation mode shows the polygons and one chart in
// large type, space steps, p plays, Esc leaves. At both window sizes.
func TestTeachingViewLectureHall(t *testing.T) {
	t.Parallel()
	ts := app(t)
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	for _, size := range [][2]int64{{1400, 1000}, {1000, 700}} {
		tag := fmt.Sprintf("%dx%d", size[0], size[1])
		viewport(t, ctx, size[0], size[1])
		id := postRun(t, ts.URL, `{"problem":"toy-polygon","params":{"target":"inside","cond":"20"},"algorithms":[{"algo":"ssfw-as"},{"algo":"fw"}],"iters":300,"eval_every":50,"start_paused":true}`)
		step(t, ctx, "open the run page", 20*time.Second, chromedp.Navigate(ts.URL+"/runs/"+id))
		waitFor(t, ctx, tag+": k = 0 drawn", `fwlab.status === 'paused' && fwlab.teach && fwlab.teach.drawn && fwlab.teach.planes && fwlab.teach.planes.length === 2 && fwlab.teach.ks.every((k) => k === 0)`, `[fwlab.status, fwlab.teach]`, 30*time.Second)
		// Side by side, each with its own trace.
		r := eval[[]float64](t, ctx, `(() => { const a = document.getElementById('teach-canvas').getBoundingClientRect(), b = document.getElementById('teach-canvas2').getBoundingClientRect(); return [a.left, a.top, a.right, a.width, b.left, b.top, b.width]; })()`)
		if math.Abs(r[1]-r[5]) > 2 || r[4] < r[2]-1 || r[3] < 150 || math.Abs(r[3]-r[6]) > 2 {
			t.Errorf("%s: the polygons are not side by side: %v", tag, r)
		}
		planes := eval[[]int](t, ctx, `fwlab.teach.planes`)
		if planes[0] == planes[1] {
			t.Errorf("%s: both polygons show trace %d", tag, planes[0])
		}
		for _, cv := range []string{"teach-canvas", "teach-canvas2"} {
			if f := eval[float64](t, ctx, fillShare+`('`+cv+`')`); f < 0.05 {
				t.Errorf("%s: k = 0: %s has %.3f of its pixels in the polygon's fill", tag, cv, f)
			}
		}
		stats := func(k int) {
			t.Helper()
			for i, s := range eval[[]string](t, ctx, `fwlab.teach.stats`) {
				if !evaluatedStats.MatchString(s) || strings.Contains(s, "(at k =") {
					t.Errorf("%s: k = %d, trace %d: %q lacks F and the gap of this step", tag, k, i, s)
				}
			}
		}
		stats(0)
		for k := 1; k <= 5; k++ {
			step(t, ctx, "single step", 10*time.Second, chromedp.Click(chromedp.ID("btn-step")))
			waitFor(t, ctx, fmt.Sprintf("%s: step %d shown", tag, k), fmt.Sprintf(`fwlab.teach.ks && fwlab.teach.ks.every((k) => k === %d)`, k), `fwlab.teach`, 20*time.Second)
			stats(k)
		}

		// Zoom about the centre of the first polygon, pan, reset.
		home := eval[map[string]float64](t, ctx, `fwlab.teach.view`)
		c := eval[[]float64](t, ctx, `(() => { const e = document.getElementById('teach-canvas'); e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2, r.width]; })()`)
		step(t, ctx, "wheel", 5*time.Second, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseWheel, c[0], c[1], func(p *input.DispatchMouseEventParams) {
			p.DeltaX, p.DeltaY = 1e-6, -400 // CDP wants both, and leaves a zero out
		}))
		waitFor(t, ctx, tag+": zoomed in", fmt.Sprintf(`(fwlab.teach.view.x1 - fwlab.teach.view.x0) < 0.7 * %v`, home["x1"]-home["x0"]), `fwlab.teach.view`, 5*time.Second)
		z := eval[map[string]float64](t, ctx, `fwlab.teach.view`)
		// The point under the pointer stays: the centre of the window.
		if mid, hmid := (z["x0"]+z["x1"])/2, (home["x0"]+home["x1"])/2; math.Abs(mid-hmid) > 0.02*(home["x1"]-home["x0"]) {
			t.Errorf("%s: zoom about the centre moved it from %v to %v", tag, hmid, mid)
		}
		step(t, ctx, "drag to pan", 5*time.Second,
			chromedp.MouseEvent(chromedp.MouseMoved, c[0], c[1]),
			chromedp.MouseEvent(chromedp.MousePressed, c[0], c[1], chromedp.ButtonLeft, chromedp.ClickCount(1)),
			chromedp.MouseEvent(chromedp.MouseMoved, c[0]+c[2]/8, c[1], chromedp.ButtonLeft),
			chromedp.MouseEvent(chromedp.MouseMoved, c[0]+c[2]/4, c[1], chromedp.ButtonLeft),
			chromedp.MouseEvent(chromedp.MouseReleased, c[0]+c[2]/4, c[1], chromedp.ButtonLeft, chromedp.ClickCount(1)))
		p := eval[map[string]float64](t, ctx, `fwlab.teach.view`)
		// A quarter of the canvas to the right: the window moves a quarter
		// of its width to the left.
		if want := z["x0"] - (z["x1"]-z["x0"])/4; math.Abs(p["x0"]-want) > 0.03*(z["x1"]-z["x0"]) || math.Abs(p["y0"]-z["y0"]) > 1e-9 {
			t.Errorf("%s: after the pan the window is %v, want x0 = %v (from %v)", tag, p, want, z)
		}
		step(t, ctx, "reset view", 5*time.Second, chromedp.Click(chromedp.ID("teach-reset")))
		if v := eval[map[string]float64](t, ctx, `fwlab.teach.view`); v["x0"] != home["x0"] || v["x1"] != home["x1"] || v["y0"] != home["y0"] || v["y1"] != home["y1"] {
			t.Errorf("%s: Reset view gives %v, want %v", tag, v, home)
		}

		// Presentation mode.
		w0 := eval[float64](t, ctx, `document.getElementById('teach-canvas').getBoundingClientRect().width`)
		step(t, ctx, "present", 5*time.Second, chromedp.Click(chromedp.ID("teach-present")))
		waitFor(t, ctx, tag+": presenting", `document.body.classList.contains('presenting')`, ``, 5*time.Second)
		time.Sleep(300 * time.Millisecond)
		shown := eval[[]string](t, ctx, `[...document.querySelectorAll('[data-chart]')].filter((c) => c.offsetParent !== null).map((c) => c.dataset.chart)`)
		if len(shown) != 1 || shown[0] != "objective" {
			t.Errorf("%s: presenting shows the charts %v, want the objective's only", tag, shown)
		}
		if h := eval[float64](t, ctx, `document.querySelector('[data-chart=objective] .u-over').getBoundingClientRect().height`); h < 250 {
			t.Errorf("%s: presenting, the objective chart's plot is %v px tall", tag, h)
		}
		if fs := eval[float64](t, ctx, `parseFloat(getComputedStyle(document.querySelector('#teach-readout')).fontSize)`); fs < 20 {
			t.Errorf("%s: presenting, the readout's type is %v px", tag, fs)
		}
		if w := eval[float64](t, ctx, `document.getElementById('teach-canvas').getBoundingClientRect().width`); w < w0 {
			t.Errorf("%s: presenting, the polygon is %v px wide, %v before", tag, w, w0)
		}
		shot(t, ctx, t.TempDir(), "teaching-present-"+tag+".png")
		step(t, ctx, "space steps", 5*time.Second, chromedp.KeyEvent(" "))
		waitFor(t, ctx, tag+": space took a step", `fwlab.teach.ks.every((k) => k === 6)`, `fwlab.teach`, 20*time.Second)
		if s := eval[string](t, ctx, `fwlab.status`); s != "paused" {
			t.Errorf("%s: presenting, space changed the run to %s", tag, s)
		}
		stats(6)
		step(t, ctx, "back", 5*time.Second, chromedp.KeyEvent(kb.ArrowLeft), chromedp.KeyEvent(kb.ArrowLeft))
		waitFor(t, ctx, tag+": two steps back", `fwlab.teach.ks.every((k) => k === 4)`, `fwlab.teach`, 5*time.Second)
		step(t, ctx, "p plays", 5*time.Second, chromedp.KeyEvent("p"))
		waitFor(t, ctx, tag+": played to the last step", `fwlab.teach.ks.every((k) => k === 6)`, `fwlab.teach`, 10*time.Second)
		step(t, ctx, "Esc leaves", 5*time.Second, chromedp.KeyEvent(kb.Escape))
		waitFor(t, ctx, tag+": presentation left", `!document.body.classList.contains('presenting')`, ``, 5*time.Second)
		shot(t, ctx, t.TempDir(), "teaching-"+tag+".png")
		stopRun(ts.URL, id)
		for _, e := range errs.take() {
			t.Errorf("%s: console: %s", tag, e)
		}
	}
}
