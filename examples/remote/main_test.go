package main

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestExampleAgainstNode builds tack and this example, starts `tack node`
// on a free loopback port with SQLite in a temporary directory, runs the
// example against it and checks the events it printed, in order.
func TestExampleAgainstNode(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs two binaries")
	}
	dir := t.TempDir()
	tack, example := filepath.Join(dir, "tack"), filepath.Join(dir, "example")
	for bin, pkg := range map[string]string{tack: "../../cmd/tack", example: "."} {
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	node := exec.Command(tack, "node", "--listen", "127.0.0.1:0", "--store", "sqlite:"+filepath.Join(dir, "tack.db"))
	stderr, err := node.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := node.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = node.Process.Signal(syscall.SIGTERM)
		if err := node.Wait(); err != nil {
			t.Errorf("tack node: %v", err)
		}
	}()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := regexp.MustCompile(`listening on (\S+)`).FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	var nodeAddr string
	select {
	case nodeAddr = <-addr:
	case <-time.After(10 * time.Second):
		t.Fatal("tack node did not listen")
	}

	out, err := exec.Command(example, "-node", nodeAddr, "-session", "ex1").Output()
	if err != nil {
		t.Fatalf("example: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if want := "created ex1 at " + nodeAddr + " tack/ex1"; lines[0] != want {
		t.Fatalf("first line %q, want %q", lines[0], want)
	}
	var got []string
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		got = append(got, strings.Join(f[1:], " "))
	}
	want := []string{
		"prompt_received check the node, then wait",
		"agent_start",
		"tool_execution_start shell",
		"approval_required shell",
		"approval_resolved approved",
		"tool_execution_end shell",
		"tool_execution_start sleep",
		"steering_received",
		"tool_skipped_for_steering",
		"tool_execution_end sleep",
		"steering_applied",
		"tool_execution_start sleep",
		"agent_abort",
		"tool_execution_end sleep",
		"agent_end aborted",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("the example printed\n%s\nwant the events\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}
