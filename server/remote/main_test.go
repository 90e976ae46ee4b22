package remote_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// tackBin is the tack binary the tests start as nodes, built once.
var tackBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tack-remote-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tackBin = filepath.Join(dir, "tack")
	if out, err := exec.Command("go", "build", "-o", tackBin, "../../cmd/tack").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		// Every client actor system and remote the tests start is shut
		// down by then.
		if err := goleak.Find(goleakOptions...); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
