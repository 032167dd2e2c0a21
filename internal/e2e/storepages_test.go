package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fwlab/fwlab/internal/server"
	"github.com/fwlab/fwlab/internal/session"
)

// TestHistoryPageLayout drives the history page over the store API's JSON
// (the stand-in of fakestore_test.go): newest first, each filter and the
// search narrow the list, star and rename are sent, a delete asks first
// and removes exactly the runs selected, the drop zone's file picker
// imports a bundle and names the field of a refused one, and two selected
// runs open the compare page. No console error at either size.
func TestHistoryPageLayout(t *testing.T) {
	ts, fs := fakeApp(t)
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	dir := t.TempDir()
	step(t, ctx, "open the history", 20*time.Second, chromedp.Navigate(ts.URL+"/runs"))
	waitFor(t, ctx, "the list", `fwlab.history && fwlab.history.loads > 0`, `document.querySelector('#history-error').textContent`, 10*time.Second)
	ids := func() string { return eval[string](t, ctx, `fwlab.history.rows.map(r => r.id).join(',')`) }
	if got := ids(); got != "aaaaaaaaaaa5,aaaaaaaaaaa4,aaaaaaaaaaa3,aaaaaaaaaaa2,aaaaaaaaaaa1" {
		t.Fatalf("rows %s, want newest first", got)
	}
	if d := eval[string](t, ctx, `document.querySelector('#disk-used').textContent`); !strings.Contains(d, "KB on disk") && !strings.Contains(d, "MB on disk") {
		t.Errorf("disk used: %q", d)
	}
	row1 := eval[string](t, ctx, `document.querySelector('tr[data-run=aaaaaaaaaaa1]').textContent`)
	for _, want := range []string{"zig-zag baseline", "first try", "ssfw-as", "fista", "n=1000", "replications=2", "iters=200", "toy-polygon"} {
		if !strings.Contains(row1, want) {
			t.Errorf("row of aaaaaaaaaaa1 lacks %q: %q", want, row1)
		}
	}
	// The final objective: the median of the two replications' last values.
	wantObj := medianOf([]float64{1 * (1 + 1.0/fakeIters), 1 * (1 + 1.1/fakeIters)})
	if !strings.Contains(row1, fmt.Sprintf("%.6g", wantObj)[:6]) {
		t.Errorf("row of aaaaaaaaaaa1: final objective %v not shown: %q", wantObj, row1)
	}
	for _, size := range [][2]int64{{1400, 1000}, {1000, 700}} {
		viewport(t, ctx, size[0], size[1])
		time.Sleep(200 * time.Millisecond)
		overflow(t, ctx, fmt.Sprintf("history %dx%d", size[0], size[1]))
		shot(t, ctx, dir, fmt.Sprintf("history-%dx%d.png", size[0], size[1]))
	}
	viewport(t, ctx, 1400, 1000)

	filter := func(sel, value, want string) {
		t.Helper()
		loads := eval[int](t, ctx, `fwlab.history.loads`)
		choose(t, ctx, sel, value)
		waitFor(t, ctx, "filtered by "+sel+"="+value, fmt.Sprintf(`fwlab.history.loads > %d && fwlab.history.rows.map(r => r.id).join(',') === %q`, loads, want), `fwlab.history.rows.map(r => r.id).join(',')`, 10*time.Second)
	}
	waitFor(t, ctx, "the problems offered", `Array.from(document.querySelectorAll('#f-problem option')).some(o => o.value === 'toy-polygon')`, `document.querySelector('#f-problem').innerHTML`, 10*time.Second)
	filter("#f-problem", "toy-polygon", "aaaaaaaaaaa5,aaaaaaaaaaa2,aaaaaaaaaaa1")
	filter("#f-status", "done", "aaaaaaaaaaa2,aaaaaaaaaaa1")
	filter("#f-q", "halved", "aaaaaaaaaaa2")
	if u := eval[string](t, ctx, `location.search`); !strings.Contains(u, "problem=toy-polygon") || !strings.Contains(u, "q=halved") {
		t.Errorf("the filters are not in the URL: %q", u)
	}
	filter("#f-q", "", "aaaaaaaaaaa2,aaaaaaaaaaa1")
	filter("#f-status", "", "aaaaaaaaaaa5,aaaaaaaaaaa2,aaaaaaaaaaa1")
	filter("#f-problem", "", "aaaaaaaaaaa5,aaaaaaaaaaa4,aaaaaaaaaaa3,aaaaaaaaaaa2,aaaaaaaaaaa1")
	filter("#f-algo", "afw", "aaaaaaaaaaa3")
	filter("#f-algo", "", "aaaaaaaaaaa5,aaaaaaaaaaa4,aaaaaaaaaaa3,aaaaaaaaaaa2,aaaaaaaaaaa1")

	// Star, then rename with a note.
	step(t, ctx, "star", 5*time.Second, chromedp.Click(chromedp.CSS(`tr[data-run=aaaaaaaaaaa2] .star`)))
	waitFor(t, ctx, "the star", `document.querySelector('tr[data-run=aaaaaaaaaaa2] .star').textContent === '★'`, `fwlab.history`, 5*time.Second)
	step(t, ctx, "edit", 5*time.Second, chromedp.Click(chromedp.CSS(`tr[data-run=aaaaaaaaaaa2] button.edit`)))
	step(t, ctx, "rename", 5*time.Second,
		chromedp.SetValue(chromedp.CSS(`tr[data-run=aaaaaaaaaaa2] .edit-name`), "rho 0.05"),
		chromedp.SetValue(chromedp.CSS(`tr[data-run=aaaaaaaaaaa2] .edit-note`), "slower at first"),
		chromedp.Click(chromedp.CSS(`tr[data-run=aaaaaaaaaaa2] button.save`)))
	waitFor(t, ctx, "the new name", `document.querySelector('tr[data-run=aaaaaaaaaaa2]').textContent.includes('rho 0.05')`, `document.querySelector('tr[data-run=aaaaaaaaaaa2]').textContent`, 5*time.Second)
	fs.mu.Lock()
	r2 := *fs.find("aaaaaaaaaaa2")
	fs.mu.Unlock()
	if !r2.Starred || r2.Name != "rho 0.05" || r2.Note != "slower at first" {
		t.Errorf("the server holds starred=%v name=%q note=%q", r2.Starred, r2.Name, r2.Note)
	}

	// Delete two runs: the confirmation first; Keep deletes nothing.
	for _, id := range []string{"aaaaaaaaaaa5", "aaaaaaaaaaa3"} {
		step(t, ctx, "select "+id, 5*time.Second, chromedp.Click(chromedp.CSS(`tr[data-run=`+id+`] input.pick`)))
	}
	step(t, ctx, "delete", 5*time.Second, chromedp.Click(chromedp.ID("btn-delete")))
	if txt := eval[string](t, ctx, `document.querySelector('#confirm-delete').hidden ? '' : document.querySelector('#confirm-text').textContent`); !strings.Contains(txt, "2 runs") {
		t.Fatalf("no confirmation before deleting: %q", txt)
	}
	step(t, ctx, "keep", 5*time.Second, chromedp.Click(chromedp.ID("confirm-no")))
	time.Sleep(300 * time.Millisecond)
	if n := eval[int](t, ctx, `fwlab.history.rows.length`); n != 5 || len(fs.deleted) != 0 {
		t.Fatalf("Keep deleted something: %d rows, deleted %v", n, fs.deleted)
	}
	step(t, ctx, "delete", 5*time.Second, chromedp.Click(chromedp.ID("btn-delete")))
	step(t, ctx, "confirm", 5*time.Second, chromedp.Click(chromedp.ID("confirm-yes")))
	waitFor(t, ctx, "the rows left", `fwlab.history.rows.map(r => r.id).join(',') === 'aaaaaaaaaaa4,aaaaaaaaaaa2,aaaaaaaaaaa1'`, `fwlab.history.rows.map(r => r.id).join(',')`, 10*time.Second)
	fs.mu.Lock()
	deleted := strings.Join(fs.deleted, ",")
	fs.mu.Unlock()
	if deleted != "aaaaaaaaaaa5,aaaaaaaaaaa3" {
		t.Errorf("deleted %s", deleted)
	}

	// Import: a file that is not a bundle is refused naming the field; a
	// bundle becomes a run shown at the top.
	bad := filepath.Join(dir, "notes.json")
	good := filepath.Join(dir, "run.json")
	_ = os.WriteFile(bad, []byte(`{"hello": 1}`), 0o644)
	_ = os.WriteFile(good, []byte(`{"format": "fwlab-bundle", "traces": []}`), 0o644)
	step(t, ctx, "import notes.json", 10*time.Second, chromedp.SetUploadFiles(chromedp.ID("import-file"), []string{bad}))
	waitFor(t, ctx, "the refusal", `document.querySelector('#drop-zone').dataset.state === 'rejected'`, `document.querySelector('#import-status').textContent`, 10*time.Second)
	// The refusal's 400 is logged by the browser as a failed request: the
	// one expected entry.
	for _, e := range errs.take() {
		if !strings.Contains(e, "400") || !strings.Contains(e, "/api/runs/import") {
			t.Errorf("console: %s", e)
		}
	}
	if msg := eval[string](t, ctx, `document.querySelector('#import-status').textContent`); !strings.Contains(msg, "notes.json was refused: format: ") {
		t.Errorf("import error %q, want the field named", msg)
	}
	step(t, ctx, "import run.json", 10*time.Second, chromedp.SetUploadFiles(chromedp.ID("import-file"), []string{good}))
	waitFor(t, ctx, "the imported run", `document.querySelector('#drop-zone').dataset.state === 'done' && fwlab.history.rows.length && fwlab.history.rows[0].id === 'imported0001'`, `[document.querySelector('#import-status').textContent, fwlab.history.rows.map(r => r.id)]`, 10*time.Second)
	if href := eval[string](t, ctx, `document.querySelector('[data-imported]').getAttribute('href')`); href != "/runs/imported0001" {
		t.Errorf("the imported run's link %q", href)
	}
	// A file dropped on the zone is imported the same way.
	eval[bool](t, ctx, `(() => {
		const dt = new DataTransfer();
		dt.items.add(new File(['{"format": "fwlab-bundle", "traces": []}'], 'dropped.json', {type: 'application/json'}));
		const z = document.querySelector('#drop-zone');
		z.dispatchEvent(new DragEvent('dragover', {dataTransfer: dt, bubbles: true, cancelable: true}));
		z.dispatchEvent(new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));
		return true;
	})()`)
	waitFor(t, ctx, "the dropped run", `fwlab.history.imported === 'imported0002' && fwlab.history.rows[0].id === 'imported0002'`, `[document.querySelector('#import-status').textContent, fwlab.history.rows.map(r => r.id)]`, 10*time.Second)
	if msg := eval[string](t, ctx, `document.querySelector('#import-status').textContent`); !strings.Contains(msg, "imported dropped.json as imported0002") {
		t.Errorf("import status %q", msg)
	}

	// Two selected runs → Compare.
	step(t, ctx, "select aaaaaaaaaaa1", 5*time.Second, chromedp.Click(chromedp.CSS(`tr[data-run=aaaaaaaaaaa1] input.pick`)))
	if !eval[bool](t, ctx, `document.querySelector('#btn-compare').disabled`) {
		t.Error("Compare is enabled with one run selected")
	}
	step(t, ctx, "select imported0001", 5*time.Second, chromedp.Click(chromedp.CSS(`tr[data-run=imported0001] input.pick`)))
	if eval[bool](t, ctx, `document.querySelector('#btn-compare').disabled`) {
		t.Fatal("Compare is disabled with two runs selected")
	}
	step(t, ctx, "compare", 5*time.Second, chromedp.Click(chromedp.ID("btn-compare")))
	waitFor(t, ctx, "the compare page", `location.pathname === '/compare' && window.fwlab && fwlab.compare && fwlab.compare.loaded`, `location.href`, 20*time.Second)
	if got := eval[string](t, ctx, `fwlab.compare.runs.slice().sort().join(',')`); got != "aaaaaaaaaaa1,imported0001" {
		t.Errorf("compare opened with %s", got)
	}
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
	t.Logf("screenshots in %s", dir)
}

// TestComparePageLayout: the compare page over the store API's JSON
// overlays two runs' traces (each algorithm of each run a group in its own
// colour, replications as a band) on the run page's charts, highlights the
// differing parameters, flags runs on different instances, and keeps its
// controls working; no console error at either size.
func TestComparePageLayout(t *testing.T) {
	ts, _ := fakeApp(t)
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	dir := t.TempDir()
	step(t, ctx, "open the compare page", 20*time.Second, chromedp.Navigate(ts.URL+"/compare?runs=aaaaaaaaaaa1,aaaaaaaaaaa2"))
	waitFor(t, ctx, "the overlay", `fwlab.compare && fwlab.compare.loaded && fwlab.charts.objective && fwlab.charts.objective.drawn > 0`, `[document.querySelector('#run-error').textContent, fwlab.compare]`, 20*time.Second)
	type group struct {
		Run   string `json:"run"`
		Label string `json:"label"`
		Color string `json:"color"`
		N     int    `json:"n"`
		Reps  int    `json:"reps"`
	}
	gs := eval[[]group](t, ctx, `fwlab.compare.groups`)
	if len(gs) != 4 {
		t.Fatalf("groups %+v, want 2 runs × 2 algorithms", gs)
	}
	colours := map[string]bool{}
	for _, g := range gs {
		colours[g.Color] = true
		if g.N != fakeIters || g.Reps != 2 {
			t.Errorf("group %s: %d records of %d replications, want %d of 2", g.Label, g.N, g.Reps, fakeIters)
		}
	}
	if len(colours) != 4 {
		t.Errorf("the groups share colours: %+v", gs)
	}
	series := eval[[]string](t, ctx, `fwlab.charts.objective.series.map(s => s.label)`)
	joined := strings.Join(series, "|")
	for _, want := range []string{"zig-zag baseline · ssfw-as", "zig-zag baseline · fista", "ssfw-as · aaaaaaaaaaa2", "fista · aaaaaaaaaaa2"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the objective chart lacks %q: %v", want, series)
		}
	}
	if !eval[bool](t, ctx, `fwlab.charts.objective.band === true`) {
		t.Error("no band for two replications")
	}
	if got := eval[string](t, ctx, `fwlab.compare.differ.join(',')`); got != "algorithms[0].rho" {
		t.Errorf("differing parameters %q, want algorithms[0].rho", got)
	}
	if !eval[bool](t, ctx, `document.querySelector('#spec-diff tr.differ[data-key="algorithms[0].rho"]') !== null`) {
		t.Error("the differing row is not highlighted")
	}
	if eval[bool](t, ctx, `fwlab.compare.flagged || !document.querySelector('#compare-flag').hidden`) {
		t.Error("two runs on the same instance are flagged")
	}
	// The controls: x-axis, log x, bands off.
	choose(t, ctx, "#xaxis", "passes")
	waitFor(t, ctx, "x in passes", `fwlab.charts.objective.xkey === 'passes' && fwlab.charts.objective.xmax === 99.5`, `fwlab.charts.objective`, 5*time.Second)
	step(t, ctx, "bands off", 5*time.Second, chromedp.Click(chromedp.ID("bands")))
	waitFor(t, ctx, "no band", `fwlab.charts.objective.band === false`, `fwlab.charts.objective`, 5*time.Second)
	step(t, ctx, "log x", 5*time.Second, chromedp.Click(chromedp.ID("logx")))
	waitFor(t, ctx, "log x", `fwlab.charts.objective.logx === true && fwlab.charts.objective.drawn > 0`, `fwlab.charts.objective`, 5*time.Second)
	for _, size := range [][2]int64{{1400, 1000}, {1000, 700}} {
		viewport(t, ctx, size[0], size[1])
		time.Sleep(400 * time.Millisecond)
		overflow(t, ctx, fmt.Sprintf("compare %dx%d", size[0], size[1]))
		shot(t, ctx, dir, fmt.Sprintf("compare-%dx%d.png", size[0], size[1]))
	}
	viewport(t, ctx, 1400, 1000)
	// Runs on different instances are flagged.
	step(t, ctx, "compare across instances", 20*time.Second, chromedp.Navigate(ts.URL+"/compare?runs=aaaaaaaaaaa1,aaaaaaaaaaa4"))
	waitFor(t, ctx, "the overlay", `fwlab.compare && fwlab.compare.loaded`, `fwlab.compare`, 20*time.Second)
	if !eval[bool](t, ctx, `fwlab.compare.flagged && !document.querySelector('#compare-flag').hidden`) {
		t.Error("runs on different problems are not flagged")
	}
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
	t.Logf("screenshots in %s", dir)
}

// TestSweepPageLayout: a 3 × 2 sweep (the stand-in's cells end one per
// poll) is drawn as a heat map that follows it to the end; each cell links
// to its run, brighter cells have larger outcomes, a gap never reached is
// said so; a one-axis sweep is drawn as a line. No console error at either
// size.
func TestSweepPageLayout(t *testing.T) {
	ts, _ := fakeApp(t)
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	dir := t.TempDir()
	step(t, ctx, "open the sweep", 20*time.Second, chromedp.Navigate(ts.URL+"/sweeps/sw1"))
	waitFor(t, ctx, "a partial heat map", `fwlab.sweep && fwlab.sweep.kind === 'heatmap' && fwlab.sweep.status === 'running'`, `fwlab.sweep`, 10*time.Second)
	waitFor(t, ctx, "the sweep's end", `fwlab.sweep.status === 'done' && document.querySelectorAll('#heatmap td.hm-cell a[data-run]').length === 6`, `fwlab.sweep`, 20*time.Second)
	if p := eval[int](t, ctx, `fwlab.sweep.polls`); p < 6 {
		t.Errorf("the page polled %d times, want one per ended cell", p)
	}
	links := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#heatmap td.hm-cell a')).map(a => a.getAttribute('href'))`)
	if strings.Join(links, ",") != "/runs/cell0,/runs/cell1,/runs/cell2,/runs/cell3,/runs/cell4,/runs/cell5" {
		t.Errorf("cell links %v", links)
	}
	// final gap = rho · r · 1e-3 grows along both axes: so does the shade's
	// brightness (viridis: dark to light).
	lum := eval[[]float64](t, ctx, `Array.from(document.querySelectorAll('#heatmap td.hm-cell')).map(td => { const m = getComputedStyle(td).backgroundColor.match(/\d+/g).map(Number); return 0.2126*m[0] + 0.7152*m[1] + 0.0722*m[2]; })`)
	if len(lum) != 6 || !(lum[0] < lum[1] && lum[1] < lum[2] && lum[3] < lum[4] && lum[4] < lum[5] && lum[0] < lum[3]) {
		t.Errorf("cell brightness %v does not grow with the final gap", lum)
	}
	choose(t, ctx, "#outcome", "passes_to_gap")
	waitFor(t, ctx, "passes to the gap", `Array.from(document.querySelectorAll('#heatmap td.hm-cell')).map(td => td.textContent).includes('not reached')`, `Array.from(document.querySelectorAll('#heatmap td.hm-cell')).map(td => td.textContent)`, 5*time.Second)
	for _, size := range [][2]int64{{1400, 1000}, {1000, 700}} {
		viewport(t, ctx, size[0], size[1])
		time.Sleep(300 * time.Millisecond)
		overflow(t, ctx, fmt.Sprintf("sweep %dx%d", size[0], size[1]))
		shot(t, ctx, dir, fmt.Sprintf("sweep-%dx%d.png", size[0], size[1]))
	}
	viewport(t, ctx, 1400, 1000)
	step(t, ctx, "open a one-axis sweep", 20*time.Second, chromedp.Navigate(ts.URL+"/sweeps/oneaxis"))
	waitFor(t, ctx, "the line", `fwlab.sweep && fwlab.sweep.kind === 'line' && fwlab.sweep.status === 'done' && document.querySelectorAll('#sweep-line a[data-run] circle').length === 3`, `fwlab.sweep`, 20*time.Second)
	if n := eval[int](t, ctx, `document.querySelectorAll('#sweep-line polyline').length`); n != 1 {
		t.Errorf("%d lines drawn", n)
	}
	shot(t, ctx, dir, "sweep-line-1400x1000.png")
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
	t.Logf("screenshots in %s", dir)
}

// TestRunPageQueued: with one run slot taken, a second run waits in the
// queue: its page says so with its place, Stop takes it off the queue,
// and the page shows it cancelled.
func TestRunPageQueued(t *testing.T) {
	ts := appWith(t, server.Options{Session: session.Options{MaxActive: 1}})
	first := postRun(t, ts.URL, longToy)
	defer stopRun(ts.URL, first)
	second := postRun(t, ts.URL, quickToy)
	defer stopRun(ts.URL, second)
	var st struct {
		Status        string `json:"status"`
		QueuePosition int    `json:"queue_position"`
	}
	if err := json.Unmarshal(httpGet(t, ts.URL+"/api/runs/"+second), &st); err != nil || st.Status != "queued" {
		t.Fatalf("the server does not queue a run beyond its slots (status %q, %v)", st.Status, err)
	}
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	step(t, ctx, "open the queued run", 20*time.Second, chromedp.Navigate(ts.URL+"/runs/"+second))
	waitFor(t, ctx, "the queued status", `fwlab.status === 'queued'`, `fwlab.status`, 10*time.Second)
	if got := eval[string](t, ctx, `document.querySelector('#run-status').textContent`); got != fmt.Sprintf("queued (position %d)", st.QueuePosition) {
		t.Errorf("status badge %q, want its place in the queue %d", got, st.QueuePosition)
	}
	if eval[bool](t, ctx, `document.querySelector('#btn-stop').disabled`) || !eval[bool](t, ctx, `document.querySelector('#btn-pause').disabled`) {
		t.Error("a queued run: Stop must be enabled and Pause disabled")
	}
	step(t, ctx, "stop", 5*time.Second, chromedp.Click(chromedp.ID("btn-stop")))
	waitFor(t, ctx, "the cancelled run", `fwlab.status === 'cancelled'`, `fwlab.status`, 10*time.Second)
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}

// TestPauseShowsServerRecords: with the stream throttled far below the
// solver's pace (a message per 300 ms of at most 20 records), Pause makes
// the page hold exactly the records the server holds at once, by fetching
// what the stream has not sent, instead of draining the backlog slowly.
func TestPauseShowsServerRecords(t *testing.T) {
	ts := appWith(t, server.Options{MinInterval: 300 * time.Millisecond, MaxBatch: 20})
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	id := postRun(t, ts.URL, longToy)
	defer stopRun(ts.URL, id)
	step(t, ctx, "open the run page", 20*time.Second, chromedp.Navigate(ts.URL+"/runs/"+id))
	waitFor(t, ctx, "the page behind the server", `fwlab.status === 'running' && fwlab.sync && fwlab.sync.server > fwlab.sync.page + 1000`, `[fwlab.status, fwlab.sync]`, 30*time.Second)
	step(t, ctx, "pause", 10*time.Second, chromedp.Click(chromedp.ID("btn-pause")))
	t0 := time.Now()
	waitFor(t, ctx, "the page where the server paused", `fwlab.status === 'paused' && fwlab.sync.page === fwlab.sync.server && !fwlab.sync.behind`, `[fwlab.status, fwlab.sync]`, 10*time.Second)
	var st struct {
		Status string `json:"status"`
		Traces []struct {
			Records int `json:"records"`
		} `json:"traces"`
	}
	if err := json.Unmarshal(httpGet(t, ts.URL+"/api/runs/"+id), &st); err != nil || st.Status != "paused" {
		t.Fatalf("status %+v %v", st, err)
	}
	page := eval[[]int](t, ctx, `fwlab.traces.map(t => t.n)`)
	for i, tr := range st.Traces {
		if i >= len(page) || page[i] != tr.Records {
			t.Errorf("trace %d: the page holds %v records, the paused server %d", i, page, tr.Records)
		}
	}
	t.Logf("the page reached the server's %v records %.1f s after Pause", page, time.Since(t0).Seconds())
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}

// TestStartPageSweepControl: "sweep a parameter" offers the form's
// numeric parameters by their spec paths, checks the values as typed,
// posts the form's spec with the axes, shows a refused value under its
// axis, and opens the sweep's page.
func TestStartPageSweepControl(t *testing.T) {
	ts, fs := fakeApp(t)
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	dir := t.TempDir()
	step(t, ctx, "load the start page", 20*time.Second, chromedp.Navigate(ts.URL+"/"))
	waitFor(t, ctx, "the start page's script", `document.body.dataset.ready === '1'`, `document.body.outerHTML.slice(0, 300)`, 10*time.Second)
	choose(t, ctx, "#problem", "toy-polygon")
	step(t, ctx, "open the sweep control", 5*time.Second, chromedp.Click(chromedp.CSS(`#sweep-card summary`)))
	waitFor(t, ctx, "the parameters", `document.querySelector('#sweep-card').open && Array.from(document.querySelectorAll('#sweep-param-0 option')).some(o => o.value === 'algorithms[0].rho')`, `document.querySelector('#sweep-param-0').innerHTML`, 5*time.Second)
	opts := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#sweep-param-0 option')).map(o => o.value)`)
	have := map[string]bool{}
	for _, o := range opts {
		have[o] = true
	}
	for _, want := range []string{"seed", "iters", "params.samples", "algorithms[0].rho", "algorithms[0].algo", "algorithms[0].stepsize", "algorithms[0].L"} {
		if !have[want] {
			t.Errorf("the sweep's parameters %v lack %s", opts, want)
		}
	}
	if have["replications"] || have["start_paused"] {
		t.Errorf("the sweep's parameters %v hold one that cannot be swept", opts)
	}
	choose(t, ctx, "#sweep-param-0", "algorithms[0].rho")
	choose(t, ctx, "#sweep-values-0", "0.05, x")
	step(t, ctx, "start the sweep", 5*time.Second, chromedp.Click(chromedp.ID("start-sweep")))
	if msg := eval[string](t, ctx, `document.querySelector('[data-error-for="axes[0]"]').textContent`); msg != `values: "x" is not a number` {
		t.Errorf("a value that is not a number: %q", msg)
	}
	choose(t, ctx, "#sweep-values-0", "0.05, -0.1")
	choose(t, ctx, "#sweep-param-1", "seed")
	choose(t, ctx, "#sweep-values-1", "1 2 3")
	if c := eval[string](t, ctx, `document.querySelector('#sweep-count').textContent`); !strings.HasPrefix(c, "6 cells × 1 replication") {
		t.Errorf("sweep size %q", c)
	}
	shot(t, ctx, dir, "start-sweep.png")
	step(t, ctx, "start the sweep", 5*time.Second, chromedp.Click(chromedp.ID("start-sweep")))
	waitFor(t, ctx, "the refusal", `document.querySelector('[data-error-for="axes[0]"]').textContent !== ''`, `document.querySelector('#sweep-error').textContent`, 5*time.Second)
	if msg := eval[string](t, ctx, `document.querySelector('[data-error-for="axes[0]"]').textContent`); msg != "axes[0].values[1]: must be ≥ 0" {
		t.Errorf("the server's refusal shows %q", msg)
	}
	for _, e := range errs.take() {
		if !strings.Contains(e, "400") || !strings.Contains(e, "/api/sweeps") {
			t.Errorf("console: %s", e)
		}
	}
	choose(t, ctx, "#sweep-values-0", "0.05, 0.1")
	step(t, ctx, "start the sweep", 5*time.Second, chromedp.Click(chromedp.ID("start-sweep")))
	waitFor(t, ctx, "the sweep page", `location.pathname === '/sweeps/sw1' && window.fwlab && fwlab.sweep && fwlab.sweep.polls > 0`, `location.href`, 10*time.Second)
	fs.mu.Lock()
	last := fs.sweeps[len(fs.sweeps)-1]
	fs.mu.Unlock()
	var body struct {
		Base struct {
			Problem    string           `json:"problem"`
			Algorithms []map[string]any `json:"algorithms"`
		} `json:"base"`
		Axes []struct {
			Param  string    `json:"param"`
			Values []float64 `json:"values"`
		} `json:"axes"`
	}
	if err := json.Unmarshal(last, &body); err != nil {
		t.Fatal(err)
	}
	if body.Base.Problem != "toy-polygon" || len(body.Base.Algorithms) == 0 || len(body.Axes) != 2 ||
		body.Axes[0].Param != "algorithms[0].rho" || fmt.Sprint(body.Axes[0].Values) != "[0.05 0.1]" ||
		body.Axes[1].Param != "seed" || fmt.Sprint(body.Axes[1].Values) != "[1 2 3]" {
		t.Errorf("posted %s", last)
	}
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}

// TestUploadLeavesNoStaleError: the instance preview asked for after the
// upload of x (x without y: refused with "y is needed with x") is answered
// just after y's upload is done, before the next preview is asked for. Its
// error is about values that have changed since: it must not be shown
// under y. The test's proxy holds the previews to make this order certain:
// the one without y until y is uploaded (and 100 ms more), the one with y
// for a second.
func TestUploadLeavesNoStaleError(t *testing.T) {
	srv, err := server.New(server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	yUploaded := make(chan struct{})
	var once sync.Once
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Security-Policy", testCSP)
		switch {
		case req.Method == "POST" && req.URL.Path == "/api/uploads":
			b, _ := io.ReadAll(req.Body)
			req.Body = io.NopCloser(bytes.NewReader(b))
			srv.ServeHTTP(w, req)
			if bytes.Contains(b, []byte(`filename="y.csv"`)) {
				once.Do(func() { close(yUploaded) })
			}
			return
		case req.Method == "POST" && req.URL.Path == "/api/preview":
			b, _ := io.ReadAll(req.Body)
			req.Body = io.NopCloser(bytes.NewReader(b))
			var pr struct {
				Params map[string]string `json:"params"`
			}
			_ = json.Unmarshal(b, &pr)
			if pr.Params["x"] != "" && pr.Params["y"] == "" {
				select {
				case <-yUploaded:
				case <-time.After(20 * time.Second):
				}
				time.Sleep(100 * time.Millisecond)
			} else if pr.Params["y"] != "" {
				time.Sleep(time.Second)
			}
		}
		srv.ServeHTTP(w, req)
	}))
	t.Cleanup(func() {
		ts.Close()
		_ = srv.Close()
	})
	dir := t.TempDir()
	for name, body := range map[string]string{"x.csv": "1,0,2\n0,1,1\n1,1,0\n2,0,1\n", "y.csv": "3\n1\n2\n4\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := newBrowser(t)
	step(t, ctx, "load the start page", 20*time.Second, chromedp.Navigate(ts.URL+"/"))
	waitFor(t, ctx, "the start page's script", `document.body.dataset.ready === '1'`, `document.body.outerHTML.slice(0, 300)`, 10*time.Second)
	choose(t, ctx, "#problem", "lasso")
	step(t, ctx, "choose x.csv", 10*time.Second, chromedp.SetUploadFiles(chromedp.ID("p-lasso-x-file"), []string{filepath.Join(dir, "x.csv")}))
	waitFor(t, ctx, "the upload of x", `document.querySelector('#p-lasso-x-file').dataset.state === 'done'`, `document.querySelector('#p-lasso-x-file').dataset.state`, 20*time.Second)
	// The preview of x alone is under way (held by the proxy).
	waitFor(t, ctx, "the preview of x alone", `document.querySelector('#instance-summary').dataset.state === 'loading'`, `document.querySelector('#instance-summary').dataset.state`, 5*time.Second)
	step(t, ctx, "choose y.csv", 10*time.Second, chromedp.SetUploadFiles(chromedp.ID("p-lasso-y-file"), []string{filepath.Join(dir, "y.csv")}))
	waitFor(t, ctx, "the upload of y", `document.querySelector('#p-lasso-y-file').dataset.state === 'done'`, `document.querySelector('#p-lasso-y-file').dataset.state`, 20*time.Second)
	// The held answer arrives 100 ms after the upload; the next preview is
	// answered a second after it is asked for.
	time.Sleep(600 * time.Millisecond)
	if msg := eval[string](t, ctx, `document.querySelector('[data-error-for="params.y"]').textContent`); msg != "" {
		t.Errorf("after y's upload the error under y is %q (the answer of a preview without y)", msg)
	}
	waitFor(t, ctx, "the instance measured", `fwlab.preview && fwlab.preview.answer && fwlab.preview.answer.samples === 4`, `fwlab.preview`, 20*time.Second)
	if msg := eval[string](t, ctx, `document.querySelector('[data-error-for="params.y"]').textContent`); msg != "" {
		t.Errorf("with x and y uploaded the error under y is %q", msg)
	}
}

// TestCompareFollowsLiveRun: a run still live on the compare page is
// loaded again until it ends, so its curve grows.
func TestCompareFollowsLiveRun(t *testing.T) {
	ts := app(t)
	done := postRun(t, ts.URL, quickToy)
	live := postRun(t, ts.URL, longToy)
	defer stopRun(ts.URL, live)
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	step(t, ctx, "open the compare page", 20*time.Second, chromedp.Navigate(ts.URL+"/compare?runs="+done+","+live))
	waitFor(t, ctx, "the overlay", `fwlab.compare && fwlab.compare.loaded && fwlab.charts.objective && fwlab.charts.objective.drawn > 0`, `[document.querySelector('#run-error').textContent, fwlab.compare]`, 20*time.Second)
	first := eval[int](t, ctx, fmt.Sprintf(`fwlab.traces.filter(t => t.run === %q).reduce((a, t) => a + t.n, 0)`, live))
	waitFor(t, ctx, "the live run loaded again", fmt.Sprintf(`fwlab.compare.loads >= 2 && fwlab.traces.filter(t => t.run === %q).reduce((a, t) => a + t.n, 0) > %d && fwlab.charts.objective.drawn > 0`, live, first),
		`[fwlab.compare.loads, fwlab.traces]`, 20*time.Second)
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}
