package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tack-run/tack/internal/eventually"
)

// serveProcess starts cmd, a tack serve, and returns the base URL its
// first stderr line names; the process is killed when the test ends.
func serveProcess(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	r := bufio.NewReader(stderr)
	line, err := r.ReadString('\n')
	base, ok := strings.CutPrefix(strings.TrimSpace(line), "tack serve: listening on ")
	if err != nil || !ok {
		t.Fatalf("first stderr line %q, %v", line, err)
	}
	go io.Copy(io.Discard, r) // a full pipe would stop it at its next log line
	return base
}

// awaitMessages asks the server of call for the messages of session until
// they hold want, for up to d, and returns them.
func awaitMessages(t *testing.T, call func(method, path, body string, status int) string, session, want string, d time.Duration) string {
	t.Helper()
	return eventually.Value(t, d, func() (string, error) {
		msgs := call("GET", "/v1/sessions/"+session+"/messages", "", 200)
		if !strings.Contains(msgs, want) {
			return "", fmt.Errorf("no %s in the messages of %s yet: %s", want, session, msgs)
		}
		return msgs, nil
	})
}

// caller returns call, which sends a request with header to base and
// wants status, returning the body without surrounding space.
func caller(t *testing.T, base string, header http.Header) func(method, path, body string, status int) string {
	return func(method, path, body string, status int) string {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		for k, vs := range header {
			req.Header[k] = vs
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != status {
			t.Fatalf("%s %s: %d %s, want %d", method, path, res.StatusCode, b, status)
		}
		return strings.TrimSpace(string(b))
	}
}

// TestServeSubprocess starts `tack serve` on a free port with a SQLite
// file, drives a session over HTTP, and stops it with SIGTERM: exit 0.
func TestServeSubprocess(t *testing.T) {
	bin := buildTack(t)
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--store", "sqlite:"+filepath.Join(t.TempDir(), "tack.db"))
	call := caller(t, serveProcess(t, cmd), nil)
	if got := call("POST", "/v1/sessions", `{"session":"x","script":{"turns":[{"text":"hi"}]}}`, 201); got != `{"session":"x"}` {
		t.Fatalf("create: %s", got)
	}
	call("POST", "/v1/sessions/x/prompt", `{"text":"hello"}`, 200)
	awaitMessages(t, call, "x", `{"role":"assistant","content":"hi"}`, 10*time.Second)
	http.DefaultClient.CloseIdleConnections()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("tack serve after SIGTERM: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("tack serve did not exit after SIGTERM")
	}
}

// TestServeRefusesOpenAddressWithoutAuth: without --auth only loopback.
func TestServeRefusesOpenAddressWithoutAuth(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:7700"} {
		if err := loopbackOnly(addr); err == nil || !strings.Contains(err.Error(), "--auth FILE") {
			t.Errorf("loopbackOnly(%q) = %v", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:7700", "[::1]:0", "localhost:7700"} {
		if err := loopbackOnly(addr); err != nil {
			t.Errorf("loopbackOnly(%q) = %v", addr, err)
		}
	}
	out, err := exec.Command(buildTack(t), "serve", "--addr", "0.0.0.0:0", "--store", "memory").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "not a loopback address") {
		t.Fatalf("tack serve --addr 0.0.0.0:0: %v %s", err, out)
	}
}

// TestServeRefusesUnsafeOrigins: --cors-origins * only with --auth, and
// origins and allowed hosts of the wrong shape, are refused before
// anything listens.
func TestServeRefusesUnsafeOrigins(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--cors-origins", "*"}, `--cors-origins: origin "*" trusts every web page`},
		{[]string{"--cors-origins", "https://app.example,*"}, `--cors-origins: origin "*" trusts every web page`},
		{[]string{"--cors-origins", "app.example"}, `--cors-origins: origin "app.example" is not scheme://host[:port]`},
		{[]string{"--allowed-hosts", "tack.example"}, `--allowed-hosts: allowed host "tack.example" is not a loopback name`},
		{[]string{"--allowed-hosts", "localhost:http"}, `--allowed-hosts: allowed host "localhost:http": "http" is not a port`},
	} {
		err := serve(append([]string{"--addr", "127.0.0.1:0", "--store", "memory"}, c.args...))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("tack serve %v: %v, want %q", c.args, err, c.want)
		}
	}
}

// TestServeRefusesSharedWorkspaceWithAuth: --workspace DIR gives every
// session one directory, so with --auth one user's tools would read and
// change another's files: refused before anything listens.
func TestServeRefusesSharedWorkspaceWithAuth(t *testing.T) {
	dir := t.TempDir()
	authFile := filepath.Join(dir, "auth.json")
	if err := os.WriteFile(authFile, []byte(`{"tokens": {"tk_bob": "bob"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	err := serve([]string{"--addr", "127.0.0.1:0", "--store", "memory", "--auth", authFile, "--workspace", dir})
	if want := "--workspace " + dir + " with --auth: every user's sessions would work in that one directory"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("tack serve --auth --workspace: %v, want %q", err, want)
	}
}

// TestServeWithAuthGivesNoShell is the review's finding end to end: with
// an auth file of tokens alone, bob's inline script that calls shell to
// read the auth file and the JWT secret gets the unknown-tool result, and
// script paths resolve only inside --script-dir.
func TestServeWithAuthGivesNoShell(t *testing.T) {
	dir := t.TempDir()
	authFile, scripts := filepath.Join(dir, "auth.json"), filepath.Join(dir, "scripts")
	if err := os.WriteFile(authFile, []byte(`{"tokens": {"tk_bob": "bob"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(scripts, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(scripts, "hi.json"), []byte(`{"turns":[{"text":"hi"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		flags []string
		hi    int // the status of creating a session on script:hi.json
	}{
		{"without --script-dir", nil, 422},
		{"with --script-dir", []string{"--script-dir", scripts}, 201},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(buildTack(t), append([]string{"serve", "--addr", "127.0.0.1:0", "--store", "memory", "--auth", authFile}, tc.flags...)...)
			cmd.Env = append(os.Environ(), "TACK_JWT_SECRET=hunter2")
			call := caller(t, serveProcess(t, cmd), http.Header{"Authorization": {"Bearer tk_bob"}})
			call("POST", "/v1/sessions", `{"session":"x","script":{"turns":[`+
				`{"tool_calls":[{"name":"shell","args":{"command":"cat `+authFile+`; echo $TACK_JWT_SECRET"}}]},{"text":"done"}]}}`, 201)
			call("POST", "/v1/sessions/x/prompt", `{"text":"go"}`, 200)
			msgs := awaitMessages(t, call, "x", `"content":"done"`, 10*time.Second)
			if !strings.Contains(msgs, `unknown tool \"shell\"`) || strings.Contains(msgs, "hunter2") || strings.Contains(msgs, "tk_bob") {
				t.Fatalf("bob's shell call: %s", msgs)
			}
			call("POST", "/v1/sessions", `{"model":"script:/etc/passwd"}`, 422)
			call("POST", "/v1/sessions", `{"model":"script:hi.json"}`, tc.hi)
			http.DefaultClient.CloseIdleConnections()
		})
	}
}
