package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/tools/sandbox"
)

// TestForkBomb: a fork bomb meets the process limit and ends with the
// call; this process can still start processes afterwards.
func TestForkBomb(t *testing.T) {
	if !requireSandbox(t) {
		return
	}
	sb := sandbox.New(sandbox.Config{Procs: 64})
	start := time.Now()
	out, _ := run(t, sb, workspaceDir(t), "f() { f | f & }; f; sleep 1; echo ended")
	if !strings.Contains(out, "ended") {
		t.Logf("the bomb's shell did not get to its end: %.300q", out)
	}
	t.Logf("fork bomb ended after %v", time.Since(start))
	if out, err := exec.Command("true").CombinedOutput(); err != nil {
		t.Fatalf("this process cannot start a process after the bomb: %v %s", err, out)
	}
	waitGone(t, "f | f")
}

// TestLeftRunning: processes started in the background, in a new
// session, are killed when sh exits.
func TestLeftRunning(t *testing.T) {
	if !requireSandbox(t) {
		return
	}
	out, err := run(t, sandbox.New(sandbox.Config{}), workspaceDir(t), "sleep 987654 & setsid sleep 987654 & (nohup sleep 987654 >/dev/null 2>&1 &); echo started")
	if err != nil || out != "started\n" {
		t.Fatalf("%q, %v", out, err)
	}
	waitGone(t, "sleep\x00987654")
}

// TestCancel: cancelling the call kills everything in the sandbox.
func TestCancel(t *testing.T) {
	if !requireSandbox(t) {
		return
	}
	ctx, cancel := context.WithCancel(t.Context())
	cmd, done, err := sandbox.New(sandbox.Config{}).Command(ctx, workspaceDir(t), "sleep 876543 & sleep 876543")
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done()
	waitCount(t, "sleep\x00876543", 2)
	cancel()
	_ = cmd.Wait()
	waitGone(t, "sleep\x00876543")
}

// TestMemoryLimit: a process cannot take more than Memory.
func TestMemoryLimit(t *testing.T) {
	if !requireSandbox(t) {
		return
	}
	sb := sandbox.New(sandbox.Config{Memory: 64 << 20})
	out, err := run(t, sb, workspaceDir(t), "perl -e '$x = \"a\" x (256*1024*1024); print \"allocated\\n\"'")
	if err == nil || strings.Contains(out, "allocated") {
		t.Fatalf("256 MiB under a 64 MiB limit: %q, %v", out, err)
	}
}

// count returns how many processes of the host have a command line
// containing s (arguments separated by NUL).
func count(s string) int {
	n := 0
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), s) {
			n++
		}
	}
	return n
}

// waitGone waits until no process's command line holds s.
func waitGone(t *testing.T, s string) {
	t.Helper()
	waitCount(t, s, 0)
}

// waitCount waits up to 10 s until n processes' command lines hold s
// (polling /proc: there is nothing to wait on).
func waitCount(t *testing.T, s string, n int) {
	t.Helper()
	eventually.Within(t, 10*time.Second, func() error {
		if got := count(s); got != n {
			return fmt.Errorf("%d processes' command lines hold %q, want %d", got, s, n)
		}
		return nil
	})
}

// TestLimitsNeverBreakTheHelper runs many calls side by side, each of
// which must print exactly what its command prints. The helper is a Go
// program that lowers its own address-space limit just before it
// executes sh: whatever maps memory after that (another goroutine, the
// runtime growing the heap or starting a thread) is refused, and the
// runtime then dies with "fatal error: runtime: cannot allocate memory",
// which kills the call or lands in its output. Here a goroutine in each
// helper maps memory without pause (churnEnv), so that the window shows
// in a few calls, where tack's own goroutines hit it about once in 600
// calls on a loaded machine.
func TestLimitsNeverBreakTheHelper(t *testing.T) {
	if !requireSandbox(t) {
		return
	}
	dir := workspaceDir(t)
	t.Setenv(churnEnv, "1")
	sb := sandbox.New(sandbox.Config{Env: []string{churnEnv}})
	const calls, side = 100, 4
	var wg sync.WaitGroup
	errs := make(chan string, calls)
	sem := make(chan struct{}, side)
	for i := range calls {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			want := fmt.Sprintf("call %d\n", i)
			out, err := run(t, sb, dir, "echo call "+strconv.Itoa(i))
			if err != nil || out != want {
				errs <- fmt.Sprintf("call %d: %v: %q", i, err, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	n := 0
	for e := range errs {
		if n++; n <= 5 {
			t.Error(e)
		}
	}
	if n > 0 {
		t.Errorf("%d of %d calls failed", n, calls)
	}
}
