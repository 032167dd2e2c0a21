package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fwlab/fwlab/internal/spec"
)

// extraAlgorithm is the algorithm the test build -tags algos_extra adds to
// the table (internal/spec/algos_extra.go): afw's row with other step-size
// rules and blockwise.
const extraAlgorithm = "afw-extra"

// servedAlgorithm is an algorithm of the catalogue GET /api/scenarios
// serves, as the algorithm-table tests read it.
type servedAlgorithm struct {
	Name       string   `json:"name"`
	Family     string   `json:"family"`
	Stepsizes  []string `json:"stepsizes"`
	Stepsize   string   `json:"stepsize"`
	OwnStep    string   `json:"own_step"`
	TakesL     bool     `json:"takes_L"`
	Blockwise  bool     `json:"blockwise"`
	Stochastic bool     `json:"stochastic"`
	NotInPaper string   `json:"not_in_paper"`
}

// servedCatalog is that catalogue's problems, algorithms and defaults.
type servedCatalog struct {
	Problems []struct {
		Name       string   `json:"name"`
		Group      string   `json:"group"`
		Algorithms []string `json:"algorithms"`
		OwnSteps   bool     `json:"own_steps"`
	} `json:"problems"`
	Algorithms []servedAlgorithm `json:"algorithms"`
	Defaults   struct {
		Stepsize string `json:"stepsize"`
	} `json:"defaults"`
}

// servedCatalogue reads the server's catalogue, with its algorithms by name.
func servedCatalogue(t *testing.T, base string) (servedCatalog, map[string]servedAlgorithm) {
	t.Helper()
	var api servedCatalog
	if err := json.Unmarshal(httpGet(t, base+"/api/scenarios"), &api); err != nil {
		t.Fatal(err)
	}
	byName := map[string]servedAlgorithm{}
	for _, a := range api.Algorithms {
		byName[a.Name] = a
	}
	return api, byName
}

// TestStartPageFollowsAlgorithmTable checks that each algorithm row of the
// start page takes its rules from the algorithm table GET /api/scenarios
// serves: the stepsize menu and the default rule, which rules the page
// refuses (with the server's own message), which controls it shows (stepsize
// and L unless the algorithm sets its own step, r for the blockwise ones,
// the batch schedule for the stochastic ones) and which fields its spec
// carries. It runs over every algorithm of the table on one problem of each
// group. In a normal build that is today's table; built with -tags
// algos_extra (CI=true go test -tags algos_extra -run
// TestStartPageFollowsAlgorithmTable ./internal/e2e/) the table has one more
// algorithm, which the page must then offer and follow with no edit of its
// own.
func TestStartPageFollowsAlgorithmTable(t *testing.T) {
	t.Parallel()
	ts := app(t)
	api, byName := servedCatalogue(t, ts.URL)
	if len(api.Algorithms) != len(spec.Algorithms) {
		t.Fatalf("the API serves %d algorithms, the table has %d", len(api.Algorithms), len(spec.Algorithms))
	}
	extra, withExtra := byName[extraAlgorithm]
	if withExtra {
		// The added row differs from afw's where the page has rules to follow.
		if afw := byName["afw"]; slices.Equal(extra.Stepsizes, afw.Stepsizes) || extra.Stepsize == afw.Stepsize || !extra.Blockwise || afw.Blockwise {
			t.Fatalf("the test build's %s is not afw with other rules and blockwise: %+v against %+v", extraAlgorithm, extra, afw)
		}
		t.Logf("the table has the test build's %s: %+v", extraAlgorithm, extra)
	} else if spec.AlgorithmByName(extraAlgorithm) != nil {
		t.Fatalf("the table has %s but the API does not serve it", extraAlgorithm)
	}

	// The menu: every rule of the table, the default first, then in the
	// table's order; a rule fewer than half the algorithms take names them.
	var menu, labels []string
	for _, a := range api.Algorithms {
		for _, r := range a.Stepsizes {
			if !slices.Contains(menu, r) {
				menu = append(menu, r)
			}
		}
	}
	if i := slices.Index(menu, api.Defaults.Stepsize); i > 0 {
		menu = append([]string{menu[i]}, slices.Delete(slices.Clone(menu), i, i+1)...)
	}
	for _, r := range menu {
		var takers []string
		for _, a := range api.Algorithms {
			if slices.Contains(a.Stepsizes, r) {
				takers = append(takers, a.Name)
			}
		}
		if 2*len(takers) < len(api.Algorithms) {
			r += " (" + strings.Join(takers, ", ") + ")"
		}
		labels = append(labels, r)
	}

	ctx := newBrowser(t)
	step(t, ctx, "load the start page", 20*time.Second, chromedp.Navigate(ts.URL+"/"))
	waitFor(t, ctx, "the start page's script", `document.body.dataset.ready === '1'`, `document.body.outerHTML.slice(0, 300)`, 10*time.Second)

	const row = `document.querySelector('#algo-rows .algo-row:first-child')`
	errorAt := func(field string) string {
		return eval[string](t, ctx, fmt.Sprintf(`(Array.from(document.querySelectorAll('[data-error-for]')).find(e => e.dataset.errorFor === %q) || {}).textContent || ''`, field))
	}
	serverError := func(body string) (string, string) {
		t.Helper()
		res, err := http.Post(ts.URL+"/api/runs", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var e struct{ Error, Field string }
		if err := json.NewDecoder(res.Body).Decode(&e); err != nil || res.StatusCode != http.StatusBadRequest {
			t.Fatalf("POST %s: status %d, %v", body, res.StatusCode, err)
		}
		return e.Error, e.Field
	}

	seen := map[string]bool{}
	groups := map[string]bool{}
	for _, p := range api.Problems {
		if groups[p.Group] {
			continue
		}
		groups[p.Group] = true
		for _, name := range p.Algorithms {
			a := byName[name]
			seen[name] = true
			what := name + " on " + p.Name
			// A row of this algorithm with its defaults, as a preset or a
			// stored spec fills it.
			if !eval[bool](t, ctx, fmt.Sprintf(`fwlab.fillSpec({problem: %q, algorithms: [{algo: %q}]})`, p.Name, name)) {
				t.Fatalf("%s: the page did not take the spec", what)
			}
			var got struct {
				Algo, Stepsize                   string
				Values, Texts                    []string
				StepShown, LShown, RShown, Sched bool
				OwnText                          string
				OwnShown                         bool
				AlgoText                         string
			}
			js := `(() => { const r = ` + row + `; const s = r.querySelector('[data-key=stepsize]'); const vis = (q) => !r.querySelector(q).hidden;
				const o = r.querySelector('[data-own-step]'); const a = r.querySelector('[data-key=algo]');
				return {Algo: a.value, AlgoText: a.selectedOptions[0].textContent, Stepsize: s.value, Values: Array.from(s.options).map(x => x.value), Texts: Array.from(s.options).map(x => x.textContent),
					StepShown: vis('[data-uses=stepsize]'), LShown: vis('[data-uses=L]'), RShown: vis('[data-blocks]'), Sched: vis('label[data-stochastic]'), OwnShown: !o.hidden, OwnText: o.textContent}; })()`
			b, err := json.Marshal(eval[map[string]any](t, ctx, js))
			if err != nil || json.Unmarshal(b, &got) != nil {
				t.Fatalf("%s: reading the row: %v", what, err)
			}
			if got.Algo != name {
				t.Fatalf("%s: the row shows %q", what, got.Algo)
			}
			if !slices.Equal(got.Values, menu) || !slices.Equal(got.Texts, labels) {
				t.Errorf("%s: stepsize menu %q (%q), want %q (%q)", what, got.Values, got.Texts, menu, labels)
			}
			if got.Stepsize != a.Stepsize {
				t.Errorf("%s: default stepsize %q, the API says %q", what, got.Stepsize, a.Stepsize)
			}
			rule := a.OwnStep == "" && !p.OwnSteps
			if got.StepShown != rule || got.LShown != (rule && a.TakesL) || got.RShown != a.Blockwise || got.Sched != a.Stochastic {
				t.Errorf("%s: shows stepsize %v, L %v, r %v, schedule %v; the API's %+v wants %v, %v, %v, %v",
					what, got.StepShown, got.LShown, got.RShown, got.Sched, a, rule, rule && a.TakesL, a.Blockwise, a.Stochastic)
			}
			if got.OwnShown != !rule || (a.OwnStep != "" && got.OwnText != name+" "+a.OwnStep+": no stepsize or L applies.") {
				t.Errorf("%s: own-step note shown %v: %q (own_step %q)", what, got.OwnShown, got.OwnText, a.OwnStep)
			}
			if (a.NotInPaper != "") != strings.Contains(got.AlgoText, "not in the paper") {
				t.Errorf("%s: menu entry %q, not_in_paper %q", what, got.AlgoText, a.NotInPaper)
			}
			// The spec carries r only for a blockwise algorithm, a rule only
			// when there is one to choose, L only when it takes one.
			choose(t, ctx, "#algo-rows .algo-row:first-child [data-key=r]", "1")
			sp := eval[map[string]any](t, ctx, `fwlab.collectSpec().spec.algorithms[0]`)
			_, hasR := sp["r"]
			_, hasStep := sp["stepsize"]
			_, hasL := sp["L"]
			if hasR != a.Blockwise || hasStep != (len(a.Stepsizes) > 1) || hasL != a.TakesL {
				t.Errorf("%s: the page's spec %v; the API's %+v", what, sp, a)
			}
			if !rule {
				continue
			}
			// Each rule of the menu: the page refuses those the algorithm
			// does not take with the server's own message, and accepts the
			// others as the spec's validation does.
			for _, r := range menu {
				choose(t, ctx, "#algo-rows .algo-row:first-child [data-key=stepsize]", r)
				page := errorAt("algorithms[0].stepsize")
				if slices.Contains(a.Stepsizes, r) {
					sa := spec.Algo{Algo: name, Stepsize: r}
					if err := sa.Normalize(""); page != "" || err != nil {
						t.Errorf("%s with stepsize %s: the page says %q, the spec %v", what, r, page, err)
					}
					continue
				}
				msg, field := serverError(fmt.Sprintf(`{"problem":%q,"algorithms":[{"algo":%q,"stepsize":%q}]}`, p.Name, name, r))
				if field != "algorithms[0].stepsize" || page != msg {
					t.Errorf("%s with stepsize %s: the page says %q, the server %q at %s", what, r, page, msg, field)
				}
			}
		}
	}
	for _, a := range api.Algorithms {
		if !seen[a.Name] {
			t.Errorf("%s is on no problem of the groups %v", a.Name, groups)
		}
	}
	if withExtra && !seen[extra.Name] {
		t.Errorf("the page never offered %s", extra.Name)
	}
}

// TestRunPageFollowsAlgorithmTable checks that the run page takes what it
// knows of an algorithm from the table GET /api/scenarios serves: a trace's
// label names the step-size rule and L only for an algorithm whose step a
// rule chooses on that problem (own_step empty, not a structural SVM
// problem), and L only for one that takes it; each trace knows its
// family (the teaching view draws a proximal method's path). It runs every
// algorithm of the table, each with a rule other than its default where it
// has one, on a problem of each group; built with -tags algos_extra the
// table's added algorithm is among them.
func TestRunPageFollowsAlgorithmTable(t *testing.T) {
	t.Parallel()
	ts := app(t)
	api, byName := servedCatalogue(t, ts.URL)
	ctx := newBrowser(t)
	seen := map[string]bool{}
	groups := map[string]bool{}
	for _, p := range api.Problems {
		if groups[p.Group] || p.Name == "ssvm-ocr" {
			continue // one problem a group; the OCR set's evaluations decode 6251 words
		}
		groups[p.Group] = true
		type row struct {
			Algo     string `json:"algo"`
			Stepsize string `json:"stepsize,omitempty"`
			L        string `json:"L,omitempty"`
		}
		var rows []row
		for _, name := range p.Algorithms {
			a := byName[name]
			r := row{Algo: name}
			for _, s := range a.Stepsizes {
				if s != a.Stepsize {
					r.Stepsize = s // a rule other than the default, so that the label's is the spec's
					break
				}
			}
			if a.TakesL {
				r.L = "2"
			}
			rows = append(rows, r)
			seen[name] = true
		}
		body, _ := json.Marshal(map[string]any{"problem": p.Name, "algorithms": rows, "iters": 2})
		id := postRun(t, ts.URL, string(body))
		step(t, ctx, "open run "+id+" of "+p.Name, 20*time.Second, chromedp.Navigate(ts.URL+"/runs/"+id))
		waitFor(t, ctx, p.Name+"'s traces on the page", fmt.Sprintf(`(window.fwlab.groups || []).length === %d && fwlab.traces.length === %d`, len(rows), len(rows)),
			`JSON.stringify(window.fwlab.groups || null)`, 30*time.Second)
		var labels []string
		for _, g := range eval[[]any](t, ctx, `fwlab.groups.map(g => g.label)`) {
			labels = append(labels, g.(string))
		}
		families := map[string]string{}
		for _, tr := range eval[[]any](t, ctx, `fwlab.traces.map(t => [t.algo, t.family || ''])`) {
			x := tr.([]any)
			families[x[0].(string)] = x[1].(string)
		}
		for _, r := range rows {
			a := byName[r.Algo]
			what := r.Algo + " on " + p.Name
			var label string
			for _, l := range labels {
				if ofAlgo(l, r.Algo) {
					label = l
				}
			}
			if label == "" {
				t.Errorf("%s: no trace label among %q", what, labels)
				continue
			}
			rule := a.OwnStep == "" && !p.OwnSteps
			shown := strings.Contains(label, "("+r.Stepsize+",") || strings.Contains(label, "("+r.Stepsize+")") || r.Stepsize == "" && strings.Contains(label, "("+a.Stepsize)
			if wantStep := rule && len(a.Stepsizes) > 0; shown != wantStep {
				t.Errorf("%s: label %q names the rule %v, want %v (own_step %q, group %s)", what, label, shown, wantStep, a.OwnStep, p.Group)
			}
			if hasL, wantL := strings.Contains(label, "L=2"), rule && a.TakesL; hasL != wantL {
				t.Errorf("%s: label %q names L=2 %v, want %v", what, label, hasL, wantL)
			}
			found := false
			for algo, fam := range families {
				if ofAlgo(algo, r.Algo) {
					found = true
					if fam != a.Family {
						t.Errorf("%s: the page's trace %s has family %q, the table %q", what, algo, fam, a.Family)
					}
				}
			}
			if !found {
				t.Errorf("%s: no trace among %v", what, families)
			}
		}
	}
	for _, a := range api.Algorithms {
		if !seen[a.Name] {
			t.Errorf("%s ran on no problem of the groups %v", a.Name, groups)
		}
	}
}

// ofAlgo reports whether a trace's name or label is algorithm algo's: the
// name, then nothing, its settings in brackets or " + slack collapse".
func ofAlgo(label, algo string) bool {
	rest, ok := strings.CutPrefix(label, algo)
	return ok && (rest == "" || strings.HasPrefix(rest, " (") || strings.HasPrefix(rest, " + "))
}
