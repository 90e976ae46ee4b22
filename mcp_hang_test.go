package tack_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tack-run/tack"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/tools"
	"github.com/tack-run/tack/tools/mcp"
	"github.com/tack-run/tack/tools/mcp/mcptest"
)

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
