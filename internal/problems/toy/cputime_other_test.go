//go:build !unix

package toy

import "time"

var start = time.Now()

// cpuTime falls back to wall time where the process CPU time is not read.
func cpuTime() time.Duration { return time.Since(start) }
