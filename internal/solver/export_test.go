package solver

import "time"

// SetClock makes Now read f until the returned function restores the
// monotonic clock (benchmarks that time work in CPU time).
func SetClock(f func() time.Duration) (restore func()) {
	old := clock
	clock = f
	return func() { clock = old }
}

// SetCDCovariance lets coordinate descent choose covariance updates (on)
// or keeps it to residual updates, until the returned function restores
// the default.
func SetCDCovariance(on bool) (restore func()) {
	old := cdCovOn
	cdCovOn = on
	return func() { cdCovOn = old }
}
