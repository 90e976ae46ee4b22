package tack_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tack-run/tack"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/store/sqlite"
	"github.com/tack-run/tack/tools"
	"github.com/tack-run/tack/tools/mcp"
	"github.com/tack-run/tack/tools/mcp/mcptest"
)

// mcpWait bounds the waits of the MCP tests (starting node takes a
// second or so).
const mcpWait = 30 * time.Second

// hanging is an in-memory MCP server whose tool "hang" answers only
// when cancelled.
type hanging struct {
	srv *sdk.Server
	// entered gets a value when a call reaches the tool; cancelled, the
	// reason of each cancellation the server saw.
	entered   chan struct{}
	cancelled chan error
}

func hangServer() *hanging {
	h := &hanging{srv: sdk.NewServer(&sdk.Implementation{Name: "hang"}, nil), entered: make(chan struct{}, 8), cancelled: make(chan error, 8)}
	h.srv.AddTool(&sdk.Tool{Name: "hang", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			h.entered <- struct{}{}
			<-ctx.Done()
			h.cancelled <- context.Cause(ctx)
			return nil, ctx.Err()
		})
	return h
}

// mcpRuntime is a runtime with server-everything ("everything", stdio)
// and the hanging in-memory server ("mem").
func mcpRuntime(t *testing.T) (*tack.Runtime, *hanging) {
	t.Helper()
	hang := hangServer()
	return runtimeOf(t, map[string]mcp.ServerConfig{
		"everything": {Command: mcptest.Everything(t)},
		"mem":        mcptest.InMemory(hang.srv),
	}), hang
}

// runtimeOf is a runtime with MCP servers and opts, closed when the test
// ends.
func runtimeOf(t *testing.T, servers map[string]mcp.ServerConfig, opts ...tack.Option) *tack.Runtime {
	t.Helper()
	m, err := mcp.New(servers, mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := tack.New(append(opts, tack.WithMCP(m))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	return rt
}

// spawnScript starts a session on an inline script with tools.
func spawnScript(t *testing.T, rt *tack.Runtime, script string, tools ...string) (*tack.Session, <-chan *eventsv1.Event) {
	t.Helper()
	s, err := rt.Spawn(tack.SessionConfig{Script: json.RawMessage(script), Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := s.Subscribe(t.Context(), tack.SubscribeOptions{Types: []string{"agent_*", "tool_execution_*"}})
	if err != nil {
		t.Fatal(err)
	}
	return s, sub.C
}

// next returns the next event that pick accepts.
func next(t *testing.T, c <-chan *eventsv1.Event, what string, pick func(*eventsv1.Event) bool) *eventsv1.Event {
	t.Helper()
	deadline := time.After(mcpWait)
	for {
		select {
		case ev := <-c:
			if pick(ev) {
				return ev
			}
		case <-deadline:
			t.Fatalf("no %s", what)
		}
	}
}

// toolResults returns the contents of the tool messages of s, marked
// "error: " when they are errors.
func toolResults(t *testing.T, s *tack.Session) []string {
	t.Helper()
	msgs, err := s.Messages(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range msgs {
		if m.GetRole() != llm.RoleTool {
			continue
		}
		c := m.GetContent()
		if m.GetIsError() {
			c = "error: " + c
		}
		out = append(out, c)
	}
	return out
}

// TestMCPSession: a session names server-everything's tools by
// "mcp:everything" and calls echo and the long-running operation over
// stdio; its progress comes as tool_execution_update, and abort during it
// is told within the bound and ends the run with the call interrupted.
func TestMCPSession(t *testing.T) {
	rt, _ := mcpRuntime(t)
	s, evs := spawnScript(t, rt, `{"turns":[
		{"tool_calls":[{"name":"everything/echo","args":{"message":"hi"}}]},
		{"tool_calls":[{"name":"everything/trigger-long-running-operation","args":{"duration":30,"steps":300}}]},
		{"text":"never requested"}]}`, "mcp:everything")
	if _, err := s.Prompt(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	up := next(t, evs, "progress update", func(ev *eventsv1.Event) bool { return ev.GetToolExecutionUpdate() != nil })
	if u := up.GetToolExecutionUpdate(); u.GetName() != "everything/trigger-long-running-operation" || u.GetPartial() != "progress 1/300" {
		t.Errorf("first update = %v", u)
	}
	sent := time.Now()
	if err := s.Abort(t.Context(), tack.AbortOptions{}); err != nil {
		t.Fatal(err)
	}
	next(t, evs, "agent_abort", func(ev *eventsv1.Event) bool { return ev.GetAgentAbort() != nil })
	if d := time.Since(sent); d > 100*time.Millisecond {
		t.Errorf("agent_abort %v after abort, want at most 100ms", d)
	}
	end := next(t, evs, "agent_end", func(ev *eventsv1.Event) bool { return ev.GetAgentEnd() != nil })
	if r := end.GetAgentEnd().GetReason(); r != "aborted" {
		t.Errorf("agent_end reason %q, want aborted", r)
	}
	if got, want := toolResults(t, s), []string{"Echo: hi", "error: " + tools.InterruptedByAbort}; !slices.Equal(got, want) {
		t.Errorf("tool results = %q, want %q", got, want)
	}
}

// call prompts s, whose script calls the hanging tool, and waits until
// the call has reached the server.
func (h *hanging) call(t *testing.T, s *tack.Session, evs <-chan *eventsv1.Event) {
	t.Helper()
	if _, err := s.Prompt(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	next(t, evs, "tool_execution_start", func(ev *eventsv1.Event) bool { return ev.GetToolExecutionStart() != nil })
	select {
	case <-h.entered:
	case <-time.After(mcpWait):
		t.Fatal("the call never reached the server")
	}
}

// sawCancel waits until the server's call ended by the client's
// cancellation (notifications/cancelled).
func (h *hanging) sawCancel(t *testing.T) {
	t.Helper()
	select {
	case err := <-h.cancelled:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the server's call ended with %v, want context.Canceled", err)
		}
	case <-time.After(mcpWait):
		t.Fatal("the server never saw the cancellation")
	}
}

// TestMCPAbortHangingServer: a tool whose server never answers is
// aborted within the bound, and the server sees the cancellation
// (notifications/cancelled).
func TestMCPAbortHangingServer(t *testing.T) {
	rt, hang := mcpRuntime(t)
	s, evs := spawnScript(t, rt, `{"turns":[{"tool_calls":[{"name":"mem/hang"}]},{"text":"never requested"}]}`, "mem/hang")
	hang.call(t, s, evs)
	sent := time.Now()
	if err := s.Abort(t.Context(), tack.AbortOptions{}); err != nil {
		t.Fatal(err)
	}
	next(t, evs, "agent_abort", func(ev *eventsv1.Event) bool { return ev.GetAgentAbort() != nil })
	if d := time.Since(sent); d > 100*time.Millisecond {
		t.Errorf("agent_abort %v after abort, want at most 100ms", d)
	}
	next(t, evs, "agent_end", func(ev *eventsv1.Event) bool { return ev.GetAgentEnd() != nil })
	hang.sawCancel(t)
	if got, want := toolResults(t, s), []string{"error: " + tools.InterruptedByAbort}; !slices.Equal(got, want) {
		t.Errorf("tool results = %q, want %q", got, want)
	}
}

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

// TestMCPSteerHangingServer: a steering message cancels a call to a
// server that never answers; the server sees the cancellation and the
// run goes on with the steering message.
func TestMCPSteerHangingServer(t *testing.T) {
	rt, hang := mcpRuntime(t)
	s, evs := spawnScript(t, rt, `{"turns":[{"tool_calls":[{"name":"mem/hang"}]},{"text":"steered"}]}`, "mem/hang")
	hang.call(t, s, evs)
	if _, err := s.Steer(t.Context(), "stop that", tack.SteerOptions{}); err != nil {
		t.Fatal(err)
	}
	end := next(t, evs, "agent_end", func(ev *eventsv1.Event) bool { return ev.GetAgentEnd() != nil })
	if r := end.GetAgentEnd().GetReason(); r != "completed" {
		t.Errorf("agent_end reason %q, want completed", r)
	}
	hang.sawCancel(t)
	if got, want := toolResults(t, s), []string{"error: " + tools.SkippedForSteering}; !slices.Equal(got, want) {
		t.Errorf("tool results = %q, want %q", got, want)
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

// TestMCPCatalog: the catalog lists each MCP server as mcp:<server>,
// without starting it.
func TestMCPCatalog(t *testing.T) {
	rt := brokenRuntime(t)
	var names []string
	for _, tl := range rt.Catalog().Tools {
		names = append(names, tl.Name)
		if tl.Name == "mcp:broken" && (tl.Kind != "killable" || tl.Description != "every tool of the MCP server broken") {
			t.Errorf("entry %+v", tl)
		}
	}
	if !slices.Contains(names, "mcp:broken") || !slices.IsSorted(names) {
		t.Errorf("catalog tools = %v, want mcp:broken among them, sorted", names)
	}
}
