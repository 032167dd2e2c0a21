package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fwlab/fwlab/fw/live"
	"github.com/fwlab/fwlab/internal/solver"
)

// A Go program logs a run to a live server (package fw/live): the run page
// shows its records arriving batch by batch while it runs, badged as
// opened from outside and without a pause; the run ends done; History
// lists it with the badge; it compares with a catalogue run.
func TestOutsideRunFromGo(t *testing.T) {
	t.Parallel()
	onBothStores(t, testOutsideRunFromGo)
}

func testOutsideRunFromGo(t *testing.T, be *backend) {
	base := be.url
	cat := postRun(t, base, quickToy)
	waitRunEnded(t, base, cat)
	fstar := 0.0
	run, err := live.Open(context.Background(), base, live.RunInfo{Problem: "a descent of my own", Traces: []string{"pgd"}, FStar: &fstar, Iters: 300,
		FlushInterval: time.Hour}) // batches only when flushed: the test decides when records arrive
	if err != nil {
		t.Fatal(err)
	}
	k := 0
	logBatch := func(n int) {
		t.Helper()
		for range n {
			obj, gap := 1/float64(k+1), 2/float64(k+1)
			if err := run.Record("pgd", solver.Record{K: k, Passes: float64(k), Step: "pgd", Gamma: 0.5, Active: 1, Objective: &obj, Gap: &gap,
				Extra: map[string]float64{"step_norm": gap / 2}}); err != nil {
				t.Fatal(err)
			}
			k++
		}
		if err := run.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	logBatch(40)
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	step(t, ctx, "open the run page", 20*time.Second, chromedp.Navigate(base+"/runs/"+run.ID))
	waitFor(t, ctx, "the first batch", `fwlab.status === 'running' && fwlab.traces.length === 1 && fwlab.traces[0].n === 40`, `[fwlab.status, (fwlab.traces || []).map(t => t.n)]`, 30*time.Second)
	if !eval[bool](t, ctx, `!!document.querySelector('#run-outside') && document.querySelector('#btn-pause').disabled`) {
		t.Error("the run page has no outside badge, or offers a pause")
	}
	for _, n := range []int{60, 100} {
		logBatch(n)
		waitFor(t, ctx, fmt.Sprintf("the page at %d records, live", k), fmt.Sprintf(`fwlab.status === 'running' && fwlab.traces[0].n === %d && fwlab.traces[0].lastK === %d && fwlab.charts.objective.drawn > 0`, k, k-1),
			`[fwlab.status, fwlab.traces[0].n, fwlab.traces[0].lastK]`, 30*time.Second)
	}
	if err := run.End(solver.StatusConverged); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the end", `fwlab.done === true && fwlab.status === 'done' && fwlab.traces[0].n === 200`, `[fwlab.status, fwlab.done, fwlab.traces[0].n]`, 30*time.Second)
	// ended, it still offers no re-run: nothing of fwlab's made it
	if !eval[bool](t, ctx, `document.querySelector('#btn-verify').disabled && document.querySelector('#edit-spec').hidden`) {
		t.Error("the ended run page offers to verify or to edit and rerun a run opened from outside")
	}
	checkOutsideInHistoryAndCompare(t, ctx, base, run.ID, cat, 200)
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}

// The same through the Python client (examples/live_lsq.py, Debian's
// python3 and its standard library): the page shows both traces' records
// arriving while the script runs, the run ends done, it is in History and
// compares with a catalogue run.
func TestOutsideRunFromPython(t *testing.T) {
	t.Parallel()
	onBothStores(t, testOutsideRunFromPython)
}

func testOutsideRunFromPython(t *testing.T, be *backend) {
	const python = "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s: %v (CI=true: the Python client's test must run)", python, err)
		}
		t.Skipf("%s: %v", python, err)
	}
	base := be.url
	cat := postRun(t, base, quickToy)
	waitRunEnded(t, base, cat)
	// 2 × 121 records 60 ms apart: the script runs about 15 s, time for the
	// page to open and see it run on a busy machine (at 20 ms apart, 5 s,
	// a page opened beside two busy loops saw the run done already)
	const iters = 120
	cmd := exec.Command(python, filepath.Join("..", "..", "examples", "live_lsq.py"), "--url", base, "--iters", fmt.Sprint(iters), "--n", "8", "--delay", "0.06")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := bufio.NewScanner(out)
	if !lines.Scan() {
		t.Fatalf("the script printed no page: %s", stderr.String())
	}
	page := lines.Text()
	id := page[strings.LastIndex(page, "/")+1:]
	if page != base+"/runs/"+id {
		t.Fatalf("the script printed %q, want its run's page", page)
	}
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	step(t, ctx, "open the run page", 20*time.Second, chromedp.Navigate(page))
	waitFor(t, ctx, "records arriving while the script runs", `fwlab.status === 'running' && fwlab.traces.length === 2 && fwlab.traces[0].n > 0`, `[fwlab.status, (fwlab.traces || []).map(t => t.n)]`, 60*time.Second)
	first := eval[int](t, ctx, `fwlab.traces[0].n + fwlab.traces[1].n`)
	waitFor(t, ctx, "more records, still running", fmt.Sprintf(`fwlab.status === 'running' && fwlab.traces[0].n + fwlab.traces[1].n > %d`, first), `[fwlab.status, fwlab.traces.map(t => t.n)]`, 60*time.Second)
	if !lines.Scan() || !strings.HasSuffix(lines.Text(), id+": done") {
		t.Fatalf("the script's last line %q, want run %s: done (%s)", lines.Text(), id, stderr.String())
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the script: %v: %s", err, stderr.String())
	}
	waitFor(t, ctx, "the end", fmt.Sprintf(`fwlab.done === true && fwlab.status === 'done' && fwlab.traces.every(t => t.n === %d)`, iters+1), `[fwlab.status, fwlab.done, fwlab.traces.map(t => t.n)]`, 30*time.Second)
	checkOutsideInHistoryAndCompare(t, ctx, base, id, cat, 2*(iters+1))
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}

// checkOutsideInHistoryAndCompare: History lists the run opened from
// outside with its badge beside the catalogue run, and the compare page
// overlays the two, the outside run with all its records.
func checkOutsideInHistoryAndCompare(t *testing.T, ctx context.Context, base, id, cat string, records int) {
	t.Helper()
	step(t, ctx, "open the history", 20*time.Second, chromedp.Navigate(base+"/runs"))
	waitFor(t, ctx, "both runs listed", fmt.Sprintf(`fwlab.history && fwlab.history.rows.some(r => r.id === %q) && fwlab.history.rows.some(r => r.id === %q)`, id, cat), `fwlab.history`, 20*time.Second)
	waitFor(t, ctx, "the outside badge on its row only", fmt.Sprintf(`!!document.querySelector('tr[data-run=%q] .outside-badge') && !document.querySelector('tr[data-run=%q] .outside-badge')`, id, cat),
		`document.querySelector('#history tbody') && document.querySelector('#history tbody').innerHTML.slice(0, 400)`, 10*time.Second)
	step(t, ctx, "open the compare page", 20*time.Second, chromedp.Navigate(base+"/compare?runs="+cat+","+id))
	waitFor(t, ctx, "the overlay", `fwlab.compare && fwlab.compare.loaded && fwlab.charts.objective && fwlab.charts.objective.drawn > 0`, `[document.querySelector('#run-error').textContent, fwlab.compare]`, 30*time.Second)
	type group struct {
		Run string `json:"run"`
		N   int    `json:"n"`
	}
	got := map[string]int{}
	for _, g := range eval[[]group](t, ctx, `fwlab.compare.groups`) {
		got[g.Run] += g.N
	}
	if got[id] != records || got[cat] == 0 {
		t.Errorf("the compare page draws %v records by run, want %d of run %s and the catalogue run's", got, records, id)
	}
}
