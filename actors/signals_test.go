package actors

import (
	"context"
	"testing"
	"time"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/llm/llmtest"
)

// TestRetryAndStallReports: a provider's retry and stall reports become
// retry and stream_stalled while the session stays running; the first
// real chunk moves it to streaming. Usage it does not send is estimated.
func TestRetryAndStallReports(t *testing.T) {
	p := llmtest.ProviderFunc(func(_ context.Context, _ *llm.Request, emit func(llm.Chunk)) (*llm.Response, error) {
		emit(llm.Chunk{Kind: llm.ChunkRetry, Attempt: 1, Delay: 250 * time.Millisecond, Text: "HTTP 429: rate limited"})
		emit(llm.Chunk{Kind: llm.ChunkStalled, Elapsed: 30 * time.Second})
		emit(llm.Chunk{Kind: llm.ChunkText, Text: "finally"})
		return &llm.Response{Message: llm.AssistantMessage("finally"), StopReason: llm.StopEnd}, nil
	})
	h := newHarnessModel(t, &llm.Model{Name: "flaky-server", ID: "m", Provider: p, ContextWindow: 1000}, nil)
	h.ok(&eventsv1.Prompt{Text: "hello there"})
	h.waitFor("agent_end", 1)
	h.expect(seq(one("session_created"), runStart,
		one("retry", "stream_stalled"), answer, runEnd)...)
	if r := h.waitFor("retry", 1).GetRetry(); r.Attempt != 1 || r.DelayMs != 250 || r.Reason != "HTTP 429: rate limited" {
		t.Fatalf("retry %v", r)
	}
	if s := h.waitFor("stream_stalled", 1).GetStreamStalled(); s.ElapsedMs != 30000 {
		t.Fatalf("stream_stalled %v", s)
	}
	if u := h.waitFor("token_usage", 1).GetTokenUsage(); u.ContextUsed == 0 || u.GetContextWindow() != 1000 {
		t.Fatalf("estimated usage %v", u)
	}
}
