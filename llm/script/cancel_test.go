package script

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tack-run/tack/llm"
)

// TestCancel cancels the context while a turn waits, and checks that
// Stream returns at that very instant with ctx's error.
func TestCancel(t *testing.T) {
	tests := []struct {
		name     string
		turn     string
		cancelAt time.Duration
		steps    []string
	}{
		{"during delay", `{"delay_ms": 5000, "text": "x"}`, 100 * time.Millisecond, nil},
		{"during stall", `{"text": "abcd", "chunk_size": 2, "stall_ms": 5000}`, 100 * time.Millisecond, []string{`0s text "ab"`}},
		{"stall alone", `{"stall_ms": 20000}`, time.Second, nil},
		{"between chunks", `{"text": "abcdef", "chunk_size": 2, "chunk_delay_ms": 1000}`, 1500 * time.Millisecond,
			[]string{`0s text "ab"`, `1s text "cd"`}},
		{"between thinking chunks", `{"thinking": "abcd", "chunk_size": 2, "chunk_delay_ms": 1000}`, 500 * time.Millisecond,
			[]string{`0s thinking_start`, `0s thinking "ab"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				time.AfterFunc(tt.cancelAt, cancel)
				o := stream(ctx, New(mustParse(t, `{"turns": [`+tt.turn+`]}`)), &llm.Request{})
				if !errors.Is(o.err, context.Canceled) || o.resp != nil {
					t.Fatalf("Stream = %v, %v; want context.Canceled", summary(o.resp), o.err)
				}
				if o.took != tt.cancelAt {
					t.Errorf("returned after %v, want at the cancel, %v", o.took, tt.cancelAt)
				}
				if !slices.Equal(o.steps, tt.steps) {
					t.Errorf("chunks:\n%s", diff(o.steps, tt.steps))
				}
			})
		})
	}
}

func TestCancelInsideEmitStopsTheStream(t *testing.T) {
	// Zero delays: the stream must still notice the cancel before the
	// next chunk.
	p := New(mustParse(t, `{"turns": [{"text": "abcdef", "chunk_size": 2, "tool_calls": [{"name": "echo"}]}]}`))
	ctx, cancel := context.WithCancel(t.Context())
	var got []llm.Chunk
	_, err := p.Stream(ctx, &llm.Request{}, func(c llm.Chunk) {
		got = append(got, c)
		cancel()
	})
	if !errors.Is(err, context.Canceled) || len(got) != 1 {
		t.Fatalf("Stream: %v after %d chunks; want context.Canceled after 1", err, len(got))
	}
}

func TestCancelledBeforeStreamKeepsTheTurn(t *testing.T) {
	p := New(mustParse(t, `{"turns": [{"text": "first"}, {"text": "second"}]}`))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if o := stream(ctx, p, &llm.Request{}); !errors.Is(o.err, context.Canceled) || len(o.steps) != 0 {
		t.Fatalf("Stream with a done context = %v, %v", o.steps, o.err)
	}
	if o := stream(t.Context(), p, &llm.Request{}); o.err != nil || o.resp.Message.GetContent() != "first" {
		t.Fatalf("next Stream = %s, %v; want the first turn", summary(o.resp), o.err)
	}
}
