package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Two runs that ran the same baseline alike (fista on the same instance,
// the same records): the compare page draws it once, labelled with both
// runs, beside each run's own method.
func TestCompareMarksIdenticalBaselineOnce(t *testing.T) {
	t.Parallel()
	be := sqliteBackend(t)
	a := postRun(t, be.url, `{"problem":"toy-polygon","algorithms":[{"algo":"afw"},{"algo":"fista"}],"iters":60}`)
	waitRunEnded(t, be.url, a)
	b := postRun(t, be.url, `{"problem":"toy-polygon","algorithms":[{"algo":"fw"},{"algo":"fista"}],"iters":60}`)
	waitRunEnded(t, be.url, b)
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	step(t, ctx, "open the compare page", 20*time.Second, chromedp.Navigate(be.url+"/compare?runs="+a+","+b))
	waitFor(t, ctx, "the overlay", `fwlab.compare && fwlab.compare.loaded && fwlab.charts.objective && fwlab.charts.objective.drawn > 0`, `[document.querySelector('#run-error').textContent, fwlab.compare]`, 20*time.Second)
	type group struct {
		Run   string `json:"run"`
		Label string `json:"label"`
	}
	gs := eval[[]group](t, ctx, `fwlab.compare.groups`)
	var labels []string
	fista := 0
	for _, g := range gs {
		labels = append(labels, g.Label)
		if strings.HasPrefix(g.Label, "fista") {
			fista++
			if !strings.Contains(g.Label, "identical in") {
				t.Errorf("the shared baseline is labelled %q, want it marked identical in both runs", g.Label)
			}
		}
	}
	if len(gs) != 3 || fista != 1 {
		t.Errorf("the compare page draws %d groups %q, want 3: afw, fw and fista once", len(gs), labels)
	}
	if n := eval[int](t, ctx, `fwlab.charts.objective.series.length`); n != 3 {
		t.Errorf("the objective chart has %d series, want 3", n)
	}
	if legend := eval[string](t, ctx, `document.querySelector('#legend-algos').textContent`); strings.Count(legend, "fista") != 1 {
		t.Errorf("the legend %q names fista %d times, want once", legend, strings.Count(legend, "fista"))
	}
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}
