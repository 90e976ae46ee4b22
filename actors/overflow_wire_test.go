package actors

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/events/eventstest"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/llm/openai"
	"github.com/tack-run/tack/spec"
)

// windowServer is an OpenAI-compatible Chat Completions server with a
// small context window: a request whose messages (all but the system
// prompt) hold more than limit characters is refused with HTTP 400 and
// the server's own overflow body; any other request is answered in
// OpenAI's streaming format, a summary request (system prompt
// SummarisePrompt) with summary, the others with answers[i] in turn.
type windowServer struct {
	*httptest.Server
	limit    int
	overflow string // the body of the 400
	summary  string
	answers  []string

	mu   sync.Mutex
	reqs []wireRequest
	next int // the answer the next request that fits gets
}

// wireRequest is a request as the server read it off the wire.
type wireRequest struct {
	System   string
	Messages []string // role:content of each message after the system prompt
	Chars    int
	Refused  bool
}

func newWindowServer(t *testing.T, limit int, overflow, summary string, answers ...string) *windowServer {
	t.Helper()
	s := &windowServer{limit: limit, overflow: overflow, summary: summary, answers: answers}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *windowServer) serve(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&body) != nil {
		http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	req := wireRequest{}
	for _, m := range body.Messages {
		text, _ := m.Content.(string)
		if m.Role == "system" {
			req.System = text
			continue
		}
		req.Messages = append(req.Messages, m.Role+":"+text)
		req.Chars += len(text)
	}
	req.Refused = req.Chars > s.limit
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	answer := s.summary
	if !req.Refused && req.System != SummarisePrompt {
		answer = s.answers[min(s.next, len(s.answers)-1)]
		s.next++
	}
	s.mu.Unlock()
	if req.Refused {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, s.overflow)
		return
	}
	const head = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"small-model","choices":[`
	content, _ := json.Marshal(answer)
	w.Header().Set("Content-Type", "text/event-stream")
	for _, c := range []string{
		head + `{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
		head + `{"index":0,"delta":{"content":` + string(content) + `},"finish_reason":null}]}`,
		head + `{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		head + fmt.Sprintf(`],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`, req.Chars/4, len(answer)/4, req.Chars/4+len(answer)/4),
	} {
		_, _ = io.WriteString(w, "data: "+c+"\n\n")
		w.(http.Flusher).Flush()
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
}

// requests returns the requests the server read, in order.
func (s *windowServer) requests() []wireRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// model is small-model at s through openai-go, without retry waits.
func (s *windowServer) model() *llm.Model {
	p := openai.New(s.URL+"/v1", openai.WithHTTPClient(s.Client()), openai.WithAPIKey("sk-test"),
		openai.WithBackoff(time.Millisecond, time.Millisecond))
	return &llm.Model{Name: "local/small-model", ID: "small-model", Provider: p, ContextWindow: 8192}
}

// The overflow bodies of the servers the detector knows, as they send them.
var overflowBodies = []struct{ name, body, says string }{
	{"openai", `{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
		"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages."},
	{"vllm", `{"object":"error","message":"This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (8000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`,
		"This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (8000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion."},
	{"vllm v1", `{"error":{"message":"Prompt length of 9000 is longer than the maximum model length of 8192.","type":"BadRequestError","param":null,"code":400}}`,
		"Prompt length of 9000 is longer than the maximum model length of 8192."},
	{"llama.cpp", `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}`,
		"the request exceeds the available context size, try increasing it"},
}

// TestOverflowOnTheWire drives a session through openai-go against a
// server with a 500-character window that refuses longer requests with
// its real context-length error: the fourth prompt overflows, the session
// compacts (the summary request goes to the same server), sends the
// request again and completes; a prompt that alone does not fit overflows
// again after its compaction, which is an error context_overflow and ends
// the run with error.
func TestOverflowOnTheWire(t *testing.T) {
	pad := func(s string) string { return s + strings.Repeat(".", 100-len(s)) }
	for _, tc := range overflowBodies {
		t.Run(tc.name, func(t *testing.T) {
			srv := newWindowServer(t, 500, tc.body, "the user asked q1 and q2",
				pad("a1"), pad("a2"), pad("a3"), pad("a4"), pad("a5"))
			sys := newSystem(t)
			h := spawnSpec(t, sys, newPlace(sys, &Env{}, nil), Spec{ID: "s1", Model: srv.model(), Stored: &spec.Session{System: "be brief", Context: &llm.ContextConfig{KeepRecent: new(4)}}})
			for i := range 3 {
				h.ok(&eventsv1.Prompt{Text: pad(fmt.Sprintf("q%d", i+1))})
				if r := h.waitFor("agent_end", i+1).GetAgentEnd().Reason; r != string(events.EndCompleted) {
					t.Fatalf("run %d ended %s", i+1, r)
				}
			}
			n := h.rec.Len()
			h.ok(&eventsv1.Prompt{Text: pad("q4")}) // 700 characters: refused
			if r := h.waitFor("agent_end", 4).GetAgentEnd().Reason; r != string(events.EndCompleted) {
				t.Fatalf("the run that overflowed ended %s", r)
			}
			eventstest.ExpectTypes(t, h.since(n), seq(runStart,
				one("context_overflow", "turn_end", "compact_start", "compact_end"),
				one("turn_start", "request_start"), answer, runEnd)...)
			reason := "the conversation does not fit the model's context window (server: " + tc.says + ")"
			if got := findType(h.since(n), "context_overflow").GetContextOverflow().Reason; got != reason {
				t.Errorf("context_overflow reason %q, want %q", got, reason)
			}
			if got := findType(h.since(n), "compact_end").GetCompactEnd().RemovedCount; got != 3 {
				t.Errorf("removed_count %d, want 3", got)
			}
			summary := "user:" + SummaryPrefix + "the user asked q1 and q2"
			wantHistory := []string{summary, "assistant:" + pad("a2"), "user:" + pad("q3"), "assistant:" + pad("a3"), "user:" + pad("q4"), "assistant:" + pad("a4")}
			if got := contents(h.history()); !slices.Equal(got, wantHistory) {
				t.Fatalf("history %q, want %q", got, wantHistory)
			}

			// On the wire: three requests that fit, the one refused, the
			// summary request with the transcript of what it replaces,
			// and the same request again, compacted.
			reqs := srv.requests()
			if len(reqs) != 6 {
				t.Fatalf("%d requests, want 6: %+v", len(reqs), reqs)
			}
			if r := reqs[3]; !r.Refused || r.Chars != 700 || r.System != "be brief" {
				t.Errorf("request 4: %+v, want refused at 700 characters", r)
			}
			wantTranscript := "user:user: " + pad("q1") + "\nassistant: " + pad("a1") + "\nuser: " + pad("q2") + "\n"
			if r := reqs[4]; r.Refused || r.System != SummarisePrompt || len(r.Messages) != 1 || r.Messages[0] != wantTranscript {
				t.Errorf("the summary request: %+v", r)
			}
			// The summary and the user message after it are one user message on the wire.
			wantRetry := []string{"user:" + SummaryPrefix + "the user asked q1 and q2", "assistant:" + pad("a2"), "user:" + pad("q3"), "assistant:" + pad("a3"), "user:" + pad("q4")}
			if r := reqs[5]; r.Refused || r.System != "be brief" || !slices.Equal(r.Messages, wantRetry) {
				t.Errorf("the retried request: %+v, want messages %q", r, wantRetry)
			}

			// A prompt that alone does not fit: compacting cannot help.
			n = h.rec.Len()
			big := strings.Repeat("x", 600)
			h.ok(&eventsv1.Prompt{Text: big})
			if r := h.waitFor("agent_end", 5).GetAgentEnd().Reason; r != string(events.EndError) {
				t.Fatalf("the second overflow ended the run %s, want error", r)
			}
			eventstest.ExpectTypes(t, h.since(n), seq(runStart,
				one("context_overflow", "turn_end", "compact_start", "compact_end"),
				one("turn_start", "request_start", "context_overflow", "error"), runEnd)...)
			if e := findType(h.since(n), "error").GetError(); e.Code != "context_overflow" || e.Message != "HTTP 400: "+reason {
				t.Errorf("error %v, want context_overflow %q", e, "HTTP 400: "+reason)
			}
			if got := findType(h.since(n), "compact_end").GetCompactEnd().RemovedCount; got != 3 {
				t.Errorf("second removed_count %d, want 3", got)
			}
			if reqs := srv.requests(); len(reqs) != 9 || !reqs[6].Refused || reqs[7].System != SummarisePrompt || !reqs[8].Refused {
				t.Errorf("requests after the big prompt: %+v", reqs[6:])
			}
			msgs := h.history()
			if got := contents(msgs)[len(msgs)-1]; got != "user:"+big {
				t.Errorf("the history ends with %q, want the big prompt", got)
			}
		})
	}
}
