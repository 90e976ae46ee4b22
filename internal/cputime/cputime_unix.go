//go:build unix

package cputime

import (
	"syscall"
	"time"
)

// Process returns the CPU time the process has used, every thread
// (garbage collection included), user and system; ok is false where the
// platform cannot tell.
func Process() (d time.Duration, ok bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
