package e2e

// Browser tests of the history, compare and sweep pages against the real
// server with a run store. A server that does not have the store's API
// yet makes them skip, naming what they wait for.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fwlab/fwlab/internal/server"
	"github.com/fwlab/fwlab/internal/store"
)

// storeServer starts the real server on the run store in the file db and
// returns its URL and a stop function that closes the server and then the
// store.
func storeServer(t *testing.T, db string) (string, func()) {
	t.Helper()
	st, err := store.Open(db)
	if err != nil {
		t.Fatalf("store.Open(%s): %v", db, err)
	}
	o := server.Options{}
	o.Session.Store = st
	srv, err := server.New(o)
	if err != nil {
		_ = st.Close()
		t.Fatalf("server.New: %v", err)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Security-Policy", testCSP)
		srv.ServeHTTP(w, req)
	}))
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		ts.Close()
		_ = srv.Close()
		_ = st.Close()
	}
	t.Cleanup(stop)
	// The store's listing: {"runs": […], "total": N, …}.
	var list map[string]json.RawMessage
	if err := json.Unmarshal(httpGet(t, ts.URL+"/api/runs"), &list); err != nil || list["runs"] == nil {
		stop()
		t.Fatalf("GET /api/runs is not the store's listing {runs, total, …}: %v", err)
	}
	return ts.URL, stop
}

// waitRunEnded polls GET /api/runs/{id} until the run has ended.
func waitRunEnded(t *testing.T, base, id string) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		var st struct{ Status string }
		_ = json.Unmarshal(httpGet(t, base+"/api/runs/"+id), &st)
		switch st.Status {
		case "done", "failed", "cancelled", "interrupted":
			return st.Status
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("run %s did not end", id)
	return ""
}

const quickToy = `{"problem":"toy-polygon","algorithms":[{"algo":"afw"},{"algo":"fista"}],"iters":60}`

// TestHistoryFilterAndDelete: three stored runs listed newest first; the
// problem filter keeps the one lasso run; deleting one run after the
// confirmation removes it from the list and from the server.
func TestHistoryFilterAndDelete(t *testing.T) {
	t.Parallel()
	onBothStores(t, testHistoryFilterAndDelete)
}

func testHistoryFilterAndDelete(t *testing.T, be *backend) {
	base := be.url
	a := postRun(t, base, quickToy)
	waitRunEnded(t, base, a)
	b := postRun(t, base, `{"problem":"lasso","algorithms":[{"algo":"ssfw-as"}],"iters":40}`)
	waitRunEnded(t, base, b)
	be.checkRanHere(t, b)
	c := postRun(t, base, quickToy)
	waitRunEnded(t, base, c)
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	step(t, ctx, "open the history", 20*time.Second, chromedp.Navigate(base+"/runs"))
	waitFor(t, ctx, "the list", `fwlab.history && fwlab.history.rows.length === 3`, `[document.querySelector('#history-error').textContent, fwlab.history]`, 10*time.Second)
	if got := eval[string](t, ctx, `fwlab.history.rows.map(r => r.id).join(',')`); got != strings.Join([]string{c, b, a}, ",") {
		t.Errorf("rows %s, want newest first %s,%s,%s", got, c, b, a)
	}
	waitFor(t, ctx, "the problems offered", `Array.from(document.querySelectorAll('#f-problem option')).some(o => o.value === 'lasso')`, `document.querySelector('#f-problem').innerHTML`, 10*time.Second)
	choose(t, ctx, "#f-problem", "lasso")
	waitFor(t, ctx, "the lasso run only", fmt.Sprintf(`fwlab.history.rows.map(r => r.id).join(',') === %q`, b), `fwlab.history.rows`, 10*time.Second)
	choose(t, ctx, "#f-problem", "")
	waitFor(t, ctx, "every run", `fwlab.history.rows.length === 3`, `fwlab.history.rows`, 10*time.Second)
	step(t, ctx, "delete "+a, 5*time.Second, chromedp.Click(chromedp.CSS(`tr[data-run="`+a+`"] td:last-child button`)))
	step(t, ctx, "confirm", 5*time.Second, chromedp.Click(chromedp.ID("confirm-yes")))
	waitFor(t, ctx, "two runs left", fmt.Sprintf(`fwlab.history.rows.map(r => r.id).join(',') === %q`, c+","+b), `fwlab.history.rows`, 10*time.Second)
	res, err := http.Get(base + "/api/runs/" + a)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 404 {
		t.Errorf("GET a deleted run: %d, want 404", res.StatusCode)
	}
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}

// TestCompareOverlaysTwoRuns: two stored runs on the compare page: each
// algorithm of each run is a series of the charts, holding every record.
func TestCompareOverlaysTwoRuns(t *testing.T) {
	t.Parallel()
	onBothStores(t, testCompareOverlaysTwoRuns)
}

func testCompareOverlaysTwoRuns(t *testing.T, be *backend) {
	base := be.url
	a := postRun(t, base, quickToy)
	waitRunEnded(t, base, a)
	b := postRun(t, base, `{"problem":"toy-polygon","algorithms":[{"algo":"afw"},{"algo":"fista"}],"iters":90}`)
	waitRunEnded(t, base, b)
	be.checkRanHere(t, a)
	be.checkRanHere(t, b)
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	step(t, ctx, "open the compare page", 20*time.Second, chromedp.Navigate(base+"/compare?runs="+a+","+b))
	waitFor(t, ctx, "the overlay", `fwlab.compare && fwlab.compare.loaded && fwlab.charts.objective && fwlab.charts.objective.drawn > 0`, `[document.querySelector('#run-error').textContent, fwlab.compare]`, 20*time.Second)
	type group struct {
		Key string `json:"key"`
		Run string `json:"run"`
		N   int    `json:"n"`
	}
	gs := eval[[]group](t, ctx, `fwlab.compare.groups`)
	var st struct {
		Traces []struct{ Records int }
	}
	want := map[string]int{}
	for _, id := range []string{a, b} {
		if err := json.Unmarshal(httpGet(t, base+"/api/runs/"+id), &st); err != nil {
			t.Fatal(err)
		}
		for _, tr := range st.Traces {
			want[id] += tr.Records
		}
	}
	got := map[string]int{}
	byKey := map[string]group{}
	for _, g := range gs {
		got[g.Run] += g.N
		byKey[g.Key] = g
	}
	// an algorithm both runs ran alike (afw stops at the same iterate
	// under either limit) is drawn once, for both
	twins := eval[[][]string](t, ctx, `fwlab.compare.identical || []`)
	for _, p := range twins {
		got[strings.SplitN(p[1], ":", 2)[0]] += byKey[p[0]].N
	}
	if len(gs)+len(twins) != 4 || got[a] != want[a] || got[b] != want[b] {
		t.Errorf("groups %+v (and %d drawn once for two runs) hold %v records, want 4 groups holding %v", gs, len(twins), got, want)
	}
	if d := eval[string](t, ctx, `fwlab.compare.differ.join(',')`); d != "iters" {
		t.Errorf("differing parameters %q, want iters", d)
	}
	if n := eval[int](t, ctx, `fwlab.charts.objective.series.length`); n < len(gs) {
		t.Errorf("the objective chart has %d series, want %d", n, len(gs))
	}
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}

// TestRestartKeepsRunLink: a run made on a server over a database file is
// shown at the same link by a new server on the same file, with every
// record.
func TestRestartKeepsRunLink(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "fwlab.db")
	base, stop := storeServer(t, db)
	id := postRun(t, base, quickToy)
	waitRunEnded(t, base, id)
	before := httpGet(t, base+"/api/runs/"+id+"/trace?format=jsonl")
	stop()
	base2, _ := storeServer(t, db)
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	step(t, ctx, "open the old link", 20*time.Second, chromedp.Navigate(base2+"/runs/"+id))
	waitFor(t, ctx, "the stored run", `fwlab.runId && fwlab.status === 'done' && fwlab.done === true`, `[fwlab.status, document.querySelector('#run-error').textContent]`, 20*time.Second)
	if got := eval[string](t, ctx, `fwlab.runId`); got != id {
		t.Fatalf("the link opened run %s, want %s (a new run from the spec?)", got, id)
	}
	records := strings.Count(string(before), "\n")
	if n := eval[int](t, ctx, `fwlab.traces.reduce((a, t) => a + t.n, 0)`); n != records {
		t.Errorf("the page holds %d records, the run had %d", n, records)
	}
	if after := httpGet(t, base2+"/api/runs/"+id+"/trace?format=jsonl"); string(after) != string(before) {
		t.Error("the trace differs after the restart")
	}
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}

// TestSweepTwoByTwo: a 2 × 2 sweep with 2 replications, started from the
// start page's "sweep this parameter" control, finishes; its 4 cells link
// to done runs and the heat map is drawn.
func TestSweepTwoByTwo(t *testing.T) {
	t.Parallel()
	onBothStores(t, testSweepTwoByTwo)
}

func testSweepTwoByTwo(t *testing.T, be *backend) {
	base := be.url
	probe, err := http.Post(base+"/api/sweeps", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	pb, _ := io.ReadAll(probe.Body)
	probe.Body.Close()
	if probe.StatusCode == 404 || probe.StatusCode == 405 {
		t.Fatalf("the server has no sweeps (POST /api/sweeps): %d %s", probe.StatusCode, pb)
	}
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	dir := t.TempDir()
	step(t, ctx, "load the start page", 20*time.Second, chromedp.Navigate(base+"/"))
	waitFor(t, ctx, "the start page's script", `document.body.dataset.ready === '1'`, `document.body.outerHTML.slice(0, 300)`, 10*time.Second)
	choose(t, ctx, "#problem", "toy-polygon")
	choose(t, ctx, "#run-iters", "60")
	choose(t, ctx, "#run-replications", "2")
	step(t, ctx, "open the sweep control", 5*time.Second, chromedp.Click(chromedp.CSS(`#sweep-card summary`)))
	waitFor(t, ctx, "the parameters", `Array.from(document.querySelectorAll('#sweep-param-0 option')).some(o => o.value === 'seed') && Array.from(document.querySelectorAll('#sweep-param-0 option')).some(o => o.value === 'iters')`, `document.querySelector('#sweep-param-0').innerHTML`, 5*time.Second)
	choose(t, ctx, "#sweep-param-0", "seed")
	choose(t, ctx, "#sweep-values-0", "0, 1")
	choose(t, ctx, "#sweep-param-1", "iters")
	choose(t, ctx, "#sweep-values-1", "40 60")
	if c := eval[string](t, ctx, `document.querySelector('#sweep-count').textContent`); !strings.HasPrefix(c, "4 cells × 2 replications") {
		t.Errorf("sweep size %q", c)
	}
	step(t, ctx, "start the sweep", 10*time.Second, chromedp.Click(chromedp.ID("start-sweep")))
	waitFor(t, ctx, "the sweep page", `location.pathname.startsWith('/sweeps/') && window.fwlab && fwlab.sweep && fwlab.sweep.polls > 0`, `[location.href, document.querySelector('#sweep-error') && document.querySelector('#sweep-error').textContent]`, 20*time.Second)
	waitFor(t, ctx, "the sweep's end", `fwlab.sweep.status === 'done' && document.querySelectorAll('#heatmap td.hm-cell a[data-run]').length === 4`, `fwlab.sweep`, 120*time.Second)
	runs := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#heatmap td.hm-cell a[data-run]')).map(a => a.dataset.run)`)
	for _, id := range runs {
		var st struct {
			Status string
			Spec   struct{ Replications int }
		}
		if err := json.Unmarshal(httpGet(t, base+"/api/runs/"+id), &st); err != nil || st.Status != "done" || st.Spec.Replications != 2 {
			t.Errorf("cell run %s: %+v %v", id, st, err)
		}
		be.checkRanHere(t, id)
	}
	// Drawn: every cell has a value and a colour of the scale.
	if n := eval[int](t, ctx, `Array.from(document.querySelectorAll('#heatmap td.hm-cell')).filter(td => getComputedStyle(td).backgroundColor !== 'rgb(217, 221, 226)').length`); n != 4 {
		t.Errorf("%d of 4 cells coloured", n)
	}
	shot(t, ctx, dir, "sweep-2x2.png")
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}

// TestRunPageStoreControls: on a stored run's page the name, note and star
// are saved to the server; the bundle export is the server's bundle; the
// figure downloads as SVG; "compare with" offers the other run and opens
// the compare page.
func TestRunPageStoreControls(t *testing.T) {
	t.Parallel()
	base, _ := storeServer(t, filepath.Join(t.TempDir(), "fwlab.db"))
	other := postRun(t, base, quickToy)
	waitRunEnded(t, base, other)
	id := postRun(t, base, quickToy)
	waitRunEnded(t, base, id)
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	step(t, ctx, "open the run", 20*time.Second, chromedp.Navigate(base+"/runs/"+id))
	waitFor(t, ctx, "the finished run", `fwlab.done === true && !document.querySelector('.run-meta').hidden`, `[fwlab.status, document.querySelector('.run-meta').hidden]`, 20*time.Second)
	// a new run is named by its problem and algorithms; the user renames it
	if got := eval[string](t, ctx, `document.querySelector('#run-name').value`); !strings.HasPrefix(got, "toy-polygon: ") {
		t.Errorf("the run's name field holds %q, want its default name from its problem and algorithms", got)
	}
	eval[string](t, ctx, `document.querySelector('#run-name').value = ''`)
	step(t, ctx, "name and note", 5*time.Second,
		chromedp.SendKeys(chromedp.ID("run-name"), "baseline"),
		chromedp.SendKeys(chromedp.ID("run-note"), "afw against fista"),
		chromedp.Click(chromedp.ID("run-meta-save")))
	waitFor(t, ctx, "saved", `fwlab.saved === 1`, `document.querySelector('#run-meta-status').textContent`, 5*time.Second)
	step(t, ctx, "star", 5*time.Second, chromedp.Click(chromedp.ID("run-star")))
	waitFor(t, ctx, "starred", `fwlab.saved === 2 && document.querySelector('#run-star').textContent === '★'`, `document.querySelector('#run-meta-status').textContent`, 5*time.Second)
	var st struct {
		Name, Note string
		Starred    bool
	}
	if err := json.Unmarshal(httpGet(t, base+"/api/runs/"+id), &st); err != nil || st.Name != "baseline" || st.Note != "afw against fista" || !st.Starred {
		t.Errorf("the server holds %+v (%v)", st, err)
	}
	for _, size := range [][2]int64{{1400, 1000}, {1000, 700}} {
		viewport(t, ctx, size[0], size[1])
		time.Sleep(300 * time.Millisecond)
		overflow(t, ctx, fmt.Sprintf("stored run %dx%d", size[0], size[1]))
		shot(t, ctx, t.TempDir(), fmt.Sprintf("stored-run-%dx%d.png", size[0], size[1]))
	}
	viewport(t, ctx, 1400, 1000)
	step(t, ctx, "export the bundle", 5*time.Second, chromedp.Click(chromedp.ID("export-json")))
	waitFor(t, ctx, "the bundle", `typeof fwlab.lastBundle === 'string'`, `[fwlab.exports, document.querySelector('#run-error').textContent]`, 20*time.Second)
	if got, want := eval[string](t, ctx, `fwlab.lastBundle`), string(httpGet(t, base+"/api/runs/"+id+"/bundle")); got != want {
		t.Errorf("the exported bundle (%d bytes) differs from GET /api/runs/%s/bundle (%d bytes)", len(got), id, len(want))
	}
	step(t, ctx, "download the figure", 5*time.Second, chromedp.Click(chromedp.ID("export-figure")))
	waitFor(t, ctx, "the figure", `fwlab.exports.some(e => e.kind === 'figure' && e.bytes > 100 && e.type.startsWith('image/svg'))`, `[fwlab.exports, document.querySelector('#run-error').textContent]`, 30*time.Second)
	waitFor(t, ctx, "compare with", fmt.Sprintf(`Array.from(document.querySelectorAll('#compare-with option')).some(o => o.value === %q)`, other), `document.querySelector('#compare-with').innerHTML`, 10*time.Second)
	choose(t, ctx, "#compare-with", other)
	waitFor(t, ctx, "the compare page", `location.pathname === '/compare' && window.fwlab && fwlab.compare && fwlab.compare.loaded`, `location.href`, 20*time.Second)
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}
