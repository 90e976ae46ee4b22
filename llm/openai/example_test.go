package openai_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/llm/openai"
)

// A Provider streaming from a vLLM-style server that reasons first.
func ExampleProvider_Stream() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"qwen3-8b","choices":[{"index":0,"delta":{"reasoning_content":"Easy."}}]}

data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"qwen3-8b","choices":[{"index":0,"delta":{"content":"4"},"finish_reason":"stop"}]}

data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"qwen3-8b","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":5,"total_tokens":17}}

data: [DONE]

`)
	}))
	defer srv.Close()

	p := openai.New(srv.URL+"/v1", openai.WithHTTPClient(srv.Client()))
	req := &llm.Request{Model: "qwen3-8b", Messages: []*llm.Message{llm.UserMessage("2+2?")}}
	resp, err := p.Stream(context.Background(), req, func(c llm.Chunk) {
		switch c.Kind {
		case llm.ChunkThinkingStart:
			fmt.Println("thinking...")
		case llm.ChunkThinking, llm.ChunkText:
			fmt.Printf("%q\n", c.Text)
		}
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.StopReason, resp.Usage.GetInputTokens(), resp.Usage.GetOutputTokens())
	// Output:
	// thinking...
	// "Easy."
	// "4"
	// end_turn 12 5
}
