package http

import (
	"strings"
	"testing"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/metrics"
	"github.com/tack-run/tack/store/memory"
)

// TestAGUIRouteIsTheOwnersOnly: the AG-UI route runs the owner's session,
// and answers another user exactly as for a session that does not exist.
func TestAGUIRouteIsTheOwnersOnly(t *testing.T) {
	ts := start(t, memory.New(), WithAuth(testAuth(t)))
	ts.must("POST", "/v1/sessions", aliceToken, `{"session":"s","script":{"turns":[{"text":"Hello."}]}}`, 201)
	input := `{"threadId":"s","runId":"run-1","messages":[{"id":"m1","role":"user","content":"hi"}],"tools":[],"context":[],"state":{},"forwardedProps":{}}`
	notFound := ts.do("POST", "/v1/sessions/none/agui", bobToken, strings.Replace(input, `"s"`, `"none"`, 1))
	bobs := ts.do("POST", "/v1/sessions/s/agui", bobToken, input)
	if bobs.status != 404 || bobs.body != strings.Replace(notFound.body, "none", "s", 1) {
		t.Fatalf("bob: %d %s (a missing session: %s)", bobs.status, bobs.body, notFound.body)
	}
	alices := ts.do("POST", "/v1/sessions/s/agui", aliceToken, input)
	if alices.status != 200 {
		t.Fatalf("alice: %d %s", alices.status, alices.body)
	}
	for _, want := range []string{`"type":"RUN_STARTED"`, `"type":"TEXT_MESSAGE_CONTENT"`, `"delta":"Hello."`, `"type":"RUN_FINISHED"`} {
		if !strings.Contains(alices.body, want) {
			t.Errorf("alice's run lacks %s:\n%s", want, alices.body)
		}
	}
}

// TestMetricsRoute: with metrics, /metrics serves the runtime's and the
// server's metrics — requests counted by route pattern, never by path —
// behind the same auth as every route.
func TestMetricsRoute(t *testing.T) {
	m := metrics.New()
	ts := startWith(t, memory.New(), []tack.Option{tack.WithMetrics(m)}, WithAuth(testAuth(t)), WithMetrics(m))
	ts.must("POST", "/v1/sessions", aliceToken, `{"session":"s1","script":{"turns":[{"text":"Hello."}]}}`, 201)
	ts.must("GET", "/v1/sessions/s1", aliceToken, "", 200)
	ts.must("GET", "/v1/sessions/nobody", aliceToken, "", 404)
	ts.must("GET", "/metrics", "", "", 401)
	body := ts.must("GET", "/metrics", aliceToken, "", 200)
	for _, want := range []string{
		`tack_http_requests_total{code="201",route="POST /v1/sessions"} 1`,
		`tack_http_requests_total{code="200",route="GET /v1/sessions/{id}"} 1`,
		`tack_http_requests_total{code="404",route="GET /v1/sessions/{id}"} 1`,
		`tack_sessions{state="idle"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(body, "s1") || strings.Contains(body, "nobody") {
		t.Error("a session id became a label value")
	}
}
