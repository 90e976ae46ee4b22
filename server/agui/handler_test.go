package agui

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/plugins/builtin"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// server is a runtime with the built-in plugins behind a real HTTP server
// that mounts the handler as tack serve does.
type server struct {
	rt  *tack.Runtime
	url string
}

func newServer(t *testing.T) *server {
	t.Helper()
	reg := plugins.NewRegistry()
	if err := builtin.Register(reg); err != nil {
		t.Fatal(err)
	}
	rt, err := tack.New(tack.WithPluginRegistry(reg))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/v1/sessions/{id}/agui", New(rt))
	ts := httptest.NewServer(mux)
	t.Cleanup(func() {
		ts.Close()
		rt.Close()
	})
	return &server{rt: rt, url: ts.URL}
}

// spawn starts a scripted session; plugins are "name" or "name:{config}".
func (s *server) spawn(t *testing.T, id, script string, plugs ...string) *tack.Session {
	t.Helper()
	cfg := tack.SessionConfig{ID: id, Script: json.RawMessage(script)}
	for _, p := range plugs {
		name, conf, _ := strings.Cut(p, ":")
		cfg.Plugins = append(cfg.Plugins, plugins.Config{Name: name, Config: json.RawMessage(conf)})
	}
	sess, err := s.rt.Spawn(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return sess
}

// post sends a body to a session's endpoint.
func (s *server) post(t *testing.T, ctx context.Context, id, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url+"/v1/sessions/"+id+"/agui", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// sseEvents reads AG-UI events from an SSE body until it ends; each is
// returned as its JSON object.
func sseEvents(t *testing.T, body io.Reader) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			if line != "" && !strings.HasPrefix(line, ":") {
				t.Errorf("unexpected SSE line %q", line)
			}
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("data is not JSON: %q", data)
		}
		out = append(out, m)
	}
	return out
}

// names renders events as their types, CUSTOM ones as "CUSTOM:<name>".
func names(evs []map[string]any) []string {
	var out []string
	for _, ev := range evs {
		n := ev["type"].(string)
		if n == "CUSTOM" {
			n += ":" + ev["name"].(string)
		}
		out = append(out, n)
	}
	return out
}

// run posts a RunAgentInput and returns its events, checking the stream's
// status and content type.
func (s *server) run(t *testing.T, id, body string) []map[string]any {
	t.Helper()
	resp := s.post(t, context.Background(), id, body)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	return sseEvents(t, resp.Body)
}

func input(thread, run, prompt string) string {
	return fmt.Sprintf(`{"threadId":%q,"runId":%q,"state":{},"tools":[],"context":[],"forwardedProps":{},"messages":[{"id":"u1","role":"user","content":%q}]}`, thread, run, prompt)
}

func resumeInput(thread, run, resume string) string {
	return fmt.Sprintf(`{"threadId":%q,"runId":%q,"messages":[{"id":"u1","role":"user","content":"hi"}],"resume":%s}`, thread, run, resume)
}

func assertNames(t *testing.T, evs []map[string]any, want ...string) {
	t.Helper()
	assertLines(t, names(evs), want)
}

// the CUSTOM events of a turn that requests the model and ends.
var (
	runStart = []string{"CUSTOM:prompt_received", "CUSTOM:agent_start", "CUSTOM:message_committed",
		"CUSTOM:state_changed", "CUSTOM:agent_status", "CUSTOM:turn_start", "CUSTOM:request_start", "CUSTOM:state_changed"}
	turnEnd = []string{"CUSTOM:token_usage", "CUSTOM:turn_end"}
	runEnd  = []string{"CUSTOM:state_changed", "CUSTOM:agent_status", "RUN_FINISHED"}
)

func seq(parts ...any) []string {
	var out []string
	for _, p := range parts {
		switch v := p.(type) {
		case string:
			out = append(out, v)
		case []string:
			out = append(out, v...)
		}
	}
	return out
}

func TestPlainText(t *testing.T) {
	s := newServer(t)
	s.spawn(t, "s1", `{"turns":[{"text":"Hello there","chunk_size":6}]}`)
	evs := s.run(t, "s1", input("s1", "run-1", "hi"))
	assertNames(t, evs, seq("RUN_STARTED", runStart,
		"TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
		turnEnd, runEnd)...)
	first, last := evs[0], evs[len(evs)-1]
	if first["threadId"] != "s1" || first["runId"] != "run-1" || last["threadId"] != "s1" || last["runId"] != "run-1" {
		t.Errorf("RUN_STARTED %v, RUN_FINISHED %v: want threadId s1 and runId run-1", first, last)
	}
	if o := last["outcome"].(map[string]any); o["type"] != "success" {
		t.Errorf("outcome %v", o)
	}
	if evs[10]["delta"] != "Hello " || evs[11]["delta"] != "there" {
		t.Errorf("deltas %q %q", evs[10]["delta"], evs[11]["delta"])
	}
}

func TestThinkingToolCallAndResult(t *testing.T) {
	s := newServer(t)
	s.spawn(t, "s1", `{"turns":[{"thinking":"Echo it.","tool_calls":[{"name":"echo","args":{"text":"hi"}}]},{"text":"ok"}]}`)
	evs := s.run(t, "s1", input("s1", "run-1", "echo hi"))
	assertNames(t, evs, seq("RUN_STARTED", runStart,
		"REASONING_START", "REASONING_MESSAGE_START", "REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_END", "REASONING_END",
		"TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", turnEnd[0],
		"CUSTOM:tool_calls", "CUSTOM:state_changed", "CUSTOM:agent_status", "CUSTOM:tool_execution_start",
		"CUSTOM:tool_execution_end", "CUSTOM:tool_execution_metrics", "TOOL_CALL_RESULT", "CUSTOM:turn_end",
		"CUSTOM:state_changed", "CUSTOM:agent_status", "CUSTOM:turn_start", "CUSTOM:request_start", "CUSTOM:state_changed",
		"TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", turnEnd, runEnd)...)
	if res := find(evs, "TOOL_CALL_RESULT"); res["toolCallId"] != "c-1" || res["content"] != "hi" {
		t.Errorf("TOOL_CALL_RESULT %v", res)
	}
	if args := find(evs, "TOOL_CALL_ARGS"); args["toolCallId"] != "c-1" || args["delta"] != `{"text":"hi"}` {
		t.Errorf("TOOL_CALL_ARGS %v", args)
	}
}

func TestModelErrorIsRunError(t *testing.T) {
	s := newServer(t)
	s.spawn(t, "s1", `{"turns":[{"error":{"status":400,"message":"bad request"}}]}`)
	evs := s.run(t, "s1", input("s1", "run-1", "hi"))
	assertNames(t, evs, seq("RUN_STARTED", runStart[:7], "CUSTOM:error", "CUSTOM:turn_end", "CUSTOM:state_changed", "CUSTOM:agent_status", "RUN_ERROR")...)
	if last := evs[len(evs)-1]; last["code"] != "model_error" || last["message"] != "HTTP 400: bad request" {
		t.Errorf("RUN_ERROR %v", last)
	}
}

// find returns the last event of a type.
func find(evs []map[string]any, typ string) map[string]any {
	var found map[string]any
	for _, ev := range evs {
		if ev["type"] == typ {
			found = ev
		}
	}
	return found
}

func TestBadRequests(t *testing.T) {
	s := newServer(t)
	s.spawn(t, "s1", `{"turns":[{"text":"hi"}]}`)
	s.spawn(t, "busy", `{"turns":[{"stall_ms":30000}]}`)
	if _, err := s.rt.Session("busy"); err != nil {
		t.Fatal(err)
	}
	busy, _ := s.rt.Session("busy")
	if _, err := busy.Prompt(context.Background(), "wait"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = busy.Abort(context.Background(), tack.AbortOptions{}) })
	big := `{"threadId":"s1","runId":"r","messages":[{"id":"u","role":"user","content":"` + strings.Repeat("x", DefaultMaxBody) + `"}]}`
	tests := []struct {
		name, method, id, body string
		status                 int
		code, message          string
	}{
		{"not JSON", "POST", "s1", `{"threadId":`, 400, "bad_request", "the body is not a RunAgentInput: unexpected EOF"},
		{"no threadId", "POST", "s1", `{"runId":"r","messages":[]}`, 400, "bad_request", "threadId is missing"},
		{"no runId", "POST", "s1", `{"threadId":"s1","messages":[]}`, 400, "bad_request", "runId is missing"},
		{"threadId is another session", "POST", "s1", input("s2", "r", "hi"), 400, "bad_request", `threadId "s2" is not the session "s1" of the path`},
		{"no user message", "POST", "s1", `{"threadId":"s1","runId":"r","messages":[{"id":"a","role":"assistant","content":"x"}]}`, 400, "bad_request", "messages holds no user message and resume is empty: nothing to run"},
		{"an image part of a plain http URL", "POST", "s1", `{"threadId":"s1","runId":"r","messages":[{"id":"u","role":"user","content":[{"type":"image","source":{"type":"url","value":"http://x"}}]}]}`, 400, "bad_request", `images[0]: url must be a data: URL or https://, not "http://x"`},
		{"an audio part", "POST", "s1", `{"threadId":"s1","runId":"r","messages":[{"id":"u","role":"user","content":[{"type":"binary","mimeType":"audio/wav","data":"AAAA"}]}]}`, 400, "bad_request", `messages[0].content [0] is a "binary" part Tack does not take: text, image, and binary parts of an image/* mimeType with data or url are`},
		{"bad resume status", "POST", "s1", resumeInput("s1", "r", `[{"interruptId":"ap-1","status":"done"}]`), 400, "bad_request", `resume[0].status is "done", not "resolved" or "cancelled"`},
		{"nothing pending", "POST", "s1", resumeInput("s1", "r", `[{"interruptId":"ap-1","status":"resolved","payload":{"approved":true}}]`), 409, "no_pending_approval", `resume[0]: no approval or question "ap-1" is pending in session "s1"`},
		{"unknown session", "POST", "nope", input("nope", "r", "hi"), 404, "invalid_session", `no session "nope"`},
		{"busy", "POST", "busy", input("busy", "r", "hi"), 409, "busy", `session "busy" is running; an AG-UI run starts only when it is idle`},
		{"too big", "POST", "s1", big, 413, "bad_request", fmt.Sprintf("the body is over the limit of %d bytes", DefaultMaxBody)},
		{"GET", "GET", "s1", "", 405, "unknown_command", "GET is not allowed here; AG-UI runs are POSTed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, s.url+"/v1/sessions/"+tc.id+"/agui", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body struct {
				Error struct{ Code, Message string }
			}
			b, _ := io.ReadAll(resp.Body)
			if err := json.NewDecoder(bytes.NewReader(b)).Decode(&body); err != nil {
				t.Fatalf("body %q: %v", b, err)
			}
			if resp.StatusCode != tc.status || body.Error.Code != tc.code || body.Error.Message != tc.message {
				t.Errorf("got %d %s %q, want %d %s %q", resp.StatusCode, body.Error.Code, body.Error.Message, tc.status, tc.code, tc.message)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
	// The session that got the bad requests still serves.
	evs := s.run(t, "s1", input("s1", "r", "hi"))
	if n := names(evs); n[len(n)-1] != "RUN_FINISHED" {
		t.Errorf("after the bad requests: %v", n)
	}
}

// TestKeepalive: a stream waiting on a slow model gets SSE comments.
func TestKeepalive(t *testing.T) {
	s := newServer(t)
	s.spawn(t, "s1", `{"turns":[{"delay_ms":1000,"text":"late"}]}`)
	h := New(s.rt)
	h.Keepalive = 5 * time.Millisecond
	mux := http.NewServeMux()
	mux.Handle("/v1/sessions/{id}/agui", h)
	ts := httptest.NewServer(mux)
	defer ts.Close()
	resp, err := http.Post(ts.URL+"/v1/sessions/s1/agui", "application/json", strings.NewReader(input("s1", "r", "hi")))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), "\n\n: keepalive\n\n") || !strings.HasSuffix(string(b), `"outcome":{"type":"success"},"usage":[{"inputTokens":1,"outputTokens":1,"totalTokens":2}]}`+"\n\n") {
		t.Errorf("stream:\n%s", b)
	}
}
