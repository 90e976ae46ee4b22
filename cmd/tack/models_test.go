package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// openAIServer answers Chat Completions requests with the responses given,
// one per request, in OpenAI's streaming format; it records the bodies.
type openAIServer struct {
	mu        sync.Mutex
	responses []func(w http.ResponseWriter)
	bodies    []map[string]any
}

func (s *openAIServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	_ = json.NewDecoder(r.Body).Decode(&body)
	s.mu.Lock()
	s.bodies = append(s.bodies, body)
	i := len(s.bodies) - 1
	s.mu.Unlock()
	if r.URL.Path != "/v1/chat/completions" || i >= len(s.responses) {
		http.Error(w, `{"error":{"message":"unexpected request"}}`, http.StatusBadRequest)
		return
	}
	s.responses[i](w)
}

// sse writes an OpenAI stream of chunks, then [DONE].
func sse(chunks ...string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range chunks {
			fmt.Fprintf(w, "data: %s\n\n", c)
			w.(http.Flusher).Flush()
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}
}

func status(code int, header, body string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		if k, v, ok := strings.Cut(header, ": "); ok {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

const (
	chunkHead = `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m1","choices":[`
	usageTail = `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m1","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":%d}}}`
)

func delta(content string) string {
	return chunkHead + `{"index":0,"delta":{"content":` + fmt.Sprintf("%q", content) + `},"finish_reason":null}]}`
}

func finish(reason string) string {
	return chunkHead + `{"index":0,"delta":{},"finish_reason":"` + reason + `"}]}`
}

func usageChunk(in, out, cached int) string { return fmt.Sprintf(usageTail, in, out, in+out, cached) }

// writeConfig writes a tack.json for a provider "local" at url.
func writeConfig(t *testing.T, url string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tack.json")
	cfg := `{"default_model":"local/m1","providers":{"local":{"base_url":"` + url + `/v1","api_key_env":"LOCAL_KEY",
		"models":{"m1":{"context_window":10000,"cost":{"input":2.0,"output":8.0,"cached_input":0.5}}}}}}`
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRPCWithOpenAICompatibleServer runs `tack rpc --config` against a
// server speaking OpenAI's streaming format: a tool call, a rate limit
// retried after Retry-After, usage, cost and context to the token.
func TestRPCWithOpenAICompatibleServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	srv := &openAIServer{responses: []func(http.ResponseWriter){
		sse(delta("Let me check."),
			chunkHead+`{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"echo","arguments":"{\"text\":"}}]},"finish_reason":null}]}`,
			chunkHead+`{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"pong\"}"}}]},"finish_reason":null}]}`,
			finish("tool_calls"), usageChunk(1000, 20, 800)),
		status(429, "Retry-After: 0", `{"error":{"message":"rate limited","type":"rate_limit"}}`),
		sse(delta("The tool said "), delta("pong."), finish("stop"), usageChunk(1100, 5, 1000)),
	}}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	bin := buildTack(t)
	cmd := exec.Command(bin, "rpc", "--config", writeConfig(t, hs.URL))
	cmd.Env = append(os.Environ(), "LOCAL_KEY=secret")
	p := startCmd(t, cmd)
	p.send(`{"cmd":"create_session","id":"c","session":"s","tools":["echo"]}`)
	p.until(isResponse("c"))
	p.send(`{"cmd":"prompt","session":"s","text":"ping"}`)
	lines := p.until(isType("agent_end"))

	var usages []map[string]any
	var retries, tools int
	for _, m := range lines {
		switch m["type"] {
		case "token_usage":
			usages = append(usages, m)
		case "retry":
			retries++
		case "tool_execution_end":
			if m["result"] != "pong" {
				t.Errorf("echo result %v", m["result"])
			}
			tools++
		case "session_created":
			if m["model"] != "local/m1" {
				t.Errorf("the default model was not used: %v", m["model"])
			}
		}
	}
	if retries != 1 || tools != 1 || len(usages) != 2 {
		t.Fatalf("retries %d, tools %d, token_usage %d", retries, tools, len(usages))
	}
	last := usages[1]
	// 1100 prompt tokens (1000 of them cached) out of 10000; cost: first
	// response 200*2 + 800*0.5 + 20*8, second 100*2 + 1000*0.5 + 5*8 ($/M).
	wantCost := (200*2.0 + 800*0.5 + 20*8.0 + 100*2.0 + 1000*0.5 + 5*8.0) / 1e6
	if last["context_used"] != 1100.0 || last["context_window"] != 10000.0 || last["context_percent"] != 11.0 ||
		last["session_total_tokens"] != 2125.0 || fmt.Sprintf("%.9f", last["cost_usd"]) != fmt.Sprintf("%.9f", wantCost) {
		t.Fatalf("token_usage = %v (want cost %v)", last, wantCost)
	}
	end := lines[len(lines)-1]
	if u := end["usage"].(map[string]any); u["input_tokens"] != 2100.0 || u["cached_input_tokens"] != 1800.0 {
		t.Fatalf("agent_end usage = %v", u)
	}
	// The request after the tool carries the call and its result, in order.
	srv.mu.Lock()
	defer srv.mu.Unlock()
	msgs := srv.bodies[2]["messages"].([]any)
	roles := []string{}
	for _, m := range msgs {
		roles = append(roles, m.(map[string]any)["role"].(string))
	}
	if got := strings.Join(roles, ","); got != "system,user,assistant,tool" && got != "user,assistant,tool" {
		t.Fatalf("roles sent: %s", got)
	}
	if so, _ := srv.bodies[0]["stream_options"].(map[string]any); so["include_usage"] != true {
		t.Fatalf("include_usage not asked: %v", srv.bodies[0]["stream_options"])
	}
}

// TestRPCContextOverflow: the server's overflow error ends the run with
// context_overflow and an error that says so.
func TestRPCContextOverflow(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	srv := &openAIServer{responses: []func(http.ResponseWriter){
		status(400, "", `{"error":{"message":"This model's maximum context length is 10000 tokens. However, your messages resulted in 12000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`),
	}}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	cmd := exec.Command(buildTack(t), "rpc", "--config", writeConfig(t, hs.URL))
	cmd.Env = append(os.Environ(), "LOCAL_KEY=secret")
	p := startCmd(t, cmd)
	p.send(`{"cmd":"create_session","session":"s","model":"m1"}`)
	p.send(`{"cmd":"prompt","session":"s","text":"a very long prompt"}`)
	var types []string
	for _, m := range p.until(isType("agent_end")) {
		types = append(types, fmt.Sprint(m["type"]))
		if m["type"] == "error" && m["code"] != "context_overflow" {
			t.Errorf("error code %v", m["code"])
		}
		if m["type"] == "agent_end" && m["reason"] != "error" {
			t.Errorf("agent_end reason %v", m["reason"])
		}
	}
	if !strings.Contains(strings.Join(types, " "), "context_overflow error turn_end") {
		t.Fatalf("events: %v", types)
	}
}

// TestChatWithOpenAICompatibleServer runs `tack chat` over pipes: the
// answer is printed and the status line tells the context use.
func TestChatWithOpenAICompatibleServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	srv := &openAIServer{responses: []func(http.ResponseWriter){
		sse(delta("Hello "), delta("from the server."), finish("stop"), usageChunk(760, 4, 0)),
	}}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	cmd := exec.Command(buildTack(t), "chat", "--config", writeConfig(t, hs.URL))
	cmd.Env = append(os.Environ(), "LOCAL_KEY=secret", "XDG_DATA_HOME="+t.TempDir()) // not the user's own sessions
	p := startCmd(t, cmd)
	p.send("hi there")
	lines := p.until(func(m map[string]any) bool { return strings.Contains(fmt.Sprint(m["line"]), "Context:") })
	var out []string
	for _, m := range lines {
		out = append(out, fmt.Sprint(m["line"]))
	}
	text := strings.Join(out, "\n")
	if !strings.Contains(text, "Hello from the server.") || !strings.Contains(text, "Context: 7.6% | Session: 764 tokens") {
		t.Fatalf("chat printed:\n%s", text)
	}
}
