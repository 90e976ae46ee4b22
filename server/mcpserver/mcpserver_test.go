package mcpserver_test

import (
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/server/agentrun/agentruntest"
	"github.com/tack-run/tack/server/mcpserver"
	"github.com/tack-run/tack/server/mcpserver/mcpservertest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestInProcess runs the checks over the SDK's in-memory transport.
func TestInProcess(t *testing.T) {
	rt, err := tack.New(append(agentruntest.Options(t), agentruntest.Plugins()...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	srv, err := mcpserver.New(rt, mcpserver.Options{User: "local"})
	if err != nil {
		t.Fatal(err)
	}
	connect := func(t *testing.T, opt *sdk.ClientOptions) *sdk.ClientSession {
		st, ct := sdk.NewInMemoryTransports()
		ss, err := srv.Connect(t.Context(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, opt).Connect(t.Context(), ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cs.Close()
			_ = ss.Wait()
		})
		return cs
	}
	mcpservertest.Run(t, mcpservertest.Server{Connect: connect, Runtime: rt, User: "local"})
}

// TestUnknownAgent: offering an agent the runtime lacks is an error.
func TestUnknownAgent(t *testing.T) {
	rt, err := tack.New(append(agentruntest.Options(t), agentruntest.Plugins()...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if _, err := mcpserver.New(rt, mcpserver.Options{Agents: []string{"nobody"}}); err == nil || err.Error() != `mcpserver: no agent "nobody" (agents: [curious guarded hello slow])` {
		t.Fatalf("New = %v", err)
	}
}

// TestSessionOfAnotherAgent: session is a session of the tool's agent:
// the caller's session of hello, or of no agent, is refused at ask_slow
// (or ask_hello) as a session that does not exist is, and no model
// answers; at ask_hello, hello's session goes on.
func TestSessionOfAnotherAgent(t *testing.T) {
	rt, err := tack.New(append(agentruntest.Options(t), agentruntest.Plugins()...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	srv, err := mcpserver.New(rt, mcpserver.Options{User: "local"})
	if err != nil {
		t.Fatal(err)
	}
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cs.Close()
		_ = ss.Wait()
	}()
	call := func(tool, session string) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: tool, Arguments: map[string]any{"prompt": "hi", "session": session}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(*sdk.TextContent).Text, res.IsError
	}
	for _, cfg := range []tack.SessionConfig{
		{ID: "mine", User: "local", Agent: "hello"},
		{ID: "plain", User: "local", Model: "script:hello.json"},
	} {
		if _, err := rt.Spawn(cfg); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ tool, session string }{{"ask_slow", "mine"}, {"ask_hello", "plain"}, {"ask_hello", "nobody"}} {
		if text, isErr := call(tc.tool, tc.session); !isErr || text != `invalid_session: no session "`+tc.session+`"` {
			t.Errorf("%s in %s: %q (error %v), want invalid_session as for no session", tc.tool, tc.session, text, isErr)
		}
	}
	for _, id := range []string{"mine", "plain"} {
		if n := len(agentruntest.Messages(t, rt, id)); n != 0 {
			t.Errorf("%s holds %d messages", id, n)
		}
	}
	if text, isErr := call("ask_hello", "mine"); isErr || text != agentruntest.HelloAnswer {
		t.Errorf("ask_hello in hello's session: %q (error %v)", text, isErr)
	}
}
