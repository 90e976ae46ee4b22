package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/llm/llmtest"
	"github.com/tack-run/tack/spec"
)

// windowOf fails, as the provider's context overflow, every request but
// a summary's whose system prompt and messages are estimated above window
// tokens (the scripted model's own estimate of its input): a model with a
// small window that refuses what does not fit, whose summaries are
// written as by a compact_model with a larger window.
func windowOf(window int64) func(llm.Provider) llm.Provider {
	return func(p llm.Provider) llm.Provider {
		return llmtest.ProviderFunc(func(ctx context.Context, req *llm.Request, emit func(llm.Chunk)) (*llm.Response, error) {
			if in := llm.EstimateUsage(req, &llm.Message{}).InputTokens; in > window && req.System != SummarisePrompt {
				return nil, &llm.Error{Status: 400, Message: fmt.Sprintf("maximum context length is %d tokens, the request has %d", window, in), Overflow: true}
			}
			return p.Stream(ctx, req, emit)
		})
	}
}

// committedAll is every message the events told committed, in order: what
// get_messages with all must return, summaries aside.
func committedAll(evs []*eventsv1.Event) []*llm.Message {
	var out []*llm.Message
	for _, ev := range evs {
		if c := ev.GetMessageCommitted(); c != nil {
			out = append(out, c.Message)
		}
	}
	return out
}

// checkAll fails t unless get_messages with all returns, summaries aside
// and unmarked, exactly the messages told committed in evs, in order; the
// messages it marks neither compacted nor rolled back are the working
// history, and the compacted ones come first.
func checkAll(t testing.TB, h *harness, evs []*eventsv1.Event) {
	t.Helper()
	all := h.ok(&eventsv1.GetMessages{All: true}).GetMessages().GetMessages()
	working := h.messages()
	var live []*llm.Message
	for _, m := range all {
		if !m.Compacted && !m.RolledBack {
			live = append(live, m)
		}
	}
	if len(live) != len(working) {
		t.Fatalf("all holds %d unmarked messages, the working history %d", len(live), len(working))
	}
	for i, m := range working {
		if !proto.Equal(live[i], m) {
			t.Fatalf("unmarked message %d of all is %v, the working history's %v", i, live[i], m)
		}
	}
	var got []*llm.Message
	kept := false
	for i, m := range all {
		if m.Compacted && kept {
			t.Fatalf("message %d of all is marked compacted after one that is not", i)
		}
		kept = kept || !m.Compacted
		if m.Summary {
			continue
		}
		c := proto.Clone(m).(*llm.Message)
		c.Compacted, c.RolledBack = false, false
		got = append(got, c)
	}
	want := committedAll(evs)
	if len(got) != len(want) {
		t.Fatalf("all holds %d messages besides summaries, %d were committed", len(got), len(want))
	}
	for i := range want {
		if !proto.Equal(got[i], want[i]) {
			t.Fatalf("message %d of all is %v, committed %v", i, got[i], want[i])
		}
	}
}

// TestRunsIndefinitely: a session with compact_at_percent on a model with
// a 2000-token window, whose reported usage grows with the history, runs
// 200 prompts, each a tool call and an answer, without one provider
// error: it compacts as the window fills, every request carries the
// system prompt and a valid history, and get_messages with all holds
// every message ever committed.
func TestRunsIndefinitely(t *testing.T) {
	const prompts = 200
	var turns []string
	for i := range prompts {
		turns = append(turns,
			fmt.Sprintf(`{"text":"Looking up item %d.","tool_calls":[{"name":"echo","args":{"text":%q}}]}`, i, strings.Repeat(fmt.Sprint(i%10), 80)),
			fmt.Sprintf(`{"text":%q}`, fmt.Sprintf("Item %d: ", i)+strings.Repeat("details ", 18)))
	}
	script, _ := json.Marshal(map[string]any{"context_window": 2000, "turns": json.RawMessage("[" + strings.Join(turns, ",") + "]")})
	sent := &sentRequests{}
	model := scriptModel(t, "script:small", string(script))
	model.Provider = &checkedProvider{Provider: windowOf(2000)(model.Provider), sent: sent}
	sum := scriptModel(t, "script:summariser", `{"turns":[{"text":"The user looked up items one by one; each was echoed and described."}],"when_exhausted":"repeat_last"}`)
	sys := newSystem(t)
	h := spawnSpec(t, sys, newPlace(sys, &Env{}, nil), Spec{ID: "s1", Model: model, CompactModel: sum,
		Tools: demoSet(t), Stored: &spec.Session{System: "be brief", Context: &llm.ContextConfig{CompactAtPercent: 60, KeepRecent: new(6)}}})
	for i := range prompts {
		h.ok(&eventsv1.Prompt{Text: fmt.Sprintf("look up item %d", i)})
		if end := h.waitFor("agent_end", i+1).GetAgentEnd(); end.Reason != string(events.EndCompleted) {
			t.Fatalf("run %d ended %s", i+1, end.Reason)
		}
	}
	// A compaction the last run asked for may still be under way.
	ends := findAll(h.rec.Events(), "compact_end")
	if starts := findAll(h.rec.Events(), "compact_start"); len(starts) > len(ends) {
		h.waitFor("compact_end", len(starts))
	}
	evs := h.rec.Events()
	for _, name := range []string{"context_overflow", "error", "stream_error"} {
		if ev := findType(evs, name); ev != nil {
			t.Fatalf("the long session saw %v", ev)
		}
	}
	compactions := 0
	for _, ev := range findAll(evs, "compact_end") {
		if ev.GetCompactEnd().RemovedCount == 0 {
			t.Fatalf("a compaction removed nothing: %v", ev)
		}
		compactions++
	}
	if compactions < 10 {
		t.Fatalf("%d compactions in %d prompts: the window never filled?", compactions, prompts)
	}
	sent.mu.Lock()
	reqs := sent.reqs
	sent.mu.Unlock()
	if len(reqs) != 2*prompts {
		t.Fatalf("%d requests to the model, want %d", len(reqs), 2*prompts)
	}
	for i, req := range reqs {
		if err := llm.Validate(req.Messages); err != nil || req.System != "be brief" {
			t.Fatalf("request %d: system %q, %v", i+1, req.System, err)
		}
	}
	checkLog(t, evs)
	checkAll(t, h, evs)
	t.Logf("%d prompts, %d compactions, %d messages committed, %d in the working history",
		prompts, compactions, len(committedAll(evs)), len(h.messages()))
}
