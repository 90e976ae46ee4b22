package openai

import (
	"net/http"
	"testing"

	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/llm/llmtest"
)

// TestDialects streams each server's responses and asserts the exact
// chunks, message, stop reason and usage.
func TestDialects(t *testing.T) {
	tests := []struct {
		name     string
		handlers []http.HandlerFunc
		chunks   []string
		content  string
		thinking string
		stop     string
		usage    *llm.Usage
	}{
		{
			name:     "openai text with cached usage",
			handlers: []http.HandlerFunc{sse(openAIText)},
			chunks:   []string{"text Hello", "text , world."},
			content:  "Hello, world.",
			stop:     llm.StopEnd,
			// prompt_tokens already counts the 1024 cached ones.
			usage: &llm.Usage{InputTokens: 1200, OutputTokens: 12, TotalTokens: 1212, CachedInputTokens: 1024},
		},
		{
			name:     "openai parallel tool calls",
			handlers: []http.HandlerFunc{sse(openAIParallel)},
			chunks: []string{
				`tool call_FthC9qRpsL5kBpwwyw6c7j4k get_weather {"city": "Paris"}`,
				`tool call_uI3sjZa81wB2TwLJ5kbJcq4z get_time {"tz": "CET"}`,
			},
			stop:  llm.StopToolCalls,
			usage: &llm.Usage{InputTokens: 85, OutputTokens: 46, TotalTokens: 131},
		},
		{
			name:     "openai reasoning tokens",
			handlers: []http.HandlerFunc{sse(openAIReasoning)},
			chunks:   []string{"text 42"},
			content:  "42",
			stop:     llm.StopEnd,
			usage:    &llm.Usage{InputTokens: 30, OutputTokens: 500, TotalTokens: 530, ReasoningTokens: 448},
		},
		{
			name:     "openai refusal",
			handlers: []http.HandlerFunc{sse(openAIRefusal)},
			chunks:   []string{"text I can't help with that."},
			content:  "I can't help with that.",
			stop:     llm.StopRefusal,
		},
		{
			name:     "openai length",
			handlers: []http.HandlerFunc{sse(openAILength)},
			chunks:   []string{"text Once upon"},
			content:  "Once upon",
			stop:     llm.StopLength,
		},
		{
			name:     "vllm reasoning_content",
			handlers: []http.HandlerFunc{sse(vLLMReasoning)},
			chunks:   []string{"thinking_start", "thinking The user greets me.", "thinking  Reply kindly.", "text \n\nHi there!"},
			content:  "\n\nHi there!",
			thinking: "The user greets me. Reply kindly.",
			stop:     llm.StopEnd,
			usage:    &llm.Usage{InputTokens: 18, OutputTokens: 22, TotalTokens: 40},
		},
		{
			name:     "ollama whole tool calls without usage",
			handlers: []http.HandlerFunc{sse(ollamaTools)},
			chunks: []string{
				`tool call_wteop8bt run_command {"command":"ls"}`,
				`tool call_rk2xye1l run_command {"command":"ls -l"}`,
			},
			stop: llm.StopToolCalls,
		},
		{
			name:     "ollama old tool calls without id or index",
			handlers: []http.HandlerFunc{sse(ollamaOldTools)},
			chunks: []string{
				`tool <gen> get_weather {"city":"Boston"}`,
				`tool <gen> get_weather {"city":"Paris"}`,
			},
			stop: llm.StopToolCalls,
		},
		{
			name:     "ollama reasoning",
			handlers: []http.HandlerFunc{sse(ollamaThinking)},
			chunks:   []string{"thinking_start", "thinking Short answer.", "text Yes."},
			content:  "Yes.",
			thinking: "Short answer.",
			stop:     llm.StopEnd,
		},
		{
			name:     "llama.cpp index missing and -1",
			handlers: []http.HandlerFunc{sse(llamaCppTools)},
			chunks: []string{
				"thinking_start", "thinking Weather and time needed.",
				`tool P9x2kLmQ7rTzW1vB4nYc8dHs get_weather {"city":"Paris"}`,
				`tool Qw3eR5tY7uI9oP1aS3dF5gH7 get_time {}`,
			},
			thinking: "Weather and time needed.",
			stop:     llm.StopToolCalls,
			usage:    &llm.Usage{InputTokens: 212, OutputTokens: 31, TotalTokens: 243},
		},
		{
			name:     "gateway comments",
			handlers: []http.HandlerFunc{sse(gatewayText)},
			chunks:   []string{"text Fine", "text , thanks."},
			content:  "Fine, thanks.",
			stop:     llm.StopEnd,
			usage:    &llm.Usage{InputTokens: 40, OutputTokens: 4, TotalTokens: 44},
		},
		{
			name:     "gateway error before output is retried",
			handlers: []http.HandlerFunc{sse(gatewayErrorFirst), sse(gatewayText)},
			chunks: []string{
				"retry 1 1s HTTP 429: litellm.RateLimitError: RateLimitError: OpenAIException - Rate limit reached for requests",
				"text Fine", "text , thanks.",
			},
			content: "Fine, thanks.",
			stop:    llm.StopEnd,
			usage:   &llm.Usage{InputTokens: 40, OutputTokens: 4, TotalTokens: 44},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, tt.handlers...)
			p, _ := srv.provider()
			chunks, resp, err := llmtest.Collect(t, p, request())
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			equal(t, "chunks", show(chunks), tt.chunks)
			equal(t, "content", resp.Message.GetContent(), tt.content)
			equal(t, "thinking", resp.Message.GetThinking(), tt.thinking)
			equal(t, "stop reason", resp.StopReason, tt.stop)
			if tt.usage == nil {
				if resp.Usage != nil {
					t.Errorf("usage %v, want nil", resp.Usage)
				}
			} else {
				equal(t, "usage", usageFields(resp.Usage), usageFields(tt.usage))
			}
		})
	}
}

// TestGatewayErrorAfterOutput: an error object mid-stream after text
// fails the request with the gateway's status; the text was emitted.
func TestGatewayErrorAfterOutput(t *testing.T) {
	srv := newServer(t, sse(gatewayErrorAfterText))
	p, sl := srv.provider()
	chunks, _, err := llmtest.Collect(t, p, request())
	e := asError(t, err)
	equal(t, "error", *e, llm.Error{Status: 502, Message: "Provider disconnected"})
	equal(t, "chunks", show(chunks), []string{"text Partial answer"})
	equal(t, "requests", srv.requests(), 1)
	equal(t, "waits", len(sl.delays), 0)
}

// usageFields is u as a comparable array.
func usageFields(u *llm.Usage) [6]any {
	return [6]any{u.GetInputTokens(), u.GetOutputTokens(), u.GetTotalTokens(), u.GetCachedInputTokens(), u.GetReasoningTokens(), u.GetCostUsd()}
}
