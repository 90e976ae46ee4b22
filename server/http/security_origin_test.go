package http

import (
	"slices"
	"strings"
	"testing"
)

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
	// A trusted origin's preflight allows every method a route takes —
	// PUT for the files, PATCH — and its pages may read Retry-After.
	r := ts.send(attack{method: "OPTIONS", path: "/v1/sessions/s/files/a.txt",
		header: map[string]string{"Origin": "http://app.example", "Access-Control-Request-Method": "PUT"}})
	allowed := strings.Split(r.header.Get("Access-Control-Allow-Methods"), ", ")
	for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
		if !slices.Contains(allowed, m) {
			t.Errorf("the preflight allows %q, not %s", allowed, m)
		}
	}
	if exposed := r.header.Get("Access-Control-Expose-Headers"); !strings.Contains(exposed, "Retry-After") {
		t.Errorf("exposed headers %q, want Retry-After among them", exposed)
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
