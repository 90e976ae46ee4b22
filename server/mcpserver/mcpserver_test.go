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
