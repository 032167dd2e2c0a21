package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// sideBySide is a two-algorithm LASSO run that solves for far longer than
// the test watches it (it is stopped): ssfw-as with the slack collapse (its
// batch grows slowly: it does not stop at the rounding floor), so
// that its trace is named "ssfw-as + slack collapse", beside fista.
const sideBySide = `{"problem":"lasso","params":{"n":"2000","p":"200"},"algorithms":[{"algo":"ssfw-as","rho":0.001},{"algo":"fista"}],"iters":%d}`

// TestRunPageTracesSideBySide: the live run page of a two-algorithm run
// streams both traces at once on every store: while the page shows both
// traces running, both record counts on the page grow within the same
// second, in two windows of a second one after the other. Its traces are
// named as the in-process server names them; the run ran where the
// backend runs runs (on the cluster: on one of its workers).
//
// It runs alone (no t.Parallel): it reads the page's records second by second.
func TestRunPageTracesSideBySide(t *testing.T) { onBothStores(t, runPageTracesSideBySide) }

func runPageTracesSideBySide(t *testing.T, be *backend) {
	want := referenceTraceNames(t, fmt.Sprintf(sideBySide, 1))
	id := postRun(t, be.url, fmt.Sprintf(sideBySide, 1000000))
	defer stopRun(be.url, id)
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	step(t, ctx, "open the run", 20*time.Second, chromedp.Navigate(be.url+"/runs/"+id))
	waitFor(t, ctx, "both traces on the page", `window.fwlab && fwlab.status === 'running' && fwlab.traces.length === 2`,
		`window.fwlab && [fwlab.status, fwlab.traces.map(t => [t.algo, t.status, t.n])]`, 90*time.Second)
	if got := eval[[]string](t, ctx, `fwlab.traces.map(t => t.algo)`); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("the page names the traces %q, the in-process server %q", got, want)
	}
	bothGrowTogether(t, ctx, 2, 90*time.Second)
	be.checkRanHere(t, id)
	var st struct{ Traces []struct{ Algo string } }
	if err := json.Unmarshal(httpGet(t, be.url+"/api/runs/"+id), &st); err != nil {
		t.Fatal(err)
	}
	var api []string
	for _, tr := range st.Traces {
		api = append(api, tr.Algo)
	}
	if strings.Join(api, "|") != strings.Join(want, "|") {
		t.Errorf("GET /api/runs/%s names the traces %q, the in-process server %q", id, api, want)
	}
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}

// bothGrowTogether waits until, in windows consecutive windows of one
// second one after the other, every trace of the run page is running at
// the window's start and end and has more records on the page at its end
// than at its start: the traces stream at once, not one after the other
// (one trace ending as the next starts would leave one of them ended).
func bothGrowTogether(t *testing.T, ctx context.Context, windows int, d time.Duration) {
	t.Helper()
	type sample struct {
		at      time.Time
		running bool
		n       []int
	}
	read := func() sample {
		v := eval[struct {
			Running bool  `json:"running"`
			N       []int `json:"n"`
		}](t, ctx, `({running: fwlab.status === 'running' && fwlab.traces.length > 1 && fwlab.traces.every(t => t.status === 'running'), n: fwlab.traces.map(t => t.n)})`)
		return sample{time.Now(), v.Running, v.N}
	}
	deadline := time.Now().Add(d)
	start := read()
	in, last := 0, start
	var seen []string
	for in < windows {
		if time.Now().After(deadline) {
			t.Fatalf("in %v the page never showed every trace's records growing within the same second %d times in a row; per second (running, records): %s", d, windows, strings.Join(seen, " "))
		}
		time.Sleep(time.Second - time.Since(start.at))
		last = read()
		seen = append(seen, fmt.Sprintf("(%v %v)", last.running, last.n))
		grew := start.running && last.running && len(last.n) == len(start.n)
		for i := range last.n {
			grew = grew && i < len(start.n) && last.n[i] > start.n[i]
		}
		if grew {
			in++
		} else {
			in = 0
		}
		start = last
	}
}

// referenceTraceNames runs spec on the server in this process (in-memory)
// and returns its traces' names.
func referenceTraceNames(t *testing.T, spec string) []string {
	t.Helper()
	ts := app(t)
	id := postRun(t, ts.URL, spec)
	waitRunEnded(t, ts.URL, id)
	var st struct{ Traces []struct{ Algo string } }
	if err := json.Unmarshal(httpGet(t, ts.URL+"/api/runs/"+id), &st); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tr := range st.Traces {
		names = append(names, tr.Algo)
	}
	if len(names) == 0 {
		t.Fatalf("the in-process server made no traces of %s", spec)
	}
	return names
}

// TestEndedTraceShownWhileRunRuns: on every store, a trace that ends while
// another still runs shows its final status on the run page at once, in
// fwlab.traces and in the traces table (on the cluster its worker writes
// the trace's end, and the page follows the store): bc-ssfw-as converges
// on GFLASSO within some thousand iterations while spg goes on.
func TestEndedTraceShownWhileRunRuns(t *testing.T) {
	t.Parallel()
	onBothStores(t, func(t *testing.T, be *backend) {
		id := postRun(t, be.url, `{"problem":"gflasso","algorithms":[{"algo":"bc-ssfw-as"},{"algo":"spg"}],"iters":1000000}`)
		defer stopRun(be.url, id)
		ctx := newBrowser(t)
		errs := watchConsole(t, ctx)
		step(t, ctx, "open the run", 20*time.Second, chromedp.Navigate(be.url+"/runs/"+id))
		waitFor(t, ctx, "the first trace converged while the second runs",
			`window.fwlab && fwlab.status === 'running' && fwlab.traces.length === 2 && fwlab.traces[0].status === 'converged' && fwlab.traces[1].status === 'running'`,
			`window.fwlab && [fwlab.status, fwlab.traces.map(t => [t.algo, t.status, t.n])]`, 90*time.Second)
		// the table follows at the page's next draw
		rows := `Array.from(document.querySelectorAll('#legend tbody tr')).map(r => r.children[2].textContent)`
		waitFor(t, ctx, "the traces table: the first converged, the second running",
			`fwlab.status === 'running' && `+rows+`.join() === 'converged,running'`, `[fwlab.status, `+rows+`]`, 30*time.Second)
		be.checkRanHere(t, id)
		for _, e := range errs.take() {
			t.Errorf("console: %s", e)
		}
	})
}
