package store

import (
	"sync"
	"time"

	"github.com/fwlab/fwlab/internal/spec"
)

// ReadTracker counts the reads of each run's records under way in this
// process (EachRecord), so that Trim spares those runs. Its zero value is
// ready to use; every backend keeps one.
type ReadTracker struct {
	mu sync.Mutex
	n  map[string]int
}

// Start marks run id as being read until the returned function is called.
func (t *ReadTracker) Start(id string) (done func()) {
	t.mu.Lock()
	if t.n == nil {
		t.n = map[string]int{}
	}
	t.n[id]++
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		if t.n[id]--; t.n[id] <= 0 {
			delete(t.n, id)
		}
		t.mu.Unlock()
	}
}

// Reading reports whether run id's records are being read.
func (t *ReadTracker) Reading(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n[id] > 0
}

// DeleteUnread calls del with those of ids that are not being read, while
// no read can start (Start waits until del returns): a read that starts
// after a run was chosen for deletion then finds it deleted, or finds it
// whole, never half deleted.
func (t *ReadTracker) DeleteUnread(ids []string, del func(ids ...string) (int, error)) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	keep := ids[:0:0]
	for _, id := range ids {
		if t.n[id] == 0 {
			keep = append(keep, id)
		}
	}
	if len(keep) == 0 {
		return 0, nil
	}
	return del(keep...)
}

// TrimRule is Trim's rule, the same for every backend: of the unstarred
// runs, newest entry first, the i-th goes when i ≥ keep, it is not live,
// neither its end nor its entry falls within TrimGrace before now (a date
// in the future does not count as recent), and it is not being read.
type TrimRule struct {
	keep          int
	recent, nowUS int64 // microseconds since the Unix epoch
	reads         *ReadTracker
}

// NewTrimRule returns the rule for a Trim to keep runs at time now; keep
// must be non-negative.
func NewTrimRule(keep int, now time.Time, reads *ReadTracker) (TrimRule, error) {
	if keep < 0 {
		return TrimRule{}, spec.Errorf("keep", "must be non-negative, got %d", keep)
	}
	return TrimRule{keep: keep, recent: micros(now.Add(-TrimGrace)), nowUS: micros(now), reads: reads}, nil
}

// Deletes reports whether the i-th unstarred run (0: the newest entry),
// with its id, status, end (nil: not ended) and entry in microseconds,
// goes.
func (r TrimRule) Deletes(i int, id, status string, endedUS *int64, enteredUS int64) bool {
	endedRecently := endedUS != nil && *endedUS >= r.recent && *endedUS <= r.nowUS
	enteredRecently := enteredUS >= r.recent && enteredUS <= r.nowUS
	return i >= r.keep && !Live(status) && !endedRecently && !enteredRecently && !r.reads.Reading(id)
}
