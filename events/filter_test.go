package events_test

import (
	"errors"
	"testing"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

func TestNewFilterErrors(t *testing.T) {
	tests := []struct {
		name     string
		patterns []string
		want     string
	}{
		{"unknown name", []string{"message_delta", "tool_exec"}, `unknown event type: "tool_exec"`},
		{"prefix matching nothing", []string{"nope*"}, `unknown event type: pattern "nope*" matches no event type`},
		{"star inside a name", []string{"tool_*_end"}, `unknown event type: "tool_*_end"`},
		{"empty name", []string{""}, `unknown event type: ""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := events.NewFilter(tt.patterns)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("NewFilter(%q) error = %v, want %q", tt.patterns, err, tt.want)
			}
			if !errors.Is(err, events.ErrUnknownType) {
				t.Errorf("error %v does not wrap ErrUnknownType", err)
			}
		})
	}
}

func TestFilterMatch(t *testing.T) {
	evs := map[string]*eventsv1.Event{
		"message_delta":        events.New(&eventsv1.MessageDelta{}),
		"message_start":        events.New(&eventsv1.MessageStart{}),
		"message_committed":    events.New(&eventsv1.MessageCommitted{}),
		"tool_execution_start": events.New(&eventsv1.ToolExecutionStart{}),
		"tool_execution_end":   events.New(&eventsv1.ToolExecutionEnd{}),
		"tool_calls":           events.New(&eventsv1.ToolCalls{}),
		"tools_updated":        events.New(&eventsv1.ToolsUpdated{}),
		"agent_end":            events.New(&eventsv1.AgentEnd{}),
		"error":                events.New(&eventsv1.Error{}),
		"events_lost":          events.New(&eventsv1.EventsLost{}),
	}
	tests := []struct {
		name     string
		patterns []string
		want     []string // the types of evs that match
	}{
		{"empty matches all", nil, keys(evs)},
		{"star matches all", []string{"*"}, keys(evs)},
		{"exact", []string{"agent_end"}, []string{"agent_end", "events_lost"}},
		{"prefix", []string{"tool_*"}, []string{"tool_execution_start", "tool_execution_end", "tool_calls", "events_lost"}},
		{"prefix without underscore", []string{"tool*"}, []string{"tool_execution_start", "tool_execution_end", "tool_calls", "tools_updated", "events_lost"}},
		{"several", []string{"message_*", "error"}, []string{"message_delta", "message_start", "message_committed", "error", "events_lost"}},
		{"events_lost named", []string{"events_lost"}, []string{"events_lost"}},
		{"last type of the proto", []string{"error"}, []string{"error", "events_lost"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := events.NewFilter(tt.patterns)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]bool{}
			for _, n := range tt.want {
				want[n] = true
			}
			for name, ev := range evs {
				if got := f.Match(ev); got != want[name] {
					t.Errorf("Match(%s) = %v, want %v", name, got, want[name])
				}
			}
		})
	}
}

func TestFilterZeroValueMatchesAll(t *testing.T) {
	var f events.Filter
	if !f.Match(events.New(&eventsv1.MessageDelta{})) {
		t.Error("zero Filter does not match")
	}
}

func TestFilterMatchDoesNotAllocate(t *testing.T) {
	f := events.MustFilter("tool_*", "agent_end")
	ev := events.New(&eventsv1.ToolExecutionEnd{})
	if n := testing.AllocsPerRun(100, func() { f.Match(ev) }); n != 0 {
		t.Errorf("Match allocates %v times", n)
	}
}

func keys(m map[string]*eventsv1.Event) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
