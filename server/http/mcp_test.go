package http

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tack-run/tack"
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

// TestAgentsShownOnlyToWhoMayUseThem: MCP's tools/list and the A2A
// agent cards show each caller the agents its grant lets it use, as GET
// /v1/catalog does: bob, granted echo alone, does not see curious (its
// plugin brings ask_user), carol, who may not run scripted models, sees
// none; a card left out is 404, and a call of an agent left out is
// refused.
func TestAgentsShownOnlyToWhoMayUseThem(t *testing.T) {
	var f auth.File
	if err := json.Unmarshal([]byte(`{"tokens": {"tk_alice": "alice", "tk_bob": "bob", "tk_carol": "carol"},
		"grants": {"bob": {"tools": ["echo"]}, "carol": {"scripts": false}}}`), &f); err != nil {
		t.Fatal(err)
	}
	a, err := auth.New(f, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	ts := startWith(t, nil, append(agentruntest.Options(t), tack.WithPolicy(a.Policy())), WithAuth(a))
	for _, tc := range []struct{ token, want string }{
		{"tk_alice", "ask_curious ask_guarded ask_hello ask_slow"},
		{"tk_bob", "ask_guarded ask_hello ask_slow"},
		{"tk_carol", ""},
	} {
		names := slices.Sorted(maps.Keys(mcpservertest.Tools(t, connectMCP(ts, tc.token)(t, nil))))
		if got := strings.Join(names, " "); got != tc.want {
			t.Errorf("%s lists %q, want %q", tc.token, got, tc.want)
		}
	}
	bobs := connectMCP(ts, "tk_bob")(t, nil)
	res, err := bobs.CallTool(t.Context(), &sdk.CallToolParams{Name: "ask_curious", Arguments: map[string]any{"prompt": "hi"}})
	if err != nil || !res.IsError || !strings.HasPrefix(res.Content[0].(*sdk.TextContent).Text, "forbidden: ") {
		t.Fatalf("bob calls curious: %v %+v", err, res)
	}
	for _, tc := range []struct {
		token, path string
		status      int
	}{
		{"tk_alice", "/a2a/curious/.well-known/agent-card.json", 200},
		{"tk_bob", "/a2a/curious/.well-known/agent-card.json", 404},
		{"tk_bob", "/a2a/hello/.well-known/agent-card.json", 200},
		{"tk_carol", "/a2a/hello/.well-known/agent-card.json", 404},
		{"tk_carol", "/.well-known/agent-card.json", 404},
	} {
		if r := ts.do("GET", tc.path, tc.token, ""); r.status != tc.status {
			t.Errorf("%s GET %s: %d %s, want %d", tc.token, tc.path, r.status, r.body, tc.status)
		}
	}
	// Without the card the official client cannot start: bob posts.
	r := ts.do("POST", "/a2a/curious", "tk_bob", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`)
	if !strings.Contains(r.body, `"error"`) || !strings.Contains(r.body, "forbidden: ") {
		t.Errorf("bob's message to curious: %d %s, want forbidden", r.status, r.body)
	}
}

// TestMCPBatchCountsEachCall: a client of the 2025-03-26 protocol may send
// a JSON-RPC batch, many calls in one POST /mcp; each counts against
// requests_per_minute, as a WebSocket's commands do. bob, with 4 a
// minute, made and ran a session per call of a 20-call batch before.
func TestMCPBatchCountsEachCall(t *testing.T) {
	var f auth.File
	if err := json.Unmarshal([]byte(`{"tokens": {"tk_bob": "bob"}, "limits": {"bob": {"requests_per_minute": 4}}}`), &f); err != nil {
		t.Fatal(err)
	}
	a, err := auth.New(f, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	ts := startWith(t, nil, append(agentruntest.Options(t), tack.WithPolicy(a.Policy())), WithAuth(a))
	post := func(session, body string) (int, string) {
		req, err := http.NewRequest("POST", ts.url+"/mcp", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer tk_bob")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-03-26")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		_, _ = io.Copy(io.Discard, res.Body)
		return res.StatusCode, res.Header.Get("Mcp-Session-Id")
	}
	_, sid := post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	t.Cleanup(func() { // ends the MCP session, as a client closing does, a minute later
		ts.srv.requests.mu.Lock()
		clear(ts.srv.requests.by)
		ts.srv.requests.mu.Unlock()
		req, _ := http.NewRequest("DELETE", ts.url+"/mcp", nil)
		req.Header.Set("Authorization", "Bearer tk_bob")
		req.Header.Set("Mcp-Session-Id", sid)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
		}
	})
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	var calls []string
	for i := range 20 {
		calls = append(calls, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"ask_hello","arguments":{"prompt":"hi"}}}`, i+1))
	}
	// Bytes after the batch, which the SDK ignores, do not hide it.
	for _, after := range []string{"", " x", "{}", "]"} {
		ts.srv.requests.mu.Lock()
		clear(ts.srv.requests.by) // a minute later: two requests left
		ts.srv.requests.mu.Unlock()
		post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		if status, _ := post(sid, "["+strings.Join(calls, ",")+"]"+after); status != http.StatusTooManyRequests && status != http.StatusBadRequest {
			t.Errorf("a batch of 20 calls followed by %q as the third request of 4 a minute: %d, want 429", after, status)
		}
		if n := len(ts.rt.Sessions()); n != 0 {
			t.Fatalf("the refused batch followed by %q made %d sessions", after, n)
		}
	}
}

// TestMCPErrorsAreJSON: the MCP SDK's own error answers at /mcp are the
// server's JSON error body, as every route's are, with their status and
// headers: bob naming alice's MCP session (403 forbidden), an unknown
// MCP session (404 unknown_command), a wrong method (405 unknown_command,
// with Allow) and a body without its Content-Type (415 bad_request). They
// were text/plain.
func TestMCPErrorsAreJSON(t *testing.T) {
	ts := startWith(t, nil, agentruntest.Options(t), WithAuth(aliceAndBob(t)))
	alices := connectMCP(ts, "tk_alice")(t, nil)
	initialized := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	for _, tc := range []struct {
		name, method, token, session, contentType string
		status                                    int
		code, message, allow                      string
	}{
		{"another user's MCP session", "POST", "tk_bob", alices.ID(), "application/json", 403, "forbidden", "session user mismatch", ""},
		{"an unknown MCP session", "POST", "tk_alice", "nope", "application/json", 404, "unknown_command", "session not found", ""},
		{"a wrong method", "PUT", "tk_alice", alices.ID(), "application/json", 405, "unknown_command", "Method Not Allowed", "GET, POST, DELETE"},
		{"no Content-Type", "POST", "tk_alice", alices.ID(), "", 415, "bad_request", "Content-Type must be 'application/json'", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, ts.url+"/mcp", strings.NewReader(initialized))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+tc.token)
			req.Header.Set("Mcp-Session-Id", tc.session)
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			res, err := ts.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			var body struct {
				Error struct{ Code, Message string }
			}
			if res.StatusCode != tc.status || res.Header.Get("Content-Type") != "application/json" ||
				json.Unmarshal(b, &body) != nil || body.Error.Code != tc.code || body.Error.Message != tc.message ||
				res.Header.Get("Allow") != tc.allow {
				t.Errorf("%d %s (Allow %q) %s, want %d application/json %s %q (Allow %q)", res.StatusCode, res.Header.Get("Content-Type"),
					res.Header.Get("Allow"), b, tc.status, tc.code, tc.message, tc.allow)
			}
		})
	}
	// The session still works for its user: a JSON-RPC answer passes.
	if _, err := alices.ListTools(t.Context(), nil); err != nil {
		t.Fatalf("alice's session: %v", err)
	}
}

// TestJSONErrorsPassWhatIsNotAPlainError: jsonErrors leaves alone an
// error body that is JSON already (a JSON-RPC error), a success, and a
// stream, which it flushes as it goes.
func TestJSONErrorsPassWhatIsNotAPlainError(t *testing.T) {
	for _, tc := range []struct {
		name   string
		h      http.HandlerFunc
		status int
		ctype  string
		body   string
	}{
		{"a JSON-RPC error", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(404)
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}`))
		}, 404, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}`},
		{"a success", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(202)
		}, 202, "", ""},
		{"a stream", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write([]byte("data: 1\n\n"))
			if err := http.NewResponseController(w).Flush(); err != nil {
				panic(err)
			}
			_, _ = w.Write([]byte("data: 2\n\n"))
		}, 200, "text/event-stream", "data: 1\n\ndata: 2"},
		{"a plain error with no body", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(500)
		}, 500, "application/json", `{"error":{"code":"internal","message":"Internal Server Error"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			jsonErrors(tc.h).ServeHTTP(rec, httptest.NewRequest("POST", "/mcp", nil))
			if rec.Code != tc.status || rec.Header().Get("Content-Type") != tc.ctype || strings.TrimSpace(rec.Body.String()) != tc.body {
				t.Errorf("%d %q %q, want %d %q %q", rec.Code, rec.Header().Get("Content-Type"), rec.Body.String(), tc.status, tc.ctype, tc.body)
			}
			if tc.name == "a stream" && !rec.Flushed {
				t.Error("the stream was not flushed")
			}
		})
	}
}

// TestJSONErrorsAfterEarlyHints: an informational status (103) goes out as
// it is and is not taken for the final one: the plain error after it
// still becomes JSON, with its own status. (httptest's recorder keeps the
// 103 as the code, so this one runs a server.)
func TestJSONErrorsAfterEarlyHints(t *testing.T) {
	hs := httptest.NewServer(jsonErrors(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusTeapot)
		_, _ = w.Write([]byte("teapot"))
	})))
	defer hs.Close()
	res, err := http.Get(hs.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if want := `{"error":{"code":"bad_request","message":"teapot"}}`; res.StatusCode != http.StatusTeapot || strings.TrimSpace(string(b)) != want {
		t.Fatalf("%d %q, want 418 %q", res.StatusCode, b, want)
	}
}

// TestJSONErrorsFlushSendsTheHeaders: a stream that flushes before it
// writes anything sends its headers then, as net/http does: its client
// is not left waiting for a first event.
func TestJSONErrorsFlushSendsTheHeaders(t *testing.T) {
	received := make(chan struct{})
	hs := httptest.NewServer(jsonErrors(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		<-received // the first event waits for the client to have the headers
	})))
	defer hs.Close()
	defer close(received)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", hs.URL, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("the headers did not come: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
}
