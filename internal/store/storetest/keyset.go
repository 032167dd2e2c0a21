package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fwlab/fwlab/internal/store"
)

// checkKeyset pages through every filter by cursor, forwards from the
// first page and backwards from the last, while runs are written and
// deleted between pages: each run comes once, in list order; every run
// there all along comes; a run written in the part not read yet comes, one
// written in the part read does not, one deleted before its page does not;
// the cursors end where the list does. Bad cursors are refused naming
// their field.
func checkKeyset(t *testing.T, s store.Backend) {
	ctx := context.Background()
	base := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	type kind struct{ problem, status, name string }
	kinds := []kind{
		{"lasso", store.StatusDone, "keyset run"},
		{"gflasso", store.StatusFailed, ""},
		{"lasso", store.StatusCancelled, ""},
		{"ssvm-ocr", store.StatusDone, "another keyset"},
	}
	algos := [][]string{{"afw"}, {"fw", "afw + slack collapse"}, {"pfw"}, {"fw"}, {"afw", "pfw"}}
	// at is where run i sits in time: every third run shares its time
	// with the one before, so ties are ordered by id
	at := func(i int) time.Time { return base.Add(time.Duration(i-i/3) * time.Minute) }
	mk := func(i int, created time.Time) *store.Run {
		k := kinds[i%len(kinds)]
		r := TestRun(k.problem, algos[i%len(algos)]...)
		r.Status, r.Name, r.Created = k.status, k.name, created
		return r
	}
	const n = 37
	for i := 0; i < n; i++ {
		put(t, s, mk(i, at(i)))
	}
	filters := []store.Filter{
		{},
		{OldestFirst: true},
		{Problem: "lasso"},
		{Status: store.StatusDone},
		{Problem: "lasso", Status: store.StatusCancelled},
		{Algorithm: "afw"},
		{Algorithm: "afw", Problem: "lasso", OldestFirst: true},
		{Algorithm: "afw + slack collapse"},
		{Text: "KEYSET"},
	}
	// a run's key in list order: negative (and the id complemented)
	// for a list newest first, so that the walk's keys rise
	type key struct {
		at int64
		id string
	}
	keyOf := func(f store.Filter, r *store.Run) key {
		c := store.CursorOf(r)
		if f.OldestFirst {
			return key{c.At, c.ID}
		}
		return key{-c.At, strings.Map(func(r rune) rune { return 0x7f - r }, c.ID)}
	}
	less := func(a, b key) bool { return a.at < b.at || a.at == b.at && a.id < b.id }
	next := n
	for _, f0 := range filters {
		for _, backwards := range []bool{false, true} {
			name := fmt.Sprintf("%+v backwards=%v", f0, backwards)
			f0.Limit = 4
			all, total, err := s.List(ctx, store.Filter{Problem: f0.Problem, Status: f0.Status, Algorithm: f0.Algorithm, Text: f0.Text, OldestFirst: f0.OldestFirst, Limit: store.MaxLimit})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if total != len(all) || total < 5 {
				t.Fatalf("%s: %d runs listed of %d: the check needs more than a page", name, len(all), total)
			}
			// the walk in list order: backwards it is read from the
			// last page and reversed at the end
			f := f0
			if backwards {
				f.Last = true
			}
			var seen []*store.Run
			wantSeen := map[string]bool{} // runs written or kept in the part not read yet
			gone := map[string]bool{}     // runs deleted before their page
			for page := 0; ; page++ {
				p, err := s.ListPage(ctx, f)
				if err != nil {
					t.Fatalf("%s page %d: %v", name, page, err)
				}
				if p.Total < 1 {
					t.Fatalf("%s page %d: total %d", name, page, p.Total)
				}
				if len(p.Runs) == 0 || len(p.Runs) > f.Limit {
					t.Fatalf("%s page %d: %d runs (limit %d) with the list not read to its end", name, page, len(p.Runs), f.Limit)
				}
				if backwards {
					seen = append(slices.Clone(p.Runs), seen...)
				} else {
					seen = append(seen, p.Runs...)
				}
				first, last := p.Runs[0], p.Runs[len(p.Runs)-1]
				if p.Prev != nil && *p.Prev != store.CursorOf(first) || p.Next != nil && *p.Next != store.CursorOf(last) {
					t.Fatalf("%s page %d: cursors %v %v, not its first and last runs", name, page, p.Prev, p.Next)
				}
				if page > 0 && (backwards && p.Next == nil || !backwards && p.Prev == nil) {
					t.Errorf("%s page %d: no cursor back to the page read before", name, page)
				}
				edge, ahead := p.Next, last
				if backwards {
					edge, ahead = p.Prev, first
				}
				if edge == nil {
					break
				}
				if page > 200 {
					t.Fatalf("%s: no end after %d pages", name, page)
				}
				// between pages: a run written in the part read (it
				// must not come), one in the part not read (it must),
				// and a run not read yet deleted (it must not come);
				// every other page the cursor's own run is deleted too
				ak := store.CursorOf(ahead)
				readSide, unreadSide := time.UnixMicro(ak.At).Add(30*time.Second), time.UnixMicro(ak.At).Add(-30*time.Second)
				if f.OldestFirst != backwards {
					readSide, unreadSide = unreadSide, readSide
				}
				before := put(t, s, mk(next, readSide.UTC()))
				after := put(t, s, mk(next+1, unreadSide.UTC()))
				next += 2
				wantSeen[after] = true
				gone[before] = true
				if p2, err := s.ListPage(ctx, store.Filter{Problem: f.Problem, Status: f.Status, Algorithm: f.Algorithm, Text: f.Text,
					OldestFirst: f.OldestFirst != backwards, After: edge, Limit: 3}); err != nil {
					t.Fatal(err)
				} else {
					// (only with another run left to read: an empty
					// page is right then, but ends the walk early)
					var others []string
					for _, r := range p2.Runs {
						if r.ID != after {
							others = append(others, r.ID)
						}
					}
					if len(others) >= 2 {
						gone[others[0]] = true
						if _, err := s.Delete(ctx, others[0]); err != nil {
							t.Fatal(err)
						}
					}
				}
				if page%2 == 1 {
					gone[ahead.ID] = false // read already: it stays seen
					if _, err := s.Delete(ctx, ahead.ID); err != nil {
						t.Fatal(err)
					}
				}
				f.Last = false
				if backwards {
					f.Before = edge
				} else {
					f.After = edge
				}
			}
			got := map[string]bool{}
			for i, r := range seen {
				if got[r.ID] {
					t.Errorf("%s: run %s came twice", name, r.ID)
				}
				got[r.ID] = true
				if i > 0 && !less(keyOf(f0, seen[i-1]), keyOf(f0, r)) {
					t.Errorf("%s: run %s (%v) came after %s (%v), out of the list's order", name, r.ID, r.Created, seen[i-1].ID, seen[i-1].Created)
				}
			}
			matches := map[string]bool{}
			for _, r := range all {
				matches[r.ID] = true
			}
			for id, g := range gone {
				if g && got[id] {
					t.Errorf("%s: run %s came after it was deleted (or though written in the part read)", name, id)
				}
			}
			for _, r := range all {
				if _, touched := gone[r.ID]; !touched && !got[r.ID] {
					t.Errorf("%s: run %s, in the list all along, never came", name, r.ID)
				}
			}
			// a run written in the part not read comes when it matches
			now, _, err := s.List(ctx, store.Filter{Problem: f0.Problem, Status: f0.Status, Algorithm: f0.Algorithm, Text: f0.Text, Limit: store.MaxLimit})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range now {
				if wantSeen[r.ID] && !got[r.ID] {
					t.Errorf("%s: run %s, written in the part not read yet, never came", name, r.ID)
				}
				matches[r.ID] = true
			}
			for id := range got {
				// (a run deleted after it was read is in neither list)
				if _, touched := gone[id]; !matches[id] && !touched {
					t.Errorf("%s: run %s came though the filter does not select it", name, id)
				}
			}
		}
	}

	// the first page has no way back; the last page no way on
	p, err := s.ListPage(ctx, store.Filter{Limit: 3})
	if err != nil || p.Prev != nil || p.Next == nil || len(p.Runs) != 3 {
		t.Fatalf("first page: %+v %v", p, err)
	}
	l, err := s.ListPage(ctx, store.Filter{Limit: 3, Last: true})
	if err != nil || l.Next != nil || l.Prev == nil || len(l.Runs) != 3 {
		t.Fatalf("last page: %+v %v", l, err)
	}
	if off, _, err := s.List(ctx, store.Filter{Limit: 3, Offset: l.Total - 3}); err != nil || fmt.Sprint(ids(off)) != fmt.Sprint(ids(l.Runs)) {
		t.Errorf("last page by cursor %v, by offset %v (%v)", ids(l.Runs), ids(off), err)
	}
	if e, err := s.ListPage(ctx, store.Filter{Limit: 3, After: l.Prev}); err != nil || fmt.Sprint(ids(e.Runs)) != fmt.Sprint(ids(l.Runs[1:])) || e.Next != nil || e.Prev == nil {
		t.Errorf("the page after the last page's first run: %+v %v", e, err)
	}
	if e, err := s.ListPage(ctx, store.Filter{Limit: 3, Before: p.Next}); err != nil || fmt.Sprint(ids(e.Runs)) != fmt.Sprint(ids(p.Runs[:2])) || e.Prev != nil || e.Next == nil {
		t.Errorf("the page before the first page's last run: %+v %v", e, err)
	}

	good := store.Cursor{At: 1, ID: "abcdefghijkl"}
	for _, c := range []struct {
		f     store.Filter
		field string
	}{
		{store.Filter{After: &good, Before: &good}, "before"},
		{store.Filter{After: &good, Offset: 3}, "offset"},
		{store.Filter{Before: &good, Offset: 3}, "offset"},
		{store.Filter{Last: true, Offset: 3}, "offset"},
		{store.Filter{Last: true, After: &good}, "last"},
		{store.Filter{Last: true, Before: &good}, "last"},
		{store.Filter{After: &store.Cursor{At: 1, ID: "x' OR 1=1 --"}}, "after"},
		{store.Filter{Before: &store.Cursor{At: 1}}, "before"},
		{store.Filter{After: &good, Limit: store.MaxLimit + 1}, "limit"},
	} {
		if p, err := s.ListPage(ctx, c.f); !fieldErr(err, c.field) {
			t.Errorf("%+v: %+v, %v; want an error naming %s", c.f, p, err, c.field)
		}
	}
}

func ids(runs []*store.Run) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.ID
	}
	return out
}
