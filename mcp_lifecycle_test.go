package tack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tack-run/tack"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/store/sqlite"
	"github.com/tack-run/tack/tools/mcp"
	"github.com/tack-run/tack/tools/mcp/mcptest"
)

// TestMCPServerDies: the server is killed during a call; the call gets an
// error result, the run goes on, and the next call starts a new process.
func TestMCPServerDies(t *testing.T) {
	rt, _ := mcpRuntime(t)
	s, evs := spawnScript(t, rt, `{"turns":[
		{"tool_calls":[{"name":"everything/trigger-long-running-operation","args":{"duration":30,"steps":300}}]},
		{"tool_calls":[{"name":"everything/echo","args":{"message":"back"}}]},
		{"text":"done"}]}`, "everything/trigger-long-running-operation", "everything/echo")
	if _, err := s.Prompt(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	next(t, evs, "progress update", func(ev *eventsv1.Event) bool { return ev.GetToolExecutionUpdate() != nil })
	pid := child(t, "mcp-server-everything")
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	end := next(t, evs, "agent_end", func(ev *eventsv1.Event) bool { return ev.GetAgentEnd() != nil })
	if r := end.GetAgentEnd().GetReason(); r != "completed" {
		t.Errorf("agent_end reason %q, want completed", r)
	}
	got := toolResults(t, s)
	if len(got) != 2 || !strings.HasPrefix(got[0], `error: MCP server "everything" stopped during the call: `) || got[1] != "Echo: back" {
		t.Errorf("tool results = %q, want the killed call's error, then Echo: back", got)
	}
	if again := child(t, "mcp-server-everything"); again == pid {
		t.Errorf("the server was not restarted: pid %d", again)
	}
}

// brokenRuntime is a runtime whose one MCP server, "broken", cannot
// start; it is closed when the test ends.
func brokenRuntime(t *testing.T) *tack.Runtime {
	return runtimeOf(t, map[string]mcp.ServerConfig{"broken": {Command: []string{"/nonexistent/server"}}})
}

// TestMCPStartFails: a session naming a server that cannot start is not
// created; the error is unknown_tool and names the server.
func TestMCPStartFails(t *testing.T) {
	rt := brokenRuntime(t)
	_, err := rt.Spawn(tack.SessionConfig{Script: json.RawMessage(`{"turns":[{"text":"x"}]}`), Tools: []string{"mcp:broken"}})
	if tack.Code(err) != "unknown_tool" || err.Error() != `unknown_tool: MCP server "broken" did not start: fork/exec /nonexistent/server: no such file or directory` {
		t.Errorf("Spawn = %v (code %q), want unknown_tool naming the server", err, tack.Code(err))
	}
}

// child returns the pid of this process's child whose command line holds
// name.
func child(t *testing.T, name string) int {
	t.Helper()
	return eventually.Value(t, mcpWait, func() (int, error) {
		dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
		for _, f := range dirs {
			stat, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			// pid (comm) state ppid ...: comm may hold spaces, so read after ')'.
			fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
			if len(fields) < 2 || fields[1] != strconv.Itoa(os.Getpid()) {
				continue
			}
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			if strings.Contains(string(cmdline), name) {
				return pid, nil
			}
		}
		return 0, fmt.Errorf("no child process %s", name)
	})
}

// TestMCPToolsChanged: when an MCP server's tool list changes, a session
// that names "mcp:<server>" gets tools_updated and can call the new tool
// in its next request; one that named a tool singly is left alone.
func TestMCPToolsChanged(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "mem"}, nil)
	text := func(s string) sdk.ToolHandler {
		return func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}, nil
		}
	}
	srv.AddTool(&sdk.Tool{Name: "a", InputSchema: json.RawMessage(`{"type":"object"}`)}, text("from a"))
	rt := runtimeOf(t, map[string]mcp.ServerConfig{"mem": mcptest.InMemory(srv)})
	spawn := func(tools string) (*tack.Session, <-chan *eventsv1.Event) {
		s, err := rt.Spawn(tack.SessionConfig{Tools: []string{tools}, Script: json.RawMessage(`{"turns":[
			{"tool_calls":[{"name":"mem/b"}]},{"text":"done"}]}`)})
		if err != nil {
			t.Fatal(err)
		}
		sub, err := s.Subscribe(t.Context(), tack.SubscribeOptions{Types: []string{"tools_updated", "agent_end"}})
		if err != nil {
			t.Fatal(err)
		}
		return s, sub.C
	}
	group, groupEvs := spawn("mcp:mem")
	single, singleEvs := spawn("mem/a")

	srv.AddTool(&sdk.Tool{Name: "b", InputSchema: json.RawMessage(`{"type":"object"}`)}, text("from b"))
	up := next(t, groupEvs, "tools_updated", func(ev *eventsv1.Event) bool { return ev.GetToolsUpdated() != nil }).GetToolsUpdated()
	if !slices.Equal(up.GetAttached(), []string{"mem/b"}) || len(up.GetDetached()) != 0 {
		t.Errorf("tools_updated = %v, want mem/b attached", up)
	}
	if _, err := group.Prompt(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	next(t, groupEvs, "agent_end", func(ev *eventsv1.Event) bool { return ev.GetAgentEnd() != nil })
	if got, want := toolResults(t, group), []string{"from b"}; !slices.Equal(got, want) {
		t.Errorf("group session's tool results = %q, want %q", got, want)
	}

	srv.RemoveTools("a")
	up = next(t, groupEvs, "tools_updated", func(ev *eventsv1.Event) bool { return ev.GetToolsUpdated() != nil }).GetToolsUpdated()
	if !slices.Equal(up.GetDetached(), []string{"mem/a"}) || len(up.GetAttached()) != 0 {
		t.Errorf("tools_updated = %v, want mem/a detached", up)
	}

	// The session that named mem/a singly heard nothing and still calls
	// only what it named: mem/b is unknown to it.
	if _, err := single.Prompt(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	next(t, singleEvs, "agent_end", func(ev *eventsv1.Event) bool {
		if ev.GetToolsUpdated() != nil {
			t.Errorf("the session naming mem/a got %v", ev)
		}
		return ev.GetAgentEnd() != nil
	})
	if got := toolResults(t, single); len(got) != 1 || !strings.HasPrefix(got[0], "error: ") {
		t.Errorf("single session's tool results = %q, want an unknown-tool error", got)
	}
}

// TestMCPToolsSurviveRestart: on SQLite, a session created with
// "mcp:mem" that detached mem/a and then got mem/c from a list change
// comes back after a restart with mem/b and mem/c, mem/a still detached.
func TestMCPToolsSurviveRestart(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "mem"}, nil)
	for _, n := range []string{"a", "b"} {
		srv.AddTool(&sdk.Tool{Name: n, InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "from " + n}}}, nil
		})
	}
	path := filepath.Join(t.TempDir(), "tack.db")
	life := func(use func(rt *tack.Runtime)) {
		t.Helper()
		st, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		m, err := mcp.New(map[string]mcp.ServerConfig{"mem": mcptest.InMemory(srv)}, mcp.Options{})
		if err != nil {
			t.Fatal(err)
		}
		rt, err := tack.New(tack.WithStore(st), tack.WithNode("n"), tack.WithMCP(m))
		if err != nil {
			t.Fatal(err)
		}
		defer rt.Close()
		use(rt)
	}
	life(func(rt *tack.Runtime) {
		s, err := rt.Spawn(tack.SessionConfig{ID: "s", Tools: []string{"mcp:mem"}, Script: json.RawMessage(`{"turns":[
			{"tool_calls":[{"name":"mem/a"},{"name":"mem/b"},{"name":"mem/c"}]},{"text":"done"}]}`)})
		if err != nil {
			t.Fatal(err)
		}
		sub, err := s.Subscribe(t.Context(), tack.SubscribeOptions{Types: []string{"tools_updated"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.DetachTools(t.Context(), "mem/a"); err != nil {
			t.Fatal(err)
		}
		next(t, sub.C, "tools_updated of the detach", func(*eventsv1.Event) bool { return true })
		srv.AddTool(&sdk.Tool{Name: "c", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "from c"}}}, nil
		})
		up := next(t, sub.C, "tools_updated of the list change", func(*eventsv1.Event) bool { return true }).GetToolsUpdated()
		if !slices.Equal(up.GetAttached(), []string{"mem/c"}) || len(up.GetDetached()) != 0 {
			t.Errorf("tools_updated = %v, want mem/c attached only", up)
		}
	})
	life(func(rt *tack.Runtime) {
		promptAndWait(t, rt, "s", "go", "r-1")
		s, err := rt.Session("s")
		if err != nil {
			t.Fatal(err)
		}
		got := toolResults(t, s)
		if len(got) != 3 || !strings.HasPrefix(got[0], `error: unknown tool "mem/a";`) || got[1] != "from b" || got[2] != "from c" {
			t.Errorf("tool results after the restart = %q, want mem/a unknown, then from b, from c", got)
		}
	})
}
