package openai

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/llm/llmtest"
)

// openAIError is OpenAI's error body.
func openAIError(message, typ, code string) string {
	return `{"error":{"message":"` + message + `","type":"` + typ + `","param":null,"code":"` + code + `"}}`
}

const rateLimited = `{"error":{"message":"Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 30000, Requested 1200.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`

// TestRetries asserts which failures are retried, after which waits, with
// which ChunkRetry chunks, and what error ends the request.
func TestRetries(t *testing.T) {
	ok := sse(openAILength)
	tests := []struct {
		name     string
		handlers []http.HandlerFunc
		opts     []Option
		chunks   []string
		waits    []time.Duration
		requests int
		err      *llm.Error // nil: success
	}{
		{
			name:     "429 with Retry-After seconds then success",
			handlers: []http.HandlerFunc{fail(429, rateLimited, "Retry-After", "7"), ok},
			chunks:   []string{"retry 1 7s HTTP 429: Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 30000, Requested 1200.", "text Once upon"},
			waits:    []time.Duration{7 * time.Second},
			requests: 2,
		},
		{
			name:     "429 with retry-after-ms then success",
			handlers: []http.HandlerFunc{fail(429, rateLimited, "Retry-After", "1", "Retry-After-Ms", "1500"), ok},
			chunks:   []string{"retry 1 1.5s HTTP 429: Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 30000, Requested 1200.", "text Once upon"},
			waits:    []time.Duration{1500 * time.Millisecond},
			requests: 2,
		},
		{
			name:     "500 exhausted with exponential backoff",
			handlers: []http.HandlerFunc{fail(500, openAIError("The server had an error while processing your request.", "server_error", ""))},
			chunks: []string{
				"retry 1 1s HTTP 500: The server had an error while processing your request.",
				"retry 2 2s HTTP 500: The server had an error while processing your request.",
				"retry 3 4s HTTP 500: The server had an error while processing your request.",
				"retry 4 8s HTTP 500: The server had an error while processing your request.",
			},
			waits:    []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second},
			requests: 5,
			err:      &llm.Error{Status: 500, Message: "The server had an error while processing your request. (gave up after 4 retries)"},
		},
		{
			name:     "backoff capped",
			handlers: []http.HandlerFunc{fail(503, "upstream connect error")},
			opts:     []Option{WithRetries(3), WithBackoff(10*time.Second, 15*time.Second)},
			chunks: []string{
				"retry 1 10s HTTP 503: upstream connect error",
				"retry 2 15s HTTP 503: upstream connect error",
				"retry 3 15s HTTP 503: upstream connect error",
			},
			waits:    []time.Duration{10 * time.Second, 15 * time.Second, 15 * time.Second},
			requests: 4,
			err:      &llm.Error{Status: 503, Message: "upstream connect error (gave up after 3 retries)"},
		},
		{
			name:     "retries disabled",
			handlers: []http.HandlerFunc{fail(502, `<html><body>Bad Gateway</body></html>`)},
			opts:     []Option{WithRetries(0)},
			requests: 1,
			err:      &llm.Error{Status: 502, Message: "<html><body>Bad Gateway</body></html>"},
		},
		{
			name:     "overloaded 529",
			handlers: []http.HandlerFunc{fail(529, `{"error":{"message":"Overloaded","type":"overloaded_error"}}`), ok},
			chunks:   []string{"retry 1 1s HTTP 529: Overloaded", "text Once upon"},
			waits:    []time.Duration{time.Second},
			requests: 2,
		},
		{
			name:     "Retry-After too long",
			handlers: []http.HandlerFunc{fail(429, rateLimited, "Retry-After", "3600")},
			requests: 1,
			err:      &llm.Error{Status: 429, Message: "Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 30000, Requested 1200. (the server asks to wait 1h0m0s; not retried)"},
		},
		{
			name:     "insufficient quota",
			handlers: []http.HandlerFunc{fail(429, openAIError("You exceeded your current quota, please check your plan and billing details.", "insufficient_quota", "insufficient_quota"))},
			opts:     []Option{WithAPIKey("sk-x"), WithAPIKeyEnv("OPENAI_API_KEY")},
			requests: 1,
			err:      &llm.Error{Status: 429, Message: "the quota of the API key in $OPENAI_API_KEY is exhausted: check its plan and billing (server: You exceeded your current quota, please check your plan and billing details.)"},
		},
		{
			name:     "401 refused key",
			handlers: []http.HandlerFunc{fail(401, openAIError("Incorrect API key provided: sk-x. You can find your API key at https://platform.openai.com/account/api-keys.", "invalid_request_error", "invalid_api_key"))},
			opts:     []Option{WithAPIKey("sk-x"), WithAPIKeyEnv("OPENAI_API_KEY")},
			requests: 1,
			err:      &llm.Error{Status: 401, Message: "the server at <base> refused the API key for model \"test-model\": check $OPENAI_API_KEY (server: Incorrect API key provided: sk-x. You can find your API key at https://platform.openai.com/account/api-keys.)"},
		},
		{
			name:     "401 missing key",
			handlers: []http.HandlerFunc{fail(401, `{"error":{"message":"Invalid API Key","type":"authentication_error","code":401}}`)},
			opts:     []Option{WithAPIKeyEnv("LOCAL_API_KEY")},
			requests: 1,
			err:      &llm.Error{Status: 401, Message: "the server at <base> wants an API key for model \"test-model\": set $LOCAL_API_KEY (server: Invalid API Key)"},
		},
		{
			name:     "404 unknown model",
			handlers: []http.HandlerFunc{fail(404, `{"error":{"message":"model \"test-model\" not found, try pulling it first","type":"api_error","param":null,"code":null}}`)},
			requests: 1,
			err:      &llm.Error{Status: 404, Message: `model "test-model" not found at <base>: check the model name, and that the base URL ends in /v1 (or the server's equivalent) (server: model "test-model" not found, try pulling it first)`},
		},
		{
			name:     "403",
			handlers: []http.HandlerFunc{fail(403, openAIError("Project does not have access to model test-model", "invalid_request_error", "model_not_found"))},
			opts:     []Option{WithAPIKey("sk-x"), WithAPIKeyEnv("OPENAI_API_KEY")},
			requests: 1,
			err:      &llm.Error{Status: 403, Message: `access to model "test-model" at <base> was denied: check that the API key in $OPENAI_API_KEY may use it (server: Project does not have access to model test-model)`},
		},
		{
			name:     "400 vllm old error shape",
			handlers: []http.HandlerFunc{fail(400, `{"object":"error","message":"max_tokens must be at least 1, got -186.","type":"BadRequestError","param":null,"code":400}`)},
			requests: 1,
			err:      &llm.Error{Status: 400, Message: "the server at <base> rejected the request to model \"test-model\" (server: max_tokens must be at least 1, got -186.)"},
		},
		{
			name:     "hang-up before the first byte then success",
			handlers: []http.HandlerFunc{hangUp, ok},
			chunks:   []string{"retry 1 1s connection to <base> failed: EOF", "text Once upon"},
			waits:    []time.Duration{time.Second},
			requests: 2,
		},
		{
			name:     "break before output then success",
			handlers: []http.HandlerFunc{breakAfter(openAIText[:strings.Index(openAIText, "\n\n")+2]), ok},
			chunks:   []string{"retry 1 1s the connection broke mid-response: unexpected EOF", "text Once upon"},
			waits:    []time.Duration{time.Second},
			requests: 2,
		},
		{
			name:     "empty stream then success",
			handlers: []http.HandlerFunc{sse("data: [DONE]\n\n"), ok},
			chunks:   []string{"retry 1 1s the server ended the stream without sending anything", "text Once upon"},
			waits:    []time.Duration{time.Second},
			requests: 2,
		},
		{
			name:     "mid-stream disconnect after output",
			handlers: []http.HandlerFunc{breakAfter(strings.Join(strings.SplitAfter(openAIText, "\n\n")[:2], ""))},
			chunks:   []string{"text Hello"},
			requests: 1,
			err:      &llm.Error{Message: "the connection broke mid-response: unexpected EOF"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, tt.handlers...)
			p, sl := srv.provider(tt.opts...)
			chunks, _, err := llmtest.Collect(t, p, request())
			got := show(chunks)
			for i := range got {
				got[i] = normalize(got[i], srv.URL)
			}
			if tt.err == nil {
				if err != nil {
					t.Fatalf("Stream: %v", err)
				}
			} else {
				e := asError(t, err)
				e.Message = normalize(e.Message, srv.URL)
				equal(t, "error", *e, *tt.err)
			}
			if tt.chunks == nil {
				tt.chunks = []string{}
			}
			equal(t, "chunks", got, tt.chunks)
			equal(t, "waits", sl.delays, tt.waits)
			equal(t, "requests", srv.requests(), tt.requests)
		})
	}
}

// normalize replaces the server's URL, which names its port, by <base>.
func normalize(s, url string) string {
	return strings.ReplaceAll(s, url+"/v1", "<base>")
}

// TestRetryAfter reads the headers servers send.
func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header http.Header
		want   time.Duration
		ok     bool
	}{
		{"none", http.Header{}, 0, false},
		{"seconds", http.Header{"Retry-After": {"20"}}, 20 * time.Second, true},
		{"fractional seconds", http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond, true},
		{"http date", http.Header{"Retry-After": {"Sat, 21 Nov 2026 10:00:30 GMT"}}, 30 * time.Second, true},
		{"past date", http.Header{"Retry-After": {"Sat, 21 Nov 2026 09:00:00 GMT"}}, 0, true},
		{"milliseconds win", http.Header{"Retry-After": {"2"}, "Retry-After-Ms": {"250"}}, 250 * time.Millisecond, true},
		{"bad milliseconds fall back", http.Header{"Retry-After": {"2"}, "Retry-After-Ms": {"soon"}}, 2 * time.Second, true},
		{"negative", http.Header{"Retry-After": {"-1"}}, 0, false},
		{"garbage", http.Header{"Retry-After": {"later"}}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := retryAfter(tt.header, now)
			equal(t, "delay", got, tt.want)
			equal(t, "ok", ok, tt.ok)
		})
	}
}

// TestBackoff doubles from the base up to the cap.
func TestBackoff(t *testing.T) {
	p := New("http://127.0.0.1:1/v1")
	var got []time.Duration
	for n := 1; n <= 7; n++ {
		got = append(got, p.backoff(n))
	}
	equal(t, "backoff", got, []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second})
}
