package http

import (
	"context"
	"net/http"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/tack-run/tack"
)

// TestPromptTraceparent: the run a prompt request starts is traced under
// the request's traceparent header: same trace, the caller's span as its
// parent. A prompt without the header starts a trace of its own.
func TestPromptTraceparent(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	ts := startWith(t, nil, []tack.Option{tack.WithTracerProvider(tp)})
	ts.must("POST", "/v1/sessions", "", `{"session":"s","script":{"turns":[{"text":"Hi."}]}}`, 201)
	const traceID, spanID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	req, err := http.NewRequest("POST", ts.url+"/v1/sessions/s/prompt", strings.NewReader(`{"text":"hello"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("traceparent", "00-"+traceID+"-"+spanID+"-01")
	res, err := ts.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("prompt: %d", res.StatusCode)
	}
	ts.waitState("/v1/sessions/s", "", "idle")
	ts.must("POST", "/v1/sessions/s/prompt", "", `{"text":"again"}`, 200)
	ts.waitState("/v1/sessions/s", "", "idle")
	// A malformed traceparent (here in the body, as JSON-lines clients send
	// it) is refused, naming it.
	bad := ts.do("POST", "/v1/sessions/s/prompt", "", `{"text":"x","traceparent":"00-nope"}`)
	if want := `{"error":{"code":"bad_request","message":"traceparent \"00-nope\" is not a W3C trace context (00-\u003c32 hex trace id\u003e-\u003c16 hex span id\u003e-\u003c2 hex flags\u003e)"}}`; bad.status != 400 || bad.body != want {
		t.Errorf("malformed traceparent: %d %s\nwant 400 %s", bad.status, bad.body, want)
	}
	var runs []string
	for _, s := range exp.GetSpans() {
		if s.Name == "invoke_agent" {
			runs = append(runs, s.SpanContext.TraceID().String()+"/"+s.Parent.SpanID().String())
		}
	}
	if len(runs) != 2 || runs[0] != traceID+"/"+spanID || strings.HasPrefix(runs[1], traceID) || !strings.HasSuffix(runs[1], "/0000000000000000") {
		t.Fatalf("runs (trace/parent) %v, want the first in %s under %s, the second a root of its own", runs, traceID, spanID)
	}
}
