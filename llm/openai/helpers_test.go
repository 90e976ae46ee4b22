package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tack-run/tack/llm"
)

// server is an httptest server that answers the n-th request with the n-th
// handler (the last one repeats) and records the request bodies.
type server struct {
	*httptest.Server
	handlers []http.HandlerFunc

	mu     sync.Mutex
	bodies [][]byte
	auth   []string
}

func newServer(t *testing.T, handlers ...http.HandlerFunc) *server {
	t.Helper()
	s := &server{handlers: handlers}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.bodies)
		s.bodies = append(s.bodies, body)
		s.auth = append(s.auth, r.Header.Get("Authorization"))
		s.mu.Unlock()
		if r.URL.Path != "/v1/chat/completions" {
			http.Error(w, `{"error":{"message":"no route","type":"not_found_error"}}`, http.StatusNotFound)
			return
		}
		s.handlers[min(n, len(s.handlers)-1)](w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// requests returns how many requests the server got.
func (s *server) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bodies)
}

// body returns request n's body, decoded.
func (s *server) body(t *testing.T, n int) map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var m map[string]any
	if err := json.Unmarshal(s.bodies[n], &m); err != nil {
		t.Fatalf("request %d body: %v", n, err)
	}
	return m
}

// sleeper records the waits a Provider asks for without waiting.
type sleeper struct {
	delays []time.Duration
}

func (s *sleeper) sleep(ctx context.Context, d time.Duration) error {
	s.delays = append(s.delays, d)
	return ctx.Err()
}

// provider returns a Provider for s whose retry waits go to the returned
// sleeper, with the stall timers off unless opts set them.
func (s *server) provider(opts ...Option) (*Provider, *sleeper) {
	base := []Option{WithHTTPClient(s.Client()), WithStall(0, 0)}
	p := New(s.URL+"/v1", append(base, opts...)...)
	sl := &sleeper{}
	p.sleep = sl.sleep
	return p, sl
}

// sse answers with body, an SSE stream written byte for byte as given,
// flushed after each event (each "\n\n").
func sse(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		writeEvents(w, body)
	}
}

// writeEvents writes body event by event, flushing each.
func writeEvents(w http.ResponseWriter, body string) {
	for ev := range strings.SplitAfterSeq(body, "\n\n") {
		if ev == "" {
			continue
		}
		_, _ = io.WriteString(w, ev)
		w.(http.Flusher).Flush()
	}
}

// fail answers with an HTTP error: status, headers in pairs, and body.
func fail(status int, body string, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// breakAfter streams body, then drops the connection without ending the
// response (a crashed server or a cut network).
func breakAfter(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		writeEvents(w, body)
		panic(http.ErrAbortHandler)
	}
}

// hangUp closes the connection before sending a byte.
func hangUp(w http.ResponseWriter, r *http.Request) {
	c, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		_ = c.Close()
	}
}

// silent sends nothing until the client goes away.
func silent(w http.ResponseWriter, r *http.Request) {
	<-r.Context().Done()
}

// silentAfter streams body, then sends nothing until the client goes away.
func silentAfter(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		writeEvents(w, body)
		<-r.Context().Done()
	}
}

// generatedID matches the ids newCallID makes.
var generatedID = regexp.MustCompile(`^call_[A-Z2-7]{26}$`)

// show renders chunks for exact comparison; generated ids show as <gen>.
func show(chunks []llm.Chunk) []string {
	out := make([]string, 0, len(chunks))
	for _, c := range chunks {
		switch c.Kind {
		case llm.ChunkText:
			out = append(out, "text "+c.Text)
		case llm.ChunkThinkingStart:
			out = append(out, "thinking_start")
		case llm.ChunkThinking:
			out = append(out, "thinking "+c.Text)
		case llm.ChunkToolCall:
			out = append(out, "tool "+showCall(c.ToolCall))
		case llm.ChunkRetry:
			out = append(out, fmt.Sprintf("retry %d %v %s", c.Attempt, c.Delay, c.Text))
		case llm.ChunkStalled:
			out = append(out, fmt.Sprintf("stalled %v", c.Elapsed))
		default:
			out = append(out, fmt.Sprintf("kind %d", c.Kind))
		}
	}
	return out
}

// showCall renders a tool call as "id name args".
func showCall(c *llm.ToolCall) string {
	id := c.GetId()
	if generatedID.MatchString(id) {
		id = "<gen>"
	}
	return fmt.Sprintf("%s %s %s", id, c.GetName(), c.GetArgs().GetJson())
}

// equal reports a test error when got and want differ.
func equal[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got  %#v\n want %#v", what, got, want)
	}
}

// request is a small request for the server tests.
func request() *llm.Request {
	return &llm.Request{Model: "test-model", Messages: []*llm.Message{llm.UserMessage("hi")}}
}

// asError returns err as an *llm.Error, failing the test if it is not one.
func asError(t *testing.T, err error) *llm.Error {
	t.Helper()
	e, ok := err.(*llm.Error)
	if !ok {
		t.Fatalf("error %T (%v), want *llm.Error", err, err)
	}
	return e
}
