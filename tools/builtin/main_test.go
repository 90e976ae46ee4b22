package builtin_test

import (
	"os"
	"testing"

	"github.com/tack-run/tack/tools/sandbox"
)

// TestMain lets this test binary be the sandbox's helper.
func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(m.Run())
}
