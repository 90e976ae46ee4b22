package spec

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/store"
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
		{"script not JSON", Session{Script: json.RawMessage(`{"turns":`)}, "the inline script is not valid JSON"},
		{"plugin config not JSON", Session{Plugins: []plugins.Config{{Name: "a", Config: json.RawMessage(`{`)}}}, `the configuration of plugin "a" is not valid JSON`},
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

// full is a session with every setting the store keeps set.
var full = Session{
	ID: "s", Model: "gpt", System: "be \"brief\" <b>\n", Tools: []string{"read", "grep"}, User: "alice",
	Script:    json.RawMessage(`{"turns":[{"text":"hi"}]}`),
	Plugins:   []plugins.Config{{Name: "a", Config: json.RawMessage(`{"x":1.50}`)}, {Name: "b"}},
	Context:   &llm.ContextConfig{MaxMessages: 5, KeepRecent: new(2), CompactModel: "small"},
	Subagents: &Subagents{MaxDepth: new(2), Model: "m", Tools: []string{"read"}, InheritPlugins: new(false), Depth: 1},
	QueueMode: events.QueueAll,
}

// TestStoredRoundTrip: what the store keeps — the model and the user as
// its own fields, the rest as one JSON object with a key for each setting
// that is set — gives back the session it was made from, setting by
// setting, with the model's resolved name.
func TestStoredRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		s    Session
		spec string // the JSON object stored, "" for none
	}{
		{"bare", Session{ID: "s", Model: "gpt"}, ""},
		{"user", Session{ID: "s", Model: "gpt", User: "alice"}, ""},
		{"script", Session{ID: "s", Model: "script:inline", Script: json.RawMessage(`{"turns":[{"text":"hi"}]}`)},
			`{"script":{"turns":[{"text":"hi"}]}}`},
		{"system", Session{ID: "s", Model: "gpt", System: "be brief"}, `{"system":"be brief"}`},
		{"tools", Session{ID: "s", Model: "gpt", Tools: []string{"read", "mcp:fs"}}, `{"tools":["read","mcp:fs"]}`},
		{"plugins", Session{ID: "s", Model: "gpt", Plugins: []plugins.Config{{Name: "a", Config: json.RawMessage(`{"x":1}`)}, {Name: "b"}}},
			`{"plugins":[{"name":"a","config":{"x":1}},{"name":"b"}]}`},
		{"context", Session{ID: "s", Model: "gpt", Context: &llm.ContextConfig{MaxTokens: 100, KeepRecent: new(0)}},
			`{"context":{"max_tokens":100,"keep_recent":0}}`},
		{"context with defaults only", Session{ID: "s", Model: "gpt", Context: &llm.ContextConfig{}}, `{"context":{}}`},
		{"subagents", Session{ID: "s", Model: "gpt", Subagents: &Subagents{Depth: 1}}, `{"subagents":{"depth":1}}`},
		{"subagents with defaults only", Session{ID: "s", Model: "gpt", Subagents: &Subagents{}}, `{"subagents":{}}`},
		{"queue mode", Session{ID: "s", Model: "gpt", QueueMode: events.QueueAll}, `{"queue_mode":"all"}`},
		{"full", full, `{"script":{"turns":[{"text":"hi"}]},"system":"be \"brief\" \u003cb\u003e\n","tools":["read","grep"],` +
			`"plugins":[{"name":"a","config":{"x":1.50}},{"name":"b"}],"context":{"max_messages":5,"keep_recent":2,"compact_model":"small"},` +
			`"subagents":{"max_depth":2,"model":"m","tools":["read"],"inherit_plugins":false,"depth":1},"queue_mode":"all"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.s.Stored("resolved")
			if c.Model != "resolved" || c.User != tc.s.User || string(c.Spec) != tc.spec {
				t.Fatalf("Stored = %+v (spec %s), want model resolved, user %q, spec %s", c, c.Spec, tc.s.User, tc.spec)
			}
			if err := c.Validate(); err != nil {
				t.Fatalf("the store refuses it: %v", err)
			}
			got, err := FromStored(tc.s.ID, c)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.s
			want.Model = "resolved"
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("FromStored(Stored())\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

// TestFromStoredShapes: the stored objects spec itself never writes —
// none, empty, and the rows migration 0008 made from the older columns,
// with null, "" and [] for the settings they did not have (SQLite's
// json_object, PostgreSQL's json_build_object spacing) — read as the
// settings they hold, the rest unset.
func TestFromStoredShapes(t *testing.T) {
	bare := Session{ID: "s", Model: "gpt", User: "alice"}
	cases := []struct {
		name string
		spec string
		want Session
	}{
		{"none", "", bare},
		{"empty object", `{}`, bare},
		{"all null", `{"script":null,"system":null,"tools":null,"plugins":null,"context":null,"subagents":null,"queue_mode":null}`, bare},
		{"migrated from defaults (SQLite)", `{"script":null,"system":"","tools":[],"plugins":null,"context":null,"subagents":null,"queue_mode":""}`, bare},
		{"migrated from defaults (PostgreSQL)",
			`{"script" : null, "system" : "", "tools" : [], "plugins" : null, "context" : null, "subagents" : null, "queue_mode" : ""}`, bare},
		{"migrated with every setting (PostgreSQL)",
			`{"script" : {"turns":[{"text":"hi"}]}, "system" : "be \"brief\" <b>\n", "tools" : ["read","grep"], ` +
				`"plugins" : [{"name":"a","config":{"x":1.50}},{"name":"b"}], ` +
				`"context" : {"max_messages":5,"keep_recent":2,"compact_model":"small"}, ` +
				`"subagents" : {"max_depth":2,"model":"m","tools":["read"],"inherit_plugins":false,"depth":1}, "queue_mode" : "all"}`,
			full},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FromStored("s", store.Config{Model: tc.want.Model, User: tc.want.User, Spec: json.RawMessage(tc.spec)})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("FromStored(%s)\n got %+v\nwant %+v", tc.spec, got, tc.want)
			}
		})
	}
}

// TestFromStoredRefusesForeignJSON: settings the store holds that no
// runtime wrote are an error naming the session, not a session with
// settings silently dropped.
func TestFromStoredRefusesForeignJSON(t *testing.T) {
	for _, spec := range []string{`[1]`, `"x"`, `{"context":[1]}`, `{"subagents":"deep"}`, `{"tools":"read"}`, `{"plugins":{"name":"a"}}`, `{`} {
		_, err := FromStored("s1", store.Config{Model: "gpt", Spec: json.RawMessage(spec)})
		if err == nil || !strings.Contains(err.Error(), "stored settings of s1") {
			t.Errorf("FromStored(%s) = %v, want an error naming s1", spec, err)
		}
	}
}

// TestStoredRawNotJSON: a session whose raw JSON is not JSON (Validate
// refuses it) is stored as settings the store refuses, not with the
// settings dropped.
func TestStoredRawNotJSON(t *testing.T) {
	for _, s := range []Session{
		{Script: json.RawMessage(`{"turns":`)},
		{Plugins: []plugins.Config{{Name: "a", Config: json.RawMessage(`{`)}}},
	} {
		if s.Validate() == nil {
			t.Errorf("Validate(%+v) = nil", s)
		}
		c := s.Stored("gpt")
		if err := c.Validate(); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("the store's Validate of %s = %v, want ErrInvalid", c.Spec, err)
		}
	}
}

// TestExport: an export's config is the create_session object: the model
// unless there is an inline script, the settings under create_session's
// keys, sub-agent options without the session's own depth (and none when
// that was all they said).
func TestExport(t *testing.T) {
	cases := []struct {
		name string
		s    Session
		want string
	}{
		{"bare", Session{ID: "s", Model: "gpt", User: "alice"}, `{"model":"gpt"}`},
		{"script for model", Session{Model: "script:inline", Script: json.RawMessage(`{"turns":[]}`)}, `{"script":{"turns":[]}}`},
		{"depth only", Session{Model: "gpt", Subagents: &Subagents{Depth: 2}}, `{"model":"gpt"}`},
		{"full", full, `{"script":{"turns":[{"text":"hi"}]},"system":"be \"brief\" \u003cb\u003e\n","tools":["read","grep"],` +
			`"plugins":[{"name":"a","config":{"x":1.50}},{"name":"b"}],"context":{"max_messages":5,"keep_recent":2,"compact_model":"small"},` +
			`"subagents":{"max_depth":2,"model":"m","tools":["read"],"inherit_plugins":false},"queue_mode":"all"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(tc.s.Export()); got != tc.want {
				t.Fatalf("Export() = %s, want %s", got, tc.want)
			}
			if tc.s.Subagents != nil && tc.s.Subagents.Depth == 0 {
				t.Fatal("Export changed the session's depth")
			}
		})
	}
}
