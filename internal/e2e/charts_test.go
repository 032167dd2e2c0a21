package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/fwlab/fwlab/internal/server"
	"github.com/fwlab/fwlab/internal/session"
)

// TestCPUBurner is not a test: run with FWLAB_BURN=1 it keeps every core
// busy until its parent test process goes away (or ten minutes pass), the
// CPU-bound competitor of the chart tests.
func TestCPUBurner(t *testing.T) {
	if os.Getenv("FWLAB_BURN") == "" {
		t.Skip("a helper process for the chart tests (FWLAB_BURN=1)")
	}
	parent := os.Getppid()
	end := time.Now().Add(10 * time.Minute)
	for i := 0; i < runtime.NumCPU(); i++ {
		go func() {
			x := 1.0
			for {
				for j := 0; j < 1e6; j++ {
					x = x*1.0000001 + 1e-9
				}
				if x < 0 {
					fmt.Println(x)
				}
			}
		}()
	}
	for time.Now().Before(end) && os.Getppid() == parent {
		time.Sleep(200 * time.Millisecond)
	}
}

// burnCPU starts a process that competes for every core until the test
// ends.
func burnCPU(t *testing.T) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCPUBurner$", "-test.count=1")
	cmd.Env = append(os.Environ(), "FWLAB_BURN=1")
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the CPU-bound competitor: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
}

// nextDraw waits until the run page has drawn everything (charts, table,
// teaching view) once more after the call: a draw that began after
// whatever the test did before it (the run page counts its whole draws).
func nextDraw(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	d0 := eval[float64](t, ctx, `fwlab.chartScale('gap').draws`)
	waitFor(t, ctx, what+": the next draw", fmt.Sprintf(`fwlab.chartScale('gap').draws > %v`, d0), `[fwlab.status, fwlab.chartScale('gap')]`, 30*time.Second)
}

// traceRec is a record of GET /api/runs/{id}/trace?format=jsonl.
type traceRec struct {
	Trace     int      `json:"trace"`
	K         float64  `json:"k"`
	Gap       *float64 `json:"gap"`
	Active    *float64 `json:"active"`
	Batch     *float64 `json:"batch"`
	Objective *float64 `json:"objective"`
}

// serverTrace reads a run's complete trace from the API.
func serverTrace(t *testing.T, base, id string) []traceRec {
	t.Helper()
	var out []traceRec
	sc := bufio.NewScanner(bytes.NewReader(httpGet(t, base+"/api/runs/"+id+"/trace?format=jsonl")))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var r traceRec
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("trace line %.100s: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

// cardRange is a chart's data-x-range, data-y-range and data-groups.
type cardRange struct {
	X      string `json:"x"`
	Y      string `json:"y"`
	Groups string `json:"groups"`
}

func parseRange(t *testing.T, s string) (float64, float64) {
	t.Helper()
	p := strings.Split(s, ",")
	if len(p) != 2 {
		t.Fatalf("range %q is not min,max", s)
	}
	a, err1 := strconv.ParseFloat(p[0], 64)
	b, err2 := strconv.ParseFloat(p[1], 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("range %q: %v %v", s, err1, err2)
	}
	return a, b
}

// coverJS is true when every visible chart's data-x-range covers [lo, hi]
// and every chart has a series of each of the run's groups, objective and
// gap with points of each.
func coverJS(lo, hi float64) string {
	return fmt.Sprintf(`(() => {
		const groups = (fwlab.groups || []).map((g) => g.key);
		const cards = [...document.querySelectorAll('[data-chart]')].filter((c) => !c.hidden);
		if (!groups.length || cards.length < 3) return false;
		return cards.every((c) => {
			const r = (c.dataset.xRange || '').split(',').map(Number);
			const gs = (c.dataset.groups || '').split(',');
			const st = fwlab.charts[c.dataset.chart] || {};
			const drawn = ['objective', 'gap'].includes(c.dataset.chart) ? groups.every((g) => (st.drawnBy || {})[g] > 0) : true;
			return r.length === 2 && r[0] <= %v && r[1] >= %v && groups.every((g) => gs.includes(g)) && drawn;
		});
	})()`, lo, hi)
}

const rangesDiag = `[fwlab.status, fwlab.groups, [...document.querySelectorAll('[data-chart]')].filter((c) => !c.hidden).map((c) => [c.dataset.chart, c.dataset.xRange, c.dataset.groups, (fwlab.charts[c.dataset.chart] || {}).drawnBy])]`

// TestPresetChartsCoverWholeRun: every preset started from the start page,
// with a CPU-bound process competing for the cores, once its run is done
// shows in every chart the whole run (its x range, read from
// data-x-range, covers every record of the API's trace) and every
// algorithm. The charts once took a scale change in the page's first
// 500 ms for the user's zoom and froze at x ∈ [0, 60].
//
// It runs alone (no t.Parallel), as every test that loads the machine
// on purpose (burnCPU): its competitor would slow the other tests. Its two
// window sizes run at the same time, each on a server and in a browser
// context of its own, against the one competitor (and each other).
func TestPresetChartsCoverWholeRun(t *testing.T) {
	browserPath(t) // no browser: skip (or fail under CI) before the competitor starts
	burnCPU(t)
	for _, size := range [][2]int64{{1400, 1000}, {1000, 700}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			t.Parallel()
			presetChartsAt(t, size)
		})
	}
}

// presetChartsAt is TestPresetChartsCoverWholeRun at one size.
func presetChartsAt(t *testing.T, size [2]int64) {
	ts := app(t)
	var cat struct {
		Presets []struct {
			Name string `json:"name"`
		} `json:"presets"`
	}
	if err := json.Unmarshal(httpGet(t, ts.URL+"/api/scenarios"), &cat); err != nil || len(cat.Presets) == 0 {
		t.Fatalf("presets: %v %v", cat, err)
	}
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	viewport(t, ctx, size[0], size[1])
	for _, pr := range cat.Presets {
		tag := fmt.Sprintf("%s-%dx%d", pr.Name, size[0], size[1])
		t0 := time.Now()
		step(t, ctx, "load the start page", 60*time.Second, chromedp.Navigate(ts.URL+"/"))
		waitFor(t, ctx, "the start page's script", `document.body.dataset.ready === '1'`, `document.body.outerHTML.slice(0, 300)`, 20*time.Second)
		step(t, ctx, "choose "+pr.Name, 10*time.Second, chromedp.Click(chromedp.CSS(`[data-preset="`+pr.Name+`"]`)))
		// Long enough for the page to draw while the run streams; short
		// enough for ten runs on a loaded machine. Two replications at
		// most (paper-fig1 has ten): each algorithm is still drawn as a
		// band of several traces, and the run holds 6 × 601 records
		// instead of 30 × 601, which took 50 s beside the competitor.
		choose(t, ctx, "#run-iters", "600")
		choose(t, ctx, "#run-passes", "0")
		if eval[int](t, ctx, `+document.querySelector('#run-replications').value`) > 2 {
			choose(t, ctx, "#run-replications", "2")
		}
		step(t, ctx, "start", 20*time.Second, chromedp.Click(chromedp.ID("start-run")))
		waitFor(t, ctx, "the run page", `!!(window.fwlab && fwlab.runId && fwlab.status)`, `[location.href, document.querySelector('#form-error') && document.querySelector('#form-error').textContent]`, 60*time.Second)
		id := eval[string](t, ctx, `fwlab.runId`)
		waitFor(t, ctx, tag+": the run done", `fwlab.done === true && fwlab.status === 'done'`, `[fwlab.status, fwlab.sync]`, 240*time.Second)
		recs := serverTrace(t, ts.URL, id)
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, r := range recs {
			lo, hi = math.Min(lo, r.K), math.Max(hi, r.K)
		}
		if len(recs) == 0 || hi < 10 {
			t.Fatalf("%s: the run's trace has %d records up to k = %v", tag, len(recs), hi)
		}
		waitFor(t, ctx, fmt.Sprintf("%s: every chart showing k ∈ [%v, %v] and every algorithm", tag, lo, hi), coverJS(lo, hi), rangesDiag, 20*time.Second)
		if z := eval[bool](t, ctx, `!!fwlab.zoom || !document.querySelector('#zoom-bar').hidden`); z {
			t.Errorf("%s: the page shows a zoom nobody made", tag)
		}
		// The finished run's page opened again (as after a restart):
		// its records arrive at once.
		step(t, ctx, "reload the run page", 30*time.Second, chromedp.Navigate(ts.URL+"/runs/"+id))
		waitFor(t, ctx, tag+": the reloaded page done", `fwlab.done === true && fwlab.status === 'done'`, `[fwlab.status, fwlab.sync]`, 60*time.Second)
		waitFor(t, ctx, fmt.Sprintf("%s, reloaded: every chart showing k ∈ [%v, %v] and every algorithm", tag, lo, hi), coverJS(lo, hi), rangesDiag, 20*time.Second)
		t.Logf("%s: %d records, k ∈ [%v, %v], %.1fs", tag, len(recs), lo, hi, time.Since(t0).Seconds())
		for _, e := range errs.take() {
			t.Errorf("%s: %s", tag, e)
		}
	}
}

// yFitted checks a chart's y range against the API's values of a column
// in the x window [x0, x1]: it holds the values of the window (shrunk by
// 2% at each end, where the live view's decimation may have merged a
// point with one outside) and is at most a little wider than them.
func yFitted(t *testing.T, what string, recs []traceRec, col func(traceRec) *float64, x0, x1, ylo, yhi float64, log bool) {
	t.Helper()
	in := (x1 - x0) * 0.02
	lo, hi := math.Inf(1), math.Inf(-1)
	wlo, whi := math.Inf(1), math.Inf(-1)
	for _, r := range recs {
		v := col(r)
		if v == nil || math.IsNaN(*v) || (log && *v <= 0) || r.K < x0 || r.K > x1 {
			continue
		}
		wlo, whi = math.Min(wlo, *v), math.Max(whi, *v)
		if r.K >= x0+in && r.K <= x1-in {
			lo, hi = math.Min(lo, *v), math.Max(hi, *v)
		}
	}
	if math.IsInf(lo, 0) {
		t.Fatalf("%s: no values in [%v, %v]", what, x0, x1)
	}
	if ylo > lo*(1+1e-9)+1e-300 || yhi < hi*(1-1e-9) {
		t.Errorf("%s: y range [%v, %v] does not hold the window's values [%v, %v]", what, ylo, yhi, lo, hi)
	}
	if log {
		if span, want := math.Log10(yhi/ylo), math.Log10(whi/wlo); span > 1.2*want+0.6 {
			t.Errorf("%s: y range [%v, %v] spans %.2f decades, the window's values [%v, %v] %.2f", what, ylo, yhi, span, wlo, whi, want)
		}
	} else if yhi-ylo > 1.2*(whi-wlo)+2 {
		t.Errorf("%s: y range [%v, %v] is much wider than the window's values [%v, %v]", what, ylo, yhi, wlo, whi)
	}
}

// TestBoxZoomWhileStreaming: with a CPU-bound process competing, a box
// drawn on one chart while the run streams sets every chart's x to the
// box and fits every chart's y to its data in that window (log axes too);
// the zoom bar shows it; arriving data keeps the window; Esc resets every
// chart, which then follows the run again; "r" does the same.
//
// It runs alone (no t.Parallel): burnCPU. The server runs one solver
// goroutine at a time (its two traces take turns): the competitor is the
// load; two solver goroutines on the two cores starved the server's
// answers (a download of the trace's 25 000 records took 3.5 s, 1.5 s
// with one) and cost a core.
func TestBoxZoomWhileStreaming(t *testing.T) {
	ts := appWith(t, server.Options{Session: session.Options{Workers: 1}})
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	burnCPU(t)
	id := postRun(t, ts.URL, longToy)
	defer stopRun(ts.URL, id)
	step(t, ctx, "open the run page", 20*time.Second, chromedp.Navigate(ts.URL+"/runs/"+id))
	waitFor(t, ctx, "≥ 300 points in every chart", `['objective','gap','active','batch'].every(k => fwlab.charts[k] && fwlab.charts[k].points >= 300 && fwlab.charts[k].drawn > 0)`, `fwlab.charts`, 60*time.Second)
	if eval[string](t, ctx, `fwlab.status`) != "running" {
		t.Fatalf("the run is %s before the zoom", eval[string](t, ctx, `fwlab.status`))
	}
	drag(t, ctx, "gap", 0.3, 0.4, 0.6, 0.6)
	waitFor(t, ctx, "a zoom", `!!fwlab.zoom`, `[fwlab.zoom, fwlab.zooms]`, 5*time.Second)
	z := eval[map[string]float64](t, ctx, `fwlab.zoom`)
	if !(z["max"] > z["min"]) {
		t.Fatalf("zoom %v", z)
	}
	if bar := eval[string](t, ctx, `document.querySelector('#zoom-bar').hidden ? '' : document.querySelector('#zoom-bar').textContent`); !strings.Contains(bar, "zoomed") || !strings.Contains(bar, "Reset") {
		t.Errorf("zoom bar %q", bar)
	}
	check := func(when string) {
		t.Helper()
		// The window the page shows, and the server's trace up to now.
		cards := eval[map[string]cardRange](t, ctx, `Object.fromEntries([...document.querySelectorAll('[data-chart]')].filter((c) => !c.hidden).map((c) => [c.dataset.chart, {x: c.dataset.xRange || '', y: c.dataset.yRange || '', groups: c.dataset.groups || ''}]))`)
		recs := serverTrace(t, ts.URL, id)
		for name, c := range cards {
			x0, x1 := parseRange(t, c.X)
			if !near(x0, z["min"]) || !near(x1, z["max"]) {
				t.Errorf("%s, %s: x range [%v, %v], want the zoom [%v, %v]", when, name, x0, x1, z["min"], z["max"])
			}
		}
		for _, c := range []struct {
			name string
			col  func(traceRec) *float64
			log  bool
		}{
			{"gap", func(r traceRec) *float64 { return r.Gap }, true},
			{"batch", func(r traceRec) *float64 { return r.Batch }, true},
			{"active", func(r traceRec) *float64 { return r.Active }, false},
		} {
			y0, y1 := parseRange(t, cards[c.name].Y)
			yFitted(t, when+", "+c.name, recs, c.col, z["min"], z["max"], y0, y1, c.log)
		}
	}
	// Let a draw pass so that every chart's attributes are current.
	nextDraw(t, ctx, "after the zoom")
	check("after the zoom")
	shot(t, ctx, t.TempDir(), "box-zoom.png")
	dataMax := eval[float64](t, ctx, `fwlab.chartScale('gap').dataMax`)
	waitFor(t, ctx, "more records drawn while zoomed", fmt.Sprintf(`fwlab.chartScale('gap').dataMax > %v + 50`, dataMax), `fwlab.chartScale('gap')`, 60*time.Second)
	nextDraw(t, ctx, "while data arrives")
	check("while data arrives")

	follows := func(what string) {
		t.Helper()
		waitFor(t, ctx, what+": the zoom bar gone", `!fwlab.zoom && document.querySelector('#zoom-bar').hidden`, `[fwlab.zoom]`, 5*time.Second)
		last := eval[float64](t, ctx, `Math.max(...fwlab.traces.map((t) => t.lastK))`)
		if eval[string](t, ctx, `fwlab.status`) != "running" {
			t.Fatalf("%s: the run ended before the reset could be seen following it", what)
		}
		// Every chart's window reaches records that arrived after the reset.
		waitFor(t, ctx, what+": every chart following the run", fmt.Sprintf(`[...document.querySelectorAll('[data-chart]')].filter((c) => !c.hidden).every((c) => { const r = (c.dataset.xRange || '').split(',').map(Number); return r[0] <= 0 && r[1] > %v + 50; })`, last), rangesDiag, 60*time.Second)
	}
	step(t, ctx, "Esc", 5*time.Second, chromedp.KeyEvent(kb.Escape))
	follows("Esc")

	drag(t, ctx, "active", 0.2, 0.5, 0.4, 0.5)
	waitFor(t, ctx, "a second zoom", `!!fwlab.zoom`, `[fwlab.zoom, fwlab.zooms]`, 5*time.Second)
	step(t, ctx, "press r", 5*time.Second, chromedp.KeyEvent("r"))
	follows("r")

	drag(t, ctx, "batch", 0.2, 0.5, 0.4, 0.5)
	waitFor(t, ctx, "a third zoom", `!!fwlab.zoom`, `[fwlab.zoom, fwlab.zooms]`, 5*time.Second)
	step(t, ctx, "the Reset zoom button", 5*time.Second, chromedp.Click(chromedp.ID("zoom-reset")))
	follows("Reset zoom")
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}

// TestLegendHideIsolate: a click on an algorithm in the legend hides it
// from every chart and a second click shows it again; a shift-click shows
// it alone, and a second shift-click shows every algorithm again.
func TestLegendHideIsolate(t *testing.T) {
	t.Parallel()
	ts := app(t)
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	id := postRun(t, ts.URL, `{"problem":"toy-polygon","algorithms":[{"algo":"afw"},{"algo":"fw"},{"algo":"pfw"}],"iters":200}`)
	step(t, ctx, "open the run page", 20*time.Second, chromedp.Navigate(ts.URL+"/runs/"+id))
	waitFor(t, ctx, "the run done and drawn", `fwlab.done && fwlab.groups && fwlab.groups.length === 3 && fwlab.charts.gap && fwlab.charts.gap.drawn > 0`, `[fwlab.status, fwlab.groups]`, 60*time.Second)
	keys := eval[[]string](t, ctx, `fwlab.groups.map((g) => g.key)`)
	shownIs := func(what string, want ...string) {
		t.Helper()
		js := fmt.Sprintf(`[...document.querySelectorAll('[data-chart]')].filter((c) => !c.hidden).every((c) => c.dataset.groups === %q)`, strings.Join(want, ","))
		waitFor(t, ctx, what, js, `[fwlab.hidden, [...document.querySelectorAll('[data-chart]')].filter((c) => !c.hidden).map((c) => [c.dataset.chart, c.dataset.groups])]`, 10*time.Second)
		off := eval[[]string](t, ctx, `[...document.querySelectorAll('#legend-algos .legend-algo.off')].map((e) => e.dataset.group)`)
		for _, k := range keys {
			if contains(want, k) == contains(off, k) {
				t.Errorf("%s: legend entry %s marked off=%v", what, k, contains(off, k))
			}
		}
	}
	click := func(key string, shift bool) {
		t.Helper()
		r := eval[[]float64](t, ctx, fmt.Sprintf(`(() => { const e = document.querySelector('#legend-algos [data-group=%q]'); e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()`, key))
		var opts []chromedp.MouseOption
		if shift {
			opts = append(opts, chromedp.ButtonModifiers(chromedp.ModifierShift))
		}
		step(t, ctx, "click "+key, 5*time.Second, chromedp.MouseClickXY(r[0], r[1], opts...))
	}
	shownIs("all at first", keys...)
	click(keys[0], false)
	shownIs("the first hidden", keys[1:]...)
	click(keys[0], false)
	shownIs("the first shown again", keys...)
	click(keys[1], true)
	shownIs("the second alone", keys[1])
	click(keys[1], true)
	shownIs("every one again", keys...)
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}

// TestRunPageKeys: space pauses and resumes, "." steps a paused run, "?"
// lists the shortcuts; keys typed into the name field stay there.
func TestRunPageKeys(t *testing.T) {
	t.Parallel()
	ts := appWith(t, oneSolver())
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	id := postRun(t, ts.URL, longToy)
	defer stopRun(ts.URL, id)
	step(t, ctx, "open the run page", 20*time.Second, chromedp.Navigate(ts.URL+"/runs/"+id))
	waitFor(t, ctx, "running", `fwlab.status === 'running' && fwlab.charts.gap && fwlab.charts.gap.drawn > 0`, `fwlab.status`, 30*time.Second)
	step(t, ctx, "focus the page", 5*time.Second, chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur()`))
	step(t, ctx, "space", 5*time.Second, chromedp.KeyEvent(" "))
	waitFor(t, ctx, "paused by space", `fwlab.status === 'paused'`, `fwlab.status`, 10*time.Second)
	waitFor(t, ctx, "the page holding every record", `fwlab.sync && !fwlab.sync.behind`, `fwlab.sync`, 20*time.Second)
	before := eval[float64](t, ctx, `Math.max(...fwlab.traces.map((t) => t.lastK))`)
	step(t, ctx, "period", 5*time.Second, chromedp.KeyEvent("."))
	waitFor(t, ctx, "a step taken", fmt.Sprintf(`Math.max(...fwlab.traces.map((t) => t.lastK)) > %v`, before), `[fwlab.status, fwlab.traces.map((t) => t.lastK)]`, 20*time.Second)
	// A status the stream sent before the step may arrive after it: the
	// run settles paused.
	waitFor(t, ctx, "paused after the step", `fwlab.status === 'paused'`, `fwlab.status`, 10*time.Second)
	step(t, ctx, "question mark", 5*time.Second, chromedp.KeyEvent("?"))
	if txt := eval[string](t, ctx, `document.querySelector('#shortcuts').hidden ? '' : document.querySelector('#shortcuts').textContent`); !strings.Contains(txt, "pause or resume") || !strings.Contains(txt, "reset") {
		t.Errorf("the shortcut list %q", txt)
	}
	// the field holds the run's default name: the keys replace it
	if v := eval[string](t, ctx, `document.querySelector('#run-name').value`); !strings.HasPrefix(v, "toy-polygon: ") {
		t.Errorf("the name field holds %q, want the run's default name", v)
	}
	step(t, ctx, "type into the name", 5*time.Second, chromedp.Click(chromedp.ID("run-name")),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#run-name').select()`), chromedp.KeyEvent("a b."))
	if v := eval[string](t, ctx, `document.querySelector('#run-name').value`); v != "a b." {
		t.Errorf("the name field holds %q", v)
	}
	if s := eval[string](t, ctx, `fwlab.status`); s != "paused" {
		t.Errorf("typing a space into the name changed the run to %s", s)
	}
	step(t, ctx, "leave the field", 5*time.Second, chromedp.Evaluate[chromedp.Void](`document.activeElement.blur()`))
	step(t, ctx, "space", 5*time.Second, chromedp.KeyEvent(" "))
	waitFor(t, ctx, "resumed by space", `fwlab.status === 'running'`, `fwlab.status`, 10*time.Second)
	if p := eval[map[string]any](t, ctx, `fwlab.progress`); p["fraction"] == nil {
		t.Errorf("no progress: %v", p)
	}
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}

// TestChartRangesPure checks the charts' range and tick logic and the
// progress estimate (pure functions) in the browser, against properties
// and values worked out here.
func TestChartRangesPure(t *testing.T) {
	t.Parallel()
	ts := app(t)
	ctx := newBrowser(t)
	step(t, ctx, "load a page", 20*time.Second, chromedp.Navigate(ts.URL+"/"))
	waitFor(t, ctx, "the script", `!!(window.fwlab && fwlab.modules && fwlab.ranges)`, ``, 10*time.Second)

	t.Run("logTicks", func(t *testing.T) {
		type ticks struct{ Major, Minor []float64 }
		for _, c := range []struct {
			lo, hi float64
			labels int
		}{
			{1e-12, 1, 6}, {1e-15, 1e3, 5}, {3e-7, 8e-6, 6}, {0.5, 50, 6}, {1e-3, 5e-3, 6}, {2.1, 2.9, 6}, {1.5, 1.6, 5}, {1e-300, 1e300, 8}, {0.9, 1.1e4, 3},
		} {
			got := eval[ticks](t, ctx, fmt.Sprintf(`(() => { const r = fwlab.ranges.logTicks(%v, %v, %d); return {Major: r.major, Minor: r.minor}; })()`, c.lo, c.hi, c.labels))
			what := fmt.Sprintf("logTicks(%v, %v, %d) = %v", c.lo, c.hi, c.labels, got)
			if len(got.Major) < 2 || len(got.Major) > c.labels {
				t.Errorf("%s: %d labels", what, len(got.Major))
			}
			for _, v := range append(append([]float64{}, got.Major...), got.Minor...) {
				if v < c.lo*(1-1e-9) || v > c.hi*(1+1e-9) {
					t.Errorf("%s: %v outside the range", what, v)
				}
			}
			// Decades in the range, counted here.
			var decades []float64
			for e := math.Floor(math.Log10(c.lo)); e <= math.Ceil(math.Log10(c.hi)); e++ {
				if v := math.Pow(10, e); v >= c.lo*(1-1e-9) && v <= c.hi*(1+1e-9) {
					decades = append(decades, e)
				}
			}
			if len(decades) >= 2 {
				// Labels at decades only, evenly many decades apart, and
				// every decade either labelled or a minor line.
				step := 0.0
				for i, v := range got.Major {
					e := math.Log10(v)
					if math.Abs(e-math.Round(e)) > 1e-9 {
						t.Errorf("%s: label %v is not a decade", what, v)
					}
					if i == 1 {
						step = math.Round(e) - math.Round(math.Log10(got.Major[0]))
					} else if i > 1 && math.Abs(math.Round(e)-math.Round(math.Log10(got.Major[i-1]))-step) > 0 {
						t.Errorf("%s: labels not evenly spaced", what)
					}
				}
				if n := len(got.Major) + countDecades(got.Minor); n != len(decades) {
					t.Errorf("%s: %d decades drawn, %d in the range", what, n, len(decades))
				}
				// A readable minor grid: at most 8 lines a decade, and
				// none between decades once the labels skip some.
				per := map[float64]int{}
				for _, v := range got.Minor {
					per[math.Floor(math.Log10(v)+1e-9)]++
				}
				for e, n := range per {
					if n > 8 {
						t.Errorf("%s: %d minor lines in the decade 1e%v", what, n, e)
					}
				}
				if step > 1 && countDecades(got.Minor) != len(got.Minor) {
					t.Errorf("%s: minor lines between decades while labels skip decades", what)
				}
			}
		}
	})

	t.Run("padRange", func(t *testing.T) {
		for _, c := range []struct {
			lo, hi string
			log    bool
			want   [2]float64
		}{
			// 5% of 4 decades on each side: 10^-6.2 … 10^-1.8.
			{"1e-6", "1e-2", true, [2]float64{math.Pow(10, -6.2), math.Pow(10, -1.8)}},
			{"2", "12", false, [2]float64{1.5, 12.5}},
			{"0", "10", false, [2]float64{0, 10.5}},
			{"5", "5", false, [2]float64{4.5, 5.5}},
			{"1e-3", "1e-3", true, [2]float64{math.Pow(10, -3.25), math.Pow(10, -2.75)}},
			{"null", "null", true, [2]float64{1, 10}},
			{"null", "null", false, [2]float64{0, 1}},
			// A log axis ignores what it cannot show.
			{"-1", "100", true, [2]float64{math.Pow(10, 1.75), math.Pow(10, 2.25)}},
		} {
			got := eval[[]float64](t, ctx, fmt.Sprintf(`fwlab.ranges.padRange(%s, %s, %v)`, c.lo, c.hi, c.log))
			if len(got) != 2 || math.Abs(got[0]-c.want[0]) > 1e-9*math.Abs(c.want[0])+1e-15 || math.Abs(got[1]-c.want[1]) > 1e-9*math.Abs(c.want[1]) {
				t.Errorf("padRange(%s, %s, %v) = %v, want %v", c.lo, c.hi, c.log, got, c.want)
			}
		}
		got := eval[[]float64](t, ctx, `fwlab.ranges.windowExtent([0, 1, 2, 3, 4], [[5, null, 0.5, 8, -1], [null, 2, NaN, 0, 9]], 1, 3, true)`)
		if len(got) != 2 || got[0] != 0.5 || got[1] != 8 {
			t.Errorf("windowExtent of x ∈ [1, 3], positive values: %v, want [0.5, 8]", got)
		}
	})

	t.Run("progress", func(t *testing.T) {
		type prog struct {
			Fraction float64  `json:"fraction"`
			ETA      *float64 `json:"eta"`
		}
		f := func(v float64) *float64 { return &v }
		for _, c := range []struct {
			spec, traces string
			frac         float64
			eta          *float64
		}{
			{`{iters: 100}`, `[{last: {k: 25, time_s: 5}, status: 'running'}]`, 0.25, f(15)},
			{`{iters: 1000, passes: 4}`, `[{last: {k: 10, passes: 3, time_s: 6}, status: 'running'}]`, 0.75, f(2)},
			{`{iters: 100}`, `[{status: 'done'}, {last: {k: 50, time_s: 10}, status: 'running'}]`, 0.75, f(10)},
			{`{iters: 100}`, `[{last: {k: 50, time_s: 10}, status: 'running'}, {last: {k: 25, time_s: 2}, status: 'running'}, {status: 'running'}]`, 0.25, f(24)},
			{`{iters: 100}`, `[{status: 'running'}]`, 0, nil},
			{`{iters: 100}`, `[{status: 'max_iters'}, {status: 'gap'}]`, 1, f(0)},
		} {
			got := eval[prog](t, ctx, fmt.Sprintf(`fwlab.progress.progressOf(%s, %s)`, c.spec, c.traces))
			if math.Abs(got.Fraction-c.frac) > 1e-12 || (got.ETA == nil) != (c.eta == nil) || (got.ETA != nil && math.Abs(*got.ETA-*c.eta) > 1e-9) {
				t.Errorf("progressOf(%s, %s) = %+v (eta %v), want %v, %v", c.spec, c.traces, got, got.ETA, c.frac, c.eta)
			}
		}
		for s, want := range map[string]string{"45": "45 s", "200": "3 min 20 s", "7500": "2 h 05 min", "null": "–"} {
			if got := eval[string](t, ctx, `fwlab.progress.fmtDuration(`+s+`)`); got != want {
				t.Errorf("fmtDuration(%s) = %q, want %q", s, got, want)
			}
		}
	})
}

// countDecades counts the powers of ten among vs.
func countDecades(vs []float64) int {
	n := 0
	for _, v := range vs {
		if e := math.Log10(v); math.Abs(e-math.Round(e)) < 1e-9 {
			n++
		}
	}
	return n
}

// TestCompareNamesAndDiff: the compare page names a run by its name, else
// by its sweep cell's values, else by its algorithms and id; its spec diff
// marks only the differences that act (a default written out, or a field
// an algorithm does not use, is no difference).
func TestCompareNamesAndDiff(t *testing.T) {
	t.Parallel()
	onBothStores(t, testCompareNamesAndDiff)
}

func testCompareNamesAndDiff(t *testing.T, be *backend) {
	base := be.url
	// Effectively the same but for iters: b writes out the defaults a
	// leaves out (a problem parameter, the step rule, L, replications) and
	// sets a schedule parameter afw does not use.
	a := postRun(t, base, `{"problem":"toy-polygon","algorithms":[{"algo":"afw"}],"iters":40}`)
	b := postRun(t, base, `{"problem":"toy-polygon","params":{"vertices":"6","cond":"4"},"algorithms":[{"algo":"afw","stepsize":"curvature","L":"auto","m0":3}],"replications":1,"iters":50}`)
	waitRunEnded(t, base, a)
	waitRunEnded(t, base, b)
	be.checkRanHere(t, a)
	req, _ := http.NewRequest("PATCH", base+"/api/runs/"+a, strings.NewReader(`{"name":"the baseline"}`))
	req.Header.Set("Content-Type", "application/json")
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 200 {
		t.Fatalf("naming run %s: %v %v", a, res, err)
	}
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	step(t, ctx, "open the compare page", 20*time.Second, chromedp.Navigate(base+"/compare?runs="+a+","+b))
	waitFor(t, ctx, "the overlay", `fwlab.compare && fwlab.compare.loaded && fwlab.compare.labels`, `[document.querySelector('#run-error').textContent, fwlab.compare]`, 20*time.Second)
	if got := eval[[]string](t, ctx, `fwlab.compare.labels`); len(got) != 2 || got[0] != "the baseline" || got[1] != "afw · "+b {
		t.Errorf("labels %q, want [the baseline, afw · %s]", got, b)
	}
	if d := eval[string](t, ctx, `fwlab.compare.differ.join(',')`); d != "iters" {
		t.Errorf("differing parameters %q, want iters only", d)
	}
	if h := eval[string](t, ctx, `[...document.querySelectorAll('#spec-diff thead th')].map((e) => e.textContent).join('|')`); h != "parameter|the baseline|afw · "+b {
		t.Errorf("spec table heads %q", h)
	}

	// A sweep's cells are named by their values.
	res, err := http.Post(base+"/api/sweeps", "application/json", strings.NewReader(`{"base": {"problem": "toy-polygon", "algorithms": [{"algo": "afw"}], "iters": 30}, "axes": [{"param": "algorithms[0].rho", "values": [0.2, 0.4]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body := new(bytes.Buffer)
	_, _ = body.ReadFrom(res.Body)
	res.Body.Close()
	var sw struct{ ID string }
	if res.StatusCode != 201 || json.Unmarshal(body.Bytes(), &sw) != nil {
		t.Fatalf("POST /api/sweeps: %d %s", res.StatusCode, body)
	}
	var runs []string
	deadline := time.Now().Add(60 * time.Second)
	for len(runs) < 2 && time.Now().Before(deadline) {
		var got struct {
			Status string
			Cells  []struct{ Run string }
		}
		_ = json.Unmarshal(httpGet(t, base+"/api/sweeps/"+sw.ID), &got)
		runs = runs[:0]
		for _, c := range got.Cells {
			if c.Run != "" {
				runs = append(runs, c.Run)
			}
		}
		if got.Status != "done" {
			runs = runs[:0]
			time.Sleep(200 * time.Millisecond)
		}
	}
	if len(runs) != 2 {
		t.Fatalf("the sweep's cells: %v", runs)
	}
	step(t, ctx, "compare the cells", 20*time.Second, chromedp.Navigate(base+"/compare?runs="+runs[0]+","+runs[1]))
	waitFor(t, ctx, "the cells' overlay", `fwlab.compare && fwlab.compare.loaded && fwlab.compare.labels`, `[document.querySelector('#run-error').textContent, fwlab.compare]`, 20*time.Second)
	// afw takes no batch schedule: ρ acts on nothing, so no difference.
	if got := eval[[]string](t, ctx, `fwlab.compare.labels`); len(got) != 2 || got[0] != "ρ of afw = 0.2" || got[1] != "ρ of afw = 0.4" {
		t.Errorf("the cells' labels %q, want ρ of afw = 0.2 and 0.4", got)
	}
	if d := eval[string](t, ctx, `fwlab.compare.differ.join(',')`); d != "" {
		t.Errorf("differing parameters %q: ρ does not act on afw", d)
	}
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}

// TestHistoryShowsProgress: a running run's row in History shows its
// progress towards its limits and the time left, from the server's
// estimate; the run page shows the same fraction.
func TestHistoryShowsProgress(t *testing.T) {
	t.Parallel()
	onBothStores(t, testHistoryShowsProgress)
}

func testHistoryShowsProgress(t *testing.T, be *backend) {
	base := be.url
	id := postRun(t, base, longFista)
	defer stopRun(base, id)
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	step(t, ctx, "open the run page", 20*time.Second, chromedp.Navigate(base+"/runs/"+id))
	waitFor(t, ctx, "the run page's progress", `fwlab.progress && fwlab.progress.fraction > 0 && fwlab.progress.eta > 0 && /% · about .* left/.test(document.querySelector('#run-eta').textContent)`, `[fwlab.progress, document.querySelector('#run-eta').textContent]`, 30*time.Second)
	page := eval[float64](t, ctx, `fwlab.progress.fraction`)
	be.checkRanHere(t, id)
	step(t, ctx, "open the history", 20*time.Second, chromedp.Navigate(base+"/runs"))
	waitFor(t, ctx, "the running row's progress", fmt.Sprintf(`fwlab.history && fwlab.history.rows.some((r) => r.id === %q && r.progress && r.progress.fraction > 0 && r.progress.eta_s > 0) && !!document.querySelector('tr[data-run=%q] [data-progress] progress')`, id, id), `fwlab.history && fwlab.history.rows`, 30*time.Second)
	row := eval[map[string]any](t, ctx, fmt.Sprintf(`fwlab.history.rows.find((r) => r.id === %q).progress`, id))
	frac, _ := row["fraction"].(float64)
	// The server's fraction is the page's or later (the run went on).
	if frac < page-1e-9 || frac >= 1 {
		t.Errorf("History's fraction %v, the run page's %v before", frac, page)
	}
	if txt := eval[string](t, ctx, fmt.Sprintf(`document.querySelector('tr[data-run=%q] [data-progress]').textContent`, id)); !strings.Contains(txt, "%") || !strings.Contains(txt, "left") {
		t.Errorf("History's progress reads %q", txt)
	}
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}

// TestCompareLogicPure checks the compare page's effective specs and run
// names (pure functions) in the browser against specs resolved here by
// internal/spec's rules.
func TestCompareLogicPure(t *testing.T) {
	t.Parallel()
	ts := app(t)
	ctx := newBrowser(t)
	step(t, ctx, "load a page", 20*time.Second, chromedp.Navigate(ts.URL+"/"))
	waitFor(t, ctx, "the script", `!!(window.fwlab && fwlab.modules && fwlab.effective && fwlab.catalogue)`, ``, 10*time.Second)
	cat := `{defaults: {iters: 1000, replications: 1, stepsize: 'curvature', schedule: 'paper', rho: 0.1, alpha: 0.5, m0: 1, growth: 1.1, L: 'auto'}, algorithms: fwlab.catalogue.algorithms, problems: [{name: 'toy-polygon', params: [{name: 'vertices', default: '6'}, {name: 'points', default: ''}]}]}`
	same := func(a, b string) bool {
		return eval[bool](t, ctx, `(() => { const c = `+cat+`; const x = fwlab.effective.effectiveSpec(`+a+`, c), y = fwlab.effective.effectiveSpec(`+b+`, c); return JSON.stringify(x) === JSON.stringify(y); })()`)
	}
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{`{problem: 'toy-polygon', algorithms: [{algo: 'afw'}]}`, `{problem: 'toy-polygon', params: {vertices: '6'}, replications: 1, iters: 1000, algorithms: [{algo: 'afw', stepsize: 'curvature', L: 'auto'}]}`, true},
		// fw's default step is open-loop, not curvature.
		{`{problem: 'toy-polygon', algorithms: [{algo: 'fw'}]}`, `{problem: 'toy-polygon', algorithms: [{algo: 'fw', stepsize: 'curvature'}]}`, false},
		{`{problem: 'toy-polygon', algorithms: [{algo: 'fw'}]}`, `{problem: 'toy-polygon', algorithms: [{algo: 'fw', stepsize: 'open-loop'}]}`, true},
		// ρ acts on a stochastic method under the paper's schedule only.
		{`{problem: 'toy-polygon', algorithms: [{algo: 'afw', rho: 0.3}]}`, `{problem: 'toy-polygon', algorithms: [{algo: 'afw'}]}`, true},
		{`{problem: 'toy-polygon', algorithms: [{algo: 'ssfw-as', rho: 0.3}]}`, `{problem: 'toy-polygon', algorithms: [{algo: 'ssfw-as'}]}`, false},
		{`{problem: 'toy-polygon', algorithms: [{algo: 'ssfw-as', rho: 0.3, schedule: 'constant'}]}`, `{problem: 'toy-polygon', algorithms: [{algo: 'ssfw-as', schedule: 'constant', m0: 1}]}`, true},
		// A parameter's value written as a number or a string.
		{`{problem: 'toy-polygon', params: {vertices: 8}, algorithms: [{algo: 'afw'}]}`, `{problem: 'toy-polygon', params: {vertices: '8'}, algorithms: [{algo: 'afw'}]}`, true},
		{`{problem: 'toy-polygon', params: {vertices: '8'}, algorithms: [{algo: 'afw'}]}`, `{problem: 'toy-polygon', algorithms: [{algo: 'afw'}]}`, false},
		// spg takes no step rule or L.
		{`{problem: 'toy-polygon', algorithms: [{algo: 'spg', L: '3'}]}`, `{problem: 'toy-polygon', algorithms: [{algo: 'spg'}]}`, true},
		{`{problem: 'toy-polygon', seed: 0, algorithms: [{algo: 'afw'}]}`, `{problem: 'toy-polygon', seed: 1, algorithms: [{algo: 'afw'}]}`, false},
		// a setting of the algorithm table (cd's path): acts when given, 0 is its default
		{`{problem: 'toy-polygon', algorithms: [{algo: 'cd', path: 5}]}`, `{problem: 'toy-polygon', algorithms: [{algo: 'cd'}]}`, false},
		{`{problem: 'toy-polygon', algorithms: [{algo: 'cd', path: 5}]}`, `{problem: 'toy-polygon', algorithms: [{algo: 'cd', path: '5'}]}`, true},
		{`{problem: 'toy-polygon', algorithms: [{algo: 'cd', path: 0}]}`, `{problem: 'toy-polygon', algorithms: [{algo: 'cd'}]}`, true},
	} {
		if got := same(c.a, c.b); got != c.same {
			t.Errorf("effectiveSpec(%s) and effectiveSpec(%s) equal: %v, want %v", c.a, c.b, got, c.same)
		}
	}
	for _, c := range []struct{ run, values, want string }{
		{`{id: 'x1', name: 'baseline', spec: {algorithms: [{algo: 'afw'}]}}`, `{'algorithms[0].rho': 0.2}`, "baseline"},
		{`{id: 'x1', spec: {algorithms: [{algo: 'ssfw-as'}]}}`, `{'algorithms[0].rho': 0.2, 'params.n': 100}`, "ρ of ssfw-as = 0.2, n = 100"},
		{`{id: 'x1', spec: {algorithms: [{algo: 'afw'}, {algo: 'fista'}, {algo: 'afw'}]}}`, `null`, "afw vs fista · x1"},
	} {
		if got := eval[string](t, ctx, `fwlab.effective.runLabel(`+c.run+`, `+c.values+`)`); got != c.want {
			t.Errorf("runLabel(%s, %s) = %q, want %q", c.run, c.values, got, c.want)
		}
	}
}
