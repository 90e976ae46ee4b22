package tack_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tack-run/tack"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/tools"
	"github.com/tack-run/tack/tools/mcp"
)

// mcpWait bounds the waits of the MCP tests (starting node takes a
// second or so).
const mcpWait = 30 * time.Second

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
	if u := up.GetToolExecutionUpdate(); u.GetName() != "everything/trigger-long-running-operation" || !strings.HasPrefix(u.GetPartial(), "progress 1/300\n") {
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
