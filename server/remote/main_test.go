package remote_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tack-run/tack/internal/tacknode"
)

// tackBin is the tack binary the tests start as nodes, and exampleFile
// the example program (examples/remote), built once.
var tackBin, exampleFile string

// exampleBin is the example program.
func exampleBin(testing.TB) string { return exampleFile }

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tack-remote-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tackBin, exampleFile = filepath.Join(dir, "tack"), filepath.Join(dir, "example")
	for bin, pkg := range map[string]string{tackBin: "../../cmd/tack", exampleFile: "../../examples/remote"} {
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "go build %s: %v\n%s", pkg, err, out)
			os.Exit(1)
		}
	}
	code := m.Run()
	closeShared()
	os.RemoveAll(dir)
	if code == 0 {
		// Every client actor system and remote the tests start is shut
		// down by then.
		if err := tacknode.Leaked(tacknode.GRPCLeftovers...); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
