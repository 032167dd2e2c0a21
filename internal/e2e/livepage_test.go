package e2e

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Under a CPU-bound competitor the run page's time left follows the wall
// clock: "measuring…" at first, then, from a fifth of the run on (once the
// page has watched it for 4 s), within a factor of 2 of the time the run in
// fact still took.
//
// It runs alone (no t.Parallel): burnCPU, and the time left it checks needs a
// steady load. For the same reason make test runs it after every package's
// tests, in a go test of its own (the Makefile's ALONE).
func TestTimeLeftUnderLoad(t *testing.T) {
	ts := app(t)
	burnCPU(t)
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	// six replications of fw at a constant cost per iteration, to the
	// iteration limit: more traces than the server runs at once, so some
	// wait for a slot; 14 to 22 s on a 2-core machine with little else
	// running (18 000 iterations took 8 to 10 s once records got cheaper:
	// the page was still measuring at two fifths of the run, and a change
	// of the machine's load moved the rest by half)
	id := postRun(t, ts.URL, `{"problem":"lasso","params":{"n":"4000","p":"60"},"algorithms":[{"algo":"fw"}],"replications":6,"iters":27000,"gap":1e-300}`)
	step(t, ctx, "open the run page", 20*time.Second, chromedp.Navigate(ts.URL+"/runs/"+id))
	type state struct {
		Done     bool
		Fraction float64
		ETA      *float64
		Text     string
	}
	type sample struct {
		at time.Time
		state
	}
	var samples []sample
	deadline := time.Now().Add(300 * time.Second)
	for {
		s := eval[state](t, ctx, `({done: !!(window.fwlab && fwlab.done), fraction: (window.fwlab && fwlab.progress && fwlab.progress.fraction) || 0, eta: window.fwlab && fwlab.progress ? fwlab.progress.eta : null, text: (document.querySelector('#run-eta') || {}).textContent || ''})`)
		if s.Done || s.Fraction >= 1 {
			break // every trace ended: the time left was this
		}
		samples = append(samples, sample{time.Now(), s})
		if time.Now().After(deadline) {
			t.Fatalf("the run did not end: %+v", s)
		}
		time.Sleep(250 * time.Millisecond)
	}
	end := time.Now()
	if len(samples) < 20 {
		t.Fatalf("only %d samples: the run took %v", len(samples), end.Sub(samples[0].at))
	}
	measuring := false
	for _, s := range samples[:min(len(samples), 12)] {
		measuring = measuring || strings.Contains(s.Text, "measuring")
	}
	if !measuring {
		t.Errorf("the time left did not start as measuring…: %q", samples[0].Text)
	}
	checked, bad := 0, 0
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range samples {
		truth := end.Sub(s.at).Seconds()
		if s.Fraction < 0.2 || s.at.Sub(samples[0].at) < 4*time.Second || truth < 3 {
			continue
		}
		checked++
		if s.ETA != nil {
			lo, hi = math.Min(lo, *s.ETA/truth), math.Max(hi, *s.ETA/truth)
		}
		if s.ETA == nil || *s.ETA < truth/2 || *s.ETA > 2*truth {
			bad++
			if bad <= 5 {
				eta := math.NaN()
				if s.ETA != nil {
					eta = *s.ETA
				}
				t.Errorf("at %.0f%% of the run the page said %.1f s left (%q); it took %.1f s more", 100*s.Fraction, eta, s.Text, truth)
			}
		}
	}
	if checked < 5 {
		t.Fatalf("%d samples past a fifth of the run with more than 3 s left: the run was too short (%.1f s)", checked, end.Sub(samples[0].at).Seconds())
	}
	t.Logf("%d samples checked over %.1f s; the time left the page said over the time it took: %.2f to %.2f", checked, end.Sub(samples[0].at).Seconds(), lo, hi)
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}
