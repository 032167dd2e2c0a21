// Package e2e drives the dashboard in a real headless Chromium against the
// real server, started in-process. Without a browser the tests skip, unless
// CI is set: then they fail.
//
// A test calls t.Parallel unless it loads the machine on purpose
// (burnCPU), times the page or gives something a fixed time to happen
// that must not: those run alone, before the parallel ones. Every test
// has its own server, store, ports, directories and browser context.
package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/go-chi/chi/v5"

	"github.com/fwlab/fwlab/internal/scenarios"
	"github.com/fwlab/fwlab/internal/server"
	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/web"
)

// browserPath finds Chromium: $FWLAB_CHROMIUM, then Debian's package.
// FWLAB_CHROMIUM=none runs the tests as on a machine without a browser.
func browserPath(t *testing.T) string {
	t.Helper()
	cands := []string{os.Getenv("FWLAB_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"}
	if os.Getenv("FWLAB_CHROMIUM") == "none" {
		cands = nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil && cands != nil {
			cands = append(cands, p)
		}
	}
	for _, p := range cands {
		if p == "" {
			continue
		}
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no Chromium found (install Debian's chromium package, or set FWLAB_CHROMIUM); CI is set, so this is a failure")
	}
	t.Skip("no Chromium found; install Debian's chromium package to run the browser tests")
	return ""
}

// app starts the real server behind an httptest.Server. If the server does
// not serve the dashboard's pages itself, they are mounted in front of it.
func app(t *testing.T) *httptest.Server {
	t.Helper()
	return appWith(t, server.Options{})
}

// appWith is app with the server's options.
func appWith(t *testing.T, o server.Options) *httptest.Server {
	t.Helper()
	srv, err := server.New(o)
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	var h http.Handler = srv
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest("GET", "http://localhost/", nil))
	if !strings.Contains(rec.Body.String(), `id="start-form"`) {
		r := chi.NewRouter()
		web.Mount(r, web.Deps{})
		rest := func(w http.ResponseWriter, req *http.Request) {
			// A fresh routing context, so that the server's router routes
			// the request from the start.
			srv.ServeHTTP(w, req.WithContext(context.WithValue(req.Context(), chi.RouteCtxKey, nil)))
		}
		r.NotFound(rest)
		r.MethodNotAllowed(rest)
		h = r
	}
	// The pages must work under a strict policy: scripts only from files
	// of the server, no inline script, handler or eval. The server's own
	// policy, when it sets one, replaces this one.
	inner := h
	h = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Security-Policy", testCSP)
		inner.ServeHTTP(w, req)
	})
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ts.Close()
		_ = srv.Close()
	})
	return ts
}

// testCSP is the policy the browser tests serve the pages under.
const testCSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"

// newBrowser opens a tab for the test in a browser context of its own (a
// fresh profile: no cookies, storage or cache of another test) of the
// Chromium the package's tests share, started by the first caller and
// again if it has stopped; the returned context has no deadline (each step
// gets its own). Starting Chromium costs seconds, a browser context a few
// milliseconds.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	path := browserPath(t)
	bctx, err := sharedChromium(path)
	if err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	ctx, cancel := chromedp.NewContext(bctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil { // opens the tab
		t.Fatalf("opening a tab in %s: %v", path, err)
	}
	return ctx
}

// chromium is the browser the package's tests share (TestMain stops it).
var chromium struct {
	mu      sync.Mutex
	ctx     context.Context // its first tab, kept open: the browser's life
	cancel  func()
	profile string
}

// sharedChromium returns the context of the shared browser, starting it
// if no browser runs (the first test, or one whose browser crashed).
func sharedChromium(path string) (context.Context, error) {
	chromium.mu.Lock()
	defer chromium.mu.Unlock()
	if chromium.ctx != nil && chromium.ctx.Err() == nil {
		return chromium.ctx, nil
	}
	stopChromiumLocked()
	profile, err := os.MkdirTemp("", "fwlab-e2e-chromium-")
	if err != nil {
		return nil, err
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-renderer-backgrounding", true),
		chromedp.Flag("disable-backgrounding-occluded-windows", true),
		// Recent Chromium (156 here) gives every window, so every
		// test's browser context, two renderers of its own for the
		// address bar's popup (chrome://omnibox-popup.top-chrome), which
		// a headless browser never shows: they cost about as much CPU as
		// the test's page. A name a Chromium does not know is ignored.
		chromedp.Flag("disable-features", "WebUIOmniboxPopup,WebUIOmniboxAimPopup,WebUIOmniboxFullPopup"),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1400, 1000),
	}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		cancel()
		acancel()
		os.RemoveAll(profile)
		return nil, err
	}
	chromium.ctx, chromium.profile = ctx, profile
	chromium.cancel = func() {
		cancel()
		acancel()
	}
	return ctx, nil
}

// stopChromium stops the shared browser, if one was started.
func stopChromium() {
	chromium.mu.Lock()
	defer chromium.mu.Unlock()
	stopChromiumLocked()
}

func stopChromiumLocked() {
	if chromium.cancel != nil {
		chromium.cancel()
		chromium.cancel = nil
	}
	if chromium.profile != "" {
		_ = os.RemoveAll(chromium.profile)
		chromium.profile = ""
	}
	chromium.ctx = nil
}

// step runs actions with a deadline and fails the test on error. The
// deadline bounds an action (a click, a key, a navigation), never what a
// test checks: on a loaded machine, with browser tests running side by
// side, it is at least stepFloor.
func step(t *testing.T, ctx context.Context, what string, d time.Duration, acts ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	d = max(d, stepFloor)
	c, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	if err := chromedp.Do(c, acts...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// stepFloor is the shortest deadline step gives an action.
const stepFloor = 30 * time.Second

// eval evaluates a JavaScript expression and decodes its value.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(c, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// waitFor polls a JavaScript predicate until it is truthy; on timeout it
// fails with the value of diag, which should say what was seen instead.
func waitFor(t *testing.T, ctx context.Context, what, pred, diag string, d time.Duration) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var err error
	for {
		// A navigation interrupts the poll; poll again in the new page.
		_, err = chromedp.Run(c, chromedp.Poll[chromedp.Void](pred, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(d)))
		if err == nil || c.Err() != nil || !(strings.Contains(err.Error(), "navigated") || strings.Contains(err.Error(), "context")) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		got := "?"
		if diag != "" {
			got = eval[string](t, ctx, `JSON.stringify(`+diag+`)`)
		}
		t.Fatalf("waiting for %s: %v; state: %s", what, err, got)
	}
}

// choose sets a control's value as a user would (value, then input and
// change events).
func choose(t *testing.T, ctx context.Context, sel, value string) {
	t.Helper()
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) return false;
		e.value = %q; e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true})); return e.value === %q; })()`, sel, value, value)
	if !eval[bool](t, ctx, js) {
		t.Fatalf("could not set %s to %q", sel, value)
	}
}

func httpGet(t *testing.T, url string) []byte {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, res.StatusCode, b)
	}
	return b
}

// shot saves a screenshot of the page under dir and a copy in the
// directory FWLAB_E2E_SHOTS names, for a person to look at; without
// FWLAB_E2E_SHOTS it takes none (the test's temporary directory is removed
// when the test ends, so nobody would see it, and a full-page PNG costs
// Chromium a quarter of a second of CPU) and returns "". No test checks a
// screenshot's pixels: those that read the page's pixels read its canvases.
func shot(t *testing.T, ctx context.Context, dir, name string) string {
	t.Helper()
	d := os.Getenv("FWLAB_E2E_SHOTS")
	if d == "" {
		return ""
	}
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(c, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(d, name), png, 0o644)
	return p
}

// logShots says where the test's screenshots were kept, when
// FWLAB_E2E_SHOTS asks for them.
func logShots(t *testing.T) {
	if d := os.Getenv("FWLAB_E2E_SHOTS"); d != "" {
		t.Logf("screenshots in %s", filepath.Clean(d))
	}
}

// waitFile waits until the file exists and its content satisfies ok.
func waitFile(t *testing.T, path string, ok func([]byte) bool) []byte {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && ok(b) {
			return b
		}
		time.Sleep(200 * time.Millisecond)
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	t.Fatalf("no complete download %s (the directory holds %v)", path, ents)
	return nil
}

var chartIDs = []string{"objective", "gap", "active", "batch", "gamma", "grad_err"}

// TestLiveRunToyPolygon: the start page, the toy polygon, ssfw-as against
// fista, live charts, drop markers, x-axis switch, pause and single step,
// CSV download, screenshot.
func TestLiveRunToyPolygon(t *testing.T) {
	t.Parallel()
	onBothStores(t, testLiveRunToyPolygon)
}

func testLiveRunToyPolygon(t *testing.T, be *backend) {
	base := be.url
	t0 := time.Now()
	mark := func(what string) { t.Logf("%6.2fs %s", time.Since(t0).Seconds(), what) }
	ctx := newBrowser(t)
	dir := t.TempDir()
	dl := filepath.Join(dir, "downloads")
	if err := os.MkdirAll(dl, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.CallBrowser(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dl,
		BrowserContextID: chromedp.FromContext(ctx).BrowserContextID,
	}); err != nil {
		t.Fatalf("download behaviour: %v", err)
	}

	mark("load the start page")
	step(t, ctx, "load the start page", 20*time.Second, chromedp.Navigate(base+"/"))
	mark("wait: the start page's script")
	waitFor(t, ctx, "the start page's script", `document.body.dataset.ready === '1'`, `document.body.outerHTML.slice(0, 300)`, 10*time.Second)
	// A problem's default limits come with it: OCR runs for passes.
	choose(t, ctx, "#problem", "ssvm-ocr")
	if got := eval[[]string](t, ctx, `[document.querySelector('#run-iters').value, document.querySelector('#run-passes').value]`); got[0] != "200000" || got[1] != "30" {
		t.Errorf("ssvm-ocr's limits on the form: iters %s, passes %s; want 200000, 30", got[0], got[1])
	}
	choose(t, ctx, "#problem", "toy-polygon")
	if got := eval[[]string](t, ctx, `[document.querySelector('#run-iters').value, document.querySelector('#run-passes').value]`); got[0] != "1000" || got[1] != "0" {
		t.Errorf("toy-polygon's limits on the form: iters %s, passes %s; want 1000, 0", got[0], got[1])
	}
	// The problem's default rows are the FW method and its proximal baseline.
	algos := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#algo-rows [data-key=algo]')).map(e => e.value)`)
	if strings.Join(algos, ",") != "ssfw-as,fista" {
		t.Fatalf("toy-polygon's default algorithm rows = %v, want ssfw-as,fista", algos)
	}
	// A minimiser beyond an edge of a 12-gon with a badly conditioned
	// quadratic: ssfw-as needs away and drop steps; fista runs to the
	// iteration limit. 20000 samples make full gradients cost enough that
	// the run lasts tens of seconds, long enough to pause it (the test stops
	// it once it has seen what it needs).
	choose(t, ctx, "#p-toy-polygon-target", "edge")
	choose(t, ctx, "#p-toy-polygon-vertices", "12")
	choose(t, ctx, "#p-toy-polygon-cond", "1000")
	choose(t, ctx, "#p-toy-polygon-samples", "20000")
	// A slowly growing batch (ρ = 0.01) keeps ssfw-as stochastic, with a
	// sampled-gradient error, for several hundred iterations.
	choose(t, ctx, "#algo-rows .algo-row:first-child [data-key=rho]", "0.01")
	choose(t, ctx, "#run-iters", "150000")
	mark("start the run")
	step(t, ctx, "start the run", 20*time.Second, chromedp.Click(chromedp.ID("start-run")))
	mark("wait: the run page")
	waitFor(t, ctx, "the run page", `!!(window.fwlab && fwlab.runId && fwlab.status)`, `location.href`, 20*time.Second)
	id := eval[string](t, ctx, `fwlab.runId`)
	href := eval[string](t, ctx, `location.href`)
	if !strings.Contains(href, "/runs/"+id+"?spec=") {
		t.Errorf("the run page's URL %s does not hold the spec", href)
	}

	// Pause, then a single step: each paused trace emits exactly one record.
	// The solver is fast: pause at once, while fista is far from its limit.
	// On the cluster the run waits in the queue until a worker takes it.
	waitFor(t, ctx, "the run taken from the queue", `fwlab.status !== 'queued'`, `fwlab.status`, 60*time.Second)
	if st := eval[string](t, ctx, `fwlab.status`); st != "running" {
		t.Fatalf("the run is %s when its page opens; it should still be running", st)
	}
	be.checkRanHere(t, id)
	mark("pause")
	step(t, ctx, "pause", 10*time.Second, chromedp.Click(chromedp.ID("btn-pause")))
	mark("wait: the paused status")
	waitFor(t, ctx, "the paused status", `fwlab.status === 'paused'`, `fwlab.status`, 10*time.Second)
	// Wait until the page holds every record the server holds, and the
	// server's counts stay put.
	serverCounts := func() []int {
		var st struct {
			Traces []struct {
				Records int `json:"records"`
			} `json:"traces"`
		}
		if err := json.Unmarshal(httpGet(t, base+"/api/runs/"+id), &st); err != nil {
			t.Fatal(err)
		}
		var out []int
		for _, tr := range st.Traces {
			out = append(out, tr.Records)
		}
		return out
	}
	// settle waits until the server's counts have moved past from in
	// every trace marked in moved (when given: on the cluster a step
	// reaches the worker on its next notification or beat, and its record
	// the store after that, trace by trace), then until the page holds
	// what the server holds and the server's counts stay put.
	settle := func(from []int, moved []bool) []int {
		var page, srv []int
		for i := 0; i < 100; i++ {
			time.Sleep(150 * time.Millisecond)
			srv = serverCounts()
			waiting := false
			for j := range from {
				waiting = waiting || (j < len(moved) && moved[j] && (j >= len(srv) || srv[j] == from[j]))
			}
			if waiting {
				continue
			}
			page = eval[[]int](t, ctx, `fwlab.traces.map(t => t.n)`)
			if fmt.Sprint(page) == fmt.Sprint(srv) {
				time.Sleep(300 * time.Millisecond)
				if again := serverCounts(); fmt.Sprint(again) == fmt.Sprint(srv) {
					return page
				}
			}
		}
		t.Fatalf("while paused, the page holds %v records and the server %v (before: %v)", page, srv, from)
		return nil
	}
	before := settle(nil, nil)
	running := eval[[]bool](t, ctx, `fwlab.traces.map(t => t.status === 'running' || t.status === 'paused')`)
	mark("single step")
	step(t, ctx, "single step", 10*time.Second, chromedp.Click(chromedp.ID("btn-step")))
	after := settle(before, running)
	stepped := 0
	for i := range before {
		want := before[i]
		if running[i] {
			want++
			stepped++
		}
		if after[i] != want {
			t.Errorf("trace %d: %d records after a single step, want %d (before: %d)", i, after[i], want, before[i])
		}
	}
	if stepped == 0 {
		t.Errorf("no trace was still running when paused: %v", running)
	}
	if st := eval[string](t, ctx, `fwlab.status`); st != "paused" {
		t.Errorf("after a single step the run is %s, want paused", st)
	}
	mark("resume")
	step(t, ctx, "resume", 10*time.Second, chromedp.Click(chromedp.ID("btn-resume")))
	// Every chart fills from the websocket.
	// The sampled-gradient error is taken on evaluated iterations of the
	// stochastic phase only, and which iterations are evaluated is decided
	// by the work done (ARCHITECTURE.md, "Records"): this spec evaluates about 40 of them
	// before its batch is full. Every other chart has a point per iteration.
	pred := `['` + strings.Join(chartIDs, `','`) + `'].every(k => fwlab.charts[k] && fwlab.charts[k].points >= (k === 'grad_err' ? 20 : 200) && fwlab.charts[k].drawn > 0)`
	mark("wait: ≥ 200 points in every chart")
	waitFor(t, ctx, "≥ 200 points in every chart", pred, `fwlab.charts`, 30*time.Second)
	if n := eval[int](t, ctx, `fwlab.wsMessages`); n < 2 {
		t.Errorf("only %d websocket messages", n)
	}
	// Zoom by dragging across the gap chart while records stream in: the
	// x range stays put through later draws; a double click resets it.
	rect := eval[[]float64](t, ctx, `(() => { const o = document.querySelector('[data-chart=gap] .u-over'); o.scrollIntoView({block: 'center'}); const r = o.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`)
	x1, x2, y := rect[0]+0.15*rect[2], rect[0]+0.45*rect[2], rect[1]+0.5*rect[3]
	step(t, ctx, "drag to zoom", 10*time.Second,
		chromedp.MouseEvent(chromedp.MouseMoved, x1, y),
		chromedp.MouseEvent(chromedp.MousePressed, x1, y, chromedp.ButtonLeft, chromedp.ClickCount(1)),
		chromedp.MouseEvent(chromedp.MouseMoved, (x1+x2)/2, y, chromedp.ButtonLeft),
		chromedp.MouseEvent(chromedp.MouseMoved, x2, y, chromedp.ButtonLeft),
		chromedp.MouseEvent(chromedp.MouseReleased, x2, y, chromedp.ButtonLeft, chromedp.ClickCount(1)))
	type scale struct {
		Zoomed  bool    `json:"zoomed"`
		Min     float64 `json:"min"`
		Max     float64 `json:"max"`
		DataMax float64 `json:"dataMax"`
		Draws   int     `json:"draws"`
	}
	zoom := eval[scale](t, ctx, `fwlab.chartScale('gap')`)
	if !zoom.Zoomed || !(zoom.Max < zoom.DataMax) {
		t.Fatalf("after a drag the gap chart is %+v, want zoomed into part of the data", zoom)
	}
	waitFor(t, ctx, "more records drawn while zoomed", fmt.Sprintf(`fwlab.chartScale('gap').draws >= %d && fwlab.chartScale('gap').dataMax > %v`, zoom.Draws+2, zoom.DataMax), `fwlab.chartScale('gap')`, 20*time.Second)
	if now := eval[scale](t, ctx, `fwlab.chartScale('gap')`); !now.Zoomed || now.Min != zoom.Min || now.Max != zoom.Max {
		t.Errorf("streaming moved the user's zoom: %+v, then %+v", zoom, now)
	} else {
		t.Logf("zoom kept: %+v, then %+v", zoom, now)
	}
	step(t, ctx, "double click", 10*time.Second, chromedp.DoubleClick(chromedp.CSS(`[data-chart=gap] .u-over`)))
	waitFor(t, ctx, "the zoom reset", `!fwlab.chartScale('gap').zoomed`, `fwlab.chartScale('gap')`, 10*time.Second)

	mark("wait: a drop step marked")
	waitFor(t, ctx, "a drop step marked", `fwlab.charts.objective.drops >= 1`, `fwlab.charts.objective`, 20*time.Second)

	// x-axis: effective passes.
	choose(t, ctx, "#xaxis", "passes")
	mark("wait: the passes axis")
	waitFor(t, ctx, "the passes axis", `fwlab.charts.objective.xkey === 'passes' && fwlab.charts.gap.xkey === 'passes'`, `fwlab.charts.objective`, 10*time.Second)

	// Stop: fista is cancelled; the page then holds the complete trace.
	t.Logf("page time so far: %s", eval[string](t, ctx, `JSON.stringify(fwlab.perf)`))
	mark("stop")
	step(t, ctx, "stop", 10*time.Second, chromedp.Click(chromedp.ID("btn-stop")))
	mark("wait: the end of the run")
	waitFor(t, ctx, "the end of the run", `fwlab.done === true && (fwlab.status === 'cancelled' || fwlab.status === 'done')`, `[fwlab.status, fwlab.traces.map(t => t.n)]`, 90*time.Second)
	counts := eval[[]int](t, ctx, `fwlab.traces.map(t => t.n)`)

	// The complete trace is in the page: every record of the server's trace.
	var status struct {
		Traces []struct {
			Records int `json:"records"`
		} `json:"traces"`
	}
	if err := json.Unmarshal(httpGet(t, base+"/api/runs/"+id), &status); err != nil {
		t.Fatal(err)
	}
	for i, tr := range status.Traces {
		if i >= len(counts) || counts[i] != tr.Records {
			t.Errorf("trace %d: the page holds %v records, the server %d", i, counts, tr.Records)
		}
	}

	// CSV download equals the API's trace.
	mark("download CSV")
	step(t, ctx, "download CSV", 10*time.Second, chromedp.Click(chromedp.ID("export-csv")))
	want := httpGet(t, base+"/api/runs/"+id+"/trace?format=csv")
	file := filepath.Join(dl, "fwlab-"+id+".csv")
	var got []byte
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(file); err == nil && len(b) == len(want) {
			got = b
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got == nil {
		ents, _ := os.ReadDir(dl)
		t.Fatalf("no complete download %s (directory holds %v; want %d bytes)", file, ents, len(want))
	}
	if sha256.Sum256(got) != sha256.Sum256(want) {
		t.Errorf("the downloaded CSV differs from /api/runs/%s/trace?format=csv", id)
	}
	header := string(bytes.SplitN(got, []byte("\n"), 2)[0])
	// The contract's columns, then the 2-D problem's own metrics.
	if !strings.HasPrefix(header, "trace,algo,replication,k,passes,time_s,step,gamma,batch,active,fw_steps,away_steps,drops,cleanups,objective,gap,grad_err,") ||
		!strings.Contains(header, ",extra.x0,extra.x1") || !strings.Contains(header, ",extra.fw_x0,") {
		t.Errorf("CSV header = %q", header)
	}
	lines := bytes.Count(got, []byte("\n"))
	total := 0
	for _, c := range counts {
		total += c
	}
	if lines != total+1 {
		t.Errorf("CSV has %d lines, want %d records + header", lines, total)
	}

	// JSON Lines download: one line per record.
	mark("download JSON Lines")
	step(t, ctx, "download JSON Lines", 10*time.Second, chromedp.Click(chromedp.ID("export-jsonl")))
	jl := waitFile(t, filepath.Join(dl, "fwlab-"+id+".jsonl"), func(b []byte) bool { return bytes.Count(b, []byte("\n")) == total })
	var first struct {
		Trace int    `json:"trace"`
		Algo  string `json:"algo"`
		K     int    `json:"k"`
	}
	if err := json.Unmarshal(bytes.SplitN(jl, []byte("\n"), 2)[0], &first); err != nil || first.Algo == "" {
		t.Errorf("first JSON line: %+v, %v", first, err)
	}

	// PNG of a chart.
	mark("download a chart as PNG")
	step(t, ctx, "download a chart as PNG", 10*time.Second, chromedp.Click(chromedp.CSS(`[data-png=objective]`)))
	pngBytes := waitFile(t, filepath.Join(dl, "fwlab-"+id+"-objective.png"), func(b []byte) bool { return len(b) > 100 })
	img, err := png.Decode(bytes.NewReader(pngBytes))
	if err != nil {
		t.Fatalf("the chart's PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 300 || b.Dy() < 200 {
		t.Errorf("the chart's PNG is %v", b)
	}

	// Log x keeps every chart drawn.
	if !eval[bool](t, ctx, `(() => { const e = document.querySelector('#logx'); e.checked = true; e.dispatchEvent(new Event('change')); return true; })()`) {
		t.Fatal("log-x toggle")
	}
	mark("wait: log-x charts")
	waitFor(t, ctx, "log-x charts", `['`+strings.Join(chartIDs, `','`)+`'].every(k => fwlab.charts[k].logx === true && fwlab.charts[k].drawn > 0)`, `fwlab.charts`, 10*time.Second)

	// The teaching view draws the 2-D problem and plays it step by step.
	mark("wait: the teaching view")
	waitFor(t, ctx, "the teaching view", `fwlab.teach && fwlab.teach.drawn && !document.querySelector('#teaching').hidden`, `fwlab.teach`, 10*time.Second)
	choose(t, ctx, "#teach-speed", "100")
	choose(t, ctx, "#teach-slider", "0")
	mark("play")
	step(t, ctx, "play", 10*time.Second, chromedp.Click(chromedp.ID("teach-play")))
	mark("wait: the teaching view playing")
	waitFor(t, ctx, "the teaching view playing", `fwlab.teach.pos >= 20 && fwlab.teach.active >= 1`, `fwlab.teach`, 20*time.Second)
	mark("pause play")
	step(t, ctx, "pause play", 10*time.Second, chromedp.Click(chromedp.ID("teach-play")))
	shot(t, ctx, dir, "toy-polygon-run.png")
	logShots(t)
}

// TestPaperFigure1Band runs the paper's Figure 1 preset with 3 replications:
// each algorithm is drawn as a median with a min–max band, and the band's
// fill is on the canvas. The GFLASSO panels (true B, task graph) show. The
// server runs one solver goroutine (oneSolver): the nine traces take
// turns, so the band's replications grow together, and the run, still
// far from its limit when the test stops it, costs one core.
func TestPaperFigure1Band(t *testing.T) {
	t.Parallel()
	ts := appWith(t, oneSolver())
	ctx := newBrowser(t)
	dir := t.TempDir()
	step(t, ctx, "load the start page", 20*time.Second, chromedp.Navigate(ts.URL+"/"))
	waitFor(t, ctx, "the start page's script", `document.body.dataset.ready === '1'`, `document.body.outerHTML.slice(0, 300)`, 10*time.Second)
	if !eval[bool](t, ctx, `!!document.querySelector('[data-preset="paper-fig1"]')`) {
		t.Fatal("the start page offers no paper-fig1 preset")
	}
	step(t, ctx, "choose the preset", 10*time.Second, chromedp.Click(chromedp.CSS(`[data-preset="paper-fig1"]`)))
	form := eval[[]string](t, ctx, `[document.querySelector('#problem').value, ...Array.from(document.querySelectorAll('#algo-rows [data-key=algo]')).map(e => e.value), document.querySelector('#run-replications').value]`)
	if strings.Join(form, ",") != "gflasso,bc-ssfw-as,bc-ssfw-as,spg,10" {
		t.Fatalf("the preset filled the form with %v, want gflasso, bc-ssfw-as (slack kept), bc-ssfw-as (slack collapse), spg, 10 replications", form)
	}
	choose(t, ctx, "#run-replications", "3")
	step(t, ctx, "start the run", 20*time.Second, chromedp.Click(chromedp.ID("start-run")))
	waitFor(t, ctx, "the run page", `!!(window.fwlab && fwlab.runId && fwlab.status)`, `location.href`, 30*time.Second)
	if n := eval[int](t, ctx, `fwlab.traces.length`); n != 9 {
		t.Fatalf("%d traces, want 3 algorithms × 3 replications", n)
	}
	// Each group is named by its trace's name, the variant by what it
	// changes, with the parameters of its own spec row and no number: the
	// two bc-ssfw-as rows differ by name.
	labels := eval[[]string](t, ctx, `fwlab.groups.map((g) => g.label)`)
	if len(labels) != 3 || !strings.HasPrefix(labels[0], "bc-ssfw-as (") || !strings.HasPrefix(labels[1], "bc-ssfw-as + slack collapse (") ||
		!strings.HasPrefix(labels[2], "spg") || strings.Contains(strings.Join(labels, "|"), "#") {
		t.Errorf("legend labels %q, want bc-ssfw-as (…), bc-ssfw-as + slack collapse (…), spg…, none numbered", labels)
	}
	// The median and band need every replication's records; wait for a
	// good stretch of them.
	waitFor(t, ctx, "the replication band", `fwlab.charts.objective.band && fwlab.charts.objective.bandRows >= 40`, `fwlab.charts.objective`, 90*time.Second)
	eval[bool](t, ctx, `(fwlab.probeDebug = [], true)`)
	probe := eval[map[string]int](t, ctx, `fwlab.bandProbe('objective')`)
	if probe["samples"] == 0 || probe["filled"]*2 < probe["samples"] {
		t.Errorf("band fill found at %d of %d sampled points between min and max; the others: %s", probe["filled"], probe["samples"], eval[string](t, ctx, `JSON.stringify(fwlab.probeDebug)`))
	}
	t.Logf("band fill found at %d of %d sampled points", probe["filled"], probe["samples"])
	// The band's numbers: median, min and max over the replications of the
	// server's records, index by index.
	id := eval[string](t, ctx, `fwlab.runId`)
	n := eval[int](t, ctx, `fwlab.groupStat(0, 'objective', 0).n`)
	var recs [][]float64 // [replication][index] objective of bc-ssfw-as (NaN: not evaluated)
	for _, line := range bytes.Split(httpGet(t, ts.URL+"/api/runs/"+id+"/trace?format=jsonl"), []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r struct {
			Algo        string   `json:"algo"`
			Replication int      `json:"replication"`
			Objective   *float64 `json:"objective"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		if r.Algo != "bc-ssfw-as" {
			continue
		}
		for len(recs) <= r.Replication {
			recs = append(recs, nil)
		}
		v := math.NaN()
		if r.Objective != nil {
			v = *r.Objective
		}
		recs[r.Replication] = append(recs[r.Replication], v)
	}
	if len(recs) != 3 {
		t.Fatalf("the trace has %d replications of bc-ssfw-as", len(recs))
	}
	type stat struct{ Med, Lo, Hi *float64 }
	stats := eval[[]stat](t, ctx, fmt.Sprintf(`Array.from({length: %d}, (_, i) => fwlab.groupStat(0, 'objective', i))`, n))
	checked := 0
	for i := 0; i < n; i++ {
		var vals []float64
		for _, rep := range recs {
			if i < len(rep) && !math.IsNaN(rep[i]) {
				vals = append(vals, rep[i])
			}
		}
		got := stats[i]
		if len(vals) == 0 {
			if got.Med != nil {
				t.Errorf("record %d: the page has a median %v where no replication was evaluated", i, *got.Med)
			}
			continue
		}
		sort.Float64s(vals)
		med := vals[len(vals)/2]
		if len(vals)%2 == 0 {
			med = (vals[len(vals)/2-1] + vals[len(vals)/2]) / 2
		}
		if got.Med == nil || got.Lo == nil || got.Hi == nil || *got.Med != med || *got.Lo != vals[0] || *got.Hi != vals[len(vals)-1] {
			t.Errorf("record %d: page median/min/max %+v, the server's records give %v/%v/%v", i, got, med, vals[0], vals[len(vals)-1])
			continue
		}
		checked++
	}
	if checked < 5 {
		t.Errorf("only %d indices checked", checked)
	}
	// One legend for the page, none under the charts.
	legend := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#legend-algos .legend-algo')).map(e => e.textContent)`)
	joined := strings.Join(legend, "|")
	if !strings.Contains(joined, "bc-ssfw-as") || !strings.Contains(joined, "median of 3") {
		t.Errorf("page legend = %q, want the median of 3 replications of bc-ssfw-as", joined)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('#charts .u-legend').length`); n != 0 {
		t.Errorf("%d legends under the charts; the page has one legend", n)
	}
	// The traces table: one row per algorithm; a toggle shows the replications.
	if rows := eval[int](t, ctx, `document.querySelectorAll('#legend tbody tr').length`); rows != 3 {
		t.Errorf("traces table has %d rows for 3 algorithms of 3 replications", rows)
	}
	step(t, ctx, "expand the replications", 10*time.Second, chromedp.Click(chromedp.CSS(`#legend tr.group-row button.expand`)))
	waitFor(t, ctx, "the replication rows", `document.querySelectorAll('#legend tbody tr.rep-row').length === 3`, `document.querySelector('#legend tbody').textContent`, 5*time.Second)
	// GFLASSO panels: the true coefficients and the task graph.
	waitFor(t, ctx, "the GFLASSO panels", `!!document.querySelector('[data-heatmap=B_true]') && !!document.querySelector('[data-graph=edges]') && !document.querySelector('#panels').hidden`, `fwlab.panels`, 10*time.Second)
	shot(t, ctx, dir, "paper-fig1-band.png")
	// Stop cancels the run.
	step(t, ctx, "stop", 10*time.Second, chromedp.Click(chromedp.ID("btn-stop")))
	waitFor(t, ctx, "the cancelled run", `fwlab.status === 'cancelled' || fwlab.status === 'done'`, `fwlab.status`, 30*time.Second)

	// Each algorithm's final estimate (its first replication) is drawn as a
	// heat map beside the true B, from the panels of the finished traces.
	waitFor(t, ctx, "the estimated B heat maps", `document.querySelectorAll('canvas[data-heatmap=estimate]').length === 3`,
		`Array.from(document.querySelectorAll('#panel-body figure')).map(f => f.dataset.panel)`, 30*time.Second)
	var inst struct { // the status leaves the instance's panels to their own route too
		BTrue [][]float64 `json:"B_true"`
	}
	if err := json.Unmarshal(httpGet(t, ts.URL+"/api/runs/"+id+"/panels"), &inst); err != nil {
		t.Fatal(err)
	}
	var st struct {
		Traces []struct {
			Trace       int    `json:"trace"`
			Algo        string `json:"algo"`
			Replication int    `json:"replication"`
			Panels      struct {
				B [][]float64 `json:"B"`
			} `json:"panels"`
		} `json:"traces"`
	}
	if err := json.Unmarshal(httpGet(t, ts.URL+"/api/runs/"+id), &st); err != nil {
		t.Fatal(err)
	}
	J, K := len(inst.BTrue), len(inst.BTrue[0])
	want := map[string]string{}
	for i, tr := range st.Traces { // the status leaves the traces' panels to their own route
		if err := json.Unmarshal(httpGet(t, fmt.Sprintf("%s/api/runs/%s/traces/%d/panels", ts.URL, id, tr.Trace)), &st.Traces[i].Panels); err != nil {
			t.Fatal(err)
		}
	}
	for _, tr := range st.Traces {
		if len(tr.Panels.B) != J || len(tr.Panels.B[0]) != K {
			t.Fatalf("trace %d (%s): estimate B is %d×%d, B_true %d×%d", tr.Trace, tr.Algo, len(tr.Panels.B), len(tr.Panels.B[0]), J, K)
		}
		if tr.Replication == 0 {
			want[tr.Algo] = strconv.Itoa(tr.Trace)
		}
	}
	drawn := eval[[]map[string]any](t, ctx, `Array.from(document.querySelectorAll('canvas[data-heatmap=estimate]')).map(c => ({trace: c.dataset.trace, w: c.width, h: c.height, caption: c.closest('figure').querySelector('figcaption').textContent, after: c.closest('figure').previousElementSibling && c.closest('figure').previousElementSibling.dataset.panel}))`)
	bt := eval[map[string]float64](t, ctx, `(() => { const c = document.querySelector('canvas[data-heatmap=B_true]'); return {w: c.width, h: c.height}; })()`)
	algos := []string{"bc-ssfw-as", "bc-ssfw-as + slack collapse", "spg"}
	for i, d := range drawn {
		algo := algos[min(i, 2)]
		if d["trace"] != want[algo] || !strings.Contains(d["caption"].(string), algo) {
			t.Errorf("heat map %d: trace %v, caption %q; want %s's first replication (trace %s)", i, d["trace"], d["caption"], algo, want[algo])
		}
		if d["w"] != bt["w"] || d["h"] != bt["h"] {
			t.Errorf("heat map %d is %v×%v pixels, B_true %v×%v", i, d["w"], d["h"], bt["w"], bt["h"])
		}
	}
	if len(drawn) == 3 && (drawn[0]["after"] != "B_true" || drawn[1]["after"] != "B@"+want["bc-ssfw-as"] || drawn[2]["after"] != "B@"+want["bc-ssfw-as + slack collapse"]) {
		t.Errorf("the estimates are not beside the true B: %v", drawn)
	}
	shot(t, ctx, dir, "paper-fig1-estimates.png")
}

// TestUploadThroughPage: the file pickers of the lasso's x and y upload a
// small CSV pair, a malformed file is refused with its line and column under
// the field, and a run starts on the uploaded data.
func TestUploadThroughPage(t *testing.T) {
	t.Parallel()
	ts := app(t)
	ctx := newBrowser(t)
	dir := t.TempDir()
	files := map[string]string{
		"x.csv":   "1,0,2\n0,1,1\n1,1,0\n2,0,1\n0,2,2\n1,2,1\n",
		"y.csv":   "3\n1\n2\n4\n4\n3\n",
		"bad.csv": "1\n2\nthree\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	step(t, ctx, "load the start page", 20*time.Second, chromedp.Navigate(ts.URL+"/"))
	waitFor(t, ctx, "the start page's script", `document.body.dataset.ready === '1'`, `document.body.outerHTML.slice(0, 300)`, 10*time.Second)
	choose(t, ctx, "#problem", "lasso")
	if f := eval[string](t, ctx, `document.querySelector('#p-lasso-x-file').dataset.format`); f != "csv" {
		t.Fatalf("the x picker uploads as %q, want csv", f)
	}
	// A malformed file: the server's error under the field, which stays empty.
	step(t, ctx, "choose bad.csv for y", 10*time.Second, chromedp.SetUploadFiles(chromedp.ID("p-lasso-y-file"), []string{filepath.Join(dir, "bad.csv")}))
	waitFor(t, ctx, "the upload error", `document.querySelector('#p-lasso-y-file').dataset.state === 'rejected'`, `document.querySelector('[data-error-for="params.y"]').textContent`, 20*time.Second)
	if msg := eval[string](t, ctx, `document.querySelector('[data-error-for="params.y"]').textContent`); !strings.HasPrefix(msg, "bad.csv:3:1: ") {
		t.Errorf("the error under y is %q, want bad.csv:3:1: …", msg)
	}
	if v := eval[string](t, ctx, `document.querySelector('#p-lasso-y').value`); v != "" {
		t.Errorf("a refused upload filled y with %q", v)
	}
	paths := map[string]string{}
	for _, f := range []string{"x", "y"} {
		step(t, ctx, "choose "+f+".csv", 10*time.Second, chromedp.SetUploadFiles(chromedp.ID("p-lasso-"+f+"-file"), []string{filepath.Join(dir, f+".csv")}))
		waitFor(t, ctx, "the upload of "+f, fmt.Sprintf(`document.querySelector('#p-lasso-%s-file').dataset.state === 'done'`, f),
			fmt.Sprintf(`[document.querySelector('#p-lasso-%s-file').dataset.state, document.querySelector('[data-error-for="params.%s"]').textContent]`, f, f), 20*time.Second)
		paths[f] = eval[string](t, ctx, fmt.Sprintf(`document.querySelector('#p-lasso-%s').value`, f))
		// the field names the upload by the SHA-256 of its content
		sum := sha256.Sum256([]byte(files[f+".csv"]))
		if want := "upload:" + hex.EncodeToString(sum[:]); paths[f] != want {
			t.Fatalf("%s: the field holds %q, want %q", f, paths[f], want)
		}
		if st := eval[string](t, ctx, fmt.Sprintf(`document.querySelector('[data-upload-status="params.%s"]').textContent`, f)); !strings.Contains(st, f+".csv") {
			t.Errorf("%s: upload status %q", f, st)
		}
	}
	if msg := eval[string](t, ctx, `document.querySelector('[data-error-for="params.y"]').textContent`); msg != "" {
		t.Errorf("the error under y stayed after a good upload: %q", msg)
	}
	shot(t, ctx, dir, "upload-form.png")
	step(t, ctx, "start the run", 20*time.Second, chromedp.Click(chromedp.ID("start-run")))
	waitFor(t, ctx, "the run page", `!!(window.fwlab && fwlab.runId && fwlab.status)`, `[location.href, document.querySelector('#form-error') && document.querySelector('#form-error').textContent]`, 30*time.Second)
	id := eval[string](t, ctx, `fwlab.runId`)
	var st struct {
		Spec struct {
			Params map[string]string `json:"params"`
		} `json:"spec"`
		Info struct {
			Samples int `json:"samples"`
		} `json:"info"`
	}
	if err := json.Unmarshal(httpGet(t, ts.URL+"/api/runs/"+id), &st); err != nil {
		t.Fatal(err)
	}
	var panels map[string]any
	if err := json.Unmarshal(httpGet(t, ts.URL+"/api/runs/"+id+"/panels"), &panels); err != nil {
		t.Fatal(err)
	}
	if st.Spec.Params["x"] != paths["x"] || st.Spec.Params["y"] != paths["y"] || st.Info.Samples != 6 || panels["data"] != "imported" {
		t.Fatalf("the run's spec params %v, info %+v, panels %v: want the uploaded pair, 6 imported samples", st.Spec.Params, st.Info, panels)
	}
	waitFor(t, ctx, "records", `fwlab.traces.length === 2 && fwlab.traces.every(t => t.n > 0)`, `fwlab.traces.map(t => t.n)`, 30*time.Second)
	shot(t, ctx, dir, "upload-run.png")
}

// TestSSVMDecodedWords: a finished structural SVM run shows, per algorithm,
// the decoded test words against the truth with the wrong letters marked,
// as the server decoded them.
func TestSSVMDecodedWords(t *testing.T) {
	t.Parallel()
	ts := app(t)
	ctx := newBrowser(t)
	sp := `{"problem":"ssvm-chain","params":{"train":"30","test":"12","lambda":"0.1"},"algorithms":[{"algo":"bcfw-as"},{"algo":"bcfw"}],"seed":4,"iters":150}`
	res, err := http.Post(ts.URL+"/api/runs", "application/json", strings.NewReader(sp))
	if err != nil {
		t.Fatal(err)
	}
	var created struct{ ID string }
	err = json.NewDecoder(res.Body).Decode(&created)
	res.Body.Close()
	if err != nil || res.StatusCode != 201 {
		t.Fatalf("POST: %d %v", res.StatusCode, err)
	}
	step(t, ctx, "open the run page", 20*time.Second, chromedp.Navigate(ts.URL+"/runs/"+created.ID))
	waitFor(t, ctx, "the decoded words", `fwlab.done && document.querySelectorAll('table[data-decoded]').length === 1 && document.querySelectorAll('table[data-decoded] thead th').length === 3`,
		`[fwlab.status, Array.from(document.querySelectorAll('#panel-body figure')).map(f => f.dataset.panel)]`, 60*time.Second)
	type word struct {
		Truth     string `json:"truth"`
		Predicted string `json:"predicted"`
		Errors    int    `json:"errors"`
	}
	var st struct {
		Traces []struct {
			Trace  int `json:"trace"`
			Panels struct {
				Decoded []word `json:"decoded"`
			} `json:"panels"`
		} `json:"traces"`
	}
	if err := json.Unmarshal(httpGet(t, ts.URL+"/api/runs/"+created.ID), &st); err != nil {
		t.Fatal(err)
	}
	for i, tr := range st.Traces { // the status leaves the traces' panels to their own route
		if err := json.Unmarshal(httpGet(t, fmt.Sprintf("%s/api/runs/%s/traces/%d/panels", ts.URL, created.ID, tr.Trace)), &st.Traces[i].Panels); err != nil {
			t.Fatal(err)
		}
	}
	// One table: a row per distinct word, a column per algorithm.
	rows := eval[[]map[string]any](t, ctx, `Array.from(document.querySelectorAll('table[data-decoded] tbody tr')).map(r => ({truth: r.cells[0].textContent.replace(/ ×\d+$/, ''), cells: Array.from(r.cells).slice(1).map(c => ({text: c.textContent, marked: c.querySelectorAll('.wrong').length}))}))`)
	distinct := map[string]bool{}
	for _, tr := range st.Traces {
		for _, w := range tr.Panels.Decoded {
			distinct[w.Truth] = true
		}
	}
	if len(rows) != len(distinct) {
		t.Fatalf("%d rows drawn for %d distinct decoded words", len(rows), len(distinct))
	}
	seen := map[string]bool{}
	for _, r := range rows {
		if seen[r["truth"].(string)] {
			t.Errorf("the word %q is shown twice", r["truth"])
		}
		seen[r["truth"].(string)] = true
	}
	for j, tr := range st.Traces {
		if len(tr.Panels.Decoded) != 8 {
			t.Fatalf("trace %d: the server decoded %d words, want 8", tr.Trace, len(tr.Panels.Decoded))
		}
		for _, w := range tr.Panels.Decoded {
			found := false
			for _, r := range rows {
				if r["truth"] != w.Truth {
					continue
				}
				c := r["cells"].([]any)[j].(map[string]any)
				found = c["text"] == w.Predicted && c["marked"] == float64(w.Errors)
			}
			if !found {
				t.Errorf("trace %d: the word %+v is not drawn as decoded", tr.Trace, w)
			}
		}
	}
	shot(t, ctx, t.TempDir(), "ssvm-decoded.png")
}

// TestStartPageRules: the client-side rule messages are the server's, a
// rule only the server checks is shown at its field, and the schedule
// preview uses the solver's formula. A spec in a run page's URL with an
// unknown id is submitted again.
func TestStartPageRules(t *testing.T) {
	t.Parallel()
	ts := app(t)
	ctx := newBrowser(t)
	step(t, ctx, "load the start page", 20*time.Second, chromedp.Navigate(ts.URL+"/"))
	waitFor(t, ctx, "the start page's script", `document.body.dataset.ready === '1'`, `document.body.outerHTML.slice(0, 300)`, 10*time.Second)
	choose(t, ctx, "#problem", "toy-polygon")

	// serverError posts a spec and returns the server's error and field.
	serverError := func(spec string) (string, string) {
		t.Helper()
		res, err := http.Post(ts.URL+"/api/runs", "application/json", strings.NewReader(spec))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var e struct{ Error, Field string }
		if err := json.NewDecoder(res.Body).Decode(&e); err != nil || res.StatusCode != 400 {
			t.Fatalf("POST %s: status %d, %v", spec, res.StatusCode, err)
		}
		return e.Error, e.Field
	}
	errorAt := func(field string) string {
		return eval[string](t, ctx, fmt.Sprintf(`(Array.from(document.querySelectorAll('[data-error-for]')).find(e => e.dataset.errorFor === %q) || {}).textContent || ''`, field))
	}
	cases := []struct {
		sel, value, spec string
	}{
		{"#p-toy-polygon-vertices", "2", `{"problem":"toy-polygon","params":{"vertices":"2"},"algorithms":[{"algo":"ssfw-as"}]}`},
		{"#p-toy-polygon-cond", "0.5", `{"problem":"toy-polygon","params":{"cond":"0.5"},"algorithms":[{"algo":"ssfw-as"}]}`},
		{"#algo-rows .algo-row:first-child [data-key=rho]", "1.5", `{"problem":"toy-polygon","algorithms":[{"algo":"ssfw-as","rho":1.5}]}`},
		{"#algo-rows .algo-row:first-child [data-key=L]", "-3", `{"problem":"toy-polygon","algorithms":[{"algo":"ssfw-as","L":"-3"}]}`},
		{"#run-replications", "101", `{"problem":"toy-polygon","algorithms":[{"algo":"ssfw-as"}],"replications":101}`},
		{"#run-eval_every", "-1", `{"problem":"toy-polygon","algorithms":[{"algo":"ssfw-as"}],"eval_every":-1}`},
	}
	for _, tc := range cases {
		msg, field := serverError(tc.spec)
		choose(t, ctx, tc.sel, tc.value)
		if got := errorAt(field); got != msg {
			t.Errorf("%s = %s: the page says %q at %s, the server %q", tc.sel, tc.value, got, field, msg)
		}
		// Submitting is refused in the page: no navigation, the message stays.
		step(t, ctx, "submit", 10*time.Second, chromedp.Click(chromedp.ID("start-run")))
		time.Sleep(300 * time.Millisecond)
		if p := eval[string](t, ctx, `location.pathname`); p != "/" {
			t.Fatalf("an invalid form was submitted (now at %s)", p)
		}
		if got := errorAt(field); got != msg {
			t.Errorf("after submit: %q at %s, want %q", got, field, msg)
		}
		step(t, ctx, "reload", 20*time.Second, chromedp.Navigate(ts.URL+"/"))
		waitFor(t, ctx, "the start page's script", `document.body.dataset.ready === '1'`, ``, 10*time.Second)
		choose(t, ctx, "#problem", "toy-polygon")
	}

	// Collinear points pass the parameter rule but not the polygon's
	// construction: the server's message appears at the points field.
	choose(t, ctx, "#p-toy-polygon-points", "0,0;1,1;2,2")
	msg, field := serverError(`{"problem":"toy-polygon","params":{"points":"0,0;1,1;2,2"},"algorithms":[{"algo":"ssfw-as"},{"algo":"fista"}]}`)
	step(t, ctx, "submit", 10*time.Second, chromedp.Click(chromedp.ID("start-run")))
	waitFor(t, ctx, "the server's message", fmt.Sprintf(`(Array.from(document.querySelectorAll('[data-error-for]')).find(e => e.dataset.errorFor === %q) || {}).textContent === %q`, field, msg),
		`Array.from(document.querySelectorAll('.err')).map(e => e.textContent).filter(x => x)`, 10*time.Second)

	// The preview's m_k is the solver's.
	type sched struct {
		Kind   string  `json:"kind"`
		Rho    float64 `json:"rho"`
		Alpha  float64 `json:"alpha"`
		M0     int     `json:"m0"`
		Growth float64 `json:"growth"`
	}
	scheds := []sched{{"paper", 0.1, 0.5, 0, 0}, {"paper", 0.01, 0.9, 0, 0}, {"paper", 0.9, 0.1, 0, 0}, {"constant", 0, 0, 7, 0}, {"geometric", 0, 0, 3, 1.1}, {"geometric", 0, 0, 1, 2}, {"full", 0, 0, 0, 0}}
	for _, s := range scheds {
		for _, n := range []int{1, 2, 50, 1000, 100000} {
			js, _ := json.Marshal(s)
			got := eval[[]int](t, ctx, fmt.Sprintf(`[1, 2, 3, 10, 57, 300, 5000].map(k => fwlab.scheduleSize(%s, k, %d))`, js, n))
			sc := solver.Schedule{Kind: s.Kind, Rho: s.Rho, Alpha: s.Alpha, M0: s.M0, Growth: s.Growth}
			for i, k := range []int{1, 2, 3, 10, 57, 300, 5000} {
				if want := sc.Size(k, n); got[i] != want {
					t.Errorf("%+v: m_%d over n = %d: page %d, solver %d", s, k, n, got[i], want)
				}
			}
		}
	}

	// A run link with an unknown id and its spec reproduces the run once
	// the user presses Start.
	spec := `{"problem":"toy-polygon","algorithms":[{"algo":"afw"}],"iters":50,"seed":3}`
	step(t, ctx, "open a run link", 20*time.Second, chromedp.Navigate(ts.URL+"/runs/no-such-run?spec="+url.QueryEscape(spec)))
	waitFor(t, ctx, "the Start button", `fwlab.awaitingStart === true`, `document.querySelector('#run-page').dataset.status`, 20*time.Second)
	step(t, ctx, "press Start", 10*time.Second, chromedp.Click(chromedp.ID("btn-start-spec")))
	waitFor(t, ctx, "the resubmitted run", `!!fwlab.resubmitted && fwlab.done === true`, `[fwlab.resubmitted, fwlab.status, location.href]`, 30*time.Second)
	id := eval[string](t, ctx, `fwlab.resubmitted`)
	if p := eval[string](t, ctx, `location.pathname`); p != "/runs/"+id {
		t.Errorf("after resubmission the page is at %s, want /runs/%s", p, id)
	}
	var st struct {
		Spec struct {
			Problem string `json:"problem"`
			Seed    int64  `json:"seed"`
			Iters   int    `json:"iters"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(httpGet(t, ts.URL+"/api/runs/"+id), &st); err != nil {
		t.Fatal(err)
	}
	if st.Spec.Problem != "toy-polygon" || st.Spec.Seed != 3 || st.Spec.Iters != 50 {
		t.Errorf("resubmitted spec = %+v", st.Spec)
	}

	// The start page lists it among the recent runs.
	step(t, ctx, "back to the start page", 20*time.Second, chromedp.Navigate(ts.URL+"/"))
	waitFor(t, ctx, "the recent runs", fmt.Sprintf(`!!document.querySelector('#recent-runs:not([hidden]) tr[data-run=%q] a[href="/runs/%s"]')`, id, id), `document.querySelector('#recent-runs').outerHTML`, 10*time.Second)
}

// TestBrowserKeepsUp streams 10⁵ records per series (fista on the toy
// polygon runs 10⁵ fast iterations): the page ends with every record, draws
// a decimated view of at most a few thousand rows per chart, and reports
// where its time went.
func TestBrowserKeepsUp(t *testing.T) {
	t.Parallel()
	ts := app(t)
	ctx := newBrowser(t)
	const iters = 100000
	spec := fmt.Sprintf(`{"problem":"toy-polygon","algorithms":[{"algo":"fista"},{"algo":"pgd"}],"iters":%d,"eval_every":1}`, iters)
	res, err := http.Post(ts.URL+"/api/runs", "application/json", strings.NewReader(spec))
	if err != nil {
		t.Fatal(err)
	}
	var created struct{ ID string }
	if err := json.NewDecoder(res.Body).Decode(&created); err != nil || res.StatusCode != 201 {
		t.Fatalf("POST: %d %v", res.StatusCode, err)
	}
	res.Body.Close()
	start := time.Now()
	step(t, ctx, "open the run page", 20*time.Second, chromedp.Navigate(ts.URL+"/runs/"+created.ID))
	waitFor(t, ctx, "the end of the run", `fwlab.done === true`, `[fwlab.status, fwlab.traces.map(t => t.n)]`, 120*time.Second)
	elapsed := time.Since(start)
	counts := eval[[]int](t, ctx, `fwlab.traces.map(t => t.n)`)
	for i, n := range counts {
		if n != iters+1 {
			t.Errorf("trace %d: the page holds %d records, want %d", i, n, iters+1)
		}
	}
	waitFor(t, ctx, "the final draw", `fwlab.charts.gap.points >= 2*`+fmt.Sprint(iters), `fwlab.charts.gap`, 10*time.Second)
	drawn := eval[map[string]float64](t, ctx, `({drawn: fwlab.charts.gap.drawn, points: fwlab.charts.gap.points})`)
	if drawn["drawn"] <= 0 || drawn["drawn"] > 4*1000+200 {
		t.Errorf("the gap chart draws %v rows for %v points; decimation should keep it within a few thousand", drawn["drawn"], drawn["points"])
	}
	t.Logf("%d records in %.1fs from opening the page to the end; page time %s; gap chart %v of %v points drawn",
		2*(iters+1), elapsed.Seconds(), eval[string](t, ctx, `JSON.stringify(fwlab.perf)`), drawn["drawn"], drawn["points"])
}

// TestCatalogueMatchesAPI: the start page's embedded catalogue (from which
// the page checks rules) says the same as the API's GET /api/scenarios for
// every problem parameter: name, kind, default and rule text.
func TestCatalogueMatchesAPI(t *testing.T) {
	t.Parallel()
	ts := app(t)
	var api struct {
		Problems []struct {
			Name   string `json:"name"`
			Params []struct {
				Name, Kind, Default, Rule string
			} `json:"params"`
		} `json:"problems"`
	}
	if err := json.Unmarshal(httpGet(t, ts.URL+"/api/scenarios"), &api); err != nil {
		t.Fatal(err)
	}
	page := web.Catalogue(scenarios.All(), scenarios.Presets())
	mine := map[string]string{}
	for _, g := range page.Groups {
		for _, p := range g.Problems {
			for _, q := range p.Params {
				mine[p.Name+"/"+q.Name] = q.Kind + "|" + q.Default + "|" + q.Rule
			}
		}
	}
	n := 0
	for _, p := range api.Problems {
		for _, q := range p.Params {
			key := p.Name + "/" + q.Name
			if got, want := mine[key], q.Kind+"|"+q.Default+"|"+q.Rule; got != want {
				t.Errorf("%s: page %q, API %q", key, got, want)
			}
			delete(mine, key)
			n++
		}
	}
	for key := range mine {
		t.Errorf("%s is on the page but not in the API's catalogue", key)
	}
	if n == 0 {
		t.Error("the API lists no parameters")
	}
}

// TestStartPagePreview: choosing GFLASSO shows the size of its instance as
// the server measures it (POST /api/preview), "of q = … blocks" beside r,
// r > q flagged with the server's rule before submission, q following the
// threshold, and a parameter the server refuses named under its field.
func TestStartPagePreview(t *testing.T) {
	t.Parallel()
	ts := app(t)
	ctx := newBrowser(t)
	step(t, ctx, "load the start page", 20*time.Second, chromedp.Navigate(ts.URL+"/"))
	waitFor(t, ctx, "the start page's script", `document.body.dataset.ready === '1'`, `document.body.outerHTML.slice(0, 300)`, 10*time.Second)
	// Every uncaught script error is collected and fails the test at the end.
	eval[bool](t, ctx, `(window.__errs = [], window.addEventListener('error', e => __errs.push(e.message + ' at line ' + e.lineno)),
		window.addEventListener('unhandledrejection', e => __errs.push(String(e.reason && e.reason.stack || e.reason))), true)`)
	defer func() {
		if errs := eval[[]string](t, ctx, `window.__errs || []`); len(errs) > 0 {
			t.Errorf("script errors on the start page: %q", errs)
		}
	}()

	// ask posts a preview request to the server.
	type answer struct {
		Dim     int      `json:"dim"`
		Samples int      `json:"samples"`
		Blocks  int      `json:"blocks"`
		FStar   *float64 `json:"fstar"`
		Error   string   `json:"error"`
		Field   string   `json:"field"`
	}
	ask := func(body string) (int, answer) {
		t.Helper()
		res, err := http.Post(ts.URL+"/api/preview", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var a answer
		if err := json.NewDecoder(res.Body).Decode(&a); err != nil {
			t.Fatalf("preview %s: %d: %v", body, res.StatusCode, err)
		}
		return res.StatusCode, a
	}
	errorAt := func(field string) string {
		return eval[string](t, ctx, fmt.Sprintf(`(Array.from(document.querySelectorAll('[data-error-for]')).find(e => e.dataset.errorFor === %q && !e.closest('[hidden]')) || {}).textContent || ''`, field))
	}
	summary := func() string { return eval[string](t, ctx, `document.querySelector('#instance-summary').textContent`) }
	// waitQ waits until the page shows the server's answer to the page's
	// own current request, and returns it.
	waitQ := func(what string) answer {
		t.Helper()
		waitFor(t, ctx, what, `document.querySelector('#instance-summary').dataset.state === 'ok' && !!fwlab.preview && !!fwlab.preview.answer`,
			`[document.querySelector('#instance-summary').dataset.state, document.querySelector('#instance-summary').textContent, fwlab.preview]`, 60*time.Second)
		req := eval[string](t, ctx, `JSON.stringify(fwlab.preview.request)`)
		code, a := ask(req)
		if code != 200 {
			t.Fatalf("%s: the server refuses the page's request %s: %+v", what, req, a)
		}
		want := fmt.Sprintf("p = %d variables · n = %d samples · q = %d %s · F* ", a.Dim, a.Samples, a.Blocks, map[bool]string{true: "block", false: "blocks"}[a.Blocks == 1])
		if got := summary(); !strings.HasPrefix(got, want) {
			t.Errorf("%s: the page says %q, the server's answer to %s is %+v", what, got, req, a)
		}
		return a
	}

	choose(t, ctx, "#problem", "gflasso")
	// The page asks after a pause; until then it shows the answer about
	// the problem before.
	waitFor(t, ctx, "the GFLASSO preview", `!!fwlab.preview && fwlab.preview.request.problem === 'gflasso' && !!fwlab.preview.answer`,
		`[document.querySelector('#instance-summary').textContent, fwlab.preview]`, 60*time.Second)
	a := waitQ("the GFLASSO preview")
	if req := eval[string](t, ctx, `JSON.stringify(fwlab.preview.request)`); req != `{"problem":"gflasso","params":{},"seed":0}` {
		t.Errorf("the page asked %s", req)
	}
	t.Logf("gflasso defaults: %s", summary())

	// The bc-ssfw-as row shows "of q = … blocks" beside r.
	idx := eval[int](t, ctx, `Array.from(document.querySelectorAll('#algo-rows .algo-row')).findIndex(r => r.querySelector('[data-key=algo]').value === 'bc-ssfw-as')`)
	if idx < 0 {
		t.Fatal("no bc-ssfw-as row among GFLASSO's default algorithms")
	}
	row := fmt.Sprintf("#algo-rows .algo-row:nth-child(%d)", idx+1)
	qOf := func() string {
		return eval[string](t, ctx, `document.querySelector(`+strconv.Quote(row+" [data-q-of]")+`).textContent`)
	}
	if got, want := qOf(), fmt.Sprintf("of q = %d blocks", a.Blocks); got != want && !(a.Blocks == 1 && got == "of q = 1 block") {
		t.Errorf("beside r: %q, want %q", got, want)
	}

	// r above q: the page states the server's rule under r and refuses to
	// submit.
	r := a.Blocks + 1
	choose(t, ctx, row+" [data-key=r]", strconv.Itoa(r))
	field := fmt.Sprintf("algorithms[%d].r", idx)
	runSpec := fmt.Sprintf(`{"problem":"gflasso","algorithms":[{"algo":"bc-ssfw-as","r":%d}],"iters":5}`, r)
	res, err := http.Post(ts.URL+"/api/runs", "application/json", strings.NewReader(runSpec))
	if err != nil {
		t.Fatal(err)
	}
	var se struct{ Error, Field string }
	_ = json.NewDecoder(res.Body).Decode(&se)
	res.Body.Close()
	if res.StatusCode != 400 {
		t.Fatalf("the server accepted r = %d > q = %d: %d", r, a.Blocks, res.StatusCode)
	}
	want := fmt.Sprintf("must be at most the number of blocks q = %d, got %d", a.Blocks, r)
	if got := errorAt(field); got != want || got != se.Error {
		t.Errorf("r = %d: the page says %q at %s; want %q; the server says %q at %s", r, got, field, want, se.Error, se.Field)
	}
	step(t, ctx, "submit", 10*time.Second, chromedp.Click(chromedp.ID("start-run")))
	time.Sleep(300 * time.Millisecond)
	if p := eval[string](t, ctx, `location.pathname`); p != "/" {
		t.Fatalf("a form with r > q was submitted (now at %s)", p)
	}
	if got := errorAt(field); got != want {
		t.Errorf("after submit: %q at %s, want %q", got, field, want)
	}

	// The other rules still hold beside the preview (a non-positive L).
	choose(t, ctx, row+" [data-key=L]", "-3")
	if got, want := errorAt(fmt.Sprintf("algorithms[%d].L", idx)), `must be a positive number or "auto", got "-3"`; got != want {
		t.Errorf("L = -3: %q, want %q", got, want)
	}
	choose(t, ctx, row+" [data-key=L]", "auto")

	// A threshold that changes the task graph's component count: q follows,
	// and the rule is checked against the new q.
	thr := ""
	var b answer
	for _, th := range []string{"0.95", "0.2", "0.9", "0.5"} {
		code, x := ask(`{"problem":"gflasso","params":{"threshold":"` + th + `"},"seed":0}`)
		if code == 200 && x.Blocks != a.Blocks {
			thr, b = th, x
			break
		}
	}
	if thr == "" {
		t.Fatalf("no threshold changes the component count of %d", a.Blocks)
	}
	choose(t, ctx, "#p-gflasso-threshold", thr)
	waitFor(t, ctx, "q to follow the threshold", fmt.Sprintf(`document.querySelector('#instance-summary').dataset.state === 'ok' && document.querySelector('#instance-summary').dataset.q === '%d'`, b.Blocks),
		`[document.querySelector('#instance-summary').textContent, fwlab.preview]`, 60*time.Second)
	if got := waitQ("the new preview"); got.Blocks != b.Blocks {
		t.Errorf("threshold %s: q = %d, want %d", thr, got.Blocks, b.Blocks)
	}
	t.Logf("threshold %s: %s", thr, summary())
	if got, want := qOf(), fmt.Sprintf("of q = %d %s", b.Blocks, map[bool]string{true: "block", false: "blocks"}[b.Blocks == 1]); got != want {
		t.Errorf("beside r after the threshold: %q, want %q", got, want)
	}
	wantR := ""
	if r > b.Blocks {
		wantR = fmt.Sprintf("must be at most the number of blocks q = %d, got %d", b.Blocks, r)
	}
	if got := errorAt(field); got != wantR {
		t.Errorf("r = %d with q = %d: the page says %q, want %q", r, b.Blocks, got, wantR)
	}

	// A data file x passes the page's rules; the server, which has no data
	// directory here, refuses it under x (it reads files only from its
	// data folders), and the summary says the instance cannot be built.
	code, ye := ask(`{"problem":"gflasso","params":{"threshold":"` + thr + `","x":"x.csv"},"seed":0}`)
	if code != 400 || ye.Field != "params.x" {
		t.Fatalf("x outside the data folders: %d %+v", code, ye)
	}
	choose(t, ctx, "#p-gflasso-x", "x.csv")
	waitFor(t, ctx, "the server's message under x", fmt.Sprintf(`(Array.from(document.querySelectorAll('[data-error-for]')).find(e => e.dataset.errorFor === 'params.x' && !e.closest('[hidden]')) || {}).textContent === %q`, ye.Error),
		`[document.querySelector('#instance-summary').textContent, fwlab.preview]`, 30*time.Second)
	if st := eval[string](t, ctx, `document.querySelector('#instance-summary').dataset.state`); st != "error" {
		t.Errorf("summary state %q after a refused preview, want error (%q)", st, summary())
	}
	// Clearing x brings the preview back.
	choose(t, ctx, "#p-gflasso-x", "")
	waitQ("the preview after clearing x")
	if got := errorAt("params.y"); got != "" {
		t.Errorf("the message under y stays after x was cleared: %q", got)
	}
	// A problem without a sample-count parameter: the schedule preview
	// takes n from the measured instance (svm-dual's samples are its
	// features), in rows already there and in rows added later.
	choose(t, ctx, "#problem", "svm-dual")
	waitFor(t, ctx, "the svm-dual preview", `!!fwlab.preview && fwlab.preview.request.problem === 'svm-dual' && !!fwlab.preview.answer`,
		`[document.querySelector('#instance-summary').textContent, fwlab.preview]`, 60*time.Second)
	sv := waitQ("the svm-dual preview")
	eval[bool](t, ctx, `(document.querySelector('#add-algo').click(), true)`)
	ns := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#algo-rows .algo-row')).map(r => r.querySelector('[data-key=preview_n]').value)`)
	if len(ns) < 2 {
		t.Fatalf("rows %v", ns)
	}
	for i, n := range ns {
		if n != strconv.Itoa(sv.Samples) {
			t.Errorf("row %d: n for the preview %s, the instance has %d samples", i, n, sv.Samples)
		}
	}
	capt := eval[string](t, ctx, `document.querySelector('#algo-rows .algo-row .preview-caption').textContent`)
	if !strings.Contains(capt, fmt.Sprintf("(n = %d)", sv.Samples)) {
		t.Errorf("schedule caption %q, want n = %d", capt, sv.Samples)
	}
	shot(t, ctx, t.TempDir(), "start-preview.png")
}
