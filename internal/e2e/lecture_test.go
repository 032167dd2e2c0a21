package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// A lecture on a 1024×768 projector: the away-steps-vs-zig-zag preset
// evaluates every step, so stepping through it shows a fresh F and gap at
// each; presentation mode fits the window without scrolling, the polygon
// takes at least 40 % of its height and the charts' type grows; "?" lists
// every key while presenting; after Esc the keys do what the list says
// (Space is the run's, not the Present button's).
func TestLectureAt1024x768(t *testing.T) {
	t.Parallel()
	ts := app(t)
	ctx := newBrowser(t)
	errs := watchConsole(t, ctx)
	viewport(t, ctx, 1024, 768)
	step(t, ctx, "load the start page", 20*time.Second, chromedp.Navigate(ts.URL+"/"))
	waitFor(t, ctx, "the start page's script", `document.body.dataset.ready === '1'`, `document.body.outerHTML.slice(0, 300)`, 10*time.Second)
	step(t, ctx, "choose the preset", 10*time.Second, chromedp.Click(chromedp.CSS(`[data-preset="teach-zigzag"]`)))
	step(t, ctx, "start", 20*time.Second, chromedp.Click(chromedp.ID("start-run")))
	waitFor(t, ctx, "the teaching view", `!!(window.fwlab && fwlab.done && fwlab.teach && fwlab.teach.drawn && fwlab.teach.traces && fwlab.teach.traces.length === 2)`, `JSON.stringify(fwlab.teach)`, 60*time.Second)
	font := eval[string](t, ctx, `document.querySelector('#charts .chart[data-chart=objective] [data-font]').dataset.font`)

	// Present, from the button (it keeps the focus).
	step(t, ctx, "present", 10*time.Second, chromedp.Click(chromedp.ID("teach-present")))
	waitFor(t, ctx, "presentation mode", `fwlab.teach.presenting === true && document.body.classList.contains('presenting')`, `fwlab.teach.presenting`, 10*time.Second)
	waitFor(t, ctx, "the charts rebuilt with larger type", fmt.Sprintf(`document.querySelector('#charts .chart[data-chart=objective] [data-font]').dataset.font !== %q`, font), `document.querySelector('#charts .chart[data-chart=objective] [data-font]').dataset.font`, 10*time.Second)
	time.Sleep(300 * time.Millisecond)
	geo := eval[map[string]float64](t, ctx, `(() => { const c = document.querySelector('#teach-canvas').getBoundingClientRect(); const de = document.documentElement;
		return {sw: de.scrollWidth, sh: de.scrollHeight, iw: innerWidth, ih: innerHeight, ch: c.height, cw: c.width, ctop: c.top, cbottom: c.bottom,
			font: parseFloat(document.querySelector('#charts .chart[data-chart=objective] [data-font]').dataset.font), body: parseFloat(getComputedStyle(document.body).fontSize)}; })()`)
	if geo["sw"] > geo["iw"]+1 || geo["sh"] > geo["ih"]+1 {
		t.Errorf("presenting at 1024×768 scrolls: the page is %v×%v in a %v×%v window", geo["sw"], geo["sh"], geo["iw"], geo["ih"])
	}
	if geo["ch"] < 0.4*geo["ih"] || geo["ctop"] < 0 || geo["cbottom"] > geo["ih"]+1 {
		t.Errorf("the polygon is %v px high (%v … %v) in a window %v px high, want at least 40 %% of it and all of it in view", geo["ch"], geo["ctop"], geo["cbottom"], geo["ih"])
	}
	if geo["font"] < 0.8*geo["body"] || geo["font"] < 18 {
		t.Errorf("the charts' type is %v px presenting, the page's %v px: it should grow with the rest", geo["font"], geo["body"])
	}
	shot(t, ctx, t.TempDir(), "presenting-1024x768.png")

	// "?" lists every key while presenting.
	step(t, ctx, "press ?", 5*time.Second, chromedp.KeyEvent("?"))
	waitFor(t, ctx, "the key list", `!document.querySelector('#shortcuts').hidden && document.querySelector('#shortcuts').getBoundingClientRect().height > 0`, `document.querySelector('#shortcuts') && document.querySelector('#shortcuts').outerHTML`, 5*time.Second)
	keys := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#shortcuts dt kbd')).map(k => k.textContent)`)
	for _, want := range []string{"space", ".", "r", "Esc", "→", "←", "p", "0", "?"} {
		found := false
		for _, k := range keys {
			found = found || k == want
		}
		if !found {
			t.Errorf("the key list lacks %q: %q", want, keys)
		}
	}
	step(t, ctx, "press ? again", 5*time.Second, chromedp.KeyEvent("?"))
	waitFor(t, ctx, "the list closed", `document.querySelector('#shortcuts').hidden`, ``, 5*time.Second)

	// Stepping: every step shows its own F and gap.
	step(t, ctx, "to the start", 5*time.Second, chromedp.KeyEvent("0"))
	choose(t, ctx, "#teach-slider", "0")
	var last []string
	for i := 1; i <= 12; i++ {
		step(t, ctx, "next step", 5*time.Second, chromedp.KeyEvent(" "))
		waitFor(t, ctx, fmt.Sprintf("step %d", i), fmt.Sprintf(`fwlab.teach.pos === %d`, i), `fwlab.teach.pos`, 5*time.Second)
		stats := eval[[]string](t, ctx, `fwlab.teach.stats`)
		ks := eval[[]int](t, ctx, `fwlab.teach.ks`)
		for j, s := range stats {
			if strings.Contains(s, "(at k =") || !strings.Contains(s, "F = ") || !strings.Contains(s, "gap = ") {
				t.Errorf("step %d, trace %d (k = %d): %q, want its own F and gap", i, j, ks[j], s)
			}
		}
		if last != nil && strings.Join(stats, "|") == strings.Join(last, "|") {
			t.Errorf("step %d shows the same F and gap as the step before: %q", i, stats)
		}
		last = stats
	}

	// Esc leaves; Space is then the run's (pause or resume, here disabled:
	// the run is done), never Present again.
	step(t, ctx, "press Esc", 5*time.Second, chromedp.KeyEvent("\x1b"))
	waitFor(t, ctx, "out of presentation", `fwlab.teach.presenting === false && !document.body.classList.contains('presenting')`, `fwlab.teach.presenting`, 5*time.Second)
	step(t, ctx, "press space", 5*time.Second, chromedp.KeyEvent(" "))
	time.Sleep(300 * time.Millisecond)
	if eval[bool](t, ctx, `document.body.classList.contains('presenting')`) {
		t.Error("Space after Esc presented again, where the key list says it pauses or resumes the run")
	}
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}
