package cputime

import (
	"runtime"
	"testing"
)

// TestProcessGrows: where the platform tells, the CPU time grows with
// work done.
func TestProcessGrows(t *testing.T) {
	before, ok := Process()
	if !ok {
		t.Skip("no CPU time on " + runtime.GOOS)
	}
	for i := 0; ; i++ {
		if after, _ := Process(); after > before {
			return
		}
		sink = make([]byte, 1<<16) // work, until the clock ticks
		if i > 1<<24 {
			t.Fatal("the process's CPU time did not grow")
		}
	}
}

// sink keeps the test's work from being optimised away.
var sink []byte
