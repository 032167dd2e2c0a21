package e2e

// The sweep as a study, in the browser against the real server and run
// store: the /sweeps index (linked from the navigation), the sweep page
// over a string axis (L, "auto" or a number) and a numeric one, with its
// axes in words, its default outcome, each algorithm once in the menu, the
// parallel coordinates and slice plots, the cells as CSV and JSON, the
// History's sweep column and filter, and a cell's run page naming its
// sweep; at 1400×1000 and 1000×700 without a console error.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

const studyDoc = `{"name":"L and ρ","base":{"problem":"lasso","params":{"n":"40","p":"20"},"algorithms":[{"algo":"ssfw-as"},{"algo":"fw"}],"replications":2,"seed":1,"iters":200,"gap":0.001},
 "axes":[{"param":"algorithms[0].L","values":["auto","50"]},{"param":"algorithms[0].rho","values":[0.1,0.3]}]}`

func TestSweepStudyPages(t *testing.T) {
	t.Parallel()
	url, _ := storeServer(t, filepath.Join(t.TempDir(), "fwlab.db"))
	req, _ := http.NewRequest("POST", url+"/api/sweeps", bytes.NewReader([]byte(studyDoc)))
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
	deadline := time.Now().Add(60 * time.Second)
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
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	dir := t.TempDir()

	// The index, from the navigation.
	step(t, ctx, "open the start page", 20*time.Second, chromedp.Navigate(url+"/"))
	step(t, ctx, "follow Sweeps", 10*time.Second, chromedp.Click(chromedp.CSS(`nav a[href="/sweeps"]`)))
	waitFor(t, ctx, "the index", `window.fwlab && fwlab.sweeps && fwlab.sweeps.loads > 0`, `document.querySelector('#sweeps-error').textContent`, 10*time.Second)
	row := eval[string](t, ctx, fmt.Sprintf(`document.querySelector('tr[data-sweep=%q]').textContent`, id))
	for _, want := range []string{"L and ρ", "lasso", "L of ssfw-as (2) × ρ of ssfw-as (2)", "done", "4 of 4"} {
		if !strings.Contains(row, want) {
			t.Errorf("the index row lacks %q: %q", want, row)
		}
	}
	for _, size := range [][2]int64{{1400, 1000}, {1000, 700}} {
		viewport(t, ctx, size[0], size[1])
		time.Sleep(200 * time.Millisecond)
		overflow(t, ctx, fmt.Sprintf("sweeps %dx%d", size[0], size[1]))
		shot(t, ctx, dir, fmt.Sprintf("sweeps-%dx%d.png", size[0], size[1]))
	}
	viewport(t, ctx, 1400, 1000)

	// The sweep's page.
	step(t, ctx, "open the sweep", 10*time.Second, chromedp.Click(chromedp.CSS(fmt.Sprintf(`tr[data-sweep=%q] a`, id))))
	waitFor(t, ctx, "the drawn sweep", `window.fwlab && fwlab.sweep && fwlab.sweep.status === 'done' && fwlab.sweep.parallel`, `JSON.stringify(fwlab.sweep)`, 15*time.Second)
	if g := eval[string](t, ctx, `document.querySelector('#gap-target').value`); g != "0.001" {
		t.Errorf("the gap target is %q, want the base spec's 0.001", g)
	}
	if o := eval[string](t, ctx, `fwlab.sweep.outcome + '|' + document.querySelector('#outcome').value`); o != "passes_to_gap|passes_to_gap" {
		t.Errorf("default outcome %q, want passes to the base's gap", o)
	}
	// each algorithm once, the base's first first (its traces may name it
	// with a variant: "ssfw-as + slack collapse")
	opts := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#sweep-algo option')).map(o => o.value)`)
	if len(opts) != 2 || !strings.HasPrefix(opts[0], "ssfw-as") || opts[1] != "fw" {
		t.Errorf("algorithm menu %q, want each algorithm once, ssfw-as first", opts)
	}
	head := eval[string](t, ctx, `document.querySelector('#heatmap thead').textContent + '|' + document.querySelector('#sweep-cells thead').textContent`)
	for _, want := range []string{"ρ of ssfw-as", "L of ssfw-as", "auto", "50"} {
		if !strings.Contains(head, want) {
			t.Errorf("the heat map and table heads lack %q: %q", want, head)
		}
	}
	if h := eval[string](t, ctx, `document.querySelector('#sweep-name').textContent`); h != "L and ρ" {
		t.Errorf("the page is titled %q", h)
	}
	choose(t, ctx, "#outcome", "final_gap")
	waitFor(t, ctx, "the study plots of the final gap", `fwlab.sweep.outcome === 'final_gap' && fwlab.sweep.parallel.lines === 4 && fwlab.sweep.parallel.axes === 3 && fwlab.sweep.slices.length === 2 && fwlab.sweep.slices.every(s => s.dots === 8 && s.medians === 2)`, `JSON.stringify(fwlab.sweep.parallel) + JSON.stringify(fwlab.sweep.slices)`, 10*time.Second)
	if n := eval[int](t, ctx, `document.querySelectorAll('#sweep-parallel polyline.pc-line').length`); n != 4 {
		t.Errorf("%d parallel lines", n)
	}
	// The cells as CSV and JSON, from the page's links.
	eval[bool](t, ctx, `window._csv = null; window._json = null; fetch(document.querySelector('#sweep-csv').href).then(r => r.text()).then(t => (window._csv = t)); fetch(document.querySelector('#sweep-json').href).then(r => r.json()).then(j => (window._json = j)); true`)
	waitFor(t, ctx, "the downloads", `window._csv !== null && window._json !== null`, `[window._csv, window._json]`, 10*time.Second)
	csvText := eval[string](t, ctx, `window._csv`)
	lines := strings.Split(strings.TrimSpace(csvText), "\n")
	if len(lines) != 1+4*2*2 || !strings.HasPrefix(lines[0], "cell,algorithms[0].L,algorithms[0].rho,run,status,algorithm,replication") || !strings.HasPrefix(lines[1], "0,auto,0.1,") || !strings.HasPrefix(lines[9], "2,50,0.1,") {
		t.Errorf("cells CSV (%d lines): %q", len(lines), lines[:min(3, len(lines))])
	}
	nrows := eval[int](t, ctx, `window._json.rows.length`)
	if nrows != 16 {
		t.Errorf("cells JSON: %d rows", nrows)
	}
	// Star and name from the page.
	step(t, ctx, "star", 5*time.Second, chromedp.Click(chromedp.ID("sweep-star")))
	waitFor(t, ctx, "the star", `document.querySelector('#sweep-star').textContent === '★'`, `document.querySelector('#sweep-star').textContent`, 5*time.Second)
	for _, size := range [][2]int64{{1400, 1000}, {1000, 700}} {
		viewport(t, ctx, size[0], size[1])
		time.Sleep(300 * time.Millisecond)
		overflow(t, ctx, fmt.Sprintf("sweep %dx%d", size[0], size[1]))
		shot(t, ctx, dir, fmt.Sprintf("sweep-study-%dx%d.png", size[0], size[1]))
	}
	viewport(t, ctx, 1400, 1000)

	// The History: its runs, the sweep column and filter.
	step(t, ctx, "its runs in History", 10*time.Second, chromedp.Click(chromedp.ID("sweep-runs")))
	waitFor(t, ctx, "the sweep's runs", `window.fwlab && fwlab.history && fwlab.history.loads > 0 && fwlab.history.total === 4`, `fwlab.history.total`, 10*time.Second)
	waitFor(t, ctx, "the sweep filter", fmt.Sprintf(`document.querySelector('#f-sweep').value === %q && document.querySelector('#f-sweep').selectedOptions[0].textContent.startsWith('L and ρ')`, id), `document.querySelector('#f-sweep').outerHTML`, 10*time.Second)
	cellText := eval[string](t, ctx, `document.querySelector('#history tbody tr:last-child .sweep-ref').textContent`)
	if !strings.Contains(cellText, "L and ρ") || !strings.Contains(cellText, "L of ssfw-as = auto, ρ of ssfw-as = 0.1") {
		t.Errorf("the sweep column of the first cell: %q", cellText)
	}
	// A cell's run page names its cell and links back.
	step(t, ctx, "open the first cell's run", 10*time.Second, chromedp.Click(chromedp.CSS(`#history tbody tr:last-child .run-name a`)))
	waitFor(t, ctx, "the sweep line", `location.pathname.startsWith("/runs/") && !!document.querySelector("#run-sweep")`, `document.body.innerText.slice(0, 300)`, 10*time.Second)
	line := eval[string](t, ctx, `document.querySelector('#run-sweep').textContent`)
	if !strings.Contains(line, "cell L of ssfw-as = auto, ρ of ssfw-as = 0.1") || !strings.Contains(line, "of sweep L and ρ") {
		t.Errorf("the run page says %q", line)
	}
	if h := eval[string](t, ctx, `document.querySelector('#run-sweep a').getAttribute('href')`); h != "/sweeps/"+id {
		t.Errorf("the run page links to %q", h)
	}
	// The run page's figure download takes a size preset.
	choose(t, ctx, "#figure-format", "pdf")
	choose(t, ctx, "#figure-size", "column")
	step(t, ctx, "download the figure", 5*time.Second, chromedp.Click(chromedp.ID("export-figure")))
	waitFor(t, ctx, "the column-wide PDF", `fwlab.exports.some(e => e.kind === 'figure' && e.type.startsWith('application/pdf') && e.name.endsWith('-column.pdf') && e.bytes > 1000)`, `JSON.stringify(fwlab.exports)`, 30*time.Second)
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
	logShots(t)
}

// A `solve -sweep DOC -cell I` output directory, its cells run one by one
// as a job array's tasks would, imported with `dashboard import DIR` beside
// the running server, is one sweep on the index and on its page, over a
// boolean axis, at both window sizes.
func TestImportedSweepDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "fwlab.db")
	url, _ := storeServer(t, db)
	bin := dashboardBinary(t)
	doc := `{"name":"Carathéodory by array","base":{"problem":"lasso","params":{"n":"40","p":"20"},"algorithms":[{"algo":"ssfw-as"}],"replications":2,"seed":1,"iters":100},
		"axes":[{"param":"algorithms[0].caratheodory","values":[true,false]}]}`
	out := filepath.Join(dir, "sweep1")
	for _, cell := range []string{"1", "0"} {
		if b, err := exec.Command(bin, "solve", "-sweep", doc, "-cell", cell, "-out", out).CombinedOutput(); err != nil {
			t.Fatalf("-cell %s: %v\n%s", cell, err, b)
		}
	}
	b, err := exec.Command(bin, "import", "-db", db, out).CombinedOutput()
	if err != nil || !strings.Contains(string(b), "(2 cells, 2 runs imported, 0 missing)") {
		t.Fatalf("import DIR: %v\n%s", err, b)
	}
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	shots := t.TempDir()
	for _, size := range [][2]int64{{1400, 1000}, {1000, 700}} {
		viewport(t, ctx, size[0], size[1])
		step(t, ctx, "open the index", 20*time.Second, chromedp.Navigate(url+"/sweeps"))
		waitFor(t, ctx, "the imported sweep", `window.fwlab && fwlab.sweeps && fwlab.sweeps.rows.some(r => r.name === 'Carathéodory by array' && r.status === 'done' && r.done === 2 && r.total === 2)`, `JSON.stringify(fwlab.sweeps)`, 10*time.Second)
		step(t, ctx, "open it", 10*time.Second, chromedp.Click(chromedp.CSS(`#sweeps tbody tr a`)))
		waitFor(t, ctx, "its page", `window.fwlab && fwlab.sweep && fwlab.sweep.status === 'done' && fwlab.sweep.kind === 'line' && fwlab.sweep.parallel && fwlab.sweep.parallel.lines === 2`, `JSON.stringify(fwlab.sweep)`, 15*time.Second)
		ticks := eval[string](t, ctx, `Array.from(document.querySelectorAll('#sweep-line text')).map(e => e.textContent).join('|')`)
		if !strings.Contains(ticks, "true") || !strings.Contains(ticks, "false") || !strings.Contains(ticks, "Carathéodory bound of ssfw-as") {
			t.Errorf("the boolean axis is not drawn in words: %q", ticks)
		}
		overflow(t, ctx, fmt.Sprintf("imported sweep %dx%d", size[0], size[1]))
		shot(t, ctx, shots, fmt.Sprintf("imported-sweep-%dx%d.png", size[0], size[1]))
	}
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}

// The start page sweeps string axes too: the stepsize by name, L over
// auto and a number; the sweep runs and its page draws the names.
func TestStartPageSweepsAStringAxis(t *testing.T) {
	t.Parallel()
	url, _ := storeServer(t, filepath.Join(t.TempDir(), "fwlab.db"))
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	step(t, ctx, "load the start page", 20*time.Second, chromedp.Navigate(url+"/"))
	waitFor(t, ctx, "the start page's script", `document.body.dataset.ready === '1'`, `document.body.outerHTML.slice(0, 300)`, 10*time.Second)
	choose(t, ctx, "#problem", "lasso")
	step(t, ctx, "open the sweep control", 5*time.Second, chromedp.Click(chromedp.CSS(`#sweep-card summary`)))
	waitFor(t, ctx, "the string parameters", `Array.from(document.querySelectorAll('#sweep-param-0 option')).some(o => o.value === 'algorithms[0].stepsize')`, `document.querySelector('#sweep-param-0').innerHTML`, 5*time.Second)
	choose(t, ctx, "#sweep-param-0", "algorithms[0].stepsize")
	choose(t, ctx, "#sweep-values-0", "curvature, backtrack")
	choose(t, ctx, "#sweep-param-1", "algorithms[0].L")
	choose(t, ctx, "#sweep-values-1", "auto, 500")
	if c := eval[string](t, ctx, `document.querySelector('#sweep-count').textContent`); !strings.HasPrefix(c, "4 cells") {
		t.Errorf("sweep size %q", c)
	}
	step(t, ctx, "start the sweep", 5*time.Second, chromedp.Click(chromedp.ID("start-sweep")))
	waitFor(t, ctx, "the sweep's end", `location.pathname.startsWith('/sweeps/') && window.fwlab && fwlab.sweep && fwlab.sweep.status === 'done' && fwlab.sweep.kind === 'heatmap'`, `[location.href, document.querySelector('#sweep-error') && document.querySelector('#sweep-error').textContent, JSON.stringify(window.fwlab && fwlab.sweep)]`, 60*time.Second)
	if got := eval[string](t, ctx, `JSON.stringify(fwlab.sweepRequest ? fwlab.sweepRequest.axes : null) || ''`); got != "" && got != "null" {
		t.Logf("posted axes %s", got)
	}
	head := eval[string](t, ctx, `document.querySelector('#heatmap').textContent`)
	for _, want := range []string{"curvature", "backtrack", "auto", "500", "stepsize of", "L of"} {
		if !strings.Contains(head, want) {
			t.Errorf("the heat map lacks %q: %q", want, head)
		}
	}
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}
