package actors

import (
	"slices"
	"testing"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/spec"
)

// TestForkAfterCompactionNumbersCallsOn: the scripted model numbers its
// call ids c-N after the session's calls. A fork of a compacted session
// holds its source's c-2 but not the c-1 compaction took out, so that
// count is one short; its calls are numbered on past c-2 all the same —
// c-3, then c-4 after the fork's own compaction has taken c-2 and c-3 out
// of its requests — with no id renamed for being taken. Before, the fork
// gave c-2 again: its history held c-2 twice, its next request too (the
// repair pass checked only what was added since the last request), and
// get_messages was invalid.
func TestForkAfterCompactionNumbersCallsOn(t *testing.T) {
	sys := newSystem(t)
	reg := newPlace(sys, &Env{}, nil)
	src := spawnSpec(t, sys, reg, Spec{ID: "s1", Tools: demoSet(t),
		Model: scriptModel(t, "", `{"turns":[
			{"tool_calls":[{"name":"echo","args":{"text":"a"}}]},{"text":"one"},
			{"tool_calls":[{"name":"echo","args":{"text":"b"}}]},{"text":"two"},
			{"text":"the summary"}]}`), Stored: &spec.Session{System: "be brief", Context: &llm.ContextConfig{KeepRecent: new(4)}}})
	for i, p := range []string{"p1", "p2"} {
		src.ok(&eventsv1.Prompt{Text: p})
		src.waitFor("agent_end", i+1)
	}
	src.ok(&eventsv1.Compact{})
	if n := src.waitFor("compact_end", 1).GetCompactEnd().RemovedCount; n != 4 {
		t.Fatalf("the source's compaction removed %d messages, want 4", n)
	}
	hist := src.history()
	if got := callIDs(hist); !slices.Equal(got, []string{"c-2"}) {
		t.Fatalf("the source's working history calls %q", got)
	}

	sent := &sentRequests{}
	model := scriptModel(t, "", `{"turns":[
		{"tool_calls":[{"name":"echo","args":{"text":"c"}}]},{"text":"three"},
		{"text":"the fork's summary"},
		{"tool_calls":[{"name":"echo","args":{"text":"d"}}]},{"text":"four"}]}`)
	model.Provider = &checkedProvider{Provider: model.Provider, sent: sent}
	fork := spawnSpec(t, sys, reg, Spec{ID: "s2", Model: model, Tools: demoSet(t),
		Fork: &Fork{From: "s1", Index: len(hist), Messages: hist}, Stored: &spec.Session{System: "be brief", Context: &llm.ContextConfig{KeepRecent: new(1)}}})
	fork.waitFor("session_forked", 1)
	fork.ok(&eventsv1.Prompt{Text: "p3"})
	fork.waitFor("agent_end", 1)
	fork.ok(&eventsv1.Compact{})
	fork.waitFor("compact_end", 1)
	if got := callIDs(fork.history()); len(got) != 0 {
		t.Fatalf("after its compaction the fork's working history calls %q", got)
	}
	fork.ok(&eventsv1.Prompt{Text: "p4"})
	fork.waitFor("agent_end", 2)

	all := fork.ok(&eventsv1.GetMessages{All: true}).GetMessages().GetMessages()
	if got, want := callIDs(all), []string{"c-2", "c-3", "c-4"}; !slices.Equal(got, want) {
		t.Errorf("the fork's calls %q, want %q", got, want)
	}
	if err := llm.Validate(fork.history()); err != nil {
		t.Errorf("the fork's get_messages: %v", err)
	}
	sent.mu.Lock()
	defer sent.mu.Unlock()
	for i, req := range sent.reqs {
		if err := llm.Validate(req.Messages); err != nil {
			t.Errorf("the fork's request %d: %v", i+1, err)
		}
	}
}
