package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fwlab/fwlab/internal/pgtest"
)

// TestWorkerRunPagePauseStepResume: the run page's pause, step, resume and
// stop buttons act on a run executing on a `dashboard worker` process of a
// -slots 0 server: paused, the page's buttons offer resume and step and
// its records stop; a step adds exactly one record; resumed, it streams
// again; stopped while paused, it ends cancelled.
func TestWorkerRunPagePauseStepResume(t *testing.T) {
	t.Parallel()
	c := pgtest.Shared(t)
	db := c.NewDB(t)
	bin := buildDashboard(t)
	srv := startProc(t, bin, "serve", "-db", db, "-slots", "0", "-addr", "127.0.0.1:0", "-data", "")
	startProc(t, bin, "worker", "-db", db, "-name", "w1", "-slots", "1", "-metrics-addr", "127.0.0.1:0")
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	id := postRun(t, srv.url, `{"problem":"toy-polygon","params":{"target":"edge","vertices":"12","cond":"1000","samples":"20000"},"algorithms":[{"algo":"fista"}],"iters":400000}`)
	defer stopRun(srv.url, id)
	records := func() int {
		var st struct{ Records int }
		if err := json.Unmarshal(httpGet(t, srv.url+"/api/runs/"+id), &st); err != nil {
			t.Fatal(err)
		}
		return st.Records
	}
	steady := func() int {
		last, since := records(), time.Now()
		for deadline := since.Add(30 * time.Second); time.Since(since) < 1500*time.Millisecond; {
			if time.Now().After(deadline) {
				t.Fatalf("the records never stopped growing (%d)", last)
			}
			time.Sleep(100 * time.Millisecond)
			if n := records(); n != last {
				last, since = n, time.Now()
			}
		}
		return last
	}
	step(t, ctx, "open the run", 20*time.Second, chromedp.Navigate(srv.url+"/runs/"+id))
	waitFor(t, ctx, "the run streaming from its worker", `window.fwlab && fwlab.status === 'running' && fwlab.traces.length > 0 && fwlab.traces[0].n > 0 && !document.querySelector('#btn-pause').disabled`,
		`window.fwlab && [fwlab.status, fwlab.traces && fwlab.traces.map(t => t.n)]`, 60*time.Second)
	step(t, ctx, "pause", 5*time.Second, chromedp.Click(chromedp.ID("btn-pause")))
	waitFor(t, ctx, "the page paused", `fwlab.status === 'paused' && !document.querySelector('#btn-resume').disabled && !document.querySelector('#btn-step').disabled && document.querySelector('#btn-pause').disabled`,
		`[fwlab.status, document.querySelector('#btn-resume').disabled, document.querySelector('#btn-step').disabled]`, 10*time.Second)
	n := steady()
	step(t, ctx, "step", 5*time.Second, chromedp.Click(chromedp.ID("btn-step")))
	waitFor(t, ctx, "the step's record on the page", fmt.Sprintf(`fwlab.status === 'paused' && fwlab.traces[0].n === %d`, n+1), `[fwlab.status, fwlab.traces[0].n]`, 20*time.Second)
	if got := steady(); got != n+1 {
		t.Errorf("a step from %d records made %d, want exactly one more", n, got)
	}
	step(t, ctx, "resume", 5*time.Second, chromedp.Click(chromedp.ID("btn-resume")))
	waitFor(t, ctx, "the run streaming again", fmt.Sprintf(`fwlab.status === 'running' && fwlab.traces[0].n > %d`, n+100), `[fwlab.status, fwlab.traces[0].n]`, 30*time.Second)
	step(t, ctx, "pause again", 5*time.Second, chromedp.Click(chromedp.ID("btn-pause")))
	waitFor(t, ctx, "paused again", `fwlab.status === 'paused'`, `fwlab.status`, 10*time.Second)
	// a paused run keeps its worker's slot, and the badge's help says so
	if help := eval[string](t, ctx, `document.querySelector('#run-status').title`); !strings.Contains(help, "keeps its slot") {
		t.Errorf("the paused badge's help on a worker's run: %q", help)
	}
	step(t, ctx, "stop", 5*time.Second, chromedp.Click(chromedp.ID("btn-stop")))
	waitFor(t, ctx, "the run cancelled on its worker", `fwlab.status === 'cancelled'`, `fwlab.status`, 30*time.Second)
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}
