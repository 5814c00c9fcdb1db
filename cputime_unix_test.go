//go:build unix

package mediamock_test

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has spent, user and system, on
// every thread (the collector's included); zero where it cannot be read.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
