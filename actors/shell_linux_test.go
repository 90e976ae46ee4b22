package actors

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/tools"
)

// groupMembers lists the live (not zombie) processes of process group
// pgid, from /proc.
func groupMembers(t *testing.T, pgid int) []string {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, path := range stats {
		data, err := os.ReadFile(path)
		if err != nil {
			continue // the process is gone
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parens.
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 3 || f[0] == "Z" {
			continue
		}
		if pg, err := strconv.Atoi(f[2]); err == nil && pg == pgid {
			out = append(out, s[:i+1]+" "+f[0])
		}
	}
	return out
}

// TestShellAbortKillsProcessGroup: abort SIGKILLs the shell tool's whole
// process group, background children included.
func TestShellAbortKillsProcessGroup(t *testing.T) {
	h := newHarness(t, `{"turns":[
		{"tool_calls":[{"name":"shell","args":{"command":"echo $$; sleep 30 & sleep 30 & echo started; wait"}}]},
		{"text":"never"}]}`, nil)
	h.ok(&eventsv1.Prompt{Text: "go"})
	// The shell's first line is its pid, which is its process group id.
	// Lines reported while the session is busy come in one update.
	var out string
	for n := 1; !strings.Contains(out, "started\n"); n++ {
		out += h.waitFor("tool_execution_update", n).GetToolExecutionUpdate().Partial
	}
	first, _, _ := strings.Cut(out, "\n")
	pgid, err := strconv.Atoi(first)
	if err != nil || out != first+"\nstarted\n" {
		t.Fatalf("updates %q: want the shell's pid, then started", out)
	}
	if members := groupMembers(t, pgid); len(members) < 3 {
		t.Fatalf("process group %d before the abort: %q, want the shell and two sleeps", pgid, members)
	}

	h.ok(&eventsv1.Abort{})
	end := h.waitFor("agent_end", 1)
	if r := end.GetAgentEnd().Reason; r != string(events.EndAborted) {
		t.Errorf("agent_end reason %s", r)
	}
	if e := h.waitToolEnd("c-1").GetToolExecutionEnd(); e.GetOk() || e.GetResult() != tools.InterruptedByAbort {
		t.Errorf("shell end = %v", e)
	}
	h.history()

	// SIGKILL is immediate, but the kernel takes a moment to tear the
	// processes down: poll, bounded.
	eventually.Within(t, 2*time.Second, func() error {
		if members := groupMembers(t, pgid); len(members) > 0 {
			return fmt.Errorf("processes of group %d survived the abort: %q", pgid, members)
		}
		return nil
	})
}
