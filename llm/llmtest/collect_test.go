package llmtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
)

// recorder is a testing.TB that keeps Errorf messages instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

var call = &llm.ToolCall{Id: "c-1", Name: "echo", Args: &eventsv1.RawJSON{Json: []byte(`{}`)}}

// answer streams chunks then returns resp, err.
func answer(chunks []llm.Chunk, resp *llm.Response, err error) ProviderFunc {
	return func(_ context.Context, _ *llm.Request, emit func(llm.Chunk)) (*llm.Response, error) {
		for _, c := range chunks {
			emit(c)
		}
		return resp, err
	}
}

func reply(content, thinking string, calls ...*llm.ToolCall) *llm.Response {
	return &llm.Response{
		Message:    &llm.Message{Role: llm.RoleAssistant, Content: content, Thinking: thinking, ToolCalls: calls},
		StopReason: llm.StopEnd,
	}
}

func TestCollect(t *testing.T) {
	good := []llm.Chunk{
		{Kind: llm.ChunkThinkingStart},
		{Kind: llm.ChunkThinking, Text: "hm"},
		{Kind: llm.ChunkText, Text: "Hel"},
		{Kind: llm.ChunkText, Text: "lo"},
		{Kind: llm.ChunkToolCall, ToolCall: call},
	}
	tests := []struct {
		name     string
		provider llm.Provider
		want     []string // substrings of the reported errors, in order
	}{
		{"consistent", answer(good, reply("Hello", "hm", call), nil), nil},
		{"failure with llm.Error", answer(good[:3], nil, &llm.Error{Status: 429}), nil},
		{"content differs", answer(good, reply("Hello!", "hm", call), nil), []string{`content "Hello!", streamed "Hello"`}},
		{"thinking differs", answer(good, reply("Hello", "", call), nil), []string{`thinking "", streamed "hm"`}},
		{"calls differ", answer(good, reply("Hello", "hm"), nil), []string{"tool calls"}},
		{"thinking not started", answer(good[1:2], reply("", "hm"), nil), []string{"thinking before ChunkThinkingStart"}},
		{"tool chunk without call", answer([]llm.Chunk{{Kind: llm.ChunkToolCall}}, reply("", ""), nil), []string{"without a ToolCall"}},
		{"unknown kind", answer([]llm.Chunk{{Kind: 99}}, reply("", ""), nil), []string{"unknown kind 99"}},
		{"no response", answer(nil, nil, nil), []string{"without a response message"}},
		{"retries then stall then output", answer([]llm.Chunk{
			{Kind: llm.ChunkRetry, Attempt: 1, Delay: time.Second, Text: "429"},
			{Kind: llm.ChunkRetry, Attempt: 2, Delay: 2 * time.Second, Text: "429"},
			{Kind: llm.ChunkText, Text: "a"},
			{Kind: llm.ChunkStalled, Elapsed: 10 * time.Second},
			{Kind: llm.ChunkText, Text: "b"},
		}, reply("ab", ""), nil), nil},
		{"retry after output", answer([]llm.Chunk{{Kind: llm.ChunkText, Text: "a"}, {Kind: llm.ChunkRetry, Attempt: 1}}, reply("a", ""), nil),
			[]string{"chunk 1: ChunkRetry after output"}},
		{"retry misnumbered", answer([]llm.Chunk{{Kind: llm.ChunkRetry, Attempt: 2}}, reply("", ""), nil),
			[]string{"ChunkRetry attempt 2, want 1"}},
		{"stall without elapsed", answer([]llm.Chunk{{Kind: llm.ChunkStalled}}, reply("", ""), nil),
			[]string{"ChunkStalled with elapsed 0s"}},
		{"wrong role", answer(nil, &llm.Response{Message: llm.UserMessage(""), StopReason: llm.StopEnd}, nil), []string{`role "user"`}},
		{"no stop reason", answer(nil, &llm.Response{Message: llm.AssistantMessage("")}, nil), []string{"no stop reason"}},
		{"plain error", answer(nil, nil, errors.New("boom")), []string{"want *llm.Error"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{TB: t}
			Collect(r, tt.provider, &llm.Request{})
			if len(r.errs) != len(tt.want) {
				t.Fatalf("reported %q, want %d errors like %q", r.errs, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(r.errs[i], w) {
					t.Errorf("error %d = %q, want it to contain %q", i, r.errs[i], w)
				}
			}
		})
	}
}

func TestCollectReturnsWhatWasStreamed(t *testing.T) {
	chunks := []llm.Chunk{{Kind: llm.ChunkText, Text: "a"}, {Kind: llm.ChunkText, Text: "b"}}
	got, resp, err := Collect(t, answer(chunks, reply("ab", ""), nil), &llm.Request{})
	if err != nil || resp.Message.GetContent() != "ab" || !slices.Equal(got, chunks) {
		t.Fatalf("Collect = %v, %v, %v", got, resp, err)
	}
}

func TestCollectEmitAfterReturn(t *testing.T) {
	var late func(llm.Chunk)
	p := ProviderFunc(func(_ context.Context, _ *llm.Request, emit func(llm.Chunk)) (*llm.Response, error) {
		late = emit
		return reply("", ""), nil
	})
	r := &recorder{TB: t}
	Collect(r, p, &llm.Request{})
	late(llm.Chunk{Kind: llm.ChunkText, Text: "late"})
	if len(r.errs) != 1 || !strings.Contains(r.errs[0], "emit called after Stream returned") {
		t.Fatalf("reported %q", r.errs)
	}
}
