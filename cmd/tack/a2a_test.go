package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tack-run/tack/server/agentrun/agentruntest"
)

// jsClientDir holds the official A2A JS client, installed by `npm ci`.
const jsClientDir = "../../server/a2aserver/testdata/jsclient"

// TestA2AJSClient: the official A2A JS client (@a2a-js/sdk, unmodified,
// pinned by its package-lock.json) discovers an agent of `tack serve`,
// streams its answer, cancels a run mid-stream (the canceled status
// within 100 ms of the cancel) and approves a held tool call. With
// CI=true a missing install fails the test (.ci/run runs npm ci).
func TestA2AJSClient(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary and node")
	}
	if _, err := os.Stat(filepath.Join(jsClientDir, "node_modules", "@a2a-js", "sdk")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("@a2a-js/sdk is not installed, and CI=true: .ci/run runs npm ci in %s", jsClientDir)
		}
		t.Skipf("@a2a-js/sdk is not installed: run `npm ci` in %s", jsClientDir)
	}
	dir := t.TempDir()
	agentruntest.Write(t, dir)
	cfg := filepath.Join(dir, "tack.json")
	if err := os.WriteFile(cfg, []byte(agentruntest.Config()), 0o600); err != nil {
		t.Fatal(err)
	}
	base := serveProcess(t, exec.Command(buildTack(t), "serve", "--addr", "127.0.0.1:0", "--store", "memory",
		"--config", cfg, "--script-dir", dir))
	node := exec.Command("node", "client.mjs", base)
	node.Dir = jsClientDir
	out, err := node.Output()
	if err != nil {
		t.Fatalf("node client.mjs: %v\n%s%s", err, out, stderrOf(err))
	}
	got := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("a line that is not JSON: %q", line)
		}
		got[m["check"].(string)] = m
	}
	want := map[string]map[string]any{
		"discover": {"check": "discover", "name": "hello", "description": "Says hello.", "streaming": true},
		"stream": {"check": "stream", "states": []any{"TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"},
			"text": agentruntest.HelloAnswer},
		"approve": {"check": "approve", "states": []any{"TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_INPUT_REQUIRED"},
			"approval": "ap-1", "tool": "echo", "then": []any{"TASK_STATE_WORKING", "TASK_STATE_COMPLETED"}, "text": agentruntest.GuardedAnswer},
	}
	for name, w := range want {
		if !reflect.DeepEqual(got[name], w) {
			t.Errorf("%s: %v\nwant %v", name, got[name], w)
		}
	}
	c := got["cancel"]
	states, _ := c["states"].([]any)
	ms, _ := c["ms"].(float64)
	if len(states) == 0 || states[len(states)-1] != "TASK_STATE_CANCELED" || ms < 0 || ms > 100 {
		t.Errorf("cancel: %v (the canceled status %v ms after the cancel)", c, ms)
	}
	if e, ok := got["cancel-error"]; ok {
		t.Errorf("cancelTask: %v", e)
	}
}

// stderrOf is the standard error an exec.ExitError kept.
func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
