package tack_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/tack-run/tack"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
)

// TestImportNumbersScriptCallsOn: an imported history whose call ids run
// ahead of its count of calls — the export of a fork, which holds c-2 but
// not the c-1 its source had compacted — gets scripted call ids after its
// newest: c-3. Before, the scripted model numbered after the count alone
// and gave c-2 again, an id the history held.
func TestImportNumbersScriptCallsOn(t *testing.T) {
	rt, err := tack.New()
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	echo := &eventsv1.RawJSON{Json: []byte(`{"text":"x"}`)}
	h := tack.History{Messages: []*eventsv1.Message{{Role: "user", Content: "go"},
		{Role: "assistant", ToolCalls: []*eventsv1.ToolCall{{Id: "c-2", Name: "echo", Args: echo}}},
		{Role: "tool", ToolCallId: "c-2", Content: "x"}, {Role: "assistant", Content: "done"}}}
	cfg := tack.SessionConfig{ID: "copy", Script: json.RawMessage(`{"turns":[
		{"tool_calls":[{"name":"echo","args":{"text":"y"}}]},{"text":"again"}]}`)}
	s, err := rt.Import(t.Context(), cfg, h)
	if err != nil {
		t.Fatal(err)
	}
	promptAndWait(t, rt, "copy", "more", "r-1")
	msgs, err := s.Messages(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range msgs {
		for _, c := range m.GetToolCalls() {
			ids = append(ids, c.GetId())
		}
	}
	if want := []string{"c-2", "c-3"}; !slices.Equal(ids, want) {
		t.Errorf("call ids %q, want %q", ids, want)
	}
	if err := llm.Validate(msgs); err != nil {
		t.Error(err)
	}
}
