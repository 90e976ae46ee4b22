package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/tack-run/tack/tools/sandbox"
)

// TestMain lets this test binary be the sandbox's helper: commands run
// in-process (rpcCmd, serve) re-execute it as tack re-executes itself.
// It also makes the directory of the tack binary the tests build
// (builtTack) and removes it at the end.
func TestMain(m *testing.M) {
	sandbox.Main()
	dir, err := os.MkdirTemp("", "tack-cmd-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
