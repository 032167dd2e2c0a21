package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fwlab/fwlab/internal/bundle"
)

// TestVerifyButton: on a finished run's page, Verify re-runs it through the
// queue and the page shows the outcome once the re-run ends (reproduced,
// with the records compared), linking the re-run; History marks the run
// reproduced.
func TestVerifyButton(t *testing.T) {
	t.Parallel()
	onBothStores(t, testVerifyButton)
}

func testVerifyButton(t *testing.T, be *backend) {
	base := be.url
	// a fixed evaluation cadence, so the short run is evaluated often (the
	// default cadence, decided by work, reproduces as well)
	id := postRun(t, base, `{"problem":"lasso","algorithms":[{"algo":"ssfw-as"},{"algo":"afw"}],"iters":60,"eval_every":4}`)
	waitRunEnded(t, base, id)
	var st struct{ Traces []struct{ Records int } }
	if err := json.Unmarshal(httpGet(t, base+"/api/runs/"+id), &st); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tr := range st.Traces {
		n += tr.Records
	}
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	step(t, ctx, "open the run", 20*time.Second, chromedp.Navigate(base+"/runs/"+id))
	waitFor(t, ctx, "the Verify button", `document.querySelector('#verify-status').dataset.outcome === 'none' && !document.querySelector('#btn-verify').disabled`,
		`[document.querySelector('#verify-status').textContent, document.querySelector('#btn-verify').disabled]`, 20*time.Second)
	if got := eval[string](t, ctx, `document.querySelector('#verify-status').textContent`); got != "not verified here" {
		t.Errorf("before: %q", got)
	}
	step(t, ctx, "verify", 5*time.Second, chromedp.Click(chromedp.ID("btn-verify")))
	waitFor(t, ctx, "the outcome", `!['none', 'pending'].includes(document.querySelector('#verify-status').dataset.outcome)`,
		`document.querySelector('#verify-status').textContent`, 60*time.Second)
	text := eval[string](t, ctx, `document.querySelector('#verify-status').textContent`)
	if o := eval[string](t, ctx, `document.querySelector('#verify-status').dataset.outcome`); o != "reproduced" {
		t.Errorf("the outcome is %s: %q", o, text)
	}
	if want := fmt.Sprintf("reproduced, %d records identical", n); !strings.Contains(text, want) || !strings.Contains(text, "verified here") {
		t.Errorf("the page says %q, want %q", text, want)
	}
	rerun := eval[string](t, ctx, `(document.querySelector('#verify-status a') || {}).textContent || ''`)
	if rerun == "" || rerun == id {
		t.Errorf("the re-run is not linked: %q", rerun)
	}
	be.checkRanHere(t, id)
	be.checkRanHere(t, rerun)
	step(t, ctx, "open the history", 20*time.Second, chromedp.Navigate(base+"/runs"))
	waitFor(t, ctx, "the badge", fmt.Sprintf(`(() => { const b = document.querySelector('tr[data-run="%s"] .verified'); return !!b && b.textContent.includes('reproduced'); })()`, id),
		`document.querySelector('#history-table') && document.querySelector('#history-table').innerHTML.slice(0, 2000)`, 20*time.Second)
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}

// TestVerifySweepButton: the sweep page's "Verify every cell" verifies each
// cell's run through the queue.
func TestVerifySweepButton(t *testing.T) {
	t.Parallel()
	onBothStores(t, testVerifySweepButton)
}

func testVerifySweepButton(t *testing.T, be *backend) {
	base := be.url
	doc := `{"base":{"problem":"lasso","algorithms":[{"algo":"afw"}],"iters":40,"eval_every":2},"axes":[{"param":"seed","values":[1,2]}]}`
	res, err := http.Post(base+"/api/sweeps", "application/json", strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	var created struct{ ID string }
	err = json.NewDecoder(res.Body).Decode(&created)
	res.Body.Close()
	if res.StatusCode != 201 || err != nil {
		t.Fatalf("POST sweep: %d %v", res.StatusCode, err)
	}
	var sw struct {
		Status string
		Cells  []struct{ Run string }
	}
	deadline := time.Now().Add(60 * time.Second)
	for sw.Status != "done" {
		if time.Now().After(deadline) {
			t.Fatalf("the sweep did not end: %+v", sw)
		}
		time.Sleep(100 * time.Millisecond)
		_ = json.Unmarshal(httpGet(t, base+"/api/sweeps/"+created.ID), &sw)
	}
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	step(t, ctx, "open the sweep", 20*time.Second, chromedp.Navigate(base+"/sweeps/"+created.ID))
	waitFor(t, ctx, "the page", `fwlab.sweep && fwlab.sweep.status === 'done'`, `fwlab.sweep`, 20*time.Second)
	step(t, ctx, "verify every cell", 5*time.Second, chromedp.Click(chromedp.ID("sweep-verify")))
	waitFor(t, ctx, "the answer", `document.querySelector('#sweep-verify-status').textContent.includes('verifying 2 cells')`,
		`document.querySelector('#sweep-verify-status').textContent`, 10*time.Second)
	for _, c := range sw.Cells {
		deadline := time.Now().Add(60 * time.Second)
		for {
			var vs struct {
				Verifications []struct {
					Outcome string
					RerunID string `json:"rerun_id"`
				}
			}
			_ = json.Unmarshal(httpGet(t, base+"/api/runs/"+c.Run+"/verifications"), &vs)
			if len(vs.Verifications) > 0 {
				if vs.Verifications[0].Outcome != "reproduced" {
					t.Errorf("cell run %s: %+v", c.Run, vs)
				}
				// the cell and its re-run both ran where the store runs runs
				be.checkRanHere(t, c.Run)
				if r := vs.Verifications[0].RerunID; r != "" {
					be.checkRanHere(t, r)
				} else {
					t.Errorf("cell run %s: the verification names no re-run: %+v", c.Run, vs)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("cell run %s was not verified", c.Run)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}

// TestVerifyButtonDiffers: a run whose stored records were changed (a
// bundle edited, then imported) is found to differ, and the page names the
// record and field.
func TestVerifyButtonDiffers(t *testing.T) {
	t.Parallel()
	onBothStores(t, testVerifyButtonDiffers)
}

func testVerifyButtonDiffers(t *testing.T, be *backend) {
	base := be.url
	id := postRun(t, base, `{"problem":"lasso","algorithms":[{"algo":"afw"}],"iters":30,"eval_every":1}`)
	waitRunEnded(t, base, id)
	be.checkRanHere(t, id)
	b, err := bundle.Decode(bytes.NewReader(httpGet(t, base+"/api/runs/"+id+"/bundle")))
	if err != nil {
		t.Fatal(err)
	}
	b.Traces[0].Records[7].Gamma += 1e-3
	var buf bytes.Buffer
	if err := bundle.Encode(&buf, b); err != nil {
		t.Fatal(err)
	}
	res, err := http.Post(base+"/api/runs/import", "application/json", &buf)
	if err != nil {
		t.Fatal(err)
	}
	var imp struct{ ID string }
	err = json.NewDecoder(res.Body).Decode(&imp)
	res.Body.Close()
	if res.StatusCode != 201 || err != nil {
		t.Fatalf("import: %d %v", res.StatusCode, err)
	}
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	step(t, ctx, "open the imported run", 20*time.Second, chromedp.Navigate(base+"/runs/"+imp.ID))
	waitFor(t, ctx, "the Verify button", `!document.querySelector('#btn-verify').disabled`, `document.querySelector('#verify-status').textContent`, 20*time.Second)
	step(t, ctx, "verify", 5*time.Second, chromedp.Click(chromedp.ID("btn-verify")))
	waitFor(t, ctx, "the outcome", `document.querySelector('#verify-status').dataset.outcome === 'differs'`,
		`document.querySelector('#verify-status').textContent`, 60*time.Second)
	text := eval[string](t, ctx, `document.querySelector('#verify-status').textContent`)
	if !strings.Contains(text, "differs — trace 0 (afw + slack collapse #0) record 7 (k = 7), field gamma: stored ") {
		t.Errorf("the page says %q", text)
	}
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}
