//go:build unix

package web_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tack-run/tack/internal/nodetest"
)

// TestBrowser runs the Playwright suite in e2e/ (node --test e2e/*.test.mjs):
// a freshly built tack serve, driven through the page's data-testid hooks
// by playwright-core in headless Chromium (Debian's, never a downloaded
// one). playwright-core comes from e2e/package-lock.json through `npm ci`.
// Without Node 20, npm or Chromium the test skips, except under CI=true,
// where it fails.
func TestBrowser(t *testing.T) {
	n := nodetest.Need(t)
	chromium := needChromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	tmp := t.TempDir()
	bin := filepath.Join(tmp, "tack")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/tack")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/tack: %v\n%s", err, out)
	}

	dir := "e2e"
	n.Install(ctx, t, dir)

	// The suite's servers, their SQLite files and the browsers' profiles
	// all live under scratch, so that a process left running after the
	// suite shows up by its command line.
	scratch := filepath.Join(tmp, "scratch")
	if err := os.Mkdir(scratch, 0o700); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.test.mjs"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no e2e/*.test.mjs files (%v)", err)
	}
	args := []string{"--test", "--test-reporter=spec", "--test-timeout=120000"}
	for _, f := range files {
		args = append(args, filepath.Base(f))
	}
	run := exec.CommandContext(ctx, n.Node, args...)
	run.Dir = dir
	run.Env = append(os.Environ(), "TACK_BIN="+bin, "CHROMIUM="+chromium, "TMPDIR="+scratch)
	var out bytes.Buffer
	run.Stdout, run.Stderr = &out, &out
	// node and its test files get a process group of their own. At the
	// deadline the group gets SIGTERM, on which the files stop their
	// servers and Playwright its browsers; whatever is left is killed.
	run.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	run.Cancel = func() error { return syscall.Kill(-run.Process.Pid, syscall.SIGTERM) }
	run.WaitDelay = 10 * time.Second
	err = run.Run()
	_ = syscall.Kill(-run.Process.Pid, syscall.SIGKILL)
	t.Logf("node %s:\n%s", strings.Join(args, " "), out.String())
	if err != nil {
		t.Fatalf("node --test: %v", err)
	}
	// Browsers close their helper processes just after they return.
	left := processesUnder(scratch)
	for deadline := time.Now().Add(5 * time.Second); len(left) > 0 && time.Now().Before(deadline); left = processesUnder(scratch) {
		time.Sleep(50 * time.Millisecond)
	}
	if len(left) > 0 {
		for _, p := range left {
			if pid, err := strconv.Atoi(p[:strings.IndexByte(p, ':')]); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		t.Fatalf("processes left running after the suite (now killed):\n%s", strings.Join(left, "\n"))
	}
}

// needChromium finds the browser: $CHROMIUM, else /usr/bin/chromium.
func needChromium(t *testing.T) string {
	t.Helper()
	path := os.Getenv("CHROMIUM")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if _, err := exec.LookPath(path); err != nil {
		nodetest.Missing(t, "chromium is not installed at "+path+" (apt-get install chromium, or set CHROMIUM)")
	}
	return path
}

// processesUnder lists the processes whose command line names dir, read
// from /proc; where there is no /proc it finds none.
func processesUnder(dir string) []string {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var found []string
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(b, []byte(dir)) {
			continue
		}
		found = append(found, filepath.Base(filepath.Dir(p))+": "+strings.Join(strings.Split(strings.TrimRight(string(b), "\x00"), "\x00"), " "))
	}
	return found
}
