package store

import (
	"slices"
	"strconv"
	"strings"

	"github.com/fwlab/fwlab/internal/spec"
)

// Cursor is a run's place in a list: its time key (created, in
// microseconds) and its id, the two keys every list is ordered by. A page
// read from a cursor (Filter.After, Filter.Before) seeks the lists' index
// to it, so a page deep in a long list costs what the first does, and runs
// written or deleted meanwhile move no run across pages.
type Cursor struct {
	At int64
	ID string
}

// CursorOf is run r's place in a list.
func CursorOf(r *Run) Cursor { return Cursor{At: r.Created.UnixMicro(), ID: r.ID} }

// String is the cursor as the History API writes it: "<at>.<id>".
func (c Cursor) String() string { return strconv.FormatInt(c.At, 10) + "." + c.ID }

// ParseCursor reads a cursor written by Cursor.String; a malformed one is
// refused naming field.
func ParseCursor(field, s string) (*Cursor, error) {
	at, id, ok := strings.Cut(s, ".")
	if !ok {
		return nil, spec.Errorf(field, "must be a cursor of the list (its runs' next or prev), <microseconds>.<run id>, got %q", s)
	}
	n, err := strconv.ParseInt(at, 10, 64)
	if err != nil {
		return nil, spec.Errorf(field, "must be a cursor of the list (its runs' next or prev): %q is not a time in microseconds", at)
	}
	if !ValidID(id) {
		return nil, spec.Errorf(field, "must be a cursor of the list (its runs' next or prev): %q is not a run id", id)
	}
	return &Cursor{At: n, ID: id}, nil
}

// Page is one page of a list (ListPage): its runs in list order, the
// number of runs the filter selects, and the cursors of the pages on
// either side (Prev: the runs before the first of this page; Next: after
// its last), nil at the list's start and end.
type Page struct {
	Runs       []*Run
	Total      int
	Prev, Next *Cursor
}

// Keyed reports whether f asks for its page by cursor (After, Before or
// Last) rather than by offset.
func (f Filter) Keyed() bool { return f.After != nil || f.Before != nil || f.Last }

// check checks a filter's page fields alike on every store, each refused
// naming its field; it returns f with the default limit filled in.
func (f Filter) check() (Filter, error) {
	if f.Offset < 0 {
		return f, spec.Errorf("offset", "must be non-negative, got %d", f.Offset)
	}
	if f.Limit < 0 || f.Limit > MaxLimit {
		return f, spec.Errorf("limit", "must be between 0 and %d, got %d", MaxLimit, f.Limit)
	}
	if f.Limit == 0 {
		f.Limit = DefaultLimit
	}
	switch {
	case f.After != nil && f.Before != nil:
		return f, spec.Errorf("before", "cannot be given with after: a page is read after one cursor or before one")
	case f.Last && f.After != nil:
		return f, spec.Errorf("last", "cannot be given with after: the last page has nothing after it")
	case f.Last && f.Before != nil:
		return f, spec.Errorf("last", "cannot be given with before: the last page is read from the list's end")
	case f.Keyed() && f.Offset != 0:
		field := "after"
		if f.Before != nil {
			field = "before"
		} else if f.Last {
			field = "last"
		}
		return f, spec.Errorf("offset", "cannot be given with %s: a page is read by cursor or by offset, not both", field)
	}
	for field, c := range map[string]*Cursor{"after": f.After, "before": f.Before} {
		if c != nil && !ValidID(c.ID) {
			return f, spec.Errorf(field, "must be a cursor of the list: %q is not a run id", c.ID)
		}
	}
	return f, nil
}

// Check is check for the stores of other packages (pgstore).
func (f Filter) Check() (Filter, error) { return f.check() }

// Seek says how a backend reads the page a keyed filter (After, Before,
// Last) asks for from a list ordered by keys (the time key, then the id):
// cond compares the keys with the cursor (arg writes a placeholder for a
// value; "" for the last page), order is the ORDER BY clause, and reverse
// says the rows come in the list's reverse order. The backend reads
// f.Limit+1 rows: one more says another page follows in the direction read.
// other is the condition of a run on the other side of the cursor, the
// cursor's own run included ("" for the last page: nothing follows it).
func (f Filter) Seek(keys [2]string, arg func(v any) string) (cond, other, order string, reverse bool) {
	desc := !f.OldestFirst // the list's order
	c := f.After
	if f.Before != nil || f.Last {
		c, reverse = f.Before, true
	}
	read := desc != reverse // the order read: descending?
	if c != nil {
		row := `(` + keys[0] + `, ` + keys[1] + `)`
		vals := `(` + arg(c.At) + `, ` + arg(c.ID) + `)`
		if read {
			cond, other = row+` < `+vals, row+` >= `+vals
		} else {
			cond, other = row+` > `+vals, row+` <= `+vals
		}
	}
	order = ` ORDER BY ` + keys[0] + `, ` + keys[1]
	if read {
		order = ` ORDER BY ` + keys[0] + ` DESC, ` + keys[1] + ` DESC`
	}
	return cond, other, order, reverse
}

// Ends fills a keyed page's cursors from its runs (in list order), more
// (the read found a run beyond the page in the direction read) and other
// (a run lies on the cursor's other side).
func (f Filter) Ends(p *Page, more, other bool) {
	if len(p.Runs) == 0 {
		return
	}
	after, before := more, other
	if f.Before != nil || f.Last {
		after, before = other, more
	}
	if before {
		c := CursorOf(p.Runs[0])
		p.Prev = &c
	}
	if after {
		c := CursorOf(p.Runs[len(p.Runs)-1])
		p.Next = &c
	}
}

// FinishPage puts a page's runs, as its query read them (reversed when it
// read the list backwards; a keyed page with one run past its limit), in
// list order and fills the page's cursors. other tells whether a run lies
// on a keyed page's cursor's other side; it is asked only for a page with
// runs (nil: none does). Both stores' History lists end their pages here.
func (f Filter) FinishPage(p *Page, reversed bool, other func() (bool, error)) error {
	if !f.Keyed() {
		if reversed {
			slices.Reverse(p.Runs)
		}
		f.OffsetEnds(p)
		return nil
	}
	more := len(p.Runs) > f.Limit
	p.Runs = p.Runs[:min(len(p.Runs), f.Limit)]
	beyond := false
	if other != nil && len(p.Runs) > 0 {
		var err error
		if beyond, err = other(); err != nil {
			return err
		}
	}
	if reversed {
		slices.Reverse(p.Runs)
	}
	f.Ends(p, more, beyond)
	return nil
}

// OffsetEnds fills an offset page's cursors: the runs before it and after
// it are told by its offset and the total.
func (f Filter) OffsetEnds(p *Page) {
	if len(p.Runs) == 0 {
		return
	}
	if f.Offset > 0 {
		c := CursorOf(p.Runs[0])
		p.Prev = &c
	}
	if f.Offset+len(p.Runs) < p.Total {
		c := CursorOf(p.Runs[len(p.Runs)-1])
		p.Next = &c
	}
}
