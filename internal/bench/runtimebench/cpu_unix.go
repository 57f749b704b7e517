//go:build unix

package runtimebench

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user + system) the process has used: on a busy machine it measures the loop's own
// work where wall time also counts waiting for a core.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
