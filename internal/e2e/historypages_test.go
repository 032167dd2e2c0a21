package e2e

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
)

// TestHistoryPagesByCursor moves the History page through 120 stored runs
// with its newest, newer, older and oldest buttons while runs are deleted
// between pages: each page holds the runs that follow (or precede) the one
// shown, in order, its place told under the table, and the buttons at an
// end are disabled.
func TestHistoryPagesByCursor(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "fwlab.db")
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	base := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	var ids []string // newest first
	for i := 0; i < 120; i++ {
		r := &store.Run{Spec: spec.Run{Problem: "lasso", Replications: 1, Iters: 10, Algorithms: []spec.Algo{{Algo: "fw"}}},
			Traces: []store.Trace{{Algo: "fw"}}, Version: "test", Status: store.StatusDone,
			Created: base.Add(time.Duration(i/2) * time.Minute)} // pairs share a time
		id, err := st.PutRun(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		ids = append([]string{id}, ids...)
	}
	st.Close()
	// the order the store lists them in (ties by id)
	url, _ := storeServer(t, db)
	var order []string
	for _, q := range []string{"?limit=60", "?limit=60&offset=60"} {
		var l struct{ Runs []struct{ ID string } }
		apiJSON(t, "GET", url+"/api/runs"+q, nil, 200, &l)
		for _, r := range l.Runs {
			order = append(order, r.ID)
		}
	}
	if len(order) != 120 {
		t.Fatalf("%d runs listed", len(order))
	}
	del := func(id string) {
		apiJSON(t, "POST", url+"/api/runs/delete", map[string]any{"ids": []string{id}}, 200, nil)
	}

	b := newBrowser(t)
	errs := watchConsole(t, b)
	loads := 0
	page := func(what, click, wantInfo string, want []string, firstOff, lastOff bool) {
		t.Helper()
		if click != "" {
			step(t, b, what, 10*time.Second, chromedp.Click(chromedp.ID(click)))
		}
		loads++
		waitFor(t, b, what, `fwlab.history.loads >= `+strconv.Itoa(loads), `[fwlab.history.loads, document.querySelector('#history-error').textContent]`, 10*time.Second)
		loads = eval[int](t, b, `fwlab.history.loads`)
		got := eval[string](t, b, `fwlab.history.rows.map(r => r.id).join(',')`)
		if got != strings.Join(want, ",") {
			t.Fatalf("%s: rows %s,\nwant %s", what, got, strings.Join(want, ","))
		}
		if info := eval[string](t, b, `document.querySelector('#page-info').textContent`); info != wantInfo {
			t.Errorf("%s: page info %q, want %q", what, info, wantInfo)
		}
		for _, c := range []struct {
			id  string
			off bool
		}{{"page-first", firstOff}, {"page-prev", firstOff}, {"page-next", lastOff}, {"page-last", lastOff}} {
			if d := eval[bool](t, b, `document.querySelector('#`+c.id+`').disabled`); d != c.off {
				t.Errorf("%s: #%s disabled %v, want %v", what, c.id, d, c.off)
			}
		}
	}
	step(t, b, "open the history", 20*time.Second, chromedp.Navigate(url+"/runs"))
	page("the first page", "", "1–50 of 120", order[:50], true, false)
	page("older", "page-next", "51–100 of 120", order[50:100], false, false)
	if u := eval[string](t, b, `location.search`); !strings.Contains(u, "after=") {
		t.Errorf("the second page's address %q holds no cursor", u)
	}
	// between pages: a run on the next page and one on the first go
	del(order[100])
	del(order[0])
	page("older again", "page-next", "100–118 of 118", order[101:], false, true)
	page("newer", "page-prev", "50–99 of 118", order[50:100], false, false)
	page("oldest", "page-last", "69–118 of 118", append(append([]string{}, order[69:100]...), order[101:]...), false, true)
	page("newest", "page-first", "1–50 of 118", order[1:51], true, false)
	for _, e := range errs.take() {
		t.Errorf("console: %s", e)
	}
}
