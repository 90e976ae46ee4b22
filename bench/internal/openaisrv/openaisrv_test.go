package openaisrv

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	oa "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func start(t *testing.T) (*Server, *httptest.Server) {
	t.Helper()
	s := New()
	s.now = func() time.Time { return time.Unix(1700000000, 0) }
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		hs.Client().CloseIdleConnections()
		hs.Close()
	})
	return s, hs
}

// TestOpenAIClient streams from the server with the openai-go client, as
// Tack's provider does, and gets every delta, the stop and the usage.
func TestOpenAIClient(t *testing.T) {
	s, hs := start(t)
	client := oa.NewClient(option.WithBaseURL(hs.URL+"/v1/"), option.WithAPIKey("bench"),
		option.WithHTTPClient(hs.Client()), option.WithMaxRetries(0))
	stream := client.Chat.Completions.NewStreaming(context.Background(), oa.ChatCompletionNewParams{
		Model:         "bench",
		Messages:      []oa.ChatCompletionMessageParamUnion{oa.UserMessage("go")},
		StreamOptions: oa.ChatCompletionStreamOptionsParam{IncludeUsage: oa.Bool(true)},
	})
	var acc oa.ChatCompletionAccumulator
	var deltas []string
	for stream.Next() {
		c := stream.Current()
		acc.AddChunk(c)
		for _, ch := range c.Choices {
			if ch.Delta.Content != "" {
				deltas = append(deltas, ch.Delta.Content)
			}
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if err := stream.Close(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(deltas, "|") != strings.Join(Deltas, "|") {
		t.Errorf("deltas %q, want %q", deltas, Deltas)
	}
	if len(acc.Choices) != 1 || acc.Choices[0].Message.Content != Reply || acc.Choices[0].FinishReason != "stop" {
		t.Errorf("completion %+v, want %q and stop", acc.Choices, Reply)
	}
	if acc.ID != "chatcmpl-bench-1" || acc.Model != "bench" {
		t.Errorf("id %q model %q", acc.ID, acc.Model)
	}
	u := acc.Usage
	if u.PromptTokens != 10 || u.CompletionTokens != 5 || u.TotalTokens != 15 {
		t.Errorf("usage %+v, want 10/5/15", u)
	}
	if n := s.Requests(); n != 1 {
		t.Errorf("%d requests counted, want 1", n)
	}
}

// TestWire checks the bytes of a stream, with and without usage.
func TestWire(t *testing.T) {
	head := `{"id":"chatcmpl-bench-1","object":"chat.completion.chunk","created":1700000000,"model":"m","system_fingerprint":null,"choices":[`
	chunk := func(choice, usage string) string { return "data: " + head + choice + "]" + usage + "}\n\n" }
	content := func(text string) string {
		return `{"index":0,"delta":{"content":"` + text + `"},"logprobs":null,"finish_reason":null}`
	}
	body := func(usage string) string {
		out := chunk(`{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}`, usage)
		for _, d := range Deltas {
			out += chunk(content(d), usage)
		}
		return out + chunk(`{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}`, usage)
	}
	tests := []struct {
		name, request, want string
	}{
		{
			name:    "without usage",
			request: `{"model":"m","messages":[{"role":"user","content":"go"}],"stream":true}`,
			want:    body("") + "data: [DONE]\n\n",
		},
		{
			name:    "with usage",
			request: `{"model":"m","messages":[{"role":"user","content":"go"}],"stream":true,"stream_options":{"include_usage":true}}`,
			want: body(`,"usage":null`) +
				"data: " + head + `],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}` + "\n\n" +
				"data: [DONE]\n\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, hs := start(t)
			resp, err := hs.Client().Post(hs.URL+Path, "application/json", strings.NewReader(tt.request))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Errorf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			if string(got) != tt.want {
				t.Errorf("body\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestBadRequests checks that what the server cannot answer gets a clear
// OpenAI error object, and is not counted.
func TestBadRequests(t *testing.T) {
	tests := []struct {
		name, method, body string
		status             int
		message            string
	}{
		{"not JSON", "POST", `{"model":`, 400, `"message":"the body is not a JSON request: unexpected EOF"`},
		{"no model", "POST", `{"messages":[{"role":"user","content":"go"}],"stream":true}`, 400, `"message":"model is required"`},
		{"no messages", "POST", `{"model":"m","stream":true}`, 400, `"message":"messages must not be empty"`},
		{"not streaming", "POST", `{"model":"m","messages":[{"role":"user","content":"go"}]}`, 400, `"message":"this server only streams: set \"stream\": true"`},
		{"GET", "GET", ``, 405, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, hs := start(t)
			req, err := http.NewRequest(tt.method, hs.URL+Path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := hs.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.status)
			}
			if tt.message != "" && (!strings.Contains(string(got), tt.message) || !strings.Contains(string(got), `"type":"invalid_request_error"`)) {
				t.Errorf("body %s, want an invalid_request_error with %s", got, tt.message)
			}
			if n := s.Requests(); n != 0 {
				t.Errorf("%d requests counted, want 0", n)
			}
		})
	}
}
