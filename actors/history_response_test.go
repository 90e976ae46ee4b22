package actors

import (
	"context"
	"slices"
	"sync"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/spec"
	"github.com/tack-run/tack/tools"
)

// What the history keeps of a model's response, so that it stays valid
// for a provider whatever the model sends: tool call ids the session has
// used already, tool names no provider accepts, responses with nothing
// to send back.

// replies is a model that answers request n with answer(n, req), streamed
// as a provider streams it (thinking, text, then each call), and records
// every request.
type replies struct {
	answer func(n int, req *llm.Request) *llm.Message
	mu     sync.Mutex
	reqs   []*llm.Request
}

func (r *replies) Stream(_ context.Context, req *llm.Request, emit func(llm.Chunk)) (*llm.Response, error) {
	r.mu.Lock()
	n := len(r.reqs)
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	m := r.answer(n, req)
	if m.Thinking != "" {
		emit(llm.Chunk{Kind: llm.ChunkThinkingStart})
		emit(llm.Chunk{Kind: llm.ChunkThinking, Text: m.Thinking})
	}
	if m.Content != "" {
		emit(llm.Chunk{Kind: llm.ChunkText, Text: m.Content})
	}
	stop := llm.StopEnd
	for _, c := range m.ToolCalls {
		emit(llm.Chunk{Kind: llm.ChunkToolCall, ToolCall: c})
		stop = llm.StopToolCalls
	}
	return &llm.Response{Message: m, StopReason: stop}, nil
}

// requests returns the requests so far.
func (r *replies) requests() []*llm.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.reqs)
}

// spawnReplies starts session s1 on r with the demo tools and ctx, and
// returns it with what it logs at warn and above.
func spawnReplies(t *testing.T, r *replies, ctx *llm.ContextConfig) (*harness, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zap.WarnLevel)
	sys := newSystem(t)
	h := spawnSpec(t, sys, newPlace(sys, &Env{Logger: zap.New(core)}, nil), Spec{ID: "s1",
		Model: &llm.Model{Name: "test/replies", ID: "m", Provider: r}, Tools: demoSet(t), Stored: &spec.Session{System: "be brief", Context: ctx}})
	return h, logs
}

// echoCall is a call of the tool name, with id and arguments for echo.
func echoCall(id, name string) *llm.ToolCall {
	return &llm.ToolCall{Id: id, Name: name, Args: &eventsv1.RawJSON{Json: []byte(`{"text":"x"}`)}}
}

// sentContents lists role:content of the messages of each request.
func sentContents(reqs []*llm.Request) [][]string {
	out := make([][]string, len(reqs))
	for i, r := range reqs {
		out[i] = contents(r.Messages)
	}
	return out
}

// sameMessage reports whether a and b are equal.
func sameMessage(a, b *llm.Message) bool { return proto.Equal(a, b) }

// callIDs lists the ids of the tool calls of msgs.
func callIDs(msgs []*llm.Message) []string {
	var ids []string
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			ids = append(ids, c.Id)
		}
	}
	return ids
}

// checkSent fails t for a request that is not a valid history for a
// provider (llm.Validate), calls a tool by a name no provider accepts,
// or holds an assistant message with neither text nor calls; and for
// anything the session logged, such as a history that needed repair.
func checkSent(t *testing.T, reqs []*llm.Request, logs *observer.ObservedLogs) {
	t.Helper()
	for i, req := range reqs {
		if err := llm.Validate(req.Messages); err != nil {
			t.Errorf("request %d: %v", i+1, err)
		}
		for _, m := range req.Messages {
			if m.Role == llm.RoleAssistant && m.Content == "" && len(m.ToolCalls) == 0 {
				t.Errorf("request %d holds an assistant message with nothing in it", i+1)
			}
			for _, c := range m.ToolCalls {
				if !tools.ValidName(c.Name) {
					t.Errorf("request %d calls the invalid name %q", i+1, c.Name)
				}
			}
		}
	}
	for _, e := range logs.All() {
		t.Errorf("logged %s: %s %v", e.Level, e.Message, e.ContextMap())
	}
}

// TestReusedCallIDIsMadeUnique: a server that numbers the calls of each
// response from call_0, as several local servers do, gives the id of a
// call the history holds; the session commits it as call_0-2, and events,
// results and later requests all use that id. Before, only the openai
// provider renamed such an id, against the request's messages alone: with
// context.max_messages the request had been trimmed of the first call_0,
// so the history held call_0 twice, get_messages was invalid, and every
// request after it needed repair (logged as a runtime bug), which dropped
// the second call and its result and sent its message empty.
func TestReusedCallIDIsMadeUnique(t *testing.T) {
	for _, tc := range []struct {
		name string
		ctx  *llm.ContextConfig
	}{
		{"whole history sent", nil},
		{"request trimmed", &llm.ContextConfig{MaxMessages: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &replies{answer: func(_ int, req *llm.Request) *llm.Message {
				if req.Messages[len(req.Messages)-1].Role == llm.RoleUser {
					return &llm.Message{Role: llm.RoleAssistant, ToolCalls: []*llm.ToolCall{echoCall("call_0", "echo")}}
				}
				return llm.AssistantMessage("done")
			}}
			h, logs := spawnReplies(t, r, tc.ctx)
			h.ok(&eventsv1.Prompt{Text: "p1"})
			h.waitFor("agent_end", 1)
			n := h.rec.Len()
			h.ok(&eventsv1.Prompt{Text: "p2"})
			h.waitFor("agent_end", 2)

			msgs := h.history()
			if got, want := callIDs(msgs), []string{"call_0", "call_0-2"}; !slices.Equal(got, want) {
				t.Errorf("call ids %q, want %q", got, want)
			}
			if got := msgs[len(msgs)-2]; got.ToolCallId != "call_0-2" {
				t.Errorf("the second result answers %q", got.ToolCallId)
			}
			evs := h.since(n)
			if got := findType(evs, "response_complete").GetResponseComplete().GetMessage(); !proto.Equal(got, msgs[5]) {
				t.Errorf("response_complete %v, committed %v", got, msgs[5])
			}
			if got := findType(evs, "tool_execution_end").GetToolExecutionEnd().GetCallId(); got != "call_0-2" {
				t.Errorf("tool_execution_end of call %q", got)
			}
			checkSent(t, r.requests(), logs)
		})
	}
}

// TestInvalidToolNameIsKeptValid: the model calls tools by names no
// provider accepts — none at all, and "functions.echo" (OpenAI's
// function-name pattern is ^[a-zA-Z0-9_-]{1,64}$) — beside a valid call.
// The history keeps those calls under invalid_tool_name, so every later
// request can be sent; each is answered as the unknown tool it is, with
// tool_call_unknown and a result naming what the model sent, and
// response_complete and get_messages show what is sent. Before, the names
// were kept and sent back as they came, and a provider refused every
// later request of the session with HTTP 400.
func TestInvalidToolNameIsKeptValid(t *testing.T) {
	r := &replies{answer: func(n int, _ *llm.Request) *llm.Message {
		if n == 0 {
			return &llm.Message{Role: llm.RoleAssistant, ToolCalls: []*llm.ToolCall{
				echoCall("a", ""), echoCall("b", "functions.echo"), echoCall("c", "echo")}}
		}
		return llm.AssistantMessage("done")
	}}
	h, logs := spawnReplies(t, r, nil)
	h.ok(&eventsv1.Prompt{Text: "p1"})
	h.waitFor("agent_end", 1)

	msgs := h.history()
	var names []string
	for _, c := range msgs[1].ToolCalls {
		names = append(names, c.Name)
	}
	if want := []string{InvalidToolName, InvalidToolName, "echo"}; !slices.Equal(names, want) {
		t.Errorf("committed calls %q, want %q", names, want)
	}
	if got := h.waitFor("response_complete", 1).GetResponseComplete().GetMessage(); !proto.Equal(got, msgs[1]) {
		t.Errorf("response_complete %v, committed %v", got, msgs[1])
	}
	var unknown []string
	for _, ev := range findAll(h.rec.Events(), "tool_call_unknown") {
		unknown = append(unknown, ev.GetToolCallUnknown().GetCallId()+" "+ev.GetToolCallUnknown().GetName())
	}
	if want := []string{"a ", "b functions.echo"}; !slices.Equal(unknown, want) {
		t.Errorf("tool_call_unknown %q, want %q", unknown, want)
	}
	available := "; available tools: echo, shell, sleep, sleep_immune, sleep_stubborn"
	want := []string{"user:p1", "assistant:", `tool:unknown tool ""` + available,
		`tool:unknown tool "functions.echo"` + available, "tool:x", "assistant:done"}
	if got := contents(msgs); !slices.Equal(got, want) {
		t.Errorf("history %q, want %q", got, want)
	}
	reqs := r.requests()
	if len(reqs) != 2 || !slices.EqualFunc(reqs[1].Messages, msgs[:5], sameMessage) {
		t.Errorf("the request after the calls is not the history get_messages shows: %q", sentContents(reqs))
	}
	checkSent(t, reqs, logs)
}

// TestEmptyResponseIsNotCommitted: a response with neither text nor tool
// calls — no output at all, thinking only, or only a <status> tag the session takes out — is told by
// response_complete, but no message_committed follows it and the run
// ends as after an answer. The next prompt's request holds the two
// prompts, as get_messages does. Before, the session committed an
// assistant message with no content, sent back as
// {"role":"assistant","content":""}, which providers refuse.
func TestEmptyResponseIsNotCommitted(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer *llm.Message
		events []string // between request_start and token_usage
	}{
		{"no output", &llm.Message{Role: llm.RoleAssistant}, one("response_complete")},
		{"thinking only", &llm.Message{Role: llm.RoleAssistant, Thinking: "hmm"},
			one("state_changed", "message_start", "thinking_start", "thinking_delta", "response_complete")},
		{"status tag only", llm.AssistantMessage("<status>working</status>"),
			one("state_changed", "message_start", "status_update", "response_complete")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &replies{answer: func(n int, _ *llm.Request) *llm.Message {
				if n == 0 {
					return tc.answer
				}
				return llm.AssistantMessage("done")
			}}
			h, logs := spawnReplies(t, r, nil)
			h.ok(&eventsv1.Prompt{Text: "p1"})
			h.waitFor("agent_end", 1)
			h.expect(seq(one("session_created"), runStart, tc.events, one("token_usage"), runEnd)...)
			if got := h.waitFor("response_complete", 1).GetResponseComplete().GetMessage().GetThinking(); got != tc.answer.Thinking {
				t.Errorf("response_complete's thinking %q", got)
			}
			h.ok(&eventsv1.Prompt{Text: "p2"})
			h.waitFor("agent_end", 2)
			msgs := h.history()
			if got, want := contents(msgs), []string{"user:p1", "user:p2", "assistant:done"}; !slices.Equal(got, want) {
				t.Errorf("history %q, want %q", got, want)
			}
			if reqs := r.requests(); len(reqs) != 2 || !slices.EqualFunc(reqs[1].Messages, msgs[:2], sameMessage) {
				t.Errorf("the second request is not the history get_messages shows: %q", sentContents(reqs))
			}
			checkSent(t, r.requests(), logs)
		})
	}
}
