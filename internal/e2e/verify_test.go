package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestVerifyButton: on a finished run's page, Verify re-runs it through the
// queue and the page shows the outcome once the re-run ends (reproduced,
// with the records compared), linking the re-run; History marks the run
// reproduced.
func TestVerifyButton(t *testing.T) {
	base, _ := storeServer(t, filepath.Join(t.TempDir(), "fwlab.db"))
	// a fixed evaluation cadence: the default one is decided by the clock
	// until runs are deterministic
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
	waitFor(t, ctx, "the outcome", `document.querySelector('#verify-status').dataset.outcome === 'reproduced'`,
		`document.querySelector('#verify-status').textContent`, 60*time.Second)
	text := eval[string](t, ctx, `document.querySelector('#verify-status').textContent`)
	if want := fmt.Sprintf("reproduced, %d records identical", n); !strings.Contains(text, want) || !strings.Contains(text, "verified here") {
		t.Errorf("the page says %q, want %q", text, want)
	}
	rerun := eval[string](t, ctx, `(document.querySelector('#verify-status a') || {}).textContent || ''`)
	if rerun == "" || rerun == id {
		t.Errorf("the re-run is not linked: %q", rerun)
	}
	step(t, ctx, "open the history", 20*time.Second, chromedp.Navigate(base+"/runs"))
	waitFor(t, ctx, "the badge", fmt.Sprintf(`(() => { const b = document.querySelector('tr[data-run="%s"] .verified'); return !!b && b.textContent.includes('reproduced'); })()`, id),
		`document.querySelector('#history-table') && document.querySelector('#history-table').innerHTML.slice(0, 2000)`, 20*time.Second)
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}
