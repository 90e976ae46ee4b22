//go:build linux

package builtin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/tools"
	"github.com/tack-run/tack/tools/builtin"
)

// groupMembers returns the pids of the live processes whose process group
// is pgid, read from /proc/*/stat. Zombies are dead and left out: whether
// they are reaped depends on the machine's init, not on the tool.
func groupMembers(t *testing.T, pgid int) []int {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, path := range stats {
		data, err := os.ReadFile(path)
		if err != nil {
			continue // the process ended while we looked
		}
		// "pid (comm) state ppid pgrp ...": comm may hold spaces and ')'.
		s := string(data)
		end := strings.LastIndexByte(s, ')')
		if end < 0 {
			continue
		}
		fields := strings.Fields(s[end+1:])
		if len(fields) < 3 || fields[0] == "Z" {
			continue
		}
		if g, _ := strconv.Atoi(fields[2]); g == pgid {
			pid, _ := strconv.Atoi(strings.Fields(s)[0])
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestShellCancelKillsProcessGroup(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// The shell forks both sleeps, then prints its pid: the group id.
	args, _ := json.Marshal(map[string]string{"command": "sleep 60 & sleep 60 & echo $$; wait"})
	pgidc := make(chan int, 1)
	done := make(chan tools.Result, 1)
	go func() {
		done <- tools.Execute(ctx, builtin.Shell(), args, func(p string) {
			if pid, err := strconv.Atoi(strings.TrimSpace(p)); err == nil {
				pgidc <- pid
			}
		})
	}()

	var pgid int
	select {
	case pgid = <-pgidc:
	case res := <-done:
		t.Fatalf("shell ended early: %+v", res)
	case <-time.After(10 * time.Second):
		t.Fatal("no pid from the shell within 10 s")
	}
	if n := len(groupMembers(t, pgid)); n != 3 {
		t.Fatalf("process group %d has %d live members before cancel, want 3 (sh and two sleeps)", pgid, n)
	}

	cancelled := time.Now()
	cancel()
	select {
	case res := <-done:
		if elapsed := time.Since(cancelled); elapsed > time.Second {
			t.Errorf("cancelled shell returned after %v, want within 1 s", elapsed)
		}
		if !res.IsError || !strings.Contains(res.Content, "command cancelled: context canceled") {
			t.Errorf("Execute = %+v, want a cancellation error", res)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancelled shell did not return within 10 s")
	}

	eventually.Within(t, 2*time.Second, func() error { // real processes: poll the kernel
		if left := groupMembers(t, pgid); len(left) > 0 {
			return fmt.Errorf("processes %v of group %d survived the cancel", left, pgid)
		}
		return nil
	})
}

func TestShellBackgroundHoldsOutput(t *testing.T) {
	// The shell exits at once, but its background sleep keeps stdout open.
	start := time.Now()
	res, _ := runShell(t, builtin.Shell(), "echo $$; sleep 30 &")
	elapsed := time.Since(start)

	pgid, err := strconv.Atoi(strings.SplitN(res.Content, "\n", 2)[0])
	if err != nil {
		t.Fatalf("no pid in %q", res.Content)
	}
	t.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })

	want := tools.Result{Content: strconv.Itoa(pgid) + "\n[stopped reading: a background process kept the output open]"}
	if res != want {
		t.Errorf("Execute = %+v, want %+v", res, want)
	}
	if elapsed > 5*time.Second {
		t.Errorf("returned after %v, want about half a second", elapsed)
	}
}

// TestShellHasNoControllingTerminal: an unsandboxed command runs in a
// session of its own (its session id is its pid), so it has no
// controlling terminal: in the session of tack, started from a terminal,
// it could push input into that terminal with TIOCSTI.
func TestShellHasNoControllingTerminal(t *testing.T) {
	res, _ := runShell(t, builtin.Shell(), `echo $$; cut -d')' -f2 /proc/$$/stat | cut -d' ' -f5`)
	lines := strings.Fields(res.Content)
	if len(lines) != 2 || lines[0] != lines[1] {
		t.Fatalf("pid and session id: %q, want the same number twice", res.Content)
	}
}
