package front_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tack-run/tack/internal/tacknode"
)

// tackBin is the tack binary the tests run as members and front ends.
var tackBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tack-front-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tackBin = filepath.Join(dir, "tack")
	if out, err := exec.Command("go", "build", "-o", tackBin, "github.com/tack-run/tack/cmd/tack").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		if err := tacknode.Leaked(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
