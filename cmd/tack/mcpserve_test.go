package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tack-run/tack/server/agentrun/agentruntest"
	"github.com/tack-run/tack/server/mcpserver/mcpservertest"
)

// TestMCPOverStdio runs the MCP checks against `tack mcp`, the MCP SDK's
// client starting it as a command.
func TestMCPOverStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildTack(t)
	dir := t.TempDir()
	agentruntest.Write(t, dir)
	cfg := filepath.Join(dir, "tack.json")
	if err := os.WriteFile(cfg, []byte(agentruntest.Config()), 0o600); err != nil {
		t.Fatal(err)
	}
	connect := func(t *testing.T, opt *sdk.ClientOptions) *sdk.ClientSession {
		tr := &sdk.CommandTransport{Command: exec.Command(bin, "mcp", "--config", cfg, "--script-dir", dir)}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, opt).Connect(t.Context(), tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	mcpservertest.Run(t, mcpservertest.Server{Connect: connect})

	// --agent offers that agent alone.
	tr := &sdk.CommandTransport{Command: exec.Command(bin, "mcp", "--config", cfg, "--script-dir", dir, "--agent", "slow")}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil || len(res.Tools) != 1 || res.Tools[0].Name != "ask_slow" {
		t.Fatalf("--agent slow: %v %+v", err, res)
	}
	out, err := exec.Command(bin, "mcp", "--config", cfg, "--agent", "nobody").CombinedOutput()
	if want := "tack: mcpserver: no agent \"nobody\" (agents: [curious guarded hello slow])\n"; err == nil || string(out) != want {
		t.Fatalf("--agent nobody: %v %q, want %q", err, out, want)
	}
}
