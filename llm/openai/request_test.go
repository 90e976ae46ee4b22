package openai

import (
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/llm/llmtest"
)

// call returns a tool call with raw arguments.
func call(id, name, args string) *llm.ToolCall {
	return &llm.ToolCall{Id: id, Name: name, Args: &eventsv1.RawJSON{Json: []byte(args)}}
}

// TestRequestBody asserts the whole body Tack sends: the system prompt
// first, same-role messages merged, tool results in the order of the
// calls (a missing one added by the repair pass), arguments that are not a
// JSON object sent as {}, thinking left out, "[interrupted]" kept, the
// tools, and include_usage.
func TestRequestBody(t *testing.T) {
	asst := llm.AssistantMessage("Let me look.")
	asst.Thinking = "private"
	asst.ToolCalls = []*llm.ToolCall{call("c1", "sleep", `{"ms":10}`), call("c2", "echo", `{"text":"x"}`), call("c3", "echo", `{oops`)}
	history := []*llm.Message{
		llm.UserMessage("first"),
		llm.UserMessage("second"),
		asst,
		llm.ToolResultMessage("c2", "x", false),
		llm.ToolResultMessage("c1", "slept", false),
		llm.AssistantMessage("Partial\n\n[interrupted]"),
		llm.UserMessage("go on"),
	}
	before := cloneAll(history)
	req := &llm.Request{
		Model:    "qwen3-8b",
		System:   "You are terse.",
		Messages: history,
		Tools: []llm.ToolSpec{
			{Name: "sleep", Description: "Sleeps.", Parameters: json.RawMessage(`{"type":"object","properties":{"ms":{"type":"integer"}},"required":["ms"]}`)},
			{Name: "echo"},
		},
	}
	srv := newServer(t, sse(openAILength))
	p, _ := srv.provider(WithAPIKey("sk-test"))
	if _, _, err := llmtest.Collect(t, p, req); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	var want map[string]any
	if err := json.Unmarshal([]byte(`{
		"model": "qwen3-8b",
		"stream": true,
		"stream_options": {"include_usage": true},
		"messages": [
			{"role": "system", "content": "You are terse."},
			{"role": "user", "content": "first\n\nsecond"},
			{"role": "assistant", "content": "Let me look.", "tool_calls": [
				{"id": "c1", "type": "function", "function": {"name": "sleep", "arguments": "{\"ms\":10}"}},
				{"id": "c2", "type": "function", "function": {"name": "echo", "arguments": "{\"text\":\"x\"}"}},
				{"id": "c3", "type": "function", "function": {"name": "echo", "arguments": "{}"}}
			]},
			{"role": "tool", "tool_call_id": "c1", "content": "slept"},
			{"role": "tool", "tool_call_id": "c2", "content": "x"},
			{"role": "tool", "tool_call_id": "c3", "content": "interrupted: no result was recorded"},
			{"role": "assistant", "content": "Partial\n\n[interrupted]"},
			{"role": "user", "content": "go on"}
		],
		"tools": [
			{"type": "function", "function": {"name": "sleep", "description": "Sleeps.", "parameters": {"type": "object", "properties": {"ms": {"type": "integer"}}, "required": ["ms"]}}},
			{"type": "function", "function": {"name": "echo", "parameters": {"type": "object", "properties": {}}}}
		]
	}`), &want); err != nil {
		t.Fatal(err)
	}
	equal(t, "body", srv.body(t, 0), want)
	equal(t, "authorization", srv.auth[0], "Bearer sk-test")
	for i := range history {
		if !proto.Equal(history[i], before[i]) {
			t.Errorf("message %d was modified: %v, was %v", i, history[i], before[i])
		}
	}
}

// TestNoKey: without a key no Authorization header is sent, even with
// OPENAI_API_KEY set: the provider sends only the key it was given.
func TestNoKey(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-the-environment")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/elsewhere")
	srv := newServer(t, sse(openAILength))
	p, _ := srv.provider()
	if _, _, err := llmtest.Collect(t, p, request()); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	equal(t, "authorization", srv.auth[0], "")
}

// TestBadRequest: requests that cannot be sent fail before any I/O.
func TestBadRequest(t *testing.T) {
	tests := []struct {
		name string
		req  *llm.Request
		err  string
	}{
		{"no model", &llm.Request{}, "openai: the request names no model"},
		{"tool parameters not an object", &llm.Request{Model: "m", Tools: []llm.ToolSpec{{Name: "t", Parameters: json.RawMessage(`[1]`)}}}, `openai: the parameters of tool "t" are not a JSON Schema object`},
		{"tool parameters null", &llm.Request{Model: "m", Tools: []llm.ToolSpec{{Name: "t", Parameters: json.RawMessage(`null`)}}}, `openai: the parameters of tool "t" are not a JSON Schema object`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, sse(openAILength))
			p, _ := srv.provider()
			_, _, err := llmtest.Collect(t, p, tt.req)
			equal(t, "error", *asError(t, err), llm.Error{Message: tt.err})
			equal(t, "requests", srv.requests(), 0)
		})
	}
}

// TestArgsParam checks which arguments go back verbatim.
func TestArgsParam(t *testing.T) {
	tests := []struct{ name, args, want string }{
		{"object", `{"a":1}`, `{"a":1}`},
		{"object with spaces", ` {"a": 1} `, ` {"a": 1} `},
		{"empty", ``, `{}`},
		{"invalid", `{"a":`, `{}`},
		{"array", `[1]`, `{}`},
		{"string", `"x"`, `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			equal(t, "args", argsParam([]byte(tt.args)), tt.want)
		})
	}
}

// cloneAll deep-copies msgs.
func cloneAll(msgs []*llm.Message) []*llm.Message {
	out := make([]*llm.Message, len(msgs))
	for i, m := range msgs {
		out[i] = proto.Clone(m).(*llm.Message)
	}
	return out
}

// TestWireNames: an MCP tool's name holds a '/', which providers refuse:
// it goes out as "fs__read_file" in the tools and in the history's calls,
// and the server's calls of "fs__read_file" come back as "fs/read_file".
// Other names are untouched, also one that looks like a wire name.
func TestWireNames(t *testing.T) {
	asst := llm.AssistantMessage("")
	asst.ToolCalls = []*llm.ToolCall{call("c1", "fs/read_file", `{"path":"a"}`)}
	req := &llm.Request{
		Model:    "m",
		Messages: []*llm.Message{llm.UserMessage("read"), asst, llm.ToolResultMessage("c1", "A", false), llm.UserMessage("again")},
		Tools:    []llm.ToolSpec{{Name: "fs/read_file"}, {Name: "run__command"}},
	}
	body := strings.ReplaceAll(strings.ReplaceAll(ollamaTools, `"name":"run_command","arguments":"{\"command\":\"ls\"}"`,
		`"name":"fs__read_file","arguments":"{\"path\":\"b\"}"`), `"name":"run_command"`, `"name":"run__command"`)
	srv := newServer(t, sse(body))
	p, _ := srv.provider()
	chunks, resp, err := llmtest.Collect(t, p, req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	sent := srv.body(t, 0)
	var names []string
	for _, tl := range sent["tools"].([]any) {
		names = append(names, tl.(map[string]any)["function"].(map[string]any)["name"].(string))
	}
	equal(t, "tool names sent", names, []string{"fs__read_file", "run__command"})
	history := sent["messages"].([]any)[1].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)["name"]
	equal(t, "history call name sent", history, any("fs__read_file"))
	equal(t, "chunks", show(chunks), []string{`tool call_wteop8bt fs/read_file {"path":"b"}`, `tool call_rk2xye1l run__command {"command":"ls -l"}`})
	var got []string
	for _, c := range resp.Message.GetToolCalls() {
		got = append(got, c.GetName())
	}
	equal(t, "response call names", got, []string{"fs/read_file", "run__command"})
	equal(t, "history kept its name", asst.ToolCalls[0].GetName(), "fs/read_file")
}

// TestRequestImages: a user message's images go as image_url parts after
// its text part (detail when given), same-role messages merge their
// images in order, and a message of images alone has no text part; the
// body is what a real HTTP server receives.
func TestRequestImages(t *testing.T) {
	png := "data:image/png;base64,iVBORw0KGgo="
	req := &llm.Request{Model: "gpt-4o", Messages: []*llm.Message{
		llm.UserMessageWith("what is this?", []*llm.Image{{Url: png, Detail: "low"}}),
		llm.UserMessageWith("", []*llm.Image{{Url: "https://example.com/b.jpg"}}),
		llm.AssistantMessage("a cat"),
		llm.UserMessageWith("", []*llm.Image{{Url: "https://example.com/c.jpg", Detail: "high"}}),
	}}
	srv := newServer(t, sse(openAILength))
	p, _ := srv.provider()
	if _, _, err := llmtest.Collect(t, p, req); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	var want map[string]any
	if err := json.Unmarshal([]byte(`{
		"model": "gpt-4o",
		"stream": true,
		"stream_options": {"include_usage": true},
		"messages": [
			{"role": "user", "content": [
				{"type": "text", "text": "what is this?"},
				{"type": "image_url", "image_url": {"url": "`+png+`", "detail": "low"}},
				{"type": "image_url", "image_url": {"url": "https://example.com/b.jpg"}}
			]},
			{"role": "assistant", "content": "a cat"},
			{"role": "user", "content": [
				{"type": "image_url", "image_url": {"url": "https://example.com/c.jpg", "detail": "high"}}
			]}
		],
		"tools": []
	}`), &want); err != nil {
		t.Fatal(err)
	}
	equal(t, "body", srv.body(t, 0), want)
}
