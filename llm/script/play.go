package script

import (
	"bytes"
	"context"
	"fmt"
	"iter"
	"net/http"
	"time"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
)

// play streams turn t in answer to req.
func play(ctx context.Context, t *Turn, req *llm.Request, base int, emit func(llm.Chunk)) (*llm.Response, error) {
	var p pauses
	defer p.stop()
	wait := p.wait
	if err := wait(ctx, t.DelayMS); err != nil {
		return nil, err
	}
	stalled := t.StallMS == 0
	first := true
	// piece emits one thinking or text chunk at its time; the silence of
	// StallMS follows the first.
	piece := func(c llm.Chunk) error {
		if !first {
			if err := wait(ctx, t.ChunkDelayMS); err != nil {
				return err
			}
		}
		first = false
		emit(c)
		if !stalled {
			stalled = true
			return wait(ctx, t.StallMS)
		}
		return nil
	}
	if t.Thinking != "" {
		emit(llm.Chunk{Kind: llm.ChunkThinkingStart})
		for s := range split(t.Thinking, t.ChunkSize) {
			if err := piece(llm.Chunk{Kind: llm.ChunkThinking, Text: s}); err != nil {
				return nil, err
			}
		}
	}
	for s := range split(t.Text, t.ChunkSize) {
		if err := piece(llm.Chunk{Kind: llm.ChunkText, Text: s}); err != nil {
			return nil, err
		}
	}
	if !stalled {
		if err := wait(ctx, t.StallMS); err != nil {
			return nil, err
		}
	}
	calls := toolCalls(t, base)
	for _, c := range calls {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		emit(llm.Chunk{Kind: llm.ChunkToolCall, ToolCall: c})
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if f := t.Error; f != nil {
		return nil, failure(f)
	}
	msg := &llm.Message{Role: llm.RoleAssistant, Content: t.Text, Thinking: t.Thinking, ToolCalls: calls}
	stop := llm.StopEnd
	if len(calls) > 0 {
		stop = llm.StopToolCalls
	}
	return &llm.Response{Message: msg, StopReason: stop, Usage: usage(t, req, msg)}, nil
}

// pauses are the waits of one turn, on one timer that each wait sets
// again: a turn of a hundred thousand paced chunks makes one timer, not
// one a chunk.
type pauses struct{ timer *time.Timer }

// wait returns after ms milliseconds, or with ctx's error as soon as ctx is
// done.
func (p *pauses) wait(ctx context.Context, ms int64) error {
	if ms <= 0 {
		return ctx.Err()
	}
	d := time.Duration(ms) * time.Millisecond
	if p.timer == nil {
		p.timer = time.NewTimer(d)
	} else {
		p.timer.Reset(d) // since Go 1.23, Reset leaves no stale tick behind
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-p.timer.C:
		return nil
	}
}

// stop releases the timer.
func (p *pauses) stop() {
	if p.timer != nil {
		p.timer.Stop()
	}
}

// split yields s in pieces of size runes, the last one shorter; size 0
// keeps s whole. An empty s has no pieces. The pieces are cut as they are
// asked for, so a long answer costs no list of them.
func split(s string, size int) iter.Seq[string] {
	return func(yield func(string) bool) {
		if s == "" {
			return
		}
		if size <= 0 {
			yield(s)
			return
		}
		n, start := 0, 0
		for i := range s {
			if n == size {
				if !yield(s[start:i]) {
					return
				}
				n, start = 0, i
			}
			n++
		}
		yield(s[start:])
	}
}

// toolCalls returns the calls of t with their ids: c-N where N is base +
// 1 + the index in t.
func toolCalls(t *Turn, base int) []*llm.ToolCall {
	if len(t.ToolCalls) == 0 {
		return nil
	}
	n := base
	calls := make([]*llm.ToolCall, len(t.ToolCalls))
	for i, c := range t.ToolCalls {
		args := c.Args
		if len(args) == 0 {
			args = []byte("{}")
		}
		calls[i] = &llm.ToolCall{
			Id:   fmt.Sprintf("c-%d", n+i+1),
			Name: c.Name,
			Args: &eventsv1.RawJSON{Json: bytes.Clone(args)},
		}
	}
	return calls
}

// failure is the error of a failing turn.
func failure(f *Failure) *llm.Error {
	msg := f.Message
	if msg == "" {
		msg = http.StatusText(f.Status)
	}
	if msg == "" {
		msg = "scripted failure"
	}
	return &llm.Error{Status: f.Status, Message: msg}
}
