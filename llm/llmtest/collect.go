package llmtest

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tack-run/tack/llm"
	"google.golang.org/protobuf/proto"
)

// Collect calls p.Stream(t.Context(), req, ...) and returns every chunk
// emitted, in order, and what Stream returned. It reports a test error
// (t.Errorf, so the test goes on) when p breaks the Provider contract:
//
//   - emit called after Stream returned;
//   - a chunk of an unknown kind, a ChunkToolCall without a ToolCall,
//     ChunkThinking before any ChunkThinkingStart, ChunkRetry after
//     output or not numbered 1, 2, ..., ChunkStalled without Elapsed;
//   - on success: a nil Response or Message, a role other than assistant,
//     no stop reason, or a Message whose content, thinking or tool calls
//     differ from what was streamed;
//   - on failure: neither an *llm.Error nor ctx's error.
func Collect(t testing.TB, p llm.Provider, req *llm.Request) ([]llm.Chunk, *llm.Response, error) {
	t.Helper()
	ctx := t.Context()
	var chunks []llm.Chunk
	var returned atomic.Bool
	resp, err := p.Stream(ctx, req, func(c llm.Chunk) {
		if returned.Load() {
			t.Errorf("llmtest: emit called after Stream returned: %+v", c)
			return
		}
		chunks = append(chunks, c)
	})
	returned.Store(true)
	for _, problem := range Check(chunks, resp, err) {
		t.Errorf("llmtest: %s", problem)
	}
	if err != nil && ctx.Err() == nil {
		if _, ok := errors.AsType[*llm.Error](err); !ok {
			t.Errorf("llmtest: Stream failed with %T (%v), want *llm.Error", err, err)
		}
	}
	return chunks, resp, err
}

// Check returns what is wrong with a stream: chunks as emitted, then the
// response and error Stream returned. It is empty when they agree (see
// Collect for the rules, except those about timing and error types).
func Check(chunks []llm.Chunk, resp *llm.Response, err error) []string {
	var problems []string
	var text, thinking strings.Builder
	var calls []*llm.ToolCall
	thinkingStarted, output := false, false
	retries := 0
	for i, c := range chunks {
		switch c.Kind {
		case llm.ChunkText:
			text.WriteString(c.Text)
		case llm.ChunkThinkingStart:
			thinkingStarted = true
		case llm.ChunkThinking:
			if !thinkingStarted {
				problems = append(problems, fmt.Sprintf("chunk %d: thinking before ChunkThinkingStart", i))
			}
			thinking.WriteString(c.Text)
		case llm.ChunkToolCall:
			if c.ToolCall == nil {
				problems = append(problems, fmt.Sprintf("chunk %d: ChunkToolCall without a ToolCall", i))
				continue
			}
			calls = append(calls, c.ToolCall)
		case llm.ChunkRetry:
			retries++
			if output {
				problems = append(problems, fmt.Sprintf("chunk %d: ChunkRetry after output", i))
			}
			if c.Attempt != retries {
				problems = append(problems, fmt.Sprintf("chunk %d: ChunkRetry attempt %d, want %d", i, c.Attempt, retries))
			}
			continue
		case llm.ChunkStalled:
			if c.Elapsed <= 0 {
				problems = append(problems, fmt.Sprintf("chunk %d: ChunkStalled with elapsed %v", i, c.Elapsed))
			}
			continue
		default:
			problems = append(problems, fmt.Sprintf("chunk %d: unknown kind %d", i, c.Kind))
			continue
		}
		output = true
	}
	if err != nil {
		return problems
	}
	if resp == nil || resp.Message == nil {
		return append(problems, "Stream succeeded without a response message")
	}
	m := resp.Message
	if m.GetRole() != llm.RoleAssistant {
		problems = append(problems, fmt.Sprintf("response role %q, want %q", m.GetRole(), llm.RoleAssistant))
	}
	if resp.StopReason == "" {
		problems = append(problems, "response has no stop reason")
	}
	if got := m.GetContent(); got != text.String() {
		problems = append(problems, fmt.Sprintf("response content %q, streamed %q", got, text.String()))
	}
	if got := m.GetThinking(); got != thinking.String() {
		problems = append(problems, fmt.Sprintf("response thinking %q, streamed %q", got, thinking.String()))
	}
	if !sameCalls(m.GetToolCalls(), calls) {
		problems = append(problems, fmt.Sprintf("response tool calls %v, streamed %v", m.GetToolCalls(), calls))
	}
	return problems
}

func sameCalls(a, b []*llm.ToolCall) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !proto.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}
