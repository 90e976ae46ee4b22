package spec

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/plugins"
)

// TestValidate: the options no session can have are refused with the
// option named; everything else is the runtime's to resolve.
func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		s    Session
		want string
	}{
		{"empty", Session{}, ""},
		{"queue mode all", Session{QueueMode: events.QueueAll}, ""},
		{"unknown queue mode", Session{QueueMode: "later"}, `queue_mode is one_at_a_time or all, not "later"`},
		{"negative nesting", Session{Subagents: &Subagents{MaxDepth: new(-1)}}, "subagents.max_depth must not be negative, not -1"},
		{"nesting 0", Session{Subagents: &Subagents{MaxDepth: new(0)}}, ""},
		{"context out of range", Session{Context: &llm.ContextConfig{MaxPercent: 150}}, (&llm.ContextConfig{MaxPercent: 150}).Validate().Error()},
		{"unknown names pass", Session{Model: "nowhere", Tools: []string{"nothing"}, Agent: "nobody"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.s.Validate()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Fatalf("Validate() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestStoredRoundTrip: what the store keeps gives back the session it was
// made from, option by option, with the model's resolved name.
func TestStoredRoundTrip(t *testing.T) {
	full := Session{
		ID: "s", Model: "gpt", System: "be brief", Tools: []string{"read", "grep"}, User: "alice",
		Plugins:   []plugins.Config{{Name: "a", Config: json.RawMessage(`{"x":1}`)}, {Name: "b"}},
		Context:   &llm.ContextConfig{MaxMessages: 5, KeepRecent: new(2), CompactModel: "small"},
		Subagents: &Subagents{MaxDepth: new(2), Model: "m", Tools: []string{"read"}, InheritPlugins: new(false), Depth: 1},
		QueueMode: events.QueueAll,
	}
	cases := map[string]Session{
		"bare":   {ID: "s", Model: "gpt"},
		"script": {ID: "s", Model: "script:inline", Script: json.RawMessage(`{"turns":[{"text":"hi"}]}`)},
		"full":   full,
	}
	for name, s := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := FromStored(s.ID, s.Stored(s.Model))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, s) {
				t.Fatalf("FromStored(Stored())\n got %+v\nwant %+v", got, s)
			}
		})
	}
}

// TestFromStoredRefusesForeignJSON: options the store holds that no
// runtime wrote are an error naming the session, not a session with
// options silently dropped.
func TestFromStoredRefusesForeignJSON(t *testing.T) {
	s := Session{ID: "s", Model: "gpt"}
	c := s.Stored("gpt")
	c.Context = json.RawMessage(`[1]`)
	if _, err := FromStored("s", c); err == nil {
		t.Fatal("foreign context options were taken")
	}
	c.Context, c.Subagents = nil, json.RawMessage(`"deep"`)
	if _, err := FromStored("s", c); err == nil {
		t.Fatal("foreign sub-agent options were taken")
	}
}
