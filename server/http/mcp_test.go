package http

import (
	"encoding/json"
	"net/http"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tack-run/tack/server/agentrun/agentruntest"
	"github.com/tack-run/tack/server/auth"
	"github.com/tack-run/tack/server/mcpserver/mcpservertest"
)

// bearerTransport adds a bearer token to every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// connectMCP connects the MCP SDK's client to ts's /mcp over streamable
// HTTP, with token when not "".
func connectMCP(ts *testServer, token string) mcpservertest.Connect {
	return func(t *testing.T, opt *sdk.ClientOptions) *sdk.ClientSession {
		tr := &sdk.StreamableClientTransport{Endpoint: ts.url + "/mcp"}
		if token != "" {
			tr.HTTPClient = &http.Client{Transport: bearerTransport{token}}
		}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, opt).Connect(t.Context(), tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
}

// TestMCPOverHTTP runs the MCP checks at /mcp, as the local user.
func TestMCPOverHTTP(t *testing.T) {
	ts := startWith(t, nil, agentruntest.Options(t))
	mcpservertest.Run(t, mcpservertest.Server{Connect: connectMCP(ts, ""), Runtime: ts.rt, User: LocalUser})
}

// TestMCPOverHTTPWithAuth runs them as alice behind --auth: a call
// without a token is 401, and bob cannot continue alice's session.
func TestMCPOverHTTPWithAuth(t *testing.T) {
	ts := startWith(t, nil, agentruntest.Options(t), WithAuth(aliceAndBob(t)))
	if r := ts.do("POST", "/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`); r.status != 401 {
		t.Fatalf("no token: %d %s", r.status, r.body)
	}
	mcpservertest.Run(t, mcpservertest.Server{Connect: connectMCP(ts, "tk_alice"), Runtime: ts.rt, User: "alice"})
	alices := connectMCP(ts, "tk_alice")(t, nil)
	res, err := alices.CallTool(t.Context(), &sdk.CallToolParams{Name: "ask_hello", Arguments: map[string]any{"prompt": "hi"}})
	if err != nil || res.IsError {
		t.Fatalf("alice: %v %v", err, res)
	}
	session := res.StructuredContent.(map[string]any)["session"].(string)
	bobs := connectMCP(ts, "tk_bob")(t, nil)
	res, err = bobs.CallTool(t.Context(), &sdk.CallToolParams{Name: "ask_hello", Arguments: map[string]any{"prompt": "hi", "session": session}})
	if err != nil || !res.IsError || res.Content[0].(*sdk.TextContent).Text != `invalid_session: no session "`+session+`"` {
		t.Fatalf("bob continues alice's session: %v %+v", err, res)
	}
}

// aliceAndBob authenticates tk_alice as alice and tk_bob as bob, with
// the default grants.
func aliceAndBob(t *testing.T) *auth.Authenticator {
	t.Helper()
	var f auth.File
	if err := json.Unmarshal([]byte(`{"tokens": {"tk_alice": "alice", "tk_bob": "bob"}}`), &f); err != nil {
		t.Fatal(err)
	}
	a, err := auth.New(f, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return a
}
