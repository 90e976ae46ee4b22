package mcptest

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tack-run/tack/tools/mcp"
)

// everythingBin is where `npm ci` in testdata/everything puts the server,
// relative to this file's directory.
const everythingBin = "../testdata/everything/node_modules/.bin/mcp-server-everything"

// Everything returns the command that runs server-everything over stdio.
// See the package doc for when it skips or fails t.
func Everything(t testing.TB) []string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	bin := filepath.Join(filepath.Dir(file), everythingBin)
	if _, err := os.Stat(bin); err != nil {
		dir := filepath.Join(filepath.Dir(file), "..", "testdata", "everything")
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed, and CI=true: .ci/run runs npm ci in %s", bin, dir)
		}
		t.Skipf("server-everything is not installed: run `npm ci` in %s", dir)
	}
	return []string{bin, "stdio"}
}

// InMemory returns a server configuration whose every start connects a
// new session of srv over in-memory transports. The sessions end when
// Tack closes its side.
func InMemory(srv *sdk.Server) mcp.ServerConfig {
	return mcp.ServerConfig{Dial: func(ctx context.Context) (sdk.Transport, error) {
		serverSide, clientSide := sdk.NewInMemoryTransports()
		if _, err := srv.Connect(ctx, serverSide, nil); err != nil {
			return nil, err
		}
		return clientSide, nil
	}}
}

// EverythingHTTP starts server-everything over streamable HTTP on a
// free loopback port and returns its endpoint; the process is killed when
// t ends. It skips or fails t as Everything does.
func EverythingHTTP(t testing.TB) string {
	t.Helper()
	cmd := Everything(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	p := exec.Command(cmd[0], "streamableHttp")
	p.Env = append(os.Environ(), "PORT="+port)
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Process.Kill(); _ = p.Wait() })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("server-everything did not listen on port " + port)
		}
	}
	return "http://127.0.0.1:" + port + "/mcp"
}
