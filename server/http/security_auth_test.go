package http

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/memory"
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
