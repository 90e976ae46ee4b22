package sandbox_test

import (
	"os"
	"testing"

	"github.com/tack-run/tack/tools/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(m.Run())
}
