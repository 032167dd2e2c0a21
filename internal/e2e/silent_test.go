package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fwlab/fwlab/internal/pgtest"
)

// TestSilentWorkerOnThePages: a worker process killed with kill -9 while it
// runs a sweep's cell is called silent, with the time left until its run
// is queued again, on the run page within 10 s (the page asks although
// the stream has nothing new to say), and on the sweep page and History.
//
// It runs alone (no t.Parallel): it times the page (within 10 s).
func TestSilentWorkerOnThePages(t *testing.T) {
	db := pgtest.Shared(t).NewDB(t)
	bin := buildDashboard(t)
	srv := startProc(t, bin, "serve", "-db", db, "-slots", "0", "-addr", "127.0.0.1:0", "-data", "")
	w := startProc(t, bin, "worker", "-db", db, "-name", "w1", "-slots", "1", "-metrics-addr", "127.0.0.1:0")
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	base := `{"problem":"toy-polygon","params":{"target":"edge","vertices":"12","cond":"1000","samples":"100000"},"algorithms":[{"algo":"fista"}],"iters":150000}`
	res, err := http.Post(srv.url+"/api/sweeps", "application/json", strings.NewReader(`{"base":`+base+`,"axes":[{"param":"seed","values":[1]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var sw struct{ ID string }
	json.NewDecoder(res.Body).Decode(&sw)
	res.Body.Close()
	if res.StatusCode != http.StatusCreated || sw.ID == "" {
		t.Fatalf("POST /api/sweeps: %d", res.StatusCode)
	}
	var id string
	deadline := time.Now().Add(time.Minute)
	for id == "" && time.Now().Before(deadline) {
		var got struct {
			Cells []struct{ Run, Status string }
		}
		if json.Unmarshal(httpGet(t, srv.url+"/api/sweeps/"+sw.ID), &got) == nil && len(got.Cells) == 1 && got.Cells[0].Status == "running" {
			id = got.Cells[0].Run
		}
		time.Sleep(200 * time.Millisecond)
	}
	if id == "" {
		t.Fatalf("the sweep's cell never ran\n%s", w.output())
	}
	defer stopRun(srv.url, id)
	step(t, ctx, "open the cell's run", 20*time.Second, chromedp.Navigate(srv.url+"/runs/"+id))
	waitFor(t, ctx, "the run streaming on w1", `window.fwlab && fwlab.status === 'running' && fwlab.traces && fwlab.traces[0].n > 0 && (document.querySelector('#run-worker') || {}).textContent === ' on w1'`,
		`window.fwlab && [fwlab.status, fwlab.traces && fwlab.traces.map(t => t.n)]`, 60*time.Second)
	if s := eval[string](t, ctx, `(document.querySelector('#run-silent') || {}).textContent || ''`); s != "" {
		t.Errorf("a beating worker is called silent: %q", s)
	}
	if err := w.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	waitFor(t, ctx, "the run page to call w1 silent", `/worker w1 silent for \d+ s; queued again in \d+ s/.test((document.querySelector('#run-silent') || {}).textContent || '')`,
		`[(document.querySelector('#run-silent') || {}).textContent, fwlab.status]`, 30*time.Second)
	if took := time.Since(killed); took > 10*time.Second {
		t.Errorf("the run page called w1 silent %v after kill -9, want within 10 s", took)
	}
	step(t, ctx, "open the sweep page", 20*time.Second, chromedp.Navigate(srv.url+"/sweeps/"+sw.ID))
	waitFor(t, ctx, "the sweep page to call w1 silent", `/worker w1 silent for/.test(Array.from(document.querySelectorAll('#sweep-cells .worker-silent')).map(e => e.textContent).join())`,
		`document.querySelector('#sweep-cells') && document.querySelector('#sweep-cells').textContent`, 20*time.Second)
	step(t, ctx, "open History", 20*time.Second, chromedp.Navigate(srv.url+"/runs"))
	waitFor(t, ctx, "History to call w1 silent", `/worker w1 silent for/.test(Array.from(document.querySelectorAll('.worker-silent')).map(e => e.textContent).join())`,
		`document.body.textContent.slice(0, 400)`, 20*time.Second)
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}
