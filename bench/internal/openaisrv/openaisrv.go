// Package openaisrv is the local OpenAI-compatible server of the peer
// benchmark harness: it speaks the Chat Completions streaming format as
// OpenAI does and answers every request with the same short reply, so
// that every runtime's own OpenAI client — its HTTP transport, its SSE
// decoding, its usage accounting — is part of what a turn costs, and the
// model costs nothing. bench/cmd/openaisrv runs it as a process of its own.
//
// # Usage
//
//	s := openaisrv.New()
//	srv := &http.Server{Addr: "127.0.0.1:8080", Handler: s.Handler()}
//	// clients use the base URL http://127.0.0.1:8080/v1
//
// # The wire format
//
// A request must be a JSON object with a model, at least one message and
// "stream": true; anything else is answered 400 with an OpenAI error
// object ({"error": {"message", "type": "invalid_request_error"}}). The
// answer is text/event-stream: one data line per chunk
// (chat.completion.chunk, with the request's model and an id of the
// form chatcmpl-bench-N), flushed one by one — the role with empty content, then
// each of Deltas, then an empty delta with finish_reason "stop" — and,
// when stream_options.include_usage is set, a chunk with no choices and
// the usage of Usage (every chunk before it then carries "usage": null,
// as OpenAI's do); then data: [DONE]. Server.Requests counts the
// requests answered.
//
// # Concurrency
//
// The handler serves any number of requests at once.
package openaisrv

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// Deltas are the content deltas of every reply, in order.
var Deltas = []string{"Hello", " from", " the", " bench", " server."}

// Reply is the whole text of every reply.
var Reply = strings.Join(Deltas, "")

// Usage is what every reply reports when the request asks for usage: the
// same fixed figures as the drivers' scripted models.
var Usage = TokenUsage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15}

// TokenUsage is the usage object of a chunk.
type TokenUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Path is where the handler answers, under the server's root; the base URL
// a client is given is the server's URL and "/v1".
const Path = "/v1/chat/completions"

// request is the part of a Chat Completions request the server reads.
type request struct {
	Model         string            `json:"model"`
	Messages      []json.RawMessage `json:"messages"`
	Stream        bool              `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

type chunk struct {
	ID                string      `json:"id"`
	Object            string      `json:"object"`
	Created           int64       `json:"created"`
	Model             string      `json:"model"`
	SystemFingerprint *string     `json:"system_fingerprint"`
	Choices           []choice    `json:"choices"`
	Usage             *TokenUsage `json:"usage,omitempty"`
}

type choice struct {
	Index        int     `json:"index"`
	Delta        delta   `json:"delta"`
	Logprobs     *string `json:"logprobs"`
	FinishReason *string `json:"finish_reason"`
}

type delta struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
}

// Server counts the requests it answered.
type Server struct {
	requests atomic.Int64
	// now is the clock of the created field; tests replace it.
	now func() time.Time
}

// New returns a Server.
func New() *Server { return &Server{now: time.Now} }

// Requests returns the number of requests answered with a stream.
func (s *Server) Requests() int64 { return s.requests.Load() }

// Handler returns the server's routes: POST Path.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+Path, s.complete)
	return mux
}

func fail(w http.ResponseWriter, format string, args ...any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	body, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": fmt.Sprintf(format, args...), "type": "invalid_request_error", "param": nil, "code": nil,
	}})
	w.Write(body)
}

func (s *Server) complete(w http.ResponseWriter, r *http.Request) {
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		fail(w, "the body is not a JSON request: %v", err)
		return
	}
	switch {
	case req.Model == "":
		fail(w, "model is required")
		return
	case len(req.Messages) == 0:
		fail(w, "messages must not be empty")
		return
	case !req.Stream:
		fail(w, "this server only streams: set \"stream\": true")
		return
	}
	n := s.requests.Add(1)
	usage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	flusher, _ := w.(http.Flusher)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	base := chunk{ID: fmt.Sprintf("chatcmpl-bench-%d", n), Object: "chat.completion.chunk", Created: s.now().Unix(), Model: req.Model}
	send := func(c chunk) bool {
		data, err := json.Marshal(c)
		if err != nil {
			panic(err)
		}
		if usage && c.Usage == nil {
			// OpenAI sends "usage": null in every chunk before the last.
			data = append(data[:len(data)-1], `,"usage":null}`...)
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", data); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	one := func(d delta, finish *string) chunk {
		c := base
		c.Choices = []choice{{Delta: d, FinishReason: finish}}
		return c
	}
	empty := ""
	if !send(one(delta{Role: "assistant", Content: &empty}, nil)) {
		return
	}
	for _, d := range Deltas {
		if !send(one(delta{Content: &d}, nil)) {
			return
		}
	}
	stop := "stop"
	if !send(one(delta{}, &stop)) {
		return
	}
	if usage {
		c := base
		c.Choices = []choice{}
		u := Usage
		c.Usage = &u
		if !send(c) {
			return
		}
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}
