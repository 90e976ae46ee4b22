package http

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/server/auth"
	"github.com/tack-run/tack/store/storetest"
)

// grantsAuth is testAuth's users with grants and limits: bob has the
// default grant (no shell); alice every tool; carol no scripts, and
// carol's requests and sessions are limited.
func grantsAuth(t *testing.T, limits string) *auth.Authenticator {
	t.Helper()
	var f auth.File
	if err := json.Unmarshal([]byte(`{"tokens": {"tk_alice": "alice", "tk_bob": "bob", "tk_carol": "carol"},
		"grants": {"alice": {"tools": ["*"]}, "carol": {"scripts": false}}, "limits": `+limits+`}`), &f); err != nil {
		t.Fatal(err)
	}
	a, err := auth.New(f, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// startGrants serves a runtime whose policy is a's, reading scripts in
// dir, logging to the returned observer.
func startGrants(t *testing.T, a *auth.Authenticator, dir string, opts ...Option) (*testServer, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zap.InfoLevel)
	ts := startWith(t, nil, []tack.Option{tack.WithPolicy(a.Policy()), tack.WithScriptDir(dir)},
		append([]Option{WithAuth(a), WithLogger(zap.New(core))}, opts...)...)
	return ts, logs
}

// TestBobsScriptRunsNoShell is the review's finding over HTTP: bob's
// one-turn inline script calling shell ran as the server, read its
// secret and its auth file. Now the call gets the unknown-tool result.
func TestBobsScriptRunsNoShell(t *testing.T) {
	ts, _ := startGrants(t, grantsAuth(t, `{}`), t.TempDir())
	for _, tc := range []struct{ user, token, want string }{
		{"bob", bobToken, `unknown tool \"shell\"; available tools: echo, sleep, sleep_immune, sleep_stubborn`},
		{"alice", aliceToken, `"content":"pwned\n"`},
	} {
		t.Run(tc.user, func(t *testing.T) {
			ts.must("POST", "/v1/sessions", tc.token, `{"session":"`+tc.user+`","script":{"turns":[`+
				`{"tool_calls":[{"name":"shell","args":{"command":"echo pwned"}}]},{"text":"done"}]}}`, 201)
			ts.must("POST", "/v1/sessions/"+tc.user+"/prompt", tc.token, `{"text":"go"}`, 200)
			ts.waitState("/v1/sessions/"+tc.user, tc.token, "idle")
			if got := ts.must("GET", "/v1/sessions/"+tc.user+"/messages", tc.token, "", 200); !strings.Contains(got, tc.want) {
				t.Fatalf("messages %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestForbiddenOverHTTP: naming what the caller is not granted is 403
// forbidden naming it, logged as a refusal; script paths outside the
// script directory are 422 unknown_model without the file's content.
func TestForbiddenOverHTTP(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "scripts")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "x.json"), []byte(`{"turns":[{"text":"from outside"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ts, logs := startGrants(t, grantsAuth(t, `{}`), dir)
	ts.must("POST", "/v1/sessions", bobToken, `{"session":"b","model":"script:demo"}`, 201)
	const outside = `script: a script path must be relative and stay inside the script directory"}}`
	for _, tc := range []struct {
		name, method, path, token, body string
		status                          int
		want                            string
	}{
		{"create with shell", "POST", "/v1/sessions", bobToken, `{"model":"script:demo","tools":["shell"]}`, 403,
			`{"error":{"code":"forbidden","message":"the tool \"shell\" is not granted to bob"}}`},
		{"create with an MCP group", "POST", "/v1/sessions", bobToken, `{"model":"script:demo","tools":["mcp:fs"]}`, 403,
			`{"error":{"code":"forbidden","message":"the tool \"mcp:fs\" is not granted to bob"}}`},
		{"sub-agents with shell", "POST", "/v1/sessions", bobToken, `{"model":"script:demo","tools":["subagent"],"subagents":{"tools":["shell"]}}`, 403,
			`{"error":{"code":"forbidden","message":"the tool \"shell\" is not granted to bob"}}`},
		{"an inline script for carol", "POST", "/v1/sessions", "tk_carol", `{"script":{"turns":[{"text":"hi"}]}}`, 403,
			`{"error":{"code":"forbidden","message":"an inline script is not granted to carol"}}`},
		{"attach shell", "POST", "/v1/sessions/b/attach_tools", bobToken, `{"names":["shell"]}`, 403,
			`{"error":{"code":"forbidden","message":"the tool \"shell\" is not granted to bob"}}`},
		{"attach echo", "POST", "/v1/sessions/b/attach_tools", bobToken, `{"names":["echo"]}`, 200, `{}`},
		{"script:/etc/passwd", "POST", "/v1/sessions", bobToken, `{"model":"script:/etc/passwd"}`, 422,
			`{"error":{"code":"unknown_model","message":"unknown model \"script:/etc/passwd\": ` + outside},
		{"script:../x.json", "POST", "/v1/sessions", bobToken, `{"model":"script:../x.json"}`, 422,
			`{"error":{"code":"unknown_model","message":"unknown model \"script:../x.json\": ` + outside},
		{"switch to a file outside", "POST", "/v1/sessions/b/switch_model", bobToken, `{"model":"script:../x.json"}`, 422,
			`{"error":{"code":"unknown_model","message":"unknown model \"script:../x.json\": ` + outside},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ts.do(tc.method, tc.path, tc.token, tc.body)
			if r.status != tc.status || r.body != tc.want {
				t.Fatalf("%d %s\nwant %d %s", r.status, r.body, tc.status, tc.want)
			}
		})
	}
	// Over a WebSocket alike.
	wc := ts.ws("/v1/sessions/b/ws", bobToken)
	wc.send(`{"cmd":"attach_tools","id":"1","names":["shell"]}`)
	if got, want := wc.response(`"1"`), `{"type":"response","id":"1","cmd":"attach_tools","ok":false,"error":{"code":"forbidden","message":"the tool \"shell\" is not granted to bob"}}`; got != want {
		t.Fatalf("over the socket: %s\nwant %s", got, want)
	}
	refused := logs.FilterMessage("audit").FilterField(zap.String("outcome", "forbidden"))
	if n := refused.Len(); n != 6 {
		t.Fatalf("%d refusals logged, want 6: %v", n, refused.All())
	}
	if e := refused.All()[0].ContextMap(); e["user"] != "bob" || e["action"] != "create" || e["error"] != `forbidden: the tool "shell" is not granted to bob` {
		t.Fatalf("the first refusal logged: %v", e)
	}
}

// TestCatalogOfTheCaller: the catalog lists what the caller may name.
func TestCatalogOfTheCaller(t *testing.T) {
	ts, _ := startGrants(t, grantsAuth(t, `{}`), t.TempDir())
	for _, tc := range []struct {
		token       string
		shell, demo bool
	}{{aliceToken, true, true}, {bobToken, false, true}, {"tk_carol", false, false}} {
		got := ts.must("GET", "/v1/catalog", tc.token, "", 200)
		if strings.Contains(got, `"name":"shell"`) != tc.shell || strings.Contains(got, `"script:demo"`) != tc.demo {
			t.Errorf("%s's catalog: %s", tc.token, got)
		}
	}
}

// TestRequestsPerMinute: every request of a user counts, refused ones
// too; past the limit the answer is 429 rate_limited with Retry-After
// when the oldest request of the minute leaves it. Other users, requests
// without a credential and /healthz are apart; WebSocket commands count.
func TestRequestsPerMinute(t *testing.T) {
	clock := storetest.NewClock(time.Unix(1e9, 0))
	ts, logs := startGrants(t, grantsAuth(t, `{"carol": {"requests_per_minute": 3}}`), t.TempDir(), WithClock(clock.Now))
	const limited = `{"error":{"code":"rate_limited","message":"carol sent more than 3 requests in a minute (requests_per_minute): retry in `
	steps := []struct {
		name, token, path string
		advance           time.Duration
		status            int
		retry             string
	}{
		{"1", "tk_carol", "/v1/sessions", 0, 200, ""},
		{"2: refused ones count too", "tk_carol", "/v1/sessions/nope", 0, 404, ""},
		{"3", "tk_carol", "/v1/sessions", 0, 200, ""},
		{"4 within the minute", "tk_carol", "/v1/sessions", 0, 429, "60"},
		{"bob is apart", bobToken, "/v1/sessions", 0, 200, ""},
		{"no credential is not counted", "", "/v1/sessions", 0, 401, ""},
		{"healthz is not counted", "tk_carol", "/healthz", 0, 200, ""},
		{"30 s later: the refused one counted", "tk_carol", "/v1/sessions", 30 * time.Second, 429, "30"},
		{"a minute after the first", "tk_carol", "/v1/sessions", 30 * time.Second, 200, ""},
		{"and the next", "tk_carol", "/v1/sessions", 0, 200, ""},
		{"the refused requests of 30 s ago are in the minute", "tk_carol", "/v1/sessions", 0, 429, "60"},
	}
	for _, s := range steps {
		clock.Advance(s.advance)
		r := ts.do("GET", s.path, s.token, "")
		if r.status != s.status || r.header.Get("Retry-After") != s.retry {
			t.Fatalf("%s: %d (Retry-After %q) %s, want %d (Retry-After %q)", s.name, r.status, r.header.Get("Retry-After"), r.body, s.status, s.retry)
		}
		if s.status == 429 && r.body != limited+s.retry+` s"}}` {
			t.Fatalf("%s: %s", s.name, r.body)
		}
	}
	if n := logs.FilterMessage("audit").FilterField(zap.String("outcome", "rate_limited")).Len(); n != 3 {
		t.Fatalf("%d rate_limited refusals logged, want 3", n)
	}
}

// TestRequestsPerMinuteOverAWebSocket: the upgrade is one request, each
// command another.
func TestRequestsPerMinuteOverAWebSocket(t *testing.T) {
	clock := storetest.NewClock(time.Unix(1e9, 0))
	ts, _ := startGrants(t, grantsAuth(t, `{"bob": {"requests_per_minute": 3}}`), t.TempDir(), WithClock(clock.Now))
	ts.must("POST", "/v1/sessions", bobToken, `{"session":"b","model":"script:demo"}`, 201)
	wc := ts.ws("/v1/sessions/b/ws", bobToken)
	wc.send(`{"cmd":"get_state","id":"1"}`)
	if got := wc.response(`"1"`); !strings.Contains(got, `"ok":true`) {
		t.Fatalf("the first command: %s", got)
	}
	wc.send(`{"cmd":"get_state","id":"2"}`)
	if got, want := wc.response(`"2"`), `{"type":"response","id":"2","cmd":"get_state","ok":false,"error":{"code":"rate_limited",`+
		`"message":"bob sent more than 3 requests in a minute (requests_per_minute): retry in 60 s"}}`; got != want {
		t.Fatalf("the command past the limit: %s\nwant %s", got, want)
	}
}

// TestMaxOpenRequests: event streams and WebSockets stay open, so the
// rate alone does not bound them: with max_open_requests 2, bob's third
// open request is 429 with Retry-After 1 while two streams are open,
// whatever route it takes, and goes through once one ends; alice is
// apart.
func TestMaxOpenRequests(t *testing.T) {
	ts, _ := startGrants(t, grantsAuth(t, `{"bob": {"max_open_requests": 2}}`), t.TempDir())
	ts.must("POST", "/v1/sessions", bobToken, `{"session":"b","model":"script:demo"}`, 201)
	events := ts.open("/v1/sessions/b/events", bobToken, "")
	ts.ws("/v1/sessions/b/ws", bobToken)
	const want = `{"error":{"code":"rate_limited","message":"bob has 2 requests open, event streams and WebSockets included (max_open_requests): close one first"}}`
	for _, path := range []string{"/v1/sessions", "/v1/sessions/b/events"} {
		if r := ts.do("GET", path, bobToken, ""); r.status != 429 || r.header.Get("Retry-After") != "1" || r.body != want {
			t.Fatalf("GET %s with two streams open: %d (Retry-After %q) %s", path, r.status, r.header.Get("Retry-After"), r.body)
		}
	}
	ts.must("GET", "/v1/sessions", aliceToken, "", 200)
	events.close()
	eventually.Within(t, 5*time.Second, func() error {
		if r := ts.do("GET", "/v1/sessions", bobToken, ""); r.status != 200 {
			return fmt.Errorf("after a stream ended: %d %s", r.status, r.body)
		}
		return nil
	})
}

// TestLimitsOfTheRuntimeOverHTTP: max_sessions and max_running answer 429
// rate_limited with a Retry-After.
func TestLimitsOfTheRuntimeOverHTTP(t *testing.T) {
	ts, _ := startGrants(t, grantsAuth(t, `{"*": {"max_sessions": 2, "max_running": 1}}`), t.TempDir())
	stall := `{"turns":[{"text":"a","stall_ms":60000}]}`
	ts.must("POST", "/v1/sessions", bobToken, `{"session":"b1","script":`+stall+`}`, 201)
	ts.must("POST", "/v1/sessions", bobToken, `{"session":"b2","script":`+stall+`}`, 201)
	r := ts.do("POST", "/v1/sessions", bobToken, `{"session":"b3","model":"script:demo"}`)
	if r.status != 429 || r.header.Get("Retry-After") != "1" ||
		r.body != `{"error":{"code":"rate_limited","message":"bob has 2 sessions open, the most allowed (max_sessions): close one first"}}` {
		t.Fatalf("bob's third session: %d %v %s", r.status, r.header, r.body)
	}
	ts.must("POST", "/v1/sessions/b1/prompt", bobToken, `{"text":"go"}`, 200)
	r = ts.do("POST", "/v1/sessions/b2/prompt", bobToken, `{"text":"go"}`)
	if r.status != 429 || r.header.Get("Retry-After") != "1" ||
		r.body != `{"error":{"code":"rate_limited","message":"bob has 1 runs in progress, the most allowed (max_running): wait for one to end"}}` {
		t.Fatalf("bob's second run: %d %v %s", r.status, r.header, r.body)
	}
	ts.must("POST", "/v1/sessions/b1/abort", bobToken, `{}`, 200)
	ts.waitState("/v1/sessions/b1", bobToken, "idle")
	ts.must("POST", "/v1/sessions/b2/prompt", bobToken, `{"text":"go"}`, 200)
}

// TestAgentsOverHTTP: the catalog lists the agents the caller may use,
// and creating a session of an agent that holds what the caller is not
// granted is 403 forbidden naming it.
func TestAgentsOverHTTP(t *testing.T) {
	a := grantsAuth(t, `{}`)
	agents := map[string]tack.Agent{
		"demo":  tack.Demo(),
		"admin": {Description: "Runs commands.", Model: "script:demo", Tools: []string{"shell"}},
	}
	ts := startWith(t, nil, []tack.Option{tack.WithPolicy(a.Policy()), tack.WithScriptDir(t.TempDir()), tack.WithAgents(agents, "")},
		WithAuth(a), WithLogger(zap.NewNop()))
	for _, tc := range []struct {
		token, want string
	}{
		{aliceToken, `"agents":[{"name":"admin","description":"Runs commands.","model":"script:demo","tools":["shell"]},{"name":"demo","description":"` + tack.Demo().Description + `","model":"script:demo","tools":[]}],"default_agent":"demo"}`},
		{bobToken, `"agents":[{"name":"demo","description":"` + tack.Demo().Description + `","model":"script:demo","tools":[]}],"default_agent":"demo"}`},
		{"tk_carol", `"agents":[],"default_agent":""}`},
	} {
		if got := ts.must("GET", "/v1/catalog", tc.token, "", 200); !strings.HasSuffix(strings.TrimSpace(got), tc.want) {
			t.Errorf("%s's catalog: %s\nwant it to end %s", tc.token, got, tc.want)
		}
	}
	ts.must("POST", "/v1/sessions", bobToken, `{"session":"b","agent":"demo"}`, 201)
	ts.must("POST", "/v1/sessions", aliceToken, `{"session":"a","agent":"admin"}`, 201)
	for _, tc := range []struct {
		body   string
		status int
		want   string
	}{
		{`{"agent":"admin"}`, 403, `{"error":{"code":"forbidden","message":"the tool \"shell\" is not granted to bob"}}`},
		{`{"agent":"nobody"}`, 400, `{"error":{"code":"bad_request","message":"unknown agent \"nobody\" (agents: [admin demo])"}}`},
		// The agent is checked as it is, not as the request overrides
		// it: a session of it is the agent's, whose system prompt and
		// plugins its export shows.
		{`{"agent":"admin","tools":["echo"]}`, 403, `{"error":{"code":"forbidden","message":"the tool \"shell\" is not granted to bob"}}`},
	} {
		if r := ts.do("POST", "/v1/sessions", bobToken, tc.body); r.status != tc.status || r.body != tc.want {
			t.Errorf("%s: %d %s\nwant %d %s", tc.body, r.status, r.body, tc.status, tc.want)
		}
	}
	doc := `{"format":"tack.session/v1","config":{"agent":"admin","tools":["echo"]},"messages":[]}`
	if r := ts.do("POST", "/v1/sessions/import?session=b2", bobToken, doc); r.status != 403 || !strings.Contains(r.body, `"forbidden"`) {
		t.Errorf("bob imported a session of admin with its tools overridden: %d %s", r.status, r.body)
	}
}
