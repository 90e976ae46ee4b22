package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"
)

// turn is one scripted response, with the meaning of Tack's scripted model
// (docs/protocol.md#the-scripted-model): DelayMS, then Text in ChunkSize-rune chunks with
// ChunkDelayMS before each but the first, then the tool calls.
type turn struct {
	DelayMS      int
	Text         string
	ChunkSize    int
	ChunkDelayMS int
	ToolCalls    []call
}

type call struct {
	Name, Args string
}

// pipeCap is the buffer of the stream between the model's goroutine and
// its reader.
const pipeCap = 64

// scripted is a model.ToolCallingChatModel that plays turns, one per
// request, repeating the last when they run out. Stream emits on a
// goroutine of its own, as Eino's model implementations do, and ends with
// ctx's error as soon as ctx is cancelled.
type scripted struct {
	*position
	turns []turn
}

// position is where a model and the copies WithTools made of it are.
type position struct {
	mu   sync.Mutex
	next int
	// calls numbers the tool calls, for unique ids.
	calls int
}

func newScripted(turns []turn) *scripted {
	return &scripted{position: &position{}, turns: turns}
}

// WithTools implements model.ToolCallingChatModel; the script does not
// look at the tools.
func (m *scripted) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	return m, nil
}

func (m *scripted) take() (turn, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.turns[min(m.next, len(m.turns)-1)]
	m.next++
	first := m.calls
	m.calls += len(t.ToolCalls)
	return t, first
}

// Generate implements model.BaseChatModel by collecting Stream.
func (m *scripted) Generate(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	sr, err := m.Stream(ctx, in, opts...)
	if err != nil {
		return nil, err
	}
	defer sr.Close()
	var chunks []*schema.Message
	for {
		c, err := sr.Recv()
		if err == io.EOF {
			return schema.ConcatMessages(chunks)
		}
		if err != nil {
			return nil, err
		}
		chunks = append(chunks, c)
	}
}

// Stream implements model.BaseChatModel.
func (m *scripted) Stream(ctx context.Context, _ []*schema.Message, _ ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t, firstCall := m.take()
	sr, sw := schema.Pipe[*schema.Message](pipeCap)
	go func() {
		defer sw.Close()
		if err := play(ctx, t, firstCall, sw); err != nil {
			sw.Send(nil, err)
		}
	}()
	return sr, nil
}

// play sends the chunks of t; it returns ctx's error when cancelled.
func play(ctx context.Context, t turn, firstCall int, sw *schema.StreamWriter[*schema.Message]) error {
	if err := wait(ctx, t.DelayMS); err != nil {
		return err
	}
	pieces := split(t.Text, t.ChunkSize)
	for i, p := range pieces {
		if i > 0 {
			if err := wait(ctx, t.ChunkDelayMS); err != nil {
				return err
			}
		}
		if sw.Send(&schema.Message{Role: schema.Assistant, Content: p}, nil) {
			return nil // the reader is gone
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	last := &schema.Message{Role: schema.Assistant, ResponseMeta: &schema.ResponseMeta{
		FinishReason: "stop",
		Usage:        &schema.TokenUsage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15},
	}}
	for i, c := range t.ToolCalls {
		last.ToolCalls = append(last.ToolCalls, schema.ToolCall{
			Index: &i, ID: fmt.Sprintf("c-%d", firstCall+i+1), Type: "function",
			Function: schema.FunctionCall{Name: c.Name, Arguments: c.Args},
		})
		last.ResponseMeta.FinishReason = "tool_calls"
	}
	sw.Send(last, nil)
	return nil
}

// wait returns after ms milliseconds, or ctx's error as soon as ctx is
// done.
func wait(ctx context.Context, ms int) error {
	if ms <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// split cuts s into pieces of size runes; size 0 keeps s whole.
func split(s string, size int) []string {
	if s == "" {
		return nil
	}
	if size <= 0 {
		return []string{s}
	}
	var out []string
	r := []rune(s)
	for len(r) > size {
		out = append(out, string(r[:size]))
		r = r[size:]
	}
	return append(out, string(r))
}
