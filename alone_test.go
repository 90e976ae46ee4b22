package tack_test

import (
	"os"
	"os/exec"
	"testing"
)

// aloneEnv names, in the child process alone starts, the test it runs.
const aloneEnv = "TACK_TEST_ALONE"

// alone runs test t in a process of its own — the test binary again,
// told to run t only, with env added to its environment — and reports
// what it printed. It returns true in that child, where t goes on to
// its check, and false in the parent, once the child passed.
//
// A measure of the whole process (the live heap, a goroutine's stack)
// taken beside the other tests of the package is moved by what they
// left running: a runtime still closing, a timer still to fire.
func alone(t *testing.T, env ...string) bool {
	t.Helper()
	if os.Getenv(aloneEnv) == t.Name() {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(append(os.Environ(), aloneEnv+"="+t.Name()), env...)
	out, err := cmd.CombinedOutput()
	t.Logf("child process:\n%s", out)
	if err != nil {
		t.Fatal(err)
	}
	return false
}
