package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tack-run/tack/tools/sandbox"
)

// TestServeSandboxEscapes drives `tack serve` as a user granted shell
// whose model tries to get out: write outside its workspace, read another
// session's files, the server's environment, auth file and store, reach
// a port on loopback, and start a fork bomb. Nothing gets out, and the
// server answers afterwards.
func TestServeSandboxEscapes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	const secret = "s3cr3t-of-the-server"
	dir := t.TempDir()
	authFile := filepath.Join(dir, "auth.json")
	if err := os.WriteFile(authFile, []byte(`{"tokens": {"tk_alice": "alice", "`+secret+`": "mallory"}, "grants": {"alice": {"tools": ["*"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
			accepted <- struct{}{}
		}
	}()
	db := filepath.Join(dir, "tack.db")
	cmd := exec.Command(buildTack(t), "serve", "--addr", "127.0.0.1:0", "--store", "sqlite:"+db, "--auth", authFile)
	cmd.Env = append(os.Environ(), "TACK_SERVER_SECRET="+secret)
	base := serveProcess(t, cmd)
	call := caller(t, base, map[string][]string{"Authorization": {"Bearer tk_alice"}})

	call("POST", "/v1/sessions", `{"session":"b","script":{"turns":[{"text":"idle"}]}}`, 201)
	call("PUT", "/v1/sessions/b/files/private.txt", secret, 201)
	ws := filepath.Join(dir, "workspaces")
	attempts := []string{
		"echo pwned > " + outside + "/pwned; echo pwned > ../pwned; echo pwned > " + ws + "/b/pwned",
		"cat ../b/private.txt " + ws + "/b/private.txt",
		fmt.Sprintf("cat /proc/%d/environ; env", cmd.Process.Pid),
		"cat " + authFile + " " + db,
		fmt.Sprintf("bash -c 'echo hi > /dev/tcp/127.0.0.1/%d'", ln.Addr().(*net.TCPAddr).Port),
		"f() { f | f & }; f; sleep 1",
		"echo mine > mine.txt; ls -A; pwd",
	}
	var calls []string
	for _, a := range attempts {
		args, _ := json.Marshal(map[string]string{"command": a})
		calls = append(calls, `{"name":"shell","args":`+string(args)+`}`)
	}
	call("POST", "/v1/sessions", `{"session":"a","script":{"turns":[{"tool_calls":[`+strings.Join(calls, ",")+`]},{"text":"done"}]}}`, 201)
	call("POST", "/v1/sessions/a/prompt", `{"text":"get out"}`, 200)
	msgs := awaitMessages(t, call, "a", `"content":"done"`, 60*time.Second)
	if strings.Contains(msgs, secret) {
		t.Fatalf("a secret leaked: %s", msgs)
	}
	if len(accepted) > 0 {
		t.Fatal("a sandboxed command reached the loopback port")
	}
	for _, p := range []string{filepath.Join(outside, "pwned"), filepath.Join(ws, "pwned"), filepath.Join(ws, "b", "pwned")} {
		if _, err := os.Stat(p); err == nil {
			t.Fatalf("wrote %s", p)
		}
	}
	if sandbox.Available() == nil {
		if !strings.Contains(msgs, `mine.txt\n/workspace\n`) {
			t.Fatalf("the workspace is not the sandbox's: %s", msgs)
		}
		if b, err := os.ReadFile(filepath.Join(ws, "a", "mine.txt")); err != nil || string(b) != "mine\n" {
			t.Fatalf("a's workspace: %q, %v", b, err)
		}
	} else if !strings.Contains(msgs, "sandbox unavailable:") {
		t.Fatalf("without a sandbox shell must say so: %s", msgs)
	}
	if got := call("GET", "/healthz", "", 200); got == "" {
		t.Fatal("no health")
	}
	call("GET", "/v1/sessions/b/files/private.txt", "", 200)
}
