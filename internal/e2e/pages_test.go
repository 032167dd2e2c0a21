package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/fwlab/fwlab/internal/server"
	"github.com/fwlab/fwlab/internal/session"
)

// consoleErrors collects the page's console errors, uncaught exceptions and
// browser log errors (a CSP violation, a failed request) from now on.
type consoleErrors struct {
	mu   sync.Mutex
	list []string
}

func watchConsole(t *testing.T, ctx context.Context) *consoleErrors {
	t.Helper()
	ce := &consoleErrors{}
	err := chromedp.Listen(ctx, func(ev any) {
		var msg string
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type != runtime.ConsoleAPICalledTypeError && ev.Type != runtime.ConsoleAPICalledTypeAssert {
				return
			}
			var parts []string
			for _, a := range ev.Args {
				if a.Value != nil {
					parts = append(parts, string(a.Value))
				} else {
					parts = append(parts, a.Description)
				}
			}
			msg = "console." + string(ev.Type) + ": " + strings.Join(parts, " ")
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg = "exception: " + d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			msg += fmt.Sprintf(" at %s:%d", d.URL, d.LineNumber)
		case *log.EventEntryAdded:
			if ev.Entry.Level != log.EntryLevelError {
				return
			}
			msg = "log: " + ev.Entry.Text + " " + ev.Entry.URL
		default:
			return
		}
		ce.mu.Lock()
		ce.list = append(ce.list, msg)
		ce.mu.Unlock()
	})
	if err != nil {
		t.Fatalf("listening to the console: %v", err)
	}
	return ce
}

func (ce *consoleErrors) take() []string {
	ce.mu.Lock()
	defer ce.mu.Unlock()
	out := ce.list
	ce.list = nil
	return out
}

// postRun creates a run through the API and returns its id.
func postRun(t *testing.T, ts string, spec string) string {
	t.Helper()
	res, err := http.Post(ts+"/api/runs", "application/json", strings.NewReader(spec))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var created struct{ ID string }
	if res.StatusCode != 201 || json.Unmarshal(b, &created) != nil || created.ID == "" {
		t.Fatalf("POST /api/runs %s: %d %s", spec, res.StatusCode, b)
	}
	return created.ID
}

func stopRun(ts, id string) {
	req, _ := http.NewRequest("DELETE", ts+"/api/runs/"+id, nil)
	if res, err := http.DefaultClient.Do(req); err == nil {
		res.Body.Close()
	}
}

// viewport sets the page's size.
func viewport(t *testing.T, ctx context.Context, w, h int64) {
	t.Helper()
	step(t, ctx, fmt.Sprintf("viewport %d×%d", w, h), 10*time.Second, chromedp.EmulateViewport(w, h))
}

// drag drags the mouse across a chart's plot area between two fractions of
// its width and height.
func drag(t *testing.T, ctx context.Context, chart string, fx1, fy1, fx2, fy2 float64) {
	t.Helper()
	rect := eval[[]float64](t, ctx, `(() => { const o = document.querySelector('[data-chart=`+chart+`] .u-over'); o.scrollIntoView({block: 'center'}); const r = o.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`)
	x1, y1 := rect[0]+fx1*rect[2], rect[1]+fy1*rect[3]
	x2, y2 := rect[0]+fx2*rect[2], rect[1]+fy2*rect[3]
	step(t, ctx, "drag on "+chart, 10*time.Second,
		chromedp.MouseEvent(chromedp.MouseMoved, x1, y1),
		chromedp.MouseEvent(chromedp.MousePressed, x1, y1, chromedp.ButtonLeft, chromedp.ClickCount(1)),
		chromedp.MouseEvent(chromedp.MouseMoved, (x1+x2)/2, (y1+y2)/2, chromedp.ButtonLeft),
		chromedp.MouseEvent(chromedp.MouseMoved, x2, y2, chromedp.ButtonLeft),
		chromedp.MouseEvent(chromedp.MouseReleased, x2, y2, chromedp.ButtonLeft, chromedp.ClickCount(1)))
}

type chartScale struct {
	Zoomed  bool     `json:"zoomed"`
	Min     float64  `json:"min"`
	Max     float64  `json:"max"`
	YMin    float64  `json:"ymin"`
	YMax    float64  `json:"ymax"`
	DataMax float64  `json:"dataMax"`
	Draws   int      `json:"draws"`
	LogY    bool     `json:"logY"`
	Distr   int      `json:"distr"`
	Hidden  bool     `json:"hidden"`
	Title   string   `json:"title"`
	Extra   []string `json:"-"`
}

// scales reads every visible chart's scales.
func scales(t *testing.T, ctx context.Context) map[string]chartScale {
	t.Helper()
	return eval[map[string]chartScale](t, ctx, `Object.fromEntries(Object.keys(fwlab.charts).map(k => [k, fwlab.chartScale(k)]).filter(([, s]) => s && !s.hidden))`)
}

func near(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// longToy is a toy run that lasts tens of seconds: ssfw-as with a slowly
// growing batch (away and drop steps; about 6 s of solving on a quiet
// machine of two cores) against fista (about 13 s), 50000 samples.
const longToy = `{"problem":"toy-polygon","params":{"target":"edge","vertices":"12","cond":"1000","samples":"50000"},"algorithms":[{"algo":"ssfw-as","rho":0.001},{"algo":"fista"}],"iters":150000}`

// longFista is longToy's fista alone: a run as long, on one core instead
// of two, for the tests that need a run going on (one that holds a run
// slot, streams, or shows its progress) but not two algorithms' traces.
const longFista = `{"problem":"toy-polygon","params":{"target":"edge","vertices":"12","cond":"1000","samples":"50000"},"algorithms":[{"algo":"fista"}],"iters":150000}`

// oneSolver is the server's options for a test that watches a long run
// (longToy, a preset run until stopped) beside the other tests: one solver
// goroutine at a time, the run's traces taking turns (all stream), so that
// the run costs one core while the test looks at it, not two.
func oneSolver() server.Options {
	return server.Options{Session: session.Options{Workers: 1}}
}

// TestLogYLiveAndReload: every chart's log-y state is the same from the
// first point on as after a reload of the finished run, and a user's
// choice is kept across the reload.
func TestLogYLiveAndReload(t *testing.T) {
	t.Parallel()
	ts := appWith(t, oneSolver())
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	id := postRun(t, ts.URL, longToy)
	defer stopRun(ts.URL, id)
	step(t, ctx, "open the run page", 20*time.Second, chromedp.Navigate(ts.URL+"/runs/"+id))
	// The first draw: the charts exist, with the first records only.
	waitFor(t, ctx, "the first draw", `fwlab.perf && fwlab.perf.draws >= 1 && !!fwlab.charts.objective`, `fwlab.perf`, 20*time.Second)
	states := func() map[string]bool {
		return eval[map[string]bool](t, ctx, `Object.fromEntries(Object.entries(fwlab.charts).map(([k, c]) => [k, c.logY]))`)
	}
	first := states()
	if len(first) < 6 {
		t.Fatalf("charts at the first draw: %v", first)
	}
	if !first["objective"] || !first["gap"] || first["active"] {
		t.Errorf("log-y at the first point: %v; want objective and gap logarithmic, the active-set size linear", first)
	}
	waitFor(t, ctx, "≥ 200 points", `fwlab.charts.gap.points >= 200`, `fwlab.charts.gap`, 30*time.Second)
	if later := states(); fmt.Sprint(pick(later, first)) != fmt.Sprint(first) {
		t.Errorf("log-y changed while streaming: %v, then %v", first, later)
	}
	// The drawn scales agree with the checkboxes.
	for id, s := range scales(t, ctx) {
		if (s.Distr == 3) != s.LogY {
			t.Errorf("%s: log-y %v but the y scale's distribution is %d", id, s.LogY, s.Distr)
		}
	}
	// The user turns the gap chart's log scale off.
	eval[bool](t, ctx, `(() => { const b = document.querySelector('[data-chart=gap] input[type=checkbox]'); b.click(); return true; })()`)
	waitFor(t, ctx, "gap on a linear axis", `fwlab.charts.gap.logY === false && fwlab.chartScale('gap').distr === 1`, `fwlab.chartScale('gap')`, 10*time.Second)
	live := states()
	step(t, ctx, "stop", 10*time.Second, chromedp.Click(chromedp.ID("btn-stop")))
	waitFor(t, ctx, "the end of the run", `fwlab.done === true`, `fwlab.status`, 60*time.Second)
	step(t, ctx, "reload", 20*time.Second, chromedp.Reload())
	waitFor(t, ctx, "the reloaded run drawn", `fwlab.done === true && fwlab.perf.draws >= 1 && fwlab.charts.gap && fwlab.charts.gap.drawn > 0`, `[fwlab.status, fwlab.perf]`, 60*time.Second)
	reloaded := states()
	for k, v := range live {
		if reloaded[k] != v {
			t.Errorf("%s: log-y %v live, %v after the reload", k, v, reloaded[k])
		}
	}
	if reloaded["gap"] {
		t.Error("the user's linear gap axis was not kept across the reload")
	}
	if e := errs.take(); len(e) > 0 {
		t.Errorf("console errors: %q", e)
	}
}

// pick keeps the keys of m that are in ref.
func pick(m, ref map[string]bool) map[string]bool {
	out := map[string]bool{}
	for k := range ref {
		out[k] = m[k]
	}
	return out
}

// TestMarksCarryAlgorithmColour: drop and away marks are drawn per
// algorithm in its own colour (read back from the canvas), and each kind
// has its toggle.
func TestMarksCarryAlgorithmColour(t *testing.T) {
	t.Parallel()
	ts := app(t)
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	id := postRun(t, ts.URL, `{"problem":"toy-polygon","params":{"target":"edge","vertices":"12","cond":"50"},"algorithms":[{"algo":"afw"},{"algo":"pfw"},{"algo":"fw"}],"iters":400}`)
	step(t, ctx, "open the run page", 20*time.Second, chromedp.Navigate(ts.URL+"/runs/"+id))
	waitFor(t, ctx, "the finished run drawn with marks", `fwlab.done === true && fwlab.charts.objective.marks && fwlab.charts.objective.marks.length > 0`, `[fwlab.status, fwlab.charts.objective]`, 30*time.Second)
	groups := eval[[]struct {
		Key   string `json:"key"`
		Color string `json:"color"`
	}](t, ctx, `fwlab.groups`)
	colour := map[string]string{}
	for _, g := range groups {
		colour[g.Key] = g.Color
	}
	type probe struct {
		Group string `json:"group"`
		Kind  string `json:"kind"`
		Color string `json:"color"`
		Strip bool   `json:"strip"`
		Pixel []int  `json:"pixel"`
		Match bool   `json:"match"`
	}
	for _, chart := range []string{"objective", "gap"} {
		marks := eval[[]probe](t, ctx, `fwlab.markProbe('`+chart+`')`)
		by := map[string]bool{}
		for _, m := range marks {
			if m.Color != colour[m.Group] {
				t.Errorf("%s: a %s mark of %s is drawn in %s, the algorithm's colour is %s", chart, m.Kind, m.Group, m.Color, colour[m.Group])
			}
			if !m.Match {
				t.Errorf("%s: the canvas under a %s mark of %s is %v, not its colour %s", chart, m.Kind, m.Group, m.Pixel, m.Color)
			}
			by[m.Group] = true
		}
		if len(by) < 2 {
			t.Errorf("%s: marks of %d algorithms (%v); afw and pfw both take away steps", chart, len(by), marks)
		}
		t.Logf("%s: %d marks probed: %+v", chart, len(marks), marks)
	}
	// The toggles: drops off, then away steps off.
	counts := eval[map[string]int](t, ctx, `({drops: fwlab.charts.objective.drops, aways: fwlab.charts.objective.aways})`)
	if counts["drops"] == 0 || counts["aways"] == 0 {
		t.Fatalf("marks drawn: %v; this run has drop and away steps", counts)
	}
	eval[bool](t, ctx, `(document.querySelector('#show-drops').click(), true)`)
	waitFor(t, ctx, "no drop marks", `fwlab.charts.objective.drops === 0 && fwlab.charts.objective.aways > 0`, `fwlab.charts.objective`, 10*time.Second)
	eval[bool](t, ctx, `(document.querySelector('#show-aways').click(), true)`)
	waitFor(t, ctx, "no away marks", `fwlab.charts.objective.drops === 0 && fwlab.charts.objective.aways === 0`, `fwlab.charts.objective`, 10*time.Second)
	eval[bool](t, ctx, `(document.querySelector('#show-drops').click(), document.querySelector('#show-aways').click(), true)`)
	waitFor(t, ctx, "marks back", `fwlab.charts.objective.drops > 0 && fwlab.charts.objective.aways > 0`, `fwlab.charts.objective`, 10*time.Second)

	// The PNG carries the title and the legend.
	png := eval[struct {
		Title  string   `json:"title"`
		Legend []string `json:"legend"`
		Height int      `json:"height"`
	}](t, ctx, `fwlab.pngPreview('objective')`)
	if !strings.Contains(png.Title, "F*") || len(png.Legend) < 3 || !strings.Contains(strings.Join(png.Legend, "|"), "afw") || !strings.Contains(strings.Join(png.Legend, "|"), "drop steps") {
		t.Errorf("the objective's PNG: title %q, legend %q", png.Title, png.Legend)
	}
	if e := errs.take(); len(e) > 0 {
		t.Errorf("console errors: %q", e)
	}
}

// TestTeachingViewTwoTraces: the away-steps-vs-zig-zag preset shows afw
// and fw on the same polygon beside the charts, with a key, and writes
// the step in words.
func TestTeachingViewTwoTraces(t *testing.T) {
	t.Parallel()
	onBothStores(t, testTeachingViewTwoTraces)
}

func testTeachingViewTwoTraces(t *testing.T, be *backend) {
	base := be.url
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	step(t, ctx, "load the start page", 20*time.Second, chromedp.Navigate(base+"/"))
	waitFor(t, ctx, "the start page's script", `document.body.dataset.ready === '1'`, `document.body.outerHTML.slice(0, 300)`, 10*time.Second)
	step(t, ctx, "choose the preset", 10*time.Second, chromedp.Click(chromedp.CSS(`[data-preset="teach-zigzag"]`)))
	step(t, ctx, "start", 20*time.Second, chromedp.Click(chromedp.ID("start-run")))
	waitFor(t, ctx, "the run page", `!!(window.fwlab && fwlab.runId && fwlab.status)`, `location.href`, 20*time.Second)
	waitFor(t, ctx, "two traces in the teaching view", `fwlab.done && fwlab.teach && fwlab.teach.drawn && fwlab.teach.traces && fwlab.teach.traces.length === 2`, `fwlab.teach`, 30*time.Second)
	be.checkRanHere(t, eval[string](t, ctx, `fwlab.runId`))
	if algos := eval[[]string](t, ctx, `fwlab.teach.algos`); strings.Join(algos, ",") != "afw,fw" {
		t.Errorf("the teaching view shows %v, want afw and fw", algos)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('#teach-readout .teach-line').length`); n != 2 {
		t.Errorf("%d readout lines, want one per trace", n)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('#teach-key .key-item').length`); n < 8 {
		t.Errorf("the key has %d entries", n)
	}
	// Beside the charts at 1400 px: to their right, overlapping them
	// vertically, and near the top of the page.
	pos := eval[map[string]float64](t, ctx, `(() => { const a = document.querySelector('#teaching').getBoundingClientRect(), c = document.querySelector('#charts').getBoundingClientRect(); return {tl: a.left, tt: a.top + scrollY, cr: c.right, ct: c.top + scrollY, cb: c.bottom + scrollY}; })()`)
	if !(pos["tl"] >= pos["cr"]) || !(pos["tt"] < pos["cb"]) || math.Abs(pos["tt"]-pos["ct"]) > 50 {
		t.Errorf("the teaching view is not beside the charts: %v", pos)
	}
	// Step through afw's trace: an away or drop step is written out with
	// its vertex and γ_max, named as on the polygon.
	n := eval[int](t, ctx, `+document.querySelector('#teach-slider').max`)
	found := ""
	for i := 0; i <= n && found == ""; i++ {
		choose(t, ctx, "#teach-slider", fmt.Sprint(i))
		for _, w := range eval[[]string](t, ctx, `fwlab.teach.words`) {
			if (strings.HasPrefix(w, "away step from v") || strings.HasPrefix(w, "drop step: away from v")) && strings.Contains(w, "γ_max = ") {
				found = w
			}
		}
	}
	if found == "" {
		t.Error("no away or drop step of afw written out with its vertex and γ_max")
	}
	t.Logf("step in words: %s", found)
	shot(t, ctx, t.TempDir(), "teaching-two-traces.png")
	if e := errs.take(); len(e) > 0 {
		t.Errorf("console errors: %q", e)
	}
}

// TestTeachingViewProximalPath: fista on the polygon is drawn beside afw
// as a path of gradient steps and projections, written out in words.
func TestTeachingViewProximalPath(t *testing.T) {
	t.Parallel()
	onBothStores(t, testTeachingViewProximalPath)
}

func testTeachingViewProximalPath(t *testing.T, be *backend) {
	base := be.url
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	id := postRun(t, base, `{"problem":"toy-polygon","params":{"target":"edge"},"algorithms":[{"algo":"afw"},{"algo":"fista"}],"iters":60}`)
	step(t, ctx, "open the run page", 20*time.Second, chromedp.Navigate(base+"/runs/"+id))
	waitFor(t, ctx, "two traces in the teaching view", `fwlab.done && fwlab.teach && fwlab.teach.traces && fwlab.teach.traces.length === 2`, `fwlab.teach`, 30*time.Second)
	be.checkRanHere(t, id)
	if algos := eval[[]string](t, ctx, `fwlab.teach.algos`); strings.Join(algos, ",") != "afw,fista" {
		t.Fatalf("the teaching view shows %v, want afw and fista", algos)
	}
	choose(t, ctx, "#teach-slider", "3")
	words := eval[[]string](t, ctx, `fwlab.teach.words`)
	if len(words) != 2 || !strings.HasPrefix(words[1], "proximal step: gradient step from (") || !strings.Contains(words[1], "projected onto P at (") {
		t.Errorf("fista's step 3 in words: %q", words)
	}
	shot(t, ctx, t.TempDir(), "teaching-proximal.png")
	if e := errs.take(); len(e) > 0 {
		t.Errorf("console errors: %q", e)
	}
}

// TestStartPageStickyAndScroll: at both sizes the Start button is in view
// on arrival; Start with an invalid field out of view scrolls it into
// view, focuses it and lists the errors; SPG rows hide the controls they
// do not use; the m_k preview reads out under the pointer.
func TestStartPageStickyAndScroll(t *testing.T) {
	t.Parallel()
	ts := app(t)
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	for _, size := range [][2]int64{{1400, 1000}, {1000, 700}} {
		viewport(t, ctx, size[0], size[1])
		step(t, ctx, "load the start page", 20*time.Second, chromedp.Navigate(ts.URL+"/"))
		waitFor(t, ctx, "the start page's script", `document.body.dataset.ready === '1'`, `document.body.outerHTML.slice(0, 300)`, 10*time.Second)
		inView := func(sel string) bool {
			return eval[bool](t, ctx, `(() => { const r = document.querySelector(`+fmt.Sprintf("%q", sel)+`).getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight && r.height > 0; })()`)
		}
		if !inView("#start-run") {
			t.Errorf("%v: the Start button is out of view on arrival", size)
		}
		if top := eval[float64](t, ctx, `document.querySelector('#presets').getBoundingClientRect().top`); top > 200 {
			t.Errorf("%v: the presets start %v px down", size, top)
		}
		choose(t, ctx, "#problem", "toy-polygon")
		// More rows, so that the page is taller than the window.
		eval[bool](t, ctx, `(document.querySelector('#add-algo').click(), document.querySelector('#add-algo').click(), document.querySelector('#add-algo').click(), true)`)
		field := "#algo-rows .algo-row:first-child [data-key=rho]"
		choose(t, ctx, field, "2")
		// Out of view, then Start.
		eval[bool](t, ctx, `(window.scrollTo(0, document.body.scrollHeight), true)`)
		if inView(field) {
			eval[bool](t, ctx, `(window.scrollTo(0, 0), true)`)
		}
		if inView(field) {
			t.Fatalf("%v: cannot scroll the field out of view", size)
		}
		if !inView("#start-run") {
			t.Errorf("%v: the Start button is out of view after scrolling", size)
		}
		step(t, ctx, "start", 10*time.Second, chromedp.Click(chromedp.ID("start-run")))
		waitFor(t, ctx, "the invalid field in view", `(() => { const e = document.querySelector(`+fmt.Sprintf("%q", field)+`); const r = e.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight && document.activeElement === e; })()`,
			`[scrollY, document.querySelector(`+fmt.Sprintf("%q", field)+`).getBoundingClientRect().top, innerHeight, document.activeElement && document.activeElement.outerHTML.slice(0, 80)]`, 5*time.Second)
		if p := eval[string](t, ctx, `location.pathname`); p != "/" {
			t.Fatalf("an invalid form was submitted (now at %s)", p)
		}
		sum := eval[string](t, ctx, `document.querySelector('#error-summary').hidden ? '' : document.querySelector('#error-summary').textContent`)
		if !strings.Contains(sum, "ρ") || !strings.Contains(sum, "must lie strictly between 0 and 1, got 2") {
			t.Errorf("%v: error summary %q", size, sum)
		}
		shot(t, ctx, t.TempDir(), fmt.Sprintf("start-invalid-%dx%d.png", size[0], size[1]))
	}

	// GFLASSO: the spg row hides step size and L, bc-ssfw-as shows them.
	choose(t, ctx, "#problem", "gflasso")
	rows := eval[[]map[string]any](t, ctx, `Array.from(document.querySelectorAll('#algo-rows .algo-row')).map(r => ({algo: r.querySelector('[data-key=algo]').value, stepsize: !r.querySelector('[data-uses=stepsize]').hidden, L: !r.querySelector('[data-uses=L]').hidden}))`)
	for _, r := range rows {
		want := r["algo"] != "spg"
		if r["stepsize"] != want || r["L"] != want {
			t.Errorf("row %v: step size and L shown should be %v", r, want)
		}
	}
	// The m_k preview: axes drawn, and the value under the pointer. The
	// instance's answer redraws the preview with its n: hover after it.
	waitFor(t, ctx, "the GFLASSO instance measured", `document.querySelector('#instance-summary').dataset.state === 'ok' && !!fwlab.preview && fwlab.preview.request.problem === 'gflasso'`,
		`[document.querySelector('#instance-summary').textContent, fwlab.preview]`, 60*time.Second)
	rect := eval[[]float64](t, ctx, `(() => { const c = document.querySelector('#algo-rows .algo-row:first-child .sched-preview'); c.scrollIntoView({block: 'center'}); const r = c.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`)
	step(t, ctx, "hover the preview", 10*time.Second, chromedp.MouseEvent(chromedp.MouseMoved, rect[0]+0.5*rect[2], rect[1]+0.4*rect[3]))
	waitFor(t, ctx, "the preview's readout", `/^k = \d+: m_k = \d+ of n = \d+/.test(document.querySelector('#algo-rows .algo-row:first-child .preview-caption').textContent)`, `document.querySelector('#algo-rows .algo-row:first-child .preview-caption').textContent`, 5*time.Second)
	hover := eval[map[string]int](t, ctx, `fwlab.previewHover`)
	if want := eval[int](t, ctx, fmt.Sprintf(`fwlab.scheduleSize({kind: 'paper', rho: 0.1, alpha: 0.5}, %d, +document.querySelector('#algo-rows .algo-row:first-child [data-key=preview_n]').value)`, hover["k"])); hover["m"] != want {
		t.Errorf("the preview reads m_%d = %d, the schedule gives %d", hover["k"], hover["m"], want)
	}
	// A redraw under the pointer (here ρ changed) keeps the readout, read
	// from the new schedule.
	choose(t, ctx, "#algo-rows .algo-row:first-child [data-key=rho]", "0.3")
	waitFor(t, ctx, "the readout of the redrawn preview", `(() => { const row = document.querySelector('#algo-rows .algo-row:first-child'); const h = fwlab.previewHover;
		return row.querySelector('.preview-caption').textContent.startsWith('k = ' + h.k + ': m_k = ' + h.m + ' of n') && h.m === fwlab.scheduleSize({kind: 'paper', rho: 0.3, alpha: 0.5}, h.k, +row.querySelector('[data-key=preview_n]').value); })()`,
		`[document.querySelector('#algo-rows .algo-row:first-child .preview-caption').textContent, fwlab.previewHover]`, 5*time.Second)
	if e := errs.take(); len(e) > 0 {
		t.Errorf("console errors: %q", e)
	}
}

// TestStartPausedSteps: a toy run started paused shows k = 0, and each
// click on Single step adds exactly the next iteration.
//
// It runs alone (no t.Parallel): it gives the run a fixed time to take a step
// beyond the one asked for.
func TestStartPausedSteps(t *testing.T) {
	ts := app(t)
	spec := `{"problem":"toy-polygon","algorithms":[{"algo":"afw"}],"iters":50,"start_paused":true}`
	res, err := http.Post(ts.URL+"/api/runs", "application/json", strings.NewReader(spec))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var created struct{ ID string }
	if res.StatusCode != 201 || json.Unmarshal(b, &created) != nil {
		t.Fatalf("POST %s: %d %s", spec, res.StatusCode, b)
	}
	defer stopRun(ts.URL, created.ID)
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	step(t, ctx, "open the run page", 20*time.Second, chromedp.Navigate(ts.URL+"/runs/"+created.ID))
	waitFor(t, ctx, "the paused run", `fwlab.status === 'paused' && fwlab.traces.length === 1`, `[fwlab.status, fwlab.traces]`, 20*time.Second)
	time.Sleep(500 * time.Millisecond)
	k0 := eval[int](t, ctx, `fwlab.traces[0].lastK`)
	if k0 > 0 {
		t.Fatalf("a run started paused is at k = %d", k0)
	}
	for i := 1; i <= 3; i++ {
		step(t, ctx, "single step", 10*time.Second, chromedp.Click(chromedp.ID("btn-step")))
		waitFor(t, ctx, fmt.Sprintf("k = %d", k0+i), fmt.Sprintf(`fwlab.traces[0].lastK === %d && fwlab.status === 'paused'`, k0+i), `[fwlab.status, fwlab.traces[0].lastK]`, 10*time.Second)
		time.Sleep(300 * time.Millisecond)
		if k := eval[int](t, ctx, `fwlab.traces[0].lastK`); k != k0+i {
			t.Fatalf("after %d clicks the page is at k = %d, want %d", i, k, k0+i)
		}
	}
	if e := errs.take(); len(e) > 0 {
		t.Errorf("console errors: %q", e)
	}
}

// TestEveryPresetEverySize opens the start page and a run of every preset
// at 1400×1000 and 1000×700 (with fewer iterations and replications, so
// that the test stays short): no console error, no page wider than the
// window, and a screenshot of each under the test's temp dir. The two
// sizes run at the same time, each on a server and in a browser context
// of its own.
func TestEveryPresetEverySize(t *testing.T) {
	t.Parallel()
	for _, size := range [][2]int64{{1400, 1000}, {1000, 700}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			t.Parallel()
			everyPresetAt(t, size)
		})
	}
}

// everyPresetAt is TestEveryPresetEverySize at one size.
func everyPresetAt(t *testing.T, size [2]int64) {
	ts := app(t)
	var cat struct {
		Presets []struct {
			Name string `json:"name"`
		} `json:"presets"`
	}
	if err := json.Unmarshal(httpGet(t, ts.URL+"/api/scenarios"), &cat); err != nil || len(cat.Presets) == 0 {
		t.Fatalf("presets: %v %v", cat, err)
	}
	dir := t.TempDir()
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	var made []string
	viewport(t, ctx, size[0], size[1])
	for _, pr := range cat.Presets {
		tag := fmt.Sprintf("%s-%dx%d", pr.Name, size[0], size[1])
		t0 := time.Now()
		step(t, ctx, "load the start page", 60*time.Second, chromedp.Navigate(ts.URL+"/"))
		t.Logf("%s: start page loaded in %.1fs", tag, time.Since(t0).Seconds())
		waitFor(t, ctx, "the start page's script", `document.body.dataset.ready === '1'`, `document.body.outerHTML.slice(0, 300)`, 10*time.Second)
		step(t, ctx, "choose "+pr.Name, 10*time.Second, chromedp.Click(chromedp.CSS(`[data-preset="`+pr.Name+`"]`)))
		overflow(t, ctx, tag+" start")
		shot(t, ctx, dir, tag+"-start.png")
		choose(t, ctx, "#run-replications", "2")
		choose(t, ctx, "#run-iters", "300")
		choose(t, ctx, "#run-passes", "0")
		step(t, ctx, "start", 20*time.Second, chromedp.Click(chromedp.ID("start-run")))
		waitFor(t, ctx, "the run page", `!!(window.fwlab && fwlab.runId && fwlab.status)`, `[location.href, document.querySelector('#form-error') && document.querySelector('#form-error').textContent, document.querySelector('#error-summary') && document.querySelector('#error-summary').textContent]`, 30*time.Second)
		id := eval[string](t, ctx, `fwlab.runId`)
		waitFor(t, ctx, "drawn charts", `fwlab.charts.objective && fwlab.charts.objective.drawn > 0 && fwlab.charts.gap.drawn > 0`, `[fwlab.status, fwlab.charts]`, 90*time.Second)
		time.Sleep(1500 * time.Millisecond)
		overflow(t, ctx, tag+" run")
		shot(t, ctx, dir, tag+"-run.png")
		stopRun(ts.URL, id)
		waitFor(t, ctx, "the stopped run", `fwlab.done === true`, `fwlab.status`, 60*time.Second)
		made = append(made, id)
		t.Logf("%s: %.1fs", tag, time.Since(t0).Seconds())
		for _, e := range errs.take() {
			t.Errorf("%s: %s", tag, e)
		}
	}
	// The history, and the compare page of the last two runs.
	tag := fmt.Sprintf("%dx%d", size[0], size[1])
	step(t, ctx, "open the history", 20*time.Second, chromedp.Navigate(ts.URL+"/runs"))
	waitFor(t, ctx, "the history", `fwlab.history && fwlab.history.loads > 0 && fwlab.history.rows.length > 0`, `[document.querySelector('#history-error').textContent, fwlab.history]`, 20*time.Second)
	overflow(t, ctx, tag+" history")
	shot(t, ctx, dir, "history-"+tag+".png")
	if len(made) >= 2 {
		step(t, ctx, "open the compare page", 20*time.Second, chromedp.Navigate(ts.URL+"/compare?runs="+made[len(made)-2]+","+made[len(made)-1]))
		waitFor(t, ctx, "the compare page", `fwlab.compare && fwlab.compare.loaded && fwlab.charts.objective && fwlab.charts.objective.drawn > 0`, `[document.querySelector('#run-error').textContent, fwlab.compare]`, 30*time.Second)
		time.Sleep(500 * time.Millisecond)
		overflow(t, ctx, tag+" compare")
		shot(t, ctx, dir, "compare-"+tag+".png")
	}
	// A sweep's page.
	res, err := http.Post(ts.URL+"/api/sweeps", "application/json", strings.NewReader(`{"base": {"problem": "toy-polygon", "algorithms": [{"algo": "afw"}], "iters": 50}, "axes": [{"param": "seed", "values": [0, 1]}, {"param": "iters", "values": [30, 50]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var sw struct{ ID string }
	if res.StatusCode == 201 && json.Unmarshal(b, &sw) == nil && sw.ID != "" {
		step(t, ctx, "open the sweep page", 20*time.Second, chromedp.Navigate(ts.URL+"/sweeps/"+sw.ID))
		waitFor(t, ctx, "the sweep's heat map", `fwlab.sweep && fwlab.sweep.status === 'done' && fwlab.sweep.kind === 'heatmap'`, `fwlab.sweep`, 60*time.Second)
		overflow(t, ctx, tag+" sweep")
		shot(t, ctx, dir, "sweep-"+tag+".png")
	} else {
		t.Errorf("no sweep page: POST /api/sweeps answered %d %.200s", res.StatusCode, b)
	}
	for _, e := range errs.take() {
		t.Errorf("%s history/compare/sweep: %s", tag, e)
	}
	logShots(t)
}

// overflow fails when the page is wider than the window.
func overflow(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	w := eval[[]float64](t, ctx, `[document.documentElement.scrollWidth, innerWidth]`)
	if w[0] > w[1]+1 {
		wide := eval[string](t, ctx, `Array.from(document.querySelectorAll('body *')).filter(e => e.getBoundingClientRect().right > innerWidth + 1).slice(0, 5).map(e => e.tagName + '#' + e.id + '.' + e.className).join(' ')`)
		t.Errorf("%s: the page is %v px wide in a %v px window (%s)", what, w[0], w[1], wide)
	}
}

// TestObjectiveBestSeenAndSmoothing: on a problem whose F* is unknown the
// objective chart offers F − best F seen, whose offset is the smallest
// objective of the run (checked against the API's trace); the smoothing
// slider adds a smoothed line and keeps the raw one.
func TestObjectiveBestSeenAndSmoothing(t *testing.T) {
	t.Parallel()
	ts := app(t)
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	id := postRun(t, ts.URL, `{"problem":"gflasso","params":{"n":"60","j":"12","k":"20"},"algorithms":[{"algo":"bc-ssfw-as"},{"algo":"spg"}],"iters":120}`)
	step(t, ctx, "open the run page", 20*time.Second, chromedp.Navigate(ts.URL+"/runs/"+id))
	waitFor(t, ctx, "the finished run drawn", `fwlab.done === true && fwlab.charts.objective && fwlab.charts.objective.drawn > 0`, `[fwlab.status, fwlab.charts.objective]`, 60*time.Second)
	if !eval[bool](t, ctx, `document.querySelector('#objmode option[value=fstar]').disabled && document.querySelector('#objmode').value === 'best'`) {
		t.Error("F* is unknown, yet F − F* is offered or chosen, or the objective is not shown as F − best F seen")
	}
	choose(t, ctx, "#objmode", "best")
	waitFor(t, ctx, "the best-F view", `fwlab.charts.objective.offset !== 0 && fwlab.chartScale('objective').title === 'F(x) − best F seen'`, `[fwlab.charts.objective, fwlab.chartScale('objective')]`, 10*time.Second)
	best := math.Inf(1)
	for _, line := range strings.Split(string(httpGet(t, ts.URL+"/api/runs/"+id+"/trace?format=jsonl")), "\n") {
		var r struct {
			Objective *float64 `json:"objective"`
		}
		if json.Unmarshal([]byte(line), &r) == nil && r.Objective != nil && *r.Objective < best {
			best = *r.Objective
		}
	}
	if off := eval[float64](t, ctx, `fwlab.charts.objective.offset`); off != best {
		t.Errorf("the chart subtracts %v, the smallest objective of the run is %v", off, best)
	}
	// Smoothing: a smoothed and a raw series per algorithm.
	eval[bool](t, ctx, `(() => { const s = document.querySelector('#smooth'); s.value = '0.8'; s.dispatchEvent(new Event('input', {bubbles: true})); return true; })()`)
	waitFor(t, ctx, "the smoothed charts", `fwlab.charts.gap.smooth === true`, `fwlab.charts.gap`, 10*time.Second)
	type ser struct {
		Label  string `json:"label"`
		Stroke string `json:"stroke"`
	}
	series := eval[[]ser](t, ctx, `fwlab.charts.gap.series`)
	groups := eval[[]string](t, ctx, `fwlab.groups.map(g => g.label)`)
	for _, g := range groups {
		var main, raw *ser
		for i := range series {
			switch series[i].Label {
			case g:
				main = &series[i]
			case g + " (raw)":
				raw = &series[i]
			}
		}
		if main == nil || raw == nil || !strings.HasPrefix(raw.Stroke, "rgba(") || !strings.HasSuffix(raw.Stroke, ",0.25)") {
			t.Errorf("%s: smoothed %+v and faint raw %+v series wanted among %+v", g, main, raw, series)
		}
	}
	if e := errs.take(); len(e) > 0 {
		t.Errorf("console errors: %q", e)
	}
}
