package http

// The security suite: each attack found on `tack serve` by a black-box
// review, and each that was already refused, as a table row that must
// keep failing for the attacker (docs/security.md says what each rule
// protects).

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	nethttp "net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/golang-jwt/jwt/v5"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/memory"
)

// attack is one request of the suite, with the headers a browser or an
// attacker sets.
type attack struct {
	name   string
	method string
	path   string
	token  string
	body   string
	host   string            // the Host header; the server's address when empty
	header map[string]string // Origin, Sec-Fetch-Site, Content-Type, ...
	status int
	want   string // a text the body must hold; "" for any
}

// upgrade are the headers of a WebSocket upgrade.
var upgrade = map[string]string{"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
	"Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}

// with returns h and more together.
func with(h map[string]string, more ...string) map[string]string {
	out := map[string]string{}
	for k, v := range h {
		out[k] = v
	}
	for i := 0; i+1 < len(more); i += 2 {
		out[more[i]] = more[i+1]
	}
	return out
}

// send sends a's request and reads the answer (a 101 upgrade and an
// event stream are closed at once).
func (ts *testServer) send(a attack) response {
	ts.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := nethttp.NewRequestWithContext(ctx, a.method, ts.url+a.path, strings.NewReader(a.body))
	if err != nil {
		ts.t.Fatal(err)
	}
	if a.host != "" {
		req.Host = a.host
	}
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	for k, v := range a.header {
		req.Header.Set(k, v)
	}
	res, err := ts.client.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer res.Body.Close()
	var b []byte
	if res.StatusCode != nethttp.StatusSwitchingProtocols && res.Header.Get("Content-Type") != "text/event-stream" {
		if b, err = io.ReadAll(res.Body); err != nil {
			ts.t.Fatal(err)
		}
	}
	return response{status: res.StatusCode, header: res.Header, body: strings.TrimSpace(string(b))}
}

// check sends every attack and fails on each answer that is not its
// status, or whose body lacks its text.
func (ts *testServer) check(t *testing.T, attacks []attack) {
	t.Helper()
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			r := ts.send(a)
			if r.status != a.status || !strings.Contains(r.body, a.want) {
				t.Fatalf("%s %s: %d %.300s, want %d with %q", a.method, a.path, r.status, r.body, a.status, a.want)
			}
			if r.status >= 400 && r.header.Get("Content-Type") != "application/json" {
				t.Fatalf("error with Content-Type %q", r.header.Get("Content-Type"))
			}
		})
	}
}

const (
	forbidden = `{"error":{"code":"forbidden","message":`
	evil      = "http://evil.example"
	rebind    = "rebind.evil.example:7700"
)

// TestCreateRaceKeepsTheOwner: bob creating (and forking onto) the ids of
// alice's sessions — a chosen one and a generated one — with 8 threads,
// while 8 more read her history and prompt her session as bob, and
// alice reads them all along: every create and fork of bob is 400, every
// read and prompt of bob is 404, alice's reads never fail, and nothing
// of bob's reaches her history.
func TestCreateRaceKeepsTheOwner(t *testing.T) {
	for _, st := range []struct {
		name  string
		store func() store.Store
	}{{"no store", func() store.Store { return nil }}, {"store", func() store.Store { return memory.New() }}} {
		t.Run(st.name, func(t *testing.T) {
			ts := start(t, st.store(), WithAuth(testAuth(t)))
			ts.must("POST", "/v1/sessions", aliceToken, `{"session":"v","model":"script:demo"}`, 201)
			if got := ts.must("POST", "/v1/sessions", aliceToken, `{"model":"script:demo"}`, 201); got != `{"session":"s-1"}` {
				t.Fatalf("alice's generated session: %s", got)
			}
			ts.must("POST", "/v1/sessions", bobToken, `{"session":"b","model":"script:demo"}`, 201)
			const threads, rounds = 8, 25
			var wg sync.WaitGroup
			var mu sync.Mutex
			var failures []string
			fail := func(format string, args ...any) {
				mu.Lock()
				defer mu.Unlock()
				failures = append(failures, fmt.Sprintf(format, args...))
			}
			expect := func(who, method, path, token, body string, status int) {
				r := ts.do(method, path, token, body)
				if r.status != status {
					fail("%s: %s %s: %d %s, want %d", who, method, path, r.status, r.body, status)
				}
			}
			for i := range threads {
				id := []string{"v", "s-1"}[i%2]
				wg.Go(func() {
					for range rounds {
						expect("bob creates", "POST", "/v1/sessions", bobToken, `{"session":"`+id+`","model":"script:demo"}`, 400)
						expect("bob forks", "POST", "/v1/sessions/b/fork", bobToken, `{"index":0,"new_session":"`+id+`"}`, 400)
					}
				})
				wg.Go(func() {
					for range rounds {
						expect("bob reads", "GET", "/v1/sessions/"+id+"/messages", bobToken, "", 404)
						expect("bob prompts", "POST", "/v1/sessions/"+id+"/prompt", bobToken, `{"text":"bob was here"}`, 404)
						expect("alice reads", "GET", "/v1/sessions/"+id, aliceToken, "", 200)
					}
				})
			}
			wg.Wait()
			for _, f := range failures[:min(len(failures), 5)] {
				t.Error(f)
			}
			for _, id := range []string{"v", "s-1"} {
				if got := ts.must("GET", "/v1/sessions/"+id+"/messages", aliceToken, "", 200); got != `{"messages":[]}` {
					t.Errorf("alice's %s after the race: %s", id, got)
				}
			}
		})
	}
}

// TestSubagentIDsAreTheRuntimes: a client cannot create <id>/sub-N before
// the sub-agent does, so alice's sub-agent starts as hers.
func TestSubagentIDsAreTheRuntimes(t *testing.T) {
	ts := start(t, nil, WithAuth(testAuth(t)))
	ts.must("POST", "/v1/sessions", bobToken, `{"session":"b","model":"script:demo"}`, 201)
	ts.check(t, []attack{
		{name: "create", method: "POST", path: "/v1/sessions", token: bobToken, body: `{"session":"p/sub-1","model":"script:demo"}`,
			status: 400, want: `session \"p/sub-1\" is not a valid id`},
		{name: "fork", method: "POST", path: "/v1/sessions/b/fork", token: bobToken, body: `{"index":0,"new_session":"p/sub-1"}`,
			status: 400, want: `new_session \"p/sub-1\" is not a valid id`},
	})
	ts.must("POST", "/v1/sessions", aliceToken, `{"session":"p","tools":["subagent"],"subagents":{"model":"script:demo"},`+
		`"script":{"turns":[{"tool_calls":[{"name":"subagent","args":{"task":"Say hi."}}]},{"text":"done"}]}}`, 201)
	evs := ts.open("/v1/sessions/p/events", aliceToken, "")
	ts.must("POST", "/v1/sessions/p/prompt", aliceToken, `{"text":"go"}`, 200)
	for _, m := range evs.until("agent_end") {
		if m.event == "tool_execution_end" && strings.Contains(m.data, `"is_error":true`) {
			t.Fatalf("the sub-agent failed: %s", m.data)
		}
	}
	if u, err := ts.rt.User(context.Background(), "p/sub-1"); err != nil || u != "alice" {
		t.Fatalf("p/sub-1 belongs to %q (%v)", u, err)
	}
}

// TestBadIDs: every transport refuses an id outside the rule, naming the
// rule.
func TestBadIDs(t *testing.T) {
	ts := start(t, nil)
	ts.must("POST", "/v1/sessions", "", `{"session":"s","model":"script:demo"}`, 201)
	var attacks []attack
	for name, id := range map[string]string{
		"a slash": "a/b", "a newline": `a\nb`, "a bidi mark": `a\u202eb`, "dot dot": "..", "dot": ".",
		"traversal": "../../etc", "129 characters": strings.Repeat("x", 129), "100 kB": strings.Repeat("x", 100_000),
		"a space": "a b", "empty after escapes": `\u0000`,
	} {
		attacks = append(attacks,
			attack{name: "create with " + name, method: "POST", path: "/v1/sessions", body: `{"session":"` + id + `","model":"script:demo"}`,
				status: 400, want: "is not a valid id: an id is 1–128 characters of A–Z a–z 0–9 . _ : @ -"},
			attack{name: "fork with " + name, method: "POST", path: "/v1/sessions/s/fork", body: `{"index":0,"new_session":"` + id + `"}`,
				status: 400, want: "is not a valid id: an id is 1–128 characters of A–Z a–z 0–9 . _ : @ -"})
	}
	ts.check(t, attacks)
	c := ts.ws("/v1/sessions/s/ws", "")
	c.send(`{"id":1,"cmd":"fork","index":0,"new_session":"s/sub-9"}`)
	if got := c.response("1"); !strings.Contains(got, `"code":"bad_request","message":"new_session \"s/sub-9\" is not a valid id`) {
		t.Fatalf("fork over the socket: %s", got)
	}
}

// TestCrossOrigin: without --auth, a request a browser marks as coming
// from another page — a foreign Origin (even with text/plain, which needs
// no preflight), Sec-Fetch-Site cross-site or same-site, Origin null — is
// 403 on every route that changes something and on the WebSocket; the
// server's own origin, a trusted origin and clients that send neither
// header (curl, SDKs) are not affected; reads are not refused.
func TestCrossOrigin(t *testing.T) {
	ts := start(t, nil, WithCORSOrigins("http://app.example", "*"))
	ts.must("POST", "/v1/sessions", "", `{"session":"s","model":"script:demo"}`, 201)
	own := ts.url
	textPlain := map[string]string{"Content-Type": "text/plain", "Origin": evil}
	attacks := []attack{
		{name: "WebSocket from a foreign origin", method: "GET", path: "/v1/sessions/s/ws", header: with(upgrade, "Origin", evil),
			status: 403, want: forbidden},
		{name: "WebSocket cross-site", method: "GET", path: "/v1/sessions/s/ws",
			header: with(upgrade, "Origin", evil, "Sec-Fetch-Site", "cross-site"), status: 403, want: forbidden},
		{name: "WebSocket from a trusted origin but cross-site", method: "GET", path: "/v1/sessions/s/ws",
			header: with(upgrade, "Origin", "http://app.example", "Sec-Fetch-Site", "cross-site"), status: 101},
		{name: "WebSocket of the server's own page", method: "GET", path: "/v1/sessions/s/ws",
			header: with(upgrade, "Origin", own, "Sec-Fetch-Site", "same-origin"), status: 101},
		{name: "WebSocket without Origin", method: "GET", path: "/v1/sessions/s/ws", header: upgrade, status: 101},
		{name: "the server's own page", method: "POST", path: "/v1/sessions", body: `{"model":"script:demo"}`,
			header: map[string]string{"Origin": own, "Sec-Fetch-Site": "same-origin", "Content-Type": "application/json"}, status: 201},
		{name: "own Origin, no Sec-Fetch-Site (an older browser)", method: "POST", path: "/v1/sessions", body: `{"model":"script:demo"}`,
			header: map[string]string{"Origin": own}, status: 201},
		{name: "Sec-Fetch-Site none (typed in the address bar)", method: "POST", path: "/v1/sessions", body: `{"model":"script:demo"}`,
			header: map[string]string{"Sec-Fetch-Site": "none"}, status: 201},
		{name: "curl", method: "POST", path: "/v1/sessions", body: `{"model":"script:demo"}`, status: 201},
		{name: "a trusted origin", method: "POST", path: "/v1/sessions", body: `{"model":"script:demo"}`,
			header: map[string]string{"Origin": "http://app.example", "Sec-Fetch-Site": "cross-site"}, status: 201},
		{name: `"*" counts only with auth`, method: "POST", path: "/v1/sessions", body: `{"model":"script:demo"}`,
			header: map[string]string{"Origin": "http://other.example"}, status: 403, want: forbidden},
		{name: "a read from a foreign origin", method: "GET", path: "/v1/sessions", header: map[string]string{"Origin": evil},
			status: 200},
	}
	// The session's own routes last: the DELETE, when it passes, ends it.
	for _, route := range []struct{ method, path, body string }{
		{"POST", "/v1/sessions", `{"model":"script:demo"}`},
		{"POST", "/v1/sessions/s/prompt", `{"text":"rm -rf"}`},
		{"POST", "/v1/sessions/s/approve", `{"approval_id":"ap-1"}`},
		{"POST", "/v1/sessions/s/fork", `{"index":0}`},
		{"POST", "/v1/sessions/s/agui", `{}`},
		{"POST", "/v1/sessions/s/close", ``},
		{"DELETE", "/v1/sessions/s", ``},
	} {
		at := route.method + " " + route.path
		attacks = append(attacks,
			attack{name: at + " text/plain from a foreign origin", method: route.method, path: route.path, body: route.body,
				header: textPlain, status: 403, want: forbidden + `"cross-origin request from \"http://evil.example\" refused`},
			attack{name: at + " cross-site", method: route.method, path: route.path, body: route.body,
				header: map[string]string{"Sec-Fetch-Site": "cross-site"}, status: 403, want: forbidden},
			attack{name: at + " same-site", method: route.method, path: route.path, body: route.body,
				header: map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://other.localhost"}, status: 403, want: forbidden},
			attack{name: at + " Origin null", method: route.method, path: route.path, body: route.body,
				header: map[string]string{"Origin": "null"}, status: 403, want: forbidden})
	}
	ts.check(t, attacks)
	if r := ts.send(attack{method: "GET", path: "/v1/sessions", header: map[string]string{"Origin": evil}}); r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("a foreign origin may read the answer: %v", r.header)
	}
}

// TestCrossOriginAnyWithAuth: with --auth, --cors-origins * trusts every
// origin (a page needs the bearer token, which browsers do not send on
// their own).
func TestCrossOriginAnyWithAuth(t *testing.T) {
	ts := start(t, nil, WithAuth(testAuth(t)), WithCORSOrigins("*"))
	ts.check(t, []attack{
		{name: "any origin", method: "POST", path: "/v1/sessions", token: aliceToken, body: `{"model":"script:demo"}`,
			header: map[string]string{"Origin": evil, "Sec-Fetch-Site": "cross-site"}, status: 201},
		{name: "any origin without a token", method: "POST", path: "/v1/sessions", body: `{"model":"script:demo"}`,
			header: map[string]string{"Origin": evil, "Sec-Fetch-Site": "cross-site"}, status: 401},
	})
	ts2 := start(t, nil, WithAuth(testAuth(t)))
	ts2.check(t, []attack{{name: "no trusted origin, with auth", method: "POST", path: "/v1/sessions", token: aliceToken,
		body: `{"model":"script:demo"}`, header: map[string]string{"Origin": evil}, status: 403, want: forbidden}})
}

// TestDNSRebinding: without --auth only loopback Host names are
// answered, on every route — /healthz and the UI included — and for the
// WebSocket whose Origin and Host are both the attacker's name; with
// --auth, --allowed-hosts narrows the names.
func TestDNSRebinding(t *testing.T) {
	ts := start(t, nil, WithUI(uiFiles))
	ts.must("POST", "/v1/sessions", "", `{"session":"s","model":"script:demo"}`, 201)
	wantHost := forbidden + `"host \"rebind.evil.example:7700\" refused`
	var attacks []attack
	for _, route := range []struct{ method, path, body string }{
		{"GET", "/v1/sessions", ""}, {"GET", "/v1/sessions/s/messages", ""}, {"GET", "/v1/sessions/s/events", ""},
		{"POST", "/v1/sessions/s/prompt", `{"text":"x"}`}, {"POST", "/v1/sessions", `{"model":"script:demo"}`},
		{"GET", "/healthz", ""}, {"GET", "/", ""}, {"GET", "/v1/catalog", ""}, {"GET", "/v1/nothing", ""},
		{"OPTIONS", "/v1/sessions", ""},
	} {
		attacks = append(attacks, attack{name: route.method + " " + route.path, method: route.method, path: route.path, body: route.body,
			host: rebind, status: 403, want: wantHost})
	}
	for _, host := range []string{"localhost:7700", "LocalHost", "127.0.0.1", "127.1.2.3:80", "[::1]:7700", "[::1]"} {
		attacks = append(attacks, attack{name: "host " + host, method: "GET", path: "/v1/sessions", host: host, status: 200})
	}
	attacks = append(attacks,
		attack{name: "WebSocket of the attacker's name", method: "GET", path: "/v1/sessions/s/ws", host: rebind,
			header: with(upgrade, "Origin", "http://"+rebind), status: 403, want: wantHost},
		attack{name: "a name that ends in localhost", method: "GET", path: "/v1/sessions", host: "localhost.evil.example", status: 403, want: forbidden},
		attack{name: "0.0.0.0", method: "GET", path: "/healthz", host: "0.0.0.0:7700", status: 403, want: forbidden},
		attack{name: "a private address", method: "GET", path: "/healthz", host: "192.168.1.2", status: 403, want: forbidden},
	)
	ts.check(t, attacks)

	narrow := start(t, nil, WithAuth(testAuth(t)), WithAllowedHosts("tack.example", "[::1]:7700"))
	narrow.check(t, []attack{
		{name: "an allowed name", method: "GET", path: "/v1/sessions", token: aliceToken, host: "tack.example:443", status: 200},
		{name: "an allowed address and port", method: "GET", path: "/v1/sessions", token: aliceToken, host: "[::1]:7700", status: 200},
		{name: "another port", method: "GET", path: "/v1/sessions", token: aliceToken, host: "[::1]:7701", status: 403, want: forbidden},
		{name: "another name, with a token", method: "GET", path: "/v1/sessions", token: aliceToken, host: rebind, status: 403, want: forbidden},
		{name: "another name, /healthz", method: "GET", path: "/healthz", host: rebind, status: 403, want: forbidden},
	})
	open := start(t, nil, WithAuth(testAuth(t)))
	open.check(t, []attack{{name: "any name with auth", method: "GET", path: "/healthz", host: "tack.example", status: 200}})
}

// TestCheckOptions: the checks serve runs on --cors-origins and
// --allowed-hosts.
func TestCheckOptions(t *testing.T) {
	for _, c := range []struct {
		name    string
		err     error
		wantErr string
	}{
		{"origins", CheckOrigins([]string{"https://app.example", "http://localhost:5173"}, false), ""},
		{"* without auth", CheckOrigins([]string{"*"}, false), `origin "*" trusts every web page`},
		{"* with auth", CheckOrigins([]string{"*"}, true), ""},
		{"an origin without scheme", CheckOrigins([]string{"app.example"}, true), `origin "app.example" is not scheme://host[:port]`},
		{"an origin with a path", CheckOrigins([]string{"https://app.example/ui"}, true), `is not scheme://host[:port]`},
		{"loopback hosts", CheckAllowedHosts([]string{"localhost", "127.0.0.1:7700", "[::1]"}, false), ""},
		{"a name without auth", CheckAllowedHosts([]string{"tack.example"}, false), `allowed host "tack.example" is not a loopback name`},
		{"a name with auth", CheckAllowedHosts([]string{"tack.example", "tack.example:8443"}, true), ""},
		{"a bad port", CheckAllowedHosts([]string{"tack.example:http"}, true), `"http" is not a port`},
		{"a URL", CheckAllowedHosts([]string{"https://tack.example/"}, true), `is not a host name`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.wantErr == "" && c.err != nil || c.wantErr != "" && (c.err == nil || !strings.Contains(c.err.Error(), c.wantErr)) {
				t.Fatalf("%v, want %q", c.err, c.wantErr)
			}
		})
	}
}

// TestJWTAttacks: tokens that must not name a user — alg none, an
// algorithm the server has no key for (alg confusion), expired past the
// leeway, not yet valid, an audience array without ours, no sub — are
// 401; an audience array that holds ours and exp within the leeway are
// accepted.
func TestJWTAttacks(t *testing.T) {
	ts := start(t, nil, WithAuth(testAuth(t)))
	claims := func(over map[string]any) jwt.MapClaims {
		c := jwt.MapClaims{"sub": "carol", "iss": "https://id.example", "aud": "tack", "exp": time.Now().Add(time.Hour).Unix()}
		for k, v := range over {
			if v == nil {
				delete(c, k)
			} else {
				c[k] = v
			}
		}
		return c
	}
	sign := func(m jwt.SigningMethod, c jwt.MapClaims, key any) string {
		s, err := jwt.NewWithClaims(m, c).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	hs := func(over map[string]any) string { return sign(jwt.SigningMethodHS256, claims(over), []byte(jwtSecret)) }
	now := time.Now()
	var attacks []attack
	for _, c := range []struct {
		name   string
		token  string
		status int
	}{
		{"alg none", sign(jwt.SigningMethodNone, claims(nil), jwt.UnsafeAllowNoneSignatureType), 401},
		{"HS384 with the secret (an algorithm not configured)", sign(jwt.SigningMethodHS384, claims(nil), []byte(jwtSecret)), 401},
		{"HS512 with the secret", sign(jwt.SigningMethodHS512, claims(nil), []byte(jwtSecret)), 401},
		{"RS256 header, HMAC signature (alg confusion)", algConfused(t, claims(nil)), 401},
		{"expired past the leeway", hs(map[string]any{"exp": now.Add(-61 * time.Second).Unix()}), 401},
		{"expired within the leeway", hs(map[string]any{"exp": now.Add(-30 * time.Second).Unix()}), 200},
		{"no exp", hs(map[string]any{"exp": nil}), 401},
		{"not yet valid", hs(map[string]any{"nbf": now.Add(5 * time.Minute).Unix()}), 401},
		{"audience array with ours", hs(map[string]any{"aud": []string{"other", "tack"}}), 200},
		{"audience array without ours", hs(map[string]any{"aud": []string{"other", "tack2"}}), 401},
		{"no sub", hs(map[string]any{"sub": nil}), 401},
		{"another issuer", hs(map[string]any{"iss": "https://evil.example"}), 401},
		{"a wrong secret", sign(jwt.SigningMethodHS256, claims(nil), []byte("guess")), 401},
	} {
		want := ""
		if c.status == 401 {
			want = `"code":"unauthorized"`
		}
		attacks = append(attacks, attack{name: c.name, method: "GET", path: "/v1/sessions", token: c.token, status: c.status, want: want})
	}
	ts.check(t, attacks)
}

// algConfused is a JWT whose header says RS256 but whose signature is an
// HMAC with the shared secret: the classic confusion of an RSA public
// key with an HMAC secret.
func algConfused(t *testing.T, c jwt.MapClaims) string {
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, c)
	tok.Header["alg"] = "RS256"
	unsigned, err := tok.SigningString()
	if err != nil {
		t.Fatal(err)
	}
	sig, err := jwt.SigningMethodHS256.Sign(unsigned, []byte(jwtSecret))
	if err != nil {
		t.Fatal(err)
	}
	return unsigned + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// TestOwnershipOnEveryRoute: bob gets on every route of alice's session
// exactly what he gets for a session that does not exist.
func TestOwnershipOnEveryRoute(t *testing.T) {
	ts := start(t, nil, WithAuth(testAuth(t)))
	ts.must("POST", "/v1/sessions", aliceToken, `{"session":"s","model":"script:demo"}`, 201)
	routes := []struct{ method, path, body string }{
		{"GET", "", ""}, {"DELETE", "", ""}, {"POST", "/close", ""}, {"GET", "/messages", ""}, {"GET", "/events", ""}, {"GET", "/ws", ""},
		{"POST", "/fork", `{"index":0}`}, {"POST", "/agui", `{"threadId":"%s","runId":"r","messages":[{"id":"m","role":"user","content":"x"}]}`},
	}
	for _, name := range []string{"prompt", "steer", "abort", "approve", "reject", "respond", "switch_model", "compact",
		"attach_tools", "detach_tools"} {
		routes = append(routes, struct{ method, path, body string }{"POST", "/" + name, `{}`})
	}
	var attacks []attack
	for _, r := range routes {
		for _, id := range []string{"s", "nope"} {
			attacks = append(attacks, attack{name: r.method + " " + id + r.path, method: r.method, path: "/v1/sessions/" + id + r.path,
				token: bobToken, body: strings.ReplaceAll(r.body, "%s", id), status: 404,
				want: `{"error":{"code":"invalid_session","message":"no session \"` + id + `\""}}`})
		}
	}
	ts.check(t, attacks)
	if got := ts.must("GET", "/v1/sessions", bobToken, "", 200); got != `{"sessions":[],"next":""}` {
		t.Fatalf("bob lists %s", got)
	}
}

// TestPathsAndBodies: paths that climb out (escaped or not) reach no
// file and no session; bodies and frames past the limit are refused.
func TestPathsAndBodies(t *testing.T) {
	ts := start(t, nil, WithUI(uiFiles), WithMaxBodyBytes(1024))
	ts.must("POST", "/v1/sessions", "", `{"session":"s","model":"script:demo"}`, 201)
	ts.check(t, []attack{
		{name: "escaped traversal as a session", method: "GET", path: "/v1/sessions/..%2F..%2Fetc%2Fpasswd", status: 404,
			want: `no session \"../../etc/passwd\"`},
		{name: "traversal to a file", method: "GET", path: "/..%2F..%2Fgo.mod", status: 404},
		{name: "dot segments", method: "GET", path: "/v1/sessions/s/../../../go.mod", status: 404},
		{name: "a body over the limit", method: "POST", path: "/v1/sessions/s/prompt", body: `{"text":"` + strings.Repeat("x", 2048) + `"}`,
			status: 413, want: `"code":"bad_request"`},
	})
	c := ts.ws("/v1/sessions/s/ws", "")
	c.send(`{"id":1,"cmd":"prompt","text":"` + strings.Repeat("x", 2048) + `"}`)
	if code, _ := c.ended(); code != websocket.StatusMessageTooBig {
		t.Fatalf("a frame over the limit: closed with %v", code)
	}
}

// TestLogNamesTheUser: with a logger, each request's line names its user
// (the request log's user field was empty), and create, approve and
// delete are audited with who, what and how it went.
func TestLogNamesTheUser(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	ts := start(t, nil, WithAuth(testAuth(t)), WithLogger(zap.New(core)))
	ts.must("POST", "/v1/sessions", aliceToken, heldSession, 201)
	ts.must("POST", "/v1/sessions", bobToken, `{"session":"s","model":"script:demo"}`, 400)
	ts.hold()
	ts.must("POST", "/v1/sessions/s/approve", aliceToken, `{"approval_id":"ap-1"}`, 200)
	ts.waitState("/v1/sessions/s", aliceToken, "idle")
	ts.must("DELETE", "/v1/sessions/s", aliceToken, "", 204)
	ts.must("GET", "/v1/sessions", "", "", 401)
	ts.stop()

	var requests, audits []string
	for _, e := range logs.All() {
		f := e.ContextMap()
		switch e.Message {
		case "request":
			requests = append(requests, fmt.Sprintf("%s %s %v %v", f["method"], f["path"], f["user"], f["status"]))
		case "audit":
			line := fmt.Sprintf("%v %v %v %v", f["action"], f["user"], f["session"], f["outcome"])
			if a, ok := f["approval_id"]; ok {
				line += fmt.Sprintf(" %v", a)
			}
			audits = append(audits, line)
		}
	}
	for _, want := range []string{"POST /v1/sessions alice 201", "POST /v1/sessions bob 400", "POST /v1/sessions/s/approve alice 200",
		"DELETE /v1/sessions/s alice 204", "GET /v1/sessions  401"} {
		if !strings.Contains(strings.Join(requests, "\n"), want) {
			t.Errorf("no request line %q in:\n%s", want, strings.Join(requests, "\n"))
		}
	}
	want := "create alice s ok\ncreate bob s bad_request\napprove alice s ok ap-1\ndelete alice s ok"
	if got := strings.Join(audits, "\n"); got != want {
		t.Errorf("audit lines:\n%s\nwant\n%s", got, want)
	}
}
