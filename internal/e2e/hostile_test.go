package e2e

// Browser tests of hostile pages and hostile stored runs: a page on another
// origin that opens a run link, a stored run whose records carry thousands
// of extra metrics and whose task graph names node 30 000 000, and a run
// whose stored records cannot all be read.

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fwlab/fwlab/internal/solver"
	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
)

// runTotal is the number of runs the store lists.
func runTotal(t *testing.T, base string) int {
	t.Helper()
	var l struct{ Total int }
	if err := json.Unmarshal(httpGet(t, base+"/api/runs"), &l); err != nil {
		t.Fatal(err)
	}
	return l.Total
}

// A page on another origin that sends a window to /runs/x?spec=… starts no
// run: the dashboard shows the spec and a Start button, and posts nothing
// until the user presses it (before, the dashboard's own script posted the
// spec from its own origin, so the cross-origin check passed).
//
// It runs alone (no t.Parallel): it gives the pages a fixed time to do what
// they must not.
func TestForeignPageStartsNoRun(t *testing.T) {
	base, _ := storeServer(t, filepath.Join(t.TempDir(), "fwlab.db"))
	sp := `{"problem":"toy-polygon","algorithms":[{"algo":"afw"}],"iters":40,"seed":5,"start_paused":true}`
	target := base + "/runs/x?spec=" + url.QueryEscape(sp)
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		// Both ways a page elsewhere reaches the link: a window it opens
		// and its own navigation.
		fmt.Fprintf(w, `<!doctype html><title>cats</title><script>
window.open(%q, "_blank");
setTimeout(() => { location.href = %q; }, 300);
</script>`, target, target)
	}))
	defer evil.Close()
	if strings.HasPrefix(evil.URL, base) || evil.URL == base {
		t.Fatal("the two servers share an origin")
	}
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	step(t, ctx, "open the page elsewhere", 20*time.Second, chromedp.Navigate(evil.URL))
	waitFor(t, ctx, "the run page asking to start", `location.pathname === '/runs/x' && document.querySelector('#run-page').dataset.status === 'awaiting-start'`,
		`[location.href, document.querySelector('#run-page') && document.querySelector('#run-page').dataset.status]`, 20*time.Second)
	if !eval[bool](t, ctx, `!document.querySelector('#spec-start').hidden && document.querySelector('#spec-start-text').textContent.includes('"toy-polygon"')`) {
		t.Error("the spec is not shown beside the Start button")
	}
	time.Sleep(2 * time.Second) // both windows had time to post, if they would
	if n := runTotal(t, base); n != 0 {
		t.Fatalf("a page elsewhere created %d runs", n)
	}
	// The user's click starts it.
	step(t, ctx, "press Start", 10*time.Second, chromedp.Click(chromedp.ID("btn-start-spec")))
	waitFor(t, ctx, "the started run", `!!fwlab.resubmitted && location.pathname === '/runs/' + fwlab.resubmitted`, `[fwlab.resubmitted, location.href, document.querySelector('#run-error').textContent]`, 20*time.Second)
	if n := runTotal(t, base); n != 1 {
		t.Errorf("%d runs after one click", n)
	}
	for _, e := range errs.take() {
		if !strings.Contains(e, "/api/runs/x") { // the unknown id's 404
			t.Errorf("console: %s", e)
		}
	}
}

// putHostileRun stores a finished run as a bundle from elsewhere could have
// left it before imports were bounded: 2 000 extra metrics on every record
// and a task-graph edge naming node 30 000 000.
func putHostileRun(t *testing.T, db string) string {
	t.Helper()
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	panels := `{"edges":[[0,1,0.5],[1,2,-0.3],[0,30000000,1]],"components":[[0,1,2,30000000]],"corr":[[1,0.5,0],[0.5,1,-0.3],[0,-0.3,1]]}`
	id, err := st.PutRun(ctx, &store.Run{
		Spec:     spec.Run{Problem: "toy-polygon", Algorithms: []spec.Algo{{Algo: "fw"}}, Iters: 300, Replications: 1, Seed: 1},
		Instance: store.Instance{Dim: 2, Samples: 3, Blocks: 1, Panels: json.RawMessage(panels)},
		Version:  "test", Status: store.StatusRunning, Created: time.Now().UTC(),
		Traces: []store.Trace{{Index: 0, Algo: "fw", Replication: 1, Seed: 1, Status: store.StatusRunning}},
	})
	if err != nil {
		t.Fatal(err)
	}
	recs := make([]solver.Record, 301)
	for k := range recs {
		e := make(map[string]float64, 2000)
		for j := 0; j < 2000; j++ {
			e[fmt.Sprintf("m%04d", j)] = float64(j) / float64(k+1)
		}
		recs[k] = solver.Record{K: k, Passes: float64(k), Step: solver.StepFW, Gamma: 0.1, Objective: solver.F(1 / float64(k+1)), Extra: e}
	}
	for from := 0; from < len(recs); from += 50 {
		if err := st.AppendRecords(ctx, id, 0, recs[from:min(from+50, len(recs))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.SetTrace(ctx, id, 0, store.TraceResult{Status: solver.StatusMaxIters, Summary: &solver.Summary{Status: solver.StatusMaxIters, Iters: 300}}); err != nil {
		t.Fatal(err)
	}
	if err := st.SetStatus(ctx, id, store.StatusDone, time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	return id
}

// A hostile stored run does not freeze the run page: it charts at most 64
// extra metrics and says how many it left out, and draws the task graph
// without the edge to node 30 000 000 (before, 2 007 charts and a graph of
// 30 million nodes hung the page for minutes).
func TestHostileStoredRunKeepsThePageResponsive(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "fwlab.db")
	id := putHostileRun(t, db)
	base, _ := storeServer(t, db)
	ctx := newBrowser(t)
	start := time.Now()
	step(t, ctx, "open the run", 20*time.Second, chromedp.Navigate(base+"/runs/"+id))
	waitFor(t, ctx, "the run loaded", `fwlab.done === true && fwlab.runState.traces[0] && fwlab.runState.traces[0].n === 301`,
		`[fwlab.done, fwlab.runState && fwlab.runState.traces.map(t => t && t.n)]`, 60*time.Second)
	waitFor(t, ctx, "the graph panel", `!!document.querySelector('canvas[data-graph="edges"]')`, `document.querySelector('#panels').outerHTML.slice(0, 400)`, 20*time.Second)
	t.Logf("the page loaded the run in %v; longest stall %.0f ms", time.Since(start).Round(time.Millisecond), eval[float64](t, ctx, `fwlab.perf.maxStallMs`))
	if n := eval[int](t, ctx, `document.querySelectorAll('#extra-charts .uplot').length`); n > 64 {
		t.Errorf("%d extra charts, over 64", n)
	}
	if d := eval[int](t, ctx, `fwlab.extraDropped`); d != 2000-64 {
		t.Errorf("%d extra metrics reported left out, want %d", d, 2000-64)
	}
	if txt := eval[string](t, ctx, `(document.querySelector('#extra-capped') || {}).textContent || ''`); !strings.Contains(txt, "1936 more") {
		t.Errorf("no notice of the metrics left out: %q", txt)
	}
	if txt := eval[string](t, ctx, `(document.querySelector('#panel-notes') || {}).textContent || ''`); !strings.Contains(txt, "1 of 3 task-graph edges left out") {
		t.Errorf("no notice of the edge left out: %q", txt)
	}
	if cap := eval[string](t, ctx, `document.querySelector('figure[data-panel="edges"] figcaption').textContent`); !strings.Contains(cap, "3 tasks, 2 edges") {
		t.Errorf("graph caption %q", cap)
	}
}

// A run whose stored records cannot all be read (a damaged store) shows a
// notice on its page that the trace is incomplete, with how much was
// loaded, and a Retry button that tries again.
func TestIncompleteTraceIsShown(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "fwlab.db")
	base, stop := storeServer(t, db)
	id := postRun(t, base, `{"problem":"toy-polygon","algorithms":[{"algo":"fw"}],"iters":20000,"eval_every":100}`)
	waitRunEnded(t, base, id)
	stop()
	sdb, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sdb.Exec(`DELETE FROM batches WHERE run_id = ? AND first_rec >= 10000`, id)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		t.Fatal("no batch deleted")
	}
	_ = sdb.Close()
	base, _ = storeServer(t, db)
	ctx := newBrowser(t)
	step(t, ctx, "open the run", 20*time.Second, chromedp.Navigate(base+"/runs/"+id))
	waitFor(t, ctx, "the incomplete notice", `!document.querySelector('#trace-incomplete').hidden`,
		`[fwlab.traceIncomplete, document.querySelector('#run-error').textContent]`, 30*time.Second)
	txt := eval[string](t, ctx, `document.querySelector('#trace-incomplete-text').textContent`)
	if !strings.Contains(txt, "of the 20001 records") || !strings.Contains(txt, "Incomplete") {
		t.Errorf("notice %q", txt)
	}
	t.Logf("notice: %s", txt)
	loaded := eval[int](t, ctx, `fwlab.traceIncomplete.loaded`)
	if loaded >= 20001 || loaded < 1 {
		t.Errorf("%d records loaded", loaded)
	}
	// Retry tries the download again; the store is still damaged, so the
	// notice stays.
	if !eval[bool](t, ctx, `(() => { fwlab.traceIncomplete = null; document.querySelector('#trace-retry').click(); return true; })()`) {
		t.Fatal("retry")
	}
	waitFor(t, ctx, "the retry's verdict", `!!fwlab.traceIncomplete && !document.querySelector('#trace-incomplete').hidden`, `fwlab.traceIncomplete`, 30*time.Second)
	// The exports break off visibly too: an error, and nothing saved.
	for _, b := range []string{"export-jsonl", "export-json"} {
		eval[bool](t, ctx, `(() => { document.querySelector('#run-error').textContent = ''; return true; })()`)
		step(t, ctx, "export "+b, 5*time.Second, chromedp.Click(chromedp.ID(b)))
		waitFor(t, ctx, b+" failing", `document.querySelector('#run-error').textContent.includes('broke off')`, `[document.querySelector('#run-error').textContent, fwlab.exports]`, 30*time.Second)
	}
	if n := eval[int](t, ctx, `(fwlab.exports || []).length`); n != 0 {
		t.Errorf("%d broken exports were saved", n)
	}
}
