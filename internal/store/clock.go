package store

import "time"

// SetClock makes the store read the time from f (when a run enters the
// store, what Trim counts as recent) until the returned function restores
// the real clock: for tests of trimming, here and in the conformance suite.
func SetClock(f func() time.Time) (restore func()) {
	old := now
	now = f
	return func() { now = old }
}
