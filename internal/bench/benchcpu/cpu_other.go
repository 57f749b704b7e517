//go:build !unix

// Package benchcpu measures the CPU time of the benchmark process: on a busy machine it measures the process's
// own work, where wall time also counts waiting for a core.
package benchcpu

import "time"

// Process is not measured on this platform: it is always 0.
func Process() time.Duration { return 0 }
