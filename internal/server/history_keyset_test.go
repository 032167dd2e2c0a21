package server

import (
	"context"
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/spec"
	"github.com/fwlab/fwlab/internal/store"
)

// keyPage is a page of GET /api/runs with its cursors.
type keyPage struct {
	Runs   []RunRow `json:"runs"`
	Total  int      `json:"total"`
	Offset *int     `json:"offset"`
	Prev   *string  `json:"prev"`
	Next   *string  `json:"next"`
}

// History pages by cursor: next from the first page and prev from the last
// give every run once, in order, while runs are deleted between pages; an
// old client's offset still pages; a bad cursor is refused naming its
// parameter.
func TestHistoryCursorPages(t *testing.T) {
	srv, ts := newTestServer(t, Options{})
	ctx := context.Background()
	base := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	var ids []string // newest first
	for i := 0; i < 11; i++ {
		r := &store.Run{Spec: spec.Run{Problem: "lasso", Replications: 1, Iters: 10, Algorithms: []spec.Algo{{Algo: "fw"}}},
			Traces: []store.Trace{{Algo: "fw"}}, Version: "test", Status: store.StatusDone,
			Created: base.Add(time.Duration(i/2) * time.Minute)} // pairs share a time
		id, err := srv.st.PutRun(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		ids = append([]string{id}, ids...)
	}
	page := func(q string) keyPage {
		t.Helper()
		code, body := do(t, "GET", ts.URL+"/api/runs?limit=3&"+q, nil)
		var p keyPage
		if err := json.Unmarshal(body, &p); code != 200 || err != nil {
			t.Fatalf("GET /api/runs?limit=3&%s: %d %s", q, code, body)
		}
		return p
	}
	all := list(t, ts.URL, "") // the whole list, newest first
	want := map[string]bool{}
	var order []string
	for _, r := range all.Runs {
		want[r.ID] = true
		order = append(order, r.ID)
	}
	if len(order) != 11 {
		t.Fatalf("%d runs listed", len(order))
	}

	// forwards: the third run is deleted after the first page
	var got []string
	p := page("")
	if p.Prev != nil || p.Offset == nil || *p.Offset != 0 || p.Next == nil {
		t.Fatalf("first page: %+v", p)
	}
	srv.st.Delete(ctx, order[4])
	for n := 0; ; n++ {
		for _, r := range p.Runs {
			got = append(got, r.ID)
		}
		if p.Next == nil || n > 10 {
			break
		}
		p = page("after=" + url.QueryEscape(*p.Next))
		if p.Prev == nil {
			t.Errorf("page %d: no prev", n+1)
		}
	}
	wantFwd := append(append([]string{}, order[:4]...), order[5:]...)
	if len(got) != len(wantFwd) {
		t.Fatalf("forwards by next: %v, want %v", got, wantFwd)
	}
	for i := range got {
		if got[i] != wantFwd[i] {
			t.Fatalf("forwards by next: %v, want %v", got, wantFwd)
		}
	}

	// backwards from the last page: the same runs
	p = page("last=true")
	if p.Next != nil || p.Offset == nil || *p.Offset != p.Total-len(p.Runs) || len(p.Runs) != 3 {
		t.Fatalf("last page: %+v", p)
	}
	got = nil
	for n := 0; ; n++ {
		var ids []string
		for _, r := range p.Runs {
			ids = append(ids, r.ID)
		}
		got = append(ids, got...)
		if p.Prev == nil || n > 10 {
			break
		}
		p = page("before=" + url.QueryEscape(*p.Prev))
		if p.Next == nil {
			t.Errorf("page %d back: no next", n+1)
		}
	}
	if len(got) != len(wantFwd) {
		t.Fatalf("backwards by prev: %v, want %v", got, wantFwd)
	}
	for i := range got {
		if got[i] != wantFwd[i] {
			t.Fatalf("backwards by prev: %v, want %v", got, wantFwd)
		}
	}
	if p.Offset == nil || *p.Offset != 0 {
		t.Errorf("the first page read by prev tells no offset 0: %+v", p)
	}

	// an old client's offset pages as before
	if p := page("offset=3"); p.Offset == nil || *p.Offset != 3 || len(p.Runs) != 3 || p.Runs[0].ID != wantFwd[3] || p.Prev == nil || p.Next == nil {
		t.Errorf("offset 3: %+v", p)
	}

	cur := page("").Next
	for _, c := range []struct{ q, field string }{
		{"after=", "after"},
		{"after=12345", "after"},
		{"after=x.aaaaaaaaaaaa", "after"},
		{"before=1.AAAAAAAAAAAA", "before"},
		{"before=1.aaaa", "before"},
		{"after=" + url.QueryEscape(*cur) + "&before=" + url.QueryEscape(*cur), "before"},
		{"after=" + url.QueryEscape(*cur) + "&offset=3", "offset"},
		{"last=true&offset=3", "offset"},
		{"last=true&after=" + url.QueryEscape(*cur), "last"},
		{"last=maybe", "last"},
	} {
		code, body := do(t, "GET", ts.URL+"/api/runs?"+c.q, nil)
		wantError(t, code, body, 400, c.field)
	}
}
