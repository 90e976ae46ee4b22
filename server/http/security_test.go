package http

// The security suite: each attack found on `tack serve` by a black-box
// review, and each that was already refused, as a table row that must
// keep failing for the attacker (docs/security.md says what each rule
// protects).

import (
	"context"
	"io"
	nethttp "net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
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
