package solver

import "time"

// SetClock makes Now read f until the returned function restores the
// monotonic clock (benchmarks that time work in CPU time).
func SetClock(f func() time.Duration) (restore func()) {
	old := clock
	clock = f
	return func() { clock = old }
}
