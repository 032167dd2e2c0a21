package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fwlab/fwlab/internal/pgtest"
)

// proc is a dashboard process started by a test: its first line on
// standard output names its address; the rest of its output is kept for
// the test's failure messages.
type proc struct {
	url string
	cmd *exec.Cmd
	mu  sync.Mutex
	out bytes.Buffer
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

type procWriter struct{ p *proc }

func (w procWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	return w.p.out.Write(b)
}

// startProc starts bin with args and waits for the line that names its
// address (http://…); the process is killed at the test's end.
func startProc(t *testing.T, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(bin, args...)}
	p.cmd.Stderr = procWriter{p}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.cmd.Process.Kill(); _ = p.cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() {
		t.Fatalf("%s %v printed nothing: %s", bin, args, p.output())
	}
	line := sc.Text()
	i := strings.Index(line, "http://")
	if i < 0 {
		t.Fatalf("%s %v printed %q", bin, args, line)
	}
	p.url = strings.TrimSuffix(strings.Fields(line[i:])[0], "/")
	go func() { _, _ = io.Copy(procWriter{p}, stdout) }()
	return p
}

// buildDashboard returns the dashboard command built from this module (one
// build per run of the test binary: dashboardBinary).
func buildDashboard(t *testing.T) string {
	t.Helper()
	return dashboardBinary(t)
}

// TestWorkerRunPage: `dashboard serve -db postgres://… -slots 0` runs
// nothing itself; two `dashboard worker` processes run what its pages start.
//   - A teaching run's page opened while the run waits for a worker shows it
//     queued, without the teaching view (no instance yet); once a worker has
//     built it the page fetches the instance's panels, shows the teaching
//     view and the worker's name, and streams the records while the run
//     runs; Stop ends it on its worker.
//   - A sweep started from the start page runs on the two workers: its page
//     fills in live (cells ended while others still run), and a cell's run
//     page streams while the cell runs.
func TestWorkerRunPage(t *testing.T) {
	t.Parallel()
	c := pgtest.Shared(t)
	db := c.NewDB(t)
	bin := buildDashboard(t)
	srv := startProc(t, bin, "serve", "-db", db, "-slots", "0", "-addr", "127.0.0.1:0", "-data", "")
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	shots := t.TempDir()

	// About 30 s of solving on a quiet machine: it still runs when Stop is
	// clicked, however fast the machine.
	id := postRun(t, srv.url, `{"problem":"toy-polygon","params":{"target":"edge","vertices":"12","cond":"1000","samples":"100000"},"algorithms":[{"algo":"fista"}],"iters":150000}`)
	defer stopRun(srv.url, id)
	step(t, ctx, "open the queued run", 20*time.Second, chromedp.Navigate(srv.url+"/runs/"+id))
	waitFor(t, ctx, "the queued run", `window.fwlab && fwlab.status === 'queued'`, `window.fwlab && fwlab.status`, 15*time.Second)
	if eval[bool](t, ctx, `!!(fwlab.teach && fwlab.teach.drawn)`) {
		t.Fatal("the teaching view is drawn before any worker built the instance")
	}
	var workers []*proc
	for _, name := range []string{"w1", "w2"} {
		workers = append(workers, startProc(t, bin, "worker", "-db", db, "-name", name, "-slots", "1", "-metrics-addr", "127.0.0.1:0"))
	}
	outputs := func() string {
		var b strings.Builder
		for i, w := range workers {
			fmt.Fprintf(&b, "--- worker %d:\n%s\n", i+1, w.output())
		}
		return b.String() + "--- server:\n" + srv.output()
	}
	waitFor(t, ctx, "the teaching view of the run on a worker", `fwlab.status === 'running' && !fwlab.done && fwlab.teach && fwlab.teach.drawn && fwlab.teach.planes && fwlab.teach.planes.length === 1 && fwlab.teach.ks.every((k) => k > 0)`,
		`[fwlab.status, fwlab.done, fwlab.teach, fwlab.traces.map(t => t.n), document.querySelector('#run-info').textContent]`, 60*time.Second)
	// the instance's description and F* came with it
	if info := eval[string](t, ctx, `document.querySelector('#run-info').textContent`); !strings.Contains(info, "p = 2") || !strings.Contains(info, "F* = ") {
		t.Errorf("the run's line says %q once a worker built the instance, want p = 2 and F*", info)
	}
	if m := eval[string](t, ctx, `document.querySelector('#objmode').value`); m != "fstar" {
		t.Errorf("the objective shows %q once F* is known, want fstar", m)
	}
	badge := eval[string](t, ctx, `(document.querySelector('#run-worker') || {}).textContent || ''`)
	if !strings.Contains(badge, "w1") && !strings.Contains(badge, "w2") {
		t.Errorf("the page names the worker %q, want w1 or w2", badge)
	}
	n0 := eval[int](t, ctx, `fwlab.traces[0].n`)
	waitFor(t, ctx, "records streamed while the run runs", fmt.Sprintf(`fwlab.status === 'running' && fwlab.traces[0].n > %d`, n0), `[fwlab.status, fwlab.traces[0].n]`, 30*time.Second)
	shot(t, ctx, shots, "worker-run.png")
	step(t, ctx, "stop", 5*time.Second, chromedp.Click(chromedp.ID("btn-stop")))
	waitFor(t, ctx, "the run cancelled on its worker", `fwlab.status === 'cancelled'`, `fwlab.status`, 30*time.Second)
	var st struct{ Status, Worker string }
	if err := json.Unmarshal(httpGet(t, srv.url+"/api/runs/"+id), &st); err != nil || st.Status != "cancelled" || (st.Worker != "w1" && st.Worker != "w2") {
		t.Errorf("the stopped run: %+v %v; want cancelled on w1 or w2\n%s", st, err, outputs())
	}

	// A sweep from the start page, on the workers, over the iteration
	// limit: five short cells (a quarter to half a second of solving each
	// on a quiet machine, 10000 samples) and a long last one (about 4 s),
	// six cells on the workers' two slots. The long cell is the one
	// watched below: it is still queued or running when the short ones
	// end, and runs long enough for its page to see it stream. (Six cells
	// of 2.5 s each cost 15 s of CPU for the same checks.)
	base := `{"problem":"toy-polygon","params":{"target":"edge","vertices":"12","cond":"1000","samples":"10000"},"algorithms":[{"algo":"fista"}],"iters":100000}`
	step(t, ctx, "load the start page", 20*time.Second, chromedp.Navigate(srv.url+"/?spec="+url.QueryEscape(base)))
	waitFor(t, ctx, "the start page's script", `document.body.dataset.ready === '1'`, `document.body.outerHTML.slice(0, 300)`, 10*time.Second)
	if got := eval[string](t, ctx, `document.querySelector('#run-iters').value`); got != "100000" {
		t.Fatalf("the start page took the spec's iters as %q", got)
	}
	step(t, ctx, "open the sweep control", 5*time.Second, chromedp.Click(chromedp.CSS(`#sweep-card summary`)))
	waitFor(t, ctx, "the parameters", `document.querySelector('#sweep-card').open && Array.from(document.querySelectorAll('#sweep-param-0 option')).some(o => o.value === 'iters')`, `document.querySelector('#sweep-param-0').innerHTML`, 5*time.Second)
	choose(t, ctx, "#sweep-param-0", "iters")
	choose(t, ctx, "#sweep-values-0", "10000 12000 14000 16000 18000 150000")
	// the instance's summary settles first: the button stays where it is
	waitFor(t, ctx, "the instance summary", `(() => { const e = document.querySelector('#instance-summary'); return e.dataset.state !== 'loading' && e.textContent !== ''; })()`, `document.querySelector('#instance-summary').textContent`, 30*time.Second)
	step(t, ctx, "start the sweep", 5*time.Second, chromedp.Click(chromedp.ID("start-sweep")))
	waitFor(t, ctx, "the sweep page", `location.pathname.startsWith('/sweeps/') && window.fwlab && fwlab.sweep && fwlab.sweep.polls > 0`, `[location.href.slice(0,40), document.querySelector('#sweep-count').textContent, document.querySelector('#sweep-card').open, ...Array.from(document.querySelectorAll('[data-error-for], .error-summary')).map(e => e.id + ':' + e.textContent).filter(s => s.length > 20)]`, 15*time.Second)
	sweepURL := eval[string](t, ctx, `location.href`)
	waitFor(t, ctx, "the sweep filling in: cells ended while others run", `fwlab.sweep.cells.length === 6 && fwlab.sweep.cells.some(c => c.status === 'done') && fwlab.sweep.cells.some(c => c.status !== 'done')`,
		`JSON.stringify(fwlab.sweep.cells.map(c => c.status))`, 120*time.Second)
	// the long cell, still to end: its run page streams while it runs
	cell := eval[string](t, ctx, `(fwlab.sweep.cells.find(c => c.run && c.status !== 'done' && c.values && Number(c.values.iters) === 150000) || {}).run || ''`)
	if cell == "" {
		t.Fatalf("the long cell is not left to watch: %s", eval[string](t, ctx, `JSON.stringify(fwlab.sweep.cells)`))
	}
	step(t, ctx, "open a running cell", 20*time.Second, chromedp.Navigate(srv.url+"/runs/"+cell))
	waitFor(t, ctx, "the cell running", `window.fwlab && fwlab.traces && fwlab.traces.length > 0 && fwlab.traces[0].n > 0 && fwlab.status === 'running'`, `window.fwlab && [fwlab.status, fwlab.traces && fwlab.traces.map(t => t.n)]`, 60*time.Second)
	n := eval[int](t, ctx, `fwlab.traces[0].n`)
	waitFor(t, ctx, "the cell's records streaming", fmt.Sprintf(`fwlab.status === 'running' && fwlab.traces[0].n > %d`, n), `[fwlab.status, fwlab.traces.map(t => t.n)]`, 30*time.Second)
	step(t, ctx, "back to the sweep", 20*time.Second, chromedp.Navigate(sweepURL))
	waitFor(t, ctx, "every cell done", `window.fwlab && fwlab.sweep && fwlab.sweep.cells.length === 6 && fwlab.sweep.cells.every(c => c.status === 'done')`,
		`JSON.stringify(fwlab.sweep.cells.map(c => c.status))`, 180*time.Second)
	shot(t, ctx, shots, "worker-sweep.png")
	// both workers took cells
	ran := map[string]int{}
	for _, c := range eval[[]string](t, ctx, `fwlab.sweep.cells.map(c => c.run)`) {
		var st struct{ Worker string }
		if err := json.Unmarshal(httpGet(t, srv.url+"/api/runs/"+c), &st); err != nil {
			t.Fatal(err)
		}
		ran[st.Worker]++
	}
	if ran["w1"] == 0 || ran["w2"] == 0 || ran["w1"]+ran["w2"] != 6 {
		t.Errorf("the cells ran on %v, want both workers and all six\n%s", ran, outputs())
	}
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
	if resp, err := http.Get(srv.url + "/healthz"); err == nil {
		resp.Body.Close()
	}
}
