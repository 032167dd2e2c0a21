//go:build unix

package solver_test

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user and system) the process has used. With
// one core (GOMAXPROCS 1) it measures the benchmark's own work, unaffected
// by other jobs sharing the machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
