package openai

import (
	"net/http"
	"testing"

	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/llm/llmtest"
)

// TestOverflow sends each server's context overflow error and expects an
// *llm.Error with Overflow set, at once, never retried.
func TestOverflow(t *testing.T) {
	const prefix = "the conversation does not fit the model's context window (server: "
	tests := []struct {
		name    string
		handler http.HandlerFunc
		status  int
		server  string // the server's message, as quoted
	}{
		{
			name:    "openai",
			handler: fail(400, `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`),
			status:  400,
			server:  "This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages.",
		},
		{
			name:    "vllm",
			handler: fail(400, `{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`),
			status:  400,
			server:  "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.",
		},
		{
			name:    "vllm v1 engine",
			handler: fail(400, `{"error":{"message":"Prompt length of 5016 is longer than the maximum model length of 4096.","type":"BadRequestError","param":null,"code":400}}`),
			status:  400,
			server:  "Prompt length of 5016 is longer than the maximum model length of 4096.",
		},
		{
			name:    "llama.cpp",
			handler: fail(400, `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":14429,"n_ctx":8192}}`),
			status:  400,
			server:  "the request exceeds the available context size, try increasing it",
		},
		{
			name:    "llama.cpp with status 500 is not retried",
			handler: fail(500, `{"error":{"code":500,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"exceed_context_size_error","n_prompt_tokens":1407,"n_ctx":256}}`),
			status:  500,
			server:  "the request exceeds the available context size. try increasing the context size or enable context shift",
		},
		{
			name:    "ollama",
			handler: fail(400, `{"error":{"message":"the input length exceeds the context length","type":"invalid_request_error","param":null,"code":null}}`),
			status:  400,
			server:  "the input length exceeds the context length",
		},
		{
			name:    "gateway mid-stream",
			handler: sse(": OPENROUTER PROCESSING\n\n" + `data: {"id":"gen-1","object":"chat.completion.chunk","created":1745933200,"model":"qwen/qwen3-8b","provider":"Novita","error":{"code":400,"message":"This endpoint's maximum context length is 40960 tokens. However, you requested about 52133 tokens (52133 of text input). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically."},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error","native_finish_reason":"error"}]}` + "\n\n"),
			status:  400,
			server:  `This endpoint's maximum context length is 40960 tokens. However, you requested about 52133 tokens (52133 of text input). Please reduce the length of either one, or use the "middle-out" transform to compress your prompt automatically.`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, tt.handler)
			p, sl := srv.provider()
			chunks, _, err := llmtest.Collect(t, p, request())
			e := asError(t, err)
			equal(t, "error", *e, llm.Error{Status: tt.status, Message: prefix + tt.server + ")", Overflow: true})
			equal(t, "chunks", len(chunks), 0)
			equal(t, "requests", srv.requests(), 1)
			equal(t, "waits", len(sl.delays), 0)
		})
	}
}

// TestIsOverflow checks the phrase matching, including texts that merely
// mention the context.
func TestIsOverflow(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{"context_length_exceeded", true},
		{"prompt is too long: 210000 tokens > 200000 maximum", true},
		{"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).", true},
		{"The prompt (total length 25938) is too long to fit into the model (context length 4096).", true},
		{"input exceeds context length", true},
		{"Requested tokens (2285) exceed context window of 2048", true},
		{"Rate limit reached for requests", false},
		{"max_tokens must be at least 1, got -186.", false},
		{"invalid context length parameter", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			equal(t, "isOverflow", isOverflow(tt.text), tt.want)
		})
	}
}
