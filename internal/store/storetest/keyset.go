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
	w := newKeysetWalk(t, s)
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
	for _, f0 := range filters {
		for _, backwards := range []bool{false, true} {
			w.walk(f0, backwards)
		}
	}
	checkKeysetEnds(t, s)
	checkKeysetRefusals(t, s)
}

// keysetKind is the problem, status and name of a run checkKeyset writes.
type keysetKind struct{ problem, status, name string }

var (
	keysetKinds = []keysetKind{
		{"lasso", store.StatusDone, "keyset run"},
		{"gflasso", store.StatusFailed, ""},
		{"lasso", store.StatusCancelled, ""},
		{"ssvm-ocr", store.StatusDone, "another keyset"},
	}
	keysetAlgos = [][]string{{"afw"}, {"fw", "afw + slack collapse"}, {"pfw"}, {"fw"}, {"afw", "pfw"}}
)

// keysetWalk is the store checkKeyset walks through and the index of the
// next run it writes there.
type keysetWalk struct {
	t    *testing.T
	s    store.Backend
	ctx  context.Context
	next int
}

// newKeysetWalk writes the runs checkKeyset starts from.
func newKeysetWalk(t *testing.T, s store.Backend) *keysetWalk {
	t.Helper()
	const n = 37
	w := &keysetWalk{t: t, s: s, ctx: context.Background(), next: n}
	base := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	// at is where run i sits in time: every third run shares its time
	// with the one before, so ties are ordered by id
	at := func(i int) time.Time { return base.Add(time.Duration(i-i/3) * time.Minute) }
	for i := 0; i < n; i++ {
		put(t, s, keysetRun(i, at(i)))
	}
	return w
}

// keysetRun is checkKeyset's run i, created at created.
func keysetRun(i int, created time.Time) *store.Run {
	k := keysetKinds[i%len(keysetKinds)]
	r := TestRun(k.problem, keysetAlgos[i%len(keysetAlgos)]...)
	r.Status, r.Name, r.Created = k.status, k.name, created
	return r
}

// keysetKey is a run's key in list order: negative (and the id
// complemented) for a list newest first, so that the walk's keys rise.
type keysetKey struct {
	at int64
	id string
}

// keysetKeyOf is r's key in the order of f's list.
func keysetKeyOf(f store.Filter, r *store.Run) keysetKey {
	c := store.CursorOf(r)
	if f.OldestFirst {
		return keysetKey{c.At, c.ID}
	}
	return keysetKey{-c.At, strings.Map(func(r rune) rune { return 0x7f - r }, c.ID)}
}

// less reports whether a comes before b.
func (a keysetKey) less(b keysetKey) bool { return a.at < b.at || a.at == b.at && a.id < b.id }

// walk pages through f0's list by cursor, backwards from the last page or
// forwards from the first, writing and deleting runs between pages, and
// checks the runs that came.
func (w *keysetWalk) walk(f0 store.Filter, backwards bool) {
	t := w.t
	t.Helper()
	name := fmt.Sprintf("%+v backwards=%v", f0, backwards)
	f0.Limit = 4
	all, total, err := w.s.List(w.ctx, store.Filter{Problem: f0.Problem, Status: f0.Status, Algorithm: f0.Algorithm, Text: f0.Text, OldestFirst: f0.OldestFirst, Limit: store.MaxLimit})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if total != len(all) || total < 5 {
		t.Fatalf("%s: %d runs listed of %d: the check needs more than a page", name, len(all), total)
	}
	seen, wantSeen, gone := w.pages(name, f0, backwards)
	w.checkSeen(name, f0, all, seen, wantSeen, gone)
}

// pages reads f0's pages by cursor in list order (backwards read from the
// last page and reversed at the end) and returns the runs seen, those
// written or kept in the part not read yet (wantSeen) and those deleted
// before their page (gone).
func (w *keysetWalk) pages(name string, f0 store.Filter, backwards bool) (seen []*store.Run, wantSeen, gone map[string]bool) {
	t := w.t
	t.Helper()
	f := f0
	if backwards {
		f.Last = true
	}
	wantSeen, gone = map[string]bool{}, map[string]bool{}
	for page := 0; ; page++ {
		p, err := w.s.ListPage(w.ctx, f)
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
			return seen, wantSeen, gone
		}
		if page > 200 {
			t.Fatalf("%s: no end after %d pages", name, page)
		}
		w.between(f, backwards, page, edge, ahead, wantSeen, gone)
		f.Last = false
		if backwards {
			f.Before = edge
		} else {
			f.After = edge
		}
	}
}

// between changes the list between two pages of f: a run written in the
// part read (it must not come), one in the part not read (it must), and a
// run not read yet deleted (it must not come); every other page the
// cursor's own run (ahead, at edge) is deleted too.
func (w *keysetWalk) between(f store.Filter, backwards bool, page int, edge *store.Cursor, ahead *store.Run, wantSeen, gone map[string]bool) {
	t := w.t
	t.Helper()
	ak := store.CursorOf(ahead)
	readSide, unreadSide := time.UnixMicro(ak.At).Add(30*time.Second), time.UnixMicro(ak.At).Add(-30*time.Second)
	if f.OldestFirst != backwards {
		readSide, unreadSide = unreadSide, readSide
	}
	before := put(t, w.s, keysetRun(w.next, readSide.UTC()))
	after := put(t, w.s, keysetRun(w.next+1, unreadSide.UTC()))
	w.next += 2
	wantSeen[after] = true
	gone[before] = true
	if p2, err := w.s.ListPage(w.ctx, store.Filter{Problem: f.Problem, Status: f.Status, Algorithm: f.Algorithm, Text: f.Text,
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
			if _, err := w.s.Delete(w.ctx, others[0]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if page%2 == 1 {
		gone[ahead.ID] = false // read already: it stays seen
		if _, err := w.s.Delete(w.ctx, ahead.ID); err != nil {
			t.Fatal(err)
		}
	}
}

// checkSeen checks the runs a walk of f0's list saw: each once, in list
// order; none deleted before its page or written in the part read; every
// run of all (the list before the walk) and every run of wantSeen still
// listed; none the filter does not select.
func (w *keysetWalk) checkSeen(name string, f0 store.Filter, all, seen []*store.Run, wantSeen, gone map[string]bool) {
	t := w.t
	t.Helper()
	got := map[string]bool{}
	for i, r := range seen {
		if got[r.ID] {
			t.Errorf("%s: run %s came twice", name, r.ID)
		}
		got[r.ID] = true
		if i > 0 && !keysetKeyOf(f0, seen[i-1]).less(keysetKeyOf(f0, r)) {
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
	now, _, err := w.s.List(w.ctx, store.Filter{Problem: f0.Problem, Status: f0.Status, Algorithm: f0.Algorithm, Text: f0.Text, Limit: store.MaxLimit})
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

// checkKeysetEnds checks the list's ends: the first page has no way back,
// the last page no way on, and the pages by cursor next to them agree with
// those by offset.
func checkKeysetEnds(t *testing.T, s store.Backend) {
	t.Helper()
	ctx := context.Background()
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
}

// checkKeysetRefusals checks that bad cursors and cursors with an offset,
// with each other or past the limit are refused naming their field.
func checkKeysetRefusals(t *testing.T, s store.Backend) {
	t.Helper()
	ctx := context.Background()
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
