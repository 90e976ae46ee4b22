package builtin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tack-run/tack/tools"
	"github.com/tack-run/tack/tools/builtin"
	"github.com/tack-run/tack/tools/sandbox"
	"github.com/tack-run/tack/tools/workspace"
)

// TestSandboxedShell: a sandboxed shell works in its session's workspace,
// which holds what it writes; a huge output is cut to the limit with the
// contract's marker; the file tools and shell see the same files.
func TestSandboxedShell(t *testing.T) {
	root := filepath.Join(t.TempDir(), "ws")
	ws := workspace.PerSession(root)
	if uid, gid := sandbox.Owner(); uid >= 0 {
		ws = ws.OwnedBy(uid, gid)
	}
	shell := builtin.Shell(builtin.WithWorkspace(ws), builtin.WithSandbox(sandbox.New(sandbox.Config{})))
	ctx := tools.WithSession(t.Context(), "s-1")
	call := func(command string) tools.Result {
		args, _ := json.Marshal(map[string]string{"command": command})
		return tools.Execute(ctx, shell, args, nil)
	}
	if err := sandbox.Available(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		if res := call("true"); !res.IsError || !strings.HasPrefix(res.Content, "sandbox unavailable:") {
			t.Fatalf("without a sandbox: %+v", res)
		}
		t.Logf("NO SANDBOX HERE, only its refusal was tested: %v", err)
		return
	}
	if res := call("echo hi > shell.txt && pwd"); res.IsError || res.Content != "/workspace\n" {
		t.Fatalf("%+v", res)
	}
	files := builtin.FilesIn(ws)
	res := tools.Execute(ctx, files[0], json.RawMessage(`{"path":"shell.txt"}`), nil)
	if res.IsError || res.Content != "hi\n" {
		t.Fatalf("read_file of what shell wrote: %+v", res)
	}
	tools.Execute(ctx, files[1], json.RawMessage(`{"path":"d/model.txt","content":"from the model"}`), nil)
	if res := call("cat d/model.txt && echo more >> d/model.txt"); res.IsError || res.Content != "from the model" {
		t.Fatalf("shell on what write_file wrote: %+v", res)
	}
	const total = 5 << 20
	res = call(fmt.Sprintf("head -c %d /dev/zero | tr '\\0' a", total))
	marker := fmt.Sprintf("\n[output truncated: %d bytes]\n", total-builtin.DefaultMaxOutput)
	if res.IsError || len(res.Content) != builtin.DefaultMaxOutput+len(marker) || !strings.Contains(res.Content, marker) {
		t.Fatalf("huge output: error %v, %d bytes, marker %v", res.IsError, len(res.Content), strings.Contains(res.Content, marker))
	}
	if _, err := os.Stat(filepath.Join(root, "s-1", "shell.txt")); err != nil {
		t.Fatal(err)
	}
	ctx2 := tools.WithSession(context.Background(), "s-2")
	args, _ := json.Marshal(map[string]string{"command": "ls -A; cat ../s-1/shell.txt"})
	if res := tools.Execute(ctx2, shell, args, nil); !res.IsError || strings.Contains(res.Content, "hi") {
		t.Fatalf("another session's workspace: %+v", res)
	}
}
