package actors

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/llm/openai"
)

// gatewayServer is an OpenAI-compatible server that, like several real
// gateways, answers every streaming request with HTTP 200 and reports
// errors inside the stream. Request n gets streams[n] (the last repeats),
// written byte for byte and flushed.
func gatewayServer(t *testing.T, streams ...string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var requests atomic.Int32
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		n := int(requests.Add(1)) - 1
		if r.URL.Path != "/v1/chat/completions" {
			http.Error(w, `{"error":{"message":"no route","type":"not_found_error"}}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, streams[min(n, len(streams)-1)])
		w.(http.Flusher).Flush()
	}))
	t.Cleanup(hs.Close)
	return hs, &requests
}

// gatewayModel is model test-model at hs through the real OpenAI-compatible
// provider, with the key from $GATEWAY_API_KEY and millisecond retry waits.
func gatewayModel(hs *httptest.Server) *llm.Model {
	p := openai.New(hs.URL+"/v1",
		openai.WithHTTPClient(hs.Client()),
		openai.WithAPIKey("sk-bad"), openai.WithAPIKeyEnv("GATEWAY_API_KEY"),
		openai.WithBackoff(time.Millisecond, time.Millisecond))
	return &llm.Model{Name: "gateway/test-model", ID: "test-model", Provider: p, ContextWindow: 8000}
}

// TestGatewayBadKeyInStream: a refused key reported inside the stream
// ends the run at once, unretried, with a model_error that names the
// key's variable, the model and the base URL.
func TestGatewayBadKeyInStream(t *testing.T) {
	hs, requests := gatewayServer(t, ": keep-alive\n\n"+
		`data: {"error":{"message":"Incorrect API key provided: sk-bad.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`+"\n\n")
	h := newHarnessModel(t, gatewayModel(hs), nil)
	h.ok(&eventsv1.Prompt{Text: "hi"})
	h.waitFor("agent_end", 1)
	h.expect(seq(one("session_created"), runStart, one("error"), runEnd)...)
	want := `the server at ` + hs.URL + `/v1 refused the API key for model "test-model": check $GATEWAY_API_KEY (server: Incorrect API key provided: sk-bad.)`
	if e := h.waitFor("error", 1).GetError(); e.GetCode() != codeModelError || e.GetMessage() != want {
		t.Errorf("error = %v, want code %s, message %q", e, codeModelError, want)
	}
	if end := h.waitFor("agent_end", 1).GetAgentEnd(); end.GetReason() != string(events.EndError) {
		t.Errorf("agent_end = %v", end)
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

// TestGatewayOverloadedInStream: an Anthropic-style overloaded error event
// is retried after the backoff, and the retry answers.
func TestGatewayOverloadedInStream(t *testing.T) {
	const chunk = `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"test-model","choices":[`
	hs, requests := gatewayServer(t,
		"event: error\n"+`data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`+"\n\n",
		"data: "+chunk+`{"index":0,"delta":{"role":"assistant","content":"Hello"},"finish_reason":null}]}`+"\n\n"+
			"data: "+chunk+`{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n"+
			"data: "+chunk+`],"usage":{"prompt_tokens":12,"completion_tokens":1,"total_tokens":13}}`+"\n\n"+
			"data: [DONE]\n\n")
	h := newHarnessModel(t, gatewayModel(hs), nil)
	h.ok(&eventsv1.Prompt{Text: "hi"})
	h.waitFor("agent_end", 1)
	h.expect(seq(one("session_created"), runStart, one("retry"), answer, runEnd)...)
	if r := h.waitFor("retry", 1).GetRetry(); r.GetAttempt() != 1 || r.GetDelayMs() != 1 || r.GetReason() != "Overloaded" {
		t.Errorf("retry = %v", r)
	}
	if end := h.waitFor("agent_end", 1).GetAgentEnd(); end.GetReason() != string(events.EndCompleted) {
		t.Errorf("agent_end = %v", end)
	}
	if got, want := contents(h.history()), []string{"user:hi", "assistant:Hello"}; !slices.Equal(got, want) {
		t.Errorf("history = %q, want %q", got, want)
	}
	if n := requests.Load(); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}
