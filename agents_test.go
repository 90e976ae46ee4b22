package tack_test

import (
	"encoding/json"
	"reflect"
	"testing"

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
		want tack.SessionConfig // as the store keeps it
	}{
		{"the template", tack.SessionConfig{Agent: "researcher"},
			tack.SessionConfig{Model: "script:demo", System: "Be careful.", Tools: []string{"echo"},
				Plugins: []plugins.Config{{Name: "ask_user"}}, Context: &llm.ContextConfig{MaxMessages: 40}}},
		{"fields given replace the agent's", tack.SessionConfig{Agent: "researcher", Model: "local/good", System: "Be quick.", Tools: []string{}},
			tack.SessionConfig{Model: "local/good", System: "Be quick.", // an empty list replaces the agent's tools
				Plugins: []plugins.Config{{Name: "ask_user"}}, Context: &llm.ContextConfig{MaxMessages: 40}}},
		{"an inline script replaces the agent's model", tack.SessionConfig{Agent: "writer", Script: json.RawMessage(`{"turns":[{"text":"hi"}]}`)},
			tack.SessionConfig{Model: "script:inline", Tools: []string{"shell"}, Script: json.RawMessage(`{"turns":[{"text":"hi"}]}`)}},
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
