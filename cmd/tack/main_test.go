package main

import (
	"os"
	"testing"

	"github.com/tack-run/tack/tools/sandbox"
)

// TestMain lets this test binary be the sandbox's helper: commands run
// in-process (rpcCmd, serve) re-execute it as tack re-executes itself.
func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(m.Run())
}
