package actors

import (
	"slices"
	"testing"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
)

// TestTrimmedRequests: with context.max_messages, each request carries the
// system prompt and the newest messages, moved back to keep a batch's
// call with its results; request_start.message_count tells how many; the
// history itself keeps everything.
func TestTrimmedRequests(t *testing.T) {
	sent := &sentRequests{}
	model := scriptModel(t, "", `{"turns":[
		{"tool_calls":[{"name":"echo","args":{"text":"a"}},{"name":"echo","args":{"text":"b"}}]},
		{"text":"one"},
		{"text":"two"}]}`)
	model.Provider = &checkedProvider{Provider: model.Provider, sent: sent}
	sys := newSystem(t)
	h := spawnSpec(t, sys, NewRegistry(sys, &Env{}), Spec{
		ID: "s1", Model: model, System: "be brief", Tools: demoSet(t), Context: &llm.ContextConfig{MaxMessages: 2},
	})
	h.ok(&eventsv1.Prompt{Text: "p1"})
	h.waitFor("agent_end", 1)
	h.ok(&eventsv1.Prompt{Text: "p2"})
	h.waitFor("agent_end", 2)

	var counts []int32
	for _, ev := range findAll(h.rec.Events(), "request_start") {
		counts = append(counts, ev.GetRequestStart().MessageCount)
	}
	if want := []int32{1, 3, 2}; !slices.Equal(counts, want) {
		t.Fatalf("request_start.message_count = %v, want %v", counts, want)
	}
	want := [][]string{
		{"user:p1"},
		{"assistant:", "tool:a", "tool:b"},
		{"assistant:one", "user:p2"},
	}
	for i, req := range sent.reqs {
		if got := contents(req.Messages); !slices.Equal(got, want[i]) || req.System != "be brief" {
			t.Errorf("request %d: system %q, messages %q, want %q", i+1, req.System, got, want[i])
		}
	}
	if got := contents(h.history()); !slices.Equal(got, []string{"user:p1", "assistant:", "tool:a", "tool:b", "assistant:one", "user:p2", "assistant:two"}) {
		t.Fatalf("history %q", got)
	}
}
