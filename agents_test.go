package tack_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/plugins/askuser"
	"github.com/tack-run/tack/spec"
	"github.com/tack-run/tack/store/memory"
)

// testAgents: a scripted researcher with a system prompt, tools, a plugin
// and context options, and a writer on a configured model that holds shell.
func testAgents() map[string]tack.Agent {
	return map[string]tack.Agent{
		"researcher": {Description: "Finds things out.", Model: "script:demo", System: "Be careful.", Tools: []string{"echo"},
			Plugins: []plugins.Config{{Name: askuser.Name}}, Context: &llm.ContextConfig{MaxMessages: 40}},
		"writer": {Description: "Writes.", Model: "local/good", Tools: []string{"shell"}},
	}
}

// TestAgentTemplate: a session made with an agent starts from its
// template, and each field the configuration gives replaces the agent's.
func TestAgentTemplate(t *testing.T) {
	st := memory.New()
	rt, err := tack.New(tack.WithStore(st), tack.WithAgents(testAgents(), ""), tack.WithModels(configured{"good"}),
		tack.WithPlugins(askuser.Name, askuser.New))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	for _, tc := range []struct {
		name string
		cfg  tack.SessionConfig
		want tack.SessionConfig // as the store keeps it, with the agent's name
	}{
		{"the template", tack.SessionConfig{Agent: "researcher"},
			tack.SessionConfig{Model: "script:demo", System: "Be careful.", Tools: []string{"echo"},
				Plugins: []plugins.Config{{Name: "ask_user"}}, Context: &llm.ContextConfig{MaxMessages: 40}, Agent: "researcher"}},
		{"fields given replace the agent's", tack.SessionConfig{Agent: "researcher", Model: "local/good", System: "Be quick.", Tools: []string{}},
			tack.SessionConfig{Model: "local/good", System: "Be quick.", // an empty list replaces the agent's tools
				Plugins: []plugins.Config{{Name: "ask_user"}}, Context: &llm.ContextConfig{MaxMessages: 40}, Agent: "researcher"}},
		{"an inline script replaces the agent's model", tack.SessionConfig{Agent: "writer", Script: json.RawMessage(`{"turns":[{"text":"hi"}]}`)},
			tack.SessionConfig{Model: "script:inline", Tools: []string{"shell"}, Script: json.RawMessage(`{"turns":[{"text":"hi"}]}`), Agent: "writer"}},
		{"no agent", tack.SessionConfig{Model: "local/good"}, tack.SessionConfig{Model: "local/good"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := rt.Spawn(tc.cfg)
			if err != nil {
				t.Fatalf("Spawn: %v", err)
			}
			defer s.Close()
			snap, err := st.Get(t.Context(), s.ID())
			if err != nil {
				t.Fatal(err)
			}
			got, err := spec.FromStored(s.ID(), snap.Config)
			tc.want.ID = s.ID()
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("config = %+v, %v; want %+v", got, err, tc.want)
			}
			if a, err := s.Agent(t.Context()); err != nil || a != tc.want.Agent {
				t.Errorf("Agent = %q, %v; want %q", a, err, tc.want.Agent)
			}
		})
	}
	if _, err := rt.Spawn(tack.SessionConfig{Agent: "nobody"}); tack.Code(err) != "bad_request" || err.Error() != `bad_request: unknown agent "nobody" (agents: [researcher writer])` {
		t.Errorf("an unknown agent: %v", err)
	}
}

// TestAgentsMeetTheGrants: an agent that holds what its caller is not
// granted is forbidden naming it, and the caller's catalog leaves it out.
func TestAgentsMeetTheGrants(t *testing.T) {
	rt := grantsRuntime(t, grantsPolicy(), tack.WithAgents(testAgents(), "writer"))
	for _, tc := range []struct {
		user, agent, err string
	}{
		{"bob", "researcher", ""},
		{"bob", "writer", `forbidden: the tool "shell" is not granted to bob`},
		{"alice", "writer", ""},
		{"carol", "researcher", `forbidden: the scripted model "script:demo" is not granted to carol`},
		{"dave", "researcher", `forbidden: the tool "ask_user" is not granted to dave`},
	} {
		t.Run(tc.user+" "+tc.agent, func(t *testing.T) {
			s, err := rt.Spawn(tack.SessionConfig{User: tc.user, Agent: tc.agent})
			if tc.err == "" {
				if err != nil {
					t.Fatalf("Spawn: %v", err)
				}
				s.Close()
			} else if err == nil || err.Error() != tc.err {
				t.Fatalf("Spawn = %v, want %q", err, tc.err)
			}
		})
	}
	for _, tc := range []struct {
		user   string
		agents []string
		def    string
	}{
		{"bob", []string{"researcher"}, ""},
		{"alice", []string{"researcher", "writer"}, "writer"},
		{"carol", []string{"writer"}, ""}, // writer holds shell: carol's grant lacks it
	} {
		c := rt.CatalogOf(tc.user)
		var names []string
		for _, a := range c.Agents {
			names = append(names, a.Name)
		}
		if tc.user == "carol" {
			tc.agents = nil // carol has neither scripts nor shell
		}
		if !reflect.DeepEqual(names, tc.agents) || c.DefaultAgent != tc.def {
			t.Errorf("%s's catalog: agents %v default %q, want %v %q", tc.user, names, c.DefaultAgent, tc.agents, tc.def)
		}
	}
}

// TestDefaultAgent: default_agent, else demo, else the only agent, else
// none; a default that is no agent fails New.
func TestDefaultAgent(t *testing.T) {
	one := tack.Agent{Model: "script:demo"}
	for _, tc := range []struct {
		name   string
		agents map[string]tack.Agent
		def    string
		want   string
		err    string
	}{
		{"named", map[string]tack.Agent{"a": one, "b": one, "demo": one}, "b", "b", ""},
		{"demo", map[string]tack.Agent{"a": one, "demo": one}, "", "demo", ""},
		{"the only one", map[string]tack.Agent{"a": one}, "", "a", ""},
		{"several", map[string]tack.Agent{"a": one, "b": one}, "", "", ""},
		{"none", nil, "", "", ""},
		{"not an agent", map[string]tack.Agent{"a": one}, "b", "", `tack: the default agent "b" is not an agent`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt, err := tack.New(tack.WithAgents(tc.agents, tc.def))
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("New = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			if got := rt.DefaultAgent(); got != tc.want {
				t.Errorf("default = %q, want %q", got, tc.want)
			}
			if got := rt.Catalog().DefaultAgent; got != tc.want {
				t.Errorf("catalog default = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestSessionAgent: a session tells the agent it was made of, kept with
// its configuration, with a store (after a restart too) and without one;
// a session made without an agent, and an imported one (an export's
// config names no agent), are of none; a session that does not exist is
// invalid_session.
func TestSessionAgent(t *testing.T) {
	st := memory.New()
	for _, stored := range []bool{false, true} {
		opts := []tack.Option{tack.WithAgents(testAgents(), ""), tack.WithModels(configured{"good"}), tack.WithPlugins(askuser.Name, askuser.New)}
		if stored {
			opts = append(opts, tack.WithStore(st))
		}
		rt, err := tack.New(opts...)
		if err != nil {
			t.Fatal(err)
		}
		ctx := t.Context()
		made, err := rt.Spawn(tack.SessionConfig{ID: "made", Agent: "researcher"})
		if err != nil {
			t.Fatal(err)
		}
		plain, err := rt.Spawn(tack.SessionConfig{ID: "plain", Model: "local/good"})
		if err != nil {
			t.Fatal(err)
		}
		doc, err := made.Export(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if cfg := string(doc.GetConfig().GetJson()); strings.Contains(cfg, "agent") {
			t.Errorf("the export's config names the agent: %s", cfg)
		}
		var cfg tack.SessionConfig
		if err := json.Unmarshal(doc.GetConfig().GetJson(), &cfg); err != nil {
			t.Fatal(err)
		}
		cfg.ID = "imported"
		imported, err := rt.Import(ctx, cfg, tack.History{})
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			s    *tack.Session
			want string
		}{{made, "researcher"}, {plain, ""}, {imported, ""}} {
			if a, err := tc.s.Agent(ctx); err != nil || a != tc.want {
				t.Errorf("stored %v: the agent of %s = %q, %v; want %q", stored, tc.s.ID(), a, err, tc.want)
			}
		}
		if stored { // after a restart, restored from the store
			rt.Close()
			if rt, err = tack.New(opts...); err != nil {
				t.Fatal(err)
			}
			if made, err = rt.Session("made"); err != nil {
				t.Fatal(err)
			}
			if a, err := made.Agent(ctx); err != nil || a != "researcher" {
				t.Errorf("restored: the agent = %q, %v", a, err)
			}
		}
		if s, err := rt.Session("made"); err != nil {
			t.Fatal(err)
		} else if err := s.Delete(ctx); err != nil {
			t.Fatal(err)
		} else if a, err := s.Agent(ctx); tack.Code(err) != "invalid_session" {
			t.Errorf("a deleted session's agent = %q, %v; want invalid_session", a, err)
		}
		rt.Close()
	}
}

// TestOnDelete: what OnDelete registered is told of each deletion, by
// Delete and by the retention sweep, until it stops; a failed deletion
// tells nothing.
func TestOnDelete(t *testing.T) {
	now := time.Now()
	st := memory.New()
	rt, err := tack.New(tack.WithStore(st), tack.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	var mu sync.Mutex
	var told []string
	stop := rt.OnDelete(func(id string) {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, id)
	})
	for _, id := range []string{"a", "b", "c"} {
		s, err := rt.Spawn(tack.SessionConfig{ID: id, Model: "script:demo"})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	if err := rt.Delete(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	if err := rt.Delete(t.Context(), "nobody"); tack.Code(err) != "invalid_session" {
		t.Fatalf("deleting nobody: %v", err)
	}
	now = now.Add(time.Hour)
	if ids, err := rt.Sweep(t.Context(), time.Minute); err != nil || len(ids) != 2 {
		t.Fatalf("Sweep = %v, %v", ids, err)
	}
	stop()
	s, err := rt.Spawn(tack.SessionConfig{ID: "d", Model: "script:demo"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(t.Context()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(told[1:])
	if !reflect.DeepEqual(told, []string{"a", "b", "c"}) {
		t.Errorf("told %v, want a, b, c", told)
	}
}
