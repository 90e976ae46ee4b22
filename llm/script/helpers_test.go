package script

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
)

// mustParse parses a script or fails the test.
func mustParse(t *testing.T, js string) *Script {
	t.Helper()
	s, err := Parse([]byte(js))
	if err != nil {
		t.Fatalf("Parse(%s): %v", js, err)
	}
	return s
}

// outcome is what one Stream call did, with times on the synctest clock.
type outcome struct {
	steps  []string // one per chunk: "<time> <kind> <payload>"
	chunks []llm.Chunk
	resp   *llm.Response
	err    error
	took   time.Duration
}

// stream calls p.Stream once, recording when each chunk came. Call it in a
// synctest bubble, so that times are exact.
func stream(ctx context.Context, p *Provider, req *llm.Request) outcome {
	var o outcome
	start := time.Now()
	o.resp, o.err = p.Stream(ctx, req, func(c llm.Chunk) {
		o.steps = append(o.steps, time.Since(start).String()+" "+describe(c))
		o.chunks = append(o.chunks, c)
	})
	o.took = time.Since(start)
	return o
}

// describe renders a chunk: text "Let ", thinking_start, tool c-1 shell {...}.
func describe(c llm.Chunk) string {
	switch c.Kind {
	case llm.ChunkText:
		return fmt.Sprintf("text %q", c.Text)
	case llm.ChunkThinkingStart:
		return "thinking_start"
	case llm.ChunkThinking:
		return fmt.Sprintf("thinking %q", c.Text)
	case llm.ChunkToolCall:
		return fmt.Sprintf("tool %s %s %s", c.ToolCall.GetId(), c.ToolCall.GetName(), c.ToolCall.GetArgs().GetJson())
	}
	return fmt.Sprintf("kind %d", c.Kind)
}

// summary renders a response: stop reason, content, usage.
func summary(r *llm.Response) string {
	if r == nil {
		return "<nil>"
	}
	u := r.Usage
	return fmt.Sprintf("%s %q usage %d+%d=%d", r.StopReason, r.Message.GetContent(),
		u.GetInputTokens(), u.GetOutputTokens(), u.GetTotalTokens())
}

// withCalls returns an assistant message calling n tools, ids from first.
func withCalls(first, n int) *llm.Message {
	m := llm.AssistantMessage("")
	for i := range n {
		m.ToolCalls = append(m.ToolCalls, &llm.ToolCall{
			Id: fmt.Sprintf("c-%d", first+i), Name: "echo", Args: &eventsv1.RawJSON{Json: []byte(`{"a":1}`)},
		})
	}
	return m
}

func diff(got, want []string) string {
	return "got:\n  " + strings.Join(got, "\n  ") + "\nwant:\n  " + strings.Join(want, "\n  ")
}
