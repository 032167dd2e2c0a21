//go:build !unix

package bundle

import "time"

var cpuStartTime = time.Now()

// cpuTime falls back to the monotonic clock where getrusage is missing.
func cpuTime() time.Duration { return time.Since(cpuStartTime) }
