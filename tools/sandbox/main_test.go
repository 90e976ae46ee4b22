package sandbox_test

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tack-run/tack/tools/sandbox"
)

// churnEnv, set in a helper's environment, starts a goroutine there
// before sandbox.Main, as a program's init functions may: it maps and
// unmaps memory without pause until the kernel refuses, which it says on
// stderr (see TestLimitsNeverBreakTheHelper).
const churnEnv = "TACK_SANDBOX_TEST_CHURN"

func TestMain(m *testing.M) {
	if os.Getenv(churnEnv) != "" {
		go churn()
	}
	sandbox.Main()
	os.Exit(m.Run())
}

func churn() {
	refused := []byte("churn: the kernel refused a mapping\n")
	for {
		b, err := unix.Mmap(-1, 0, 1<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
		if err != nil {
			os.Stderr.Write(refused)
			return
		}
		_ = unix.Munmap(b)
	}
}
