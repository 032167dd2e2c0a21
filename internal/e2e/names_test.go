package e2e

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The History counts its runs in words: "1 run", "2 runs".
func TestHistoryCountsRunsInWords(t *testing.T) {
	t.Parallel()
	url, _ := storeServer(t, filepath.Join(t.TempDir(), "fwlab.db"))
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	for n, want := range []string{"1 run", "2 runs"} {
		id := postRun(t, url, `{"problem":"toy-polygon","algorithms":[{"algo":"fw"}],"iters":20}`)
		step(t, ctx, "open the History", 20*time.Second, chromedp.Navigate(url+"/runs"))
		waitFor(t, ctx, "the History with run "+id, `window.fwlab && fwlab.history && fwlab.history.loads > 0 && fwlab.history.total === `+strconv.Itoa(n+1)+` && document.querySelector('#disk-used').textContent !== ''`,
			`[fwlab.history && fwlab.history.total, document.querySelector('#disk-used').textContent]`, 20*time.Second)
		got := eval[string](t, ctx, `document.querySelector('#disk-used').textContent`)
		if !strings.HasSuffix(got, " "+want) {
			t.Errorf("the History says %q, want it to end with %q", got, want)
		}
	}
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}
