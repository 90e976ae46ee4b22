//go:build !unix

package tack_test

import "time"

// processCPU cannot tell the process's CPU time on this platform.
func processCPU() (time.Duration, bool) { return 0, false }
