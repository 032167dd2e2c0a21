//go:build !unix

package solver_test

import "time"

var cpuStart = time.Now()

// cpuTime falls back to the monotonic clock where getrusage is missing.
func cpuTime() time.Duration { return time.Since(cpuStart) }
