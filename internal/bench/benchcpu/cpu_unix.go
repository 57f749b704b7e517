//go:build unix

// Package benchcpu measures the CPU time of the benchmark process: on a busy machine it measures the process's
// own work, where wall time also counts waiting for a core.
package benchcpu

import (
	"syscall"
	"time"
)

// Process is the CPU time (user + system) the process has used so far; 0 where it is not measured.
func Process() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
