package mcptest

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

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
