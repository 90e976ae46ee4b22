package tack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/llm/script"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/plugins/askuser"
	"github.com/tack-run/tack/policy"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/memory"
)

// configured resolves "local/<name>" (and "<name>" alone) for the names
// it holds, as a configuration would: a scripted answer under the
// configured name.
type configured []string

func (c configured) Resolve(name string, inline json.RawMessage) (*llm.Model, error) {
	bare := strings.TrimPrefix(name, "local/")
	if len(inline) > 0 || !strings.Contains(strings.Join(c, " "), bare) || bare == "" {
		return nil, &llm.UnknownModelError{Name: name}
	}
	return &llm.Model{Name: "local/" + bare, ID: bare, Provider: script.New(&script.Script{
		Turns: []script.Turn{{Text: "from " + bare}}, WhenExhausted: script.RepeatLast})}, nil
}

// shellScript calls shell, then says done: the tool result tells whether
// the session had shell, and which tools it had.
const shellScript = `{"turns":[{"tool_calls":[{"name":"shell","args":{"command":"echo pwned"}}]},{"text":"done"}]}`

// grantsPolicy: everyone gets local/good, echo and subagent and scripts;
// alice every tool; carol no scripts; dave only echo.
func grantsPolicy() *policy.Policy {
	no := false
	return &policy.Policy{Grants: policy.Grants{
		"*":     {Models: []string{"local/good"}, Tools: []string{"echo", "subagent", "ask_user"}},
		"alice": {Tools: []string{"*"}},
		"carol": {Scripts: &no},
		"dave":  {Tools: []string{"echo"}},
	}}
}

func grantsRuntime(t *testing.T, p *policy.Policy, more ...tack.Option) *tack.Runtime {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "shell.json"), []byte(shellScript), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := append([]tack.Option{tack.WithPolicy(p), tack.WithScriptDir(dir), tack.WithModels(configured{"good", "bad"}),
		tack.WithPlugins(askuser.Name, askuser.New)}, more...)
	rt, err := tack.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	return rt
}

// lastTool runs a prompt to its end and returns the last tool result.
func lastTool(t *testing.T, s *tack.Session) string {
	t.Helper()
	ctx := t.Context()
	sub, err := s.Subscribe(ctx, tack.SubscribeOptions{Types: []string{"agent_end"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if _, err := s.Prompt(ctx, "go"); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(10 * time.Second) // a call that waits for a person never ends
	for ended := false; !ended; {
		select {
		case ev := <-sub.C: // a restored session's feed starts with events_lost
			ended = ev.GetAgentEnd() != nil
		case <-timeout:
			t.Fatal("the run did not end in 10 s")
		}
	}
	msgs, err := s.Messages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleTool {
			return msgs[i].Content
		}
	}
	return ""
}

// TestScriptedSessionBringsShellOnlyWhenGranted: the review's finding —
// any user's one-turn script ran shell on the host. Now a scripted
// session brings the demo tools, and shell only to a user granted it;
// without a policy (tack rpc, chat, demo) it still brings shell.
func TestScriptedSessionBringsShellOnlyWhenGranted(t *testing.T) {
	const without = `unknown tool "shell"; available tools: echo, sleep, sleep_immune, sleep_stubborn`
	for _, tc := range []struct {
		name   string
		policy *policy.Policy
		cfg    tack.SessionConfig
		want   string
	}{
		{"bob's inline script", grantsPolicy(), tack.SessionConfig{User: "bob", Script: json.RawMessage(shellScript)}, without},
		{"bob's script file", grantsPolicy(), tack.SessionConfig{User: "bob", Model: "script:shell.json"}, without},
		{"bob with no grants at all", &policy.Policy{}, tack.SessionConfig{User: "bob", Script: json.RawMessage(shellScript)}, without},
		{"dave, granted echo alone, keeps the demo tools", grantsPolicy(), tack.SessionConfig{User: "dave", Script: json.RawMessage(shellScript)}, without},
		{"alice, granted every tool", grantsPolicy(), tack.SessionConfig{User: "alice", Script: json.RawMessage(shellScript)}, "pwned\n"},
		{"no policy: one local user", nil, tack.SessionConfig{Script: json.RawMessage(shellScript)}, "pwned\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := grantsRuntime(t, tc.policy)
			s, err := rt.Spawn(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := lastTool(t, s); got != tc.want {
				t.Fatalf("the shell call's result: %q, want %q", got, tc.want)
			}
		})
	}
}

// TestForbiddenAtCreate: every name create_session takes is checked
// against the owner's grant, and the error names what is not granted.
func TestForbiddenAtCreate(t *testing.T) {
	rt := grantsRuntime(t, grantsPolicy())
	inline := json.RawMessage(`{"turns":[{"text":"hi"}]}`)
	for _, tc := range []struct {
		name string
		cfg  tack.SessionConfig
		err  string // "" succeeds
	}{
		{"a granted model by its full name", tack.SessionConfig{User: "bob", Model: "local/good"}, ""},
		{"a granted model by its bare name", tack.SessionConfig{User: "bob", Model: "good"}, ""},
		{"a model not granted", tack.SessionConfig{User: "bob", Model: "local/bad"}, `forbidden: the model "local/bad" is not granted to bob`},
		{"a model not granted by its bare name", tack.SessionConfig{User: "bob", Model: "bad"}, `forbidden: the model "local/bad" is not granted to bob`},
		{"an unknown model not granted", tack.SessionConfig{User: "bob", Model: "local/none"}, `forbidden: the model "local/none" is not granted to bob`},
		{"a granted tool", tack.SessionConfig{User: "bob", Model: "local/good", Tools: []string{"echo"}}, ""},
		{"shell", tack.SessionConfig{User: "bob", Model: "local/good", Tools: []string{"echo", "shell"}}, `forbidden: the tool "shell" is not granted to bob`},
		{"shell with a script", tack.SessionConfig{User: "bob", Script: inline, Tools: []string{"shell"}}, `forbidden: the tool "shell" is not granted to bob`},
		{"a demo tool by name with a script", tack.SessionConfig{User: "dave", Script: inline, Tools: []string{"sleep"}}, ""},
		{"a demo tool by name without one", tack.SessionConfig{User: "dave", Model: "local/good", Tools: []string{"sleep"}}, `forbidden: the tool "sleep" is not granted to dave`},
		{"an MCP tool", tack.SessionConfig{User: "bob", Model: "local/good", Tools: []string{"mcp:fs"}}, `forbidden: the tool "mcp:fs" is not granted to bob`},
		{"every tool for alice", tack.SessionConfig{User: "alice", Model: "local/good", Tools: []string{"shell", "sleep"}}, ""},
		{"a plugin's tool", tack.SessionConfig{User: "bob", Model: "local/good", Plugins: []plugins.Config{{Name: askuser.Name}}}, ""},
		{"a plugin's tool not granted", tack.SessionConfig{User: "dave", Model: "local/good", Plugins: []plugins.Config{{Name: askuser.Name}}}, `forbidden: the tool "ask_user" is not granted to dave`},
		{"scripts for carol", tack.SessionConfig{User: "carol", Model: "script:demo"}, `forbidden: the scripted model "script:demo" is not granted to carol`},
		{"an inline script for carol", tack.SessionConfig{User: "carol", Script: inline}, `forbidden: an inline script is not granted to carol`},
		{"a script file carol may not read either", tack.SessionConfig{User: "carol", Model: "script:/etc/passwd"}, `forbidden: the scripted model "script:/etc/passwd" is not granted to carol`},
		{"sub-agents' tools", tack.SessionConfig{User: "bob", Model: "local/good", Tools: []string{"subagent"},
			Subagents: &tack.SubagentConfig{Tools: []string{"shell"}}}, `forbidden: the tool "shell" is not granted to bob`},
		{"sub-agents' model", tack.SessionConfig{User: "bob", Model: "local/good", Subagents: &tack.SubagentConfig{Model: "local/bad"}},
			`forbidden: the model "local/bad" is not granted to bob`},
		{"the compaction model", tack.SessionConfig{User: "bob", Model: "local/good", Context: &llm.ContextConfig{CompactModel: "local/bad"}},
			`forbidden: the model "local/bad" is not granted to bob`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := rt.Spawn(tc.cfg)
			if tc.err == "" {
				if err != nil {
					t.Fatalf("Spawn: %v", err)
				}
				s.Close()
				return
			}
			if err == nil || err.Error() != tc.err || tack.Code(err) != "forbidden" {
				t.Fatalf("Spawn = %v, want %q", err, tc.err)
			}
		})
	}
}

// TestForbiddenOnALiveSession: switch_model and attach_tools meet the
// owner's grant, whoever sends them (the session's owner is what counts).
func TestForbiddenOnALiveSession(t *testing.T) {
	rt := grantsRuntime(t, grantsPolicy())
	ctx := t.Context()
	s, err := rt.Spawn(tack.SessionConfig{ID: "b", User: "bob", Model: "local/good"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		do   func() error
		err  string
	}{
		{"switch to a granted model", func() error { return s.SwitchModel(ctx, "good") }, ""},
		{"switch to a model not granted", func() error { return s.SwitchModel(ctx, "local/bad") }, `forbidden: the model "local/bad" is not granted to bob`},
		{"switch to a script", func() error { return s.SwitchModel(ctx, "script:demo") }, ""},
		{"attach a granted tool", func() error { return s.AttachTools(ctx, "echo") }, ""},
		{"attach shell", func() error { return s.AttachTools(ctx, "echo", "shell") }, `forbidden: the tool "shell" is not granted to bob`},
		{"attach a demo tool", func() error { return s.AttachTools(ctx, "sleep") }, `forbidden: the tool "sleep" is not granted to bob`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do()
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || err.Error() != tc.err) {
				t.Fatalf("got %v, want %q", err, tc.err)
			}
		})
	}
	// Carol may not switch to a script.
	c, err := rt.Spawn(tack.SessionConfig{User: "carol", Model: "local/good"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SwitchModel(ctx, "script:demo"); err == nil || tack.Code(err) != "forbidden" {
		t.Fatalf("carol switches to a script: %v", err)
	}
}

// TestSubagentCallMeetsTheGrant: a sub-agent call inside a run is no
// request, so what it names beyond the grant fails the call: its result
// says why, and the run goes on.
func TestSubagentCallMeetsTheGrant(t *testing.T) {
	for _, tc := range []struct{ name, args, want string }{
		{"a model", `{"task":"t","model":"local/bad"}`, `sub-agent p/sub-1: forbidden: the model "local/bad" is not granted to bob`},
		{"a granted model", `{"task":"t","model":"local/good"}`, `from good`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := grantsRuntime(t, grantsPolicy())
			parent := fmt.Sprintf(`{"turns":[{"tool_calls":[{"name":"subagent","args":%s}]},{"text":"done"}]}`, tc.args)
			s, err := rt.Spawn(tack.SessionConfig{ID: "p", User: "bob", Script: json.RawMessage(parent), Tools: []string{"subagent"},
				Subagents: &tack.SubagentConfig{Tools: []string{"subagent", "echo"}}})
			if err != nil {
				t.Fatal(err)
			}
			if got := lastTool(t, s); got != tc.want {
				t.Fatalf("the call's result: %q, want %q", got, tc.want)
			}
		})
	}
}

// TestRestoreDropsWhatIsNoLongerGranted: a session made with a tool —
// configured (shell) or brought by a plugin (ask_user) — restored after
// its owner lost it, comes back without it.
func TestRestoreDropsWhatIsNoLongerGranted(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   tack.SessionConfig
		after *policy.Policy
		want  string
	}{
		{"configured", tack.SessionConfig{Script: json.RawMessage(shellScript), Tools: []string{"shell"}},
			&policy.Policy{}, `unknown tool "shell"; available tools: echo, sleep, sleep_immune, sleep_stubborn`},
		{"brought by a plugin", tack.SessionConfig{Plugins: []plugins.Config{{Name: askuser.Name}},
			Script: json.RawMessage(`{"turns":[{"tool_calls":[{"name":"ask_user","args":{"question":"q"}}]},{"text":"done"}]}`)},
			&policy.Policy{Grants: policy.Grants{"*": {Tools: []string{"echo"}}}}, `unknown tool "ask_user"; available tools: echo, sleep, sleep_immune, sleep_stubborn`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.New()
			before, err := tack.New(tack.WithPolicy(&policy.Policy{Grants: policy.Grants{"bob": {Tools: []string{"*"}}}}), tack.WithStore(mem), tack.WithNode("n"),
				tack.WithPlugins(askuser.Name, askuser.New))
			if err != nil {
				t.Fatal(err)
			}
			cfg := tc.cfg
			cfg.ID, cfg.User = "s", "bob"
			if _, err := before.Spawn(cfg); err != nil {
				t.Fatal(err)
			}
			before.Close()
			after := grantsRuntime(t, tc.after, tack.WithStore(mem), tack.WithNode("n"))
			s, err := after.Session("s")
			if err != nil {
				t.Fatal(err)
			}
			if got := lastTool(t, s); got != tc.want {
				t.Fatalf("the restored session's call: %q, want %q", got, tc.want)
			}
		})
	}
}

// TestScriptPathsStayInTheScriptDir: script:<path> reads files inside the
// script directory only, and an error never shows a file's content.
func TestScriptPathsStayInTheScriptDir(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "scripts")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "x.json"), []byte(`{"turns":[{"text":"outside"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	rt, err := tack.New(tack.WithPolicy(&policy.Policy{}), tack.WithScriptDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	const outside = "script: a script path must be relative and stay inside the script directory"
	for _, model := range []string{"script:/etc/passwd", "script:../x.json", "script:" + filepath.Join(root, "x.json")} {
		_, err := rt.Spawn(tack.SessionConfig{User: "bob", Model: model})
		if want := fmt.Sprintf("unknown_model: unknown model %q: %s", model, outside); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", model, err, want)
		}
	}
}

// elsewhere is a cluster whose members take what they are sent: it
// records the sessions created and the commands sent.
type elsewhere struct {
	created []string
	sent    []string
}

func (e *elsewhere) Create(_ context.Context, cfg tack.SessionConfig) (string, error) {
	e.created = append(e.created, cfg.ID)
	return cfg.ID, nil
}

func (e *elsewhere) Request(_ context.Context, id string, cmd proto.Message) (*eventsv1.Reply, error) {
	e.sent = append(e.sent, id+":"+string(cmd.ProtoReflect().Descriptor().Name()))
	return &eventsv1.Reply{}, nil
}

func (e *elsewhere) Follow(string, string, uint64, []string, func(*eventsv1.Event)) (func(), error) {
	return func() {}, nil
}

// TestGrantsOfAClusterFrontEnd: a runtime whose sessions live elsewhere
// checks names before sending them; its members have no policy, so a
// scripted session (which would bring shell there) needs shell granted.
func TestGrantsOfAClusterFrontEnd(t *testing.T) {
	ctx := t.Context()
	mem := memory.New()
	if err := mem.Create(ctx, "b", store.Config{User: "bob", Model: "local/good"}); err != nil {
		t.Fatal(err)
	}
	cluster := &elsewhere{}
	rt := grantsRuntime(t, grantsPolicy(), tack.WithStore(mem), tack.WithSessionsElsewhere(cluster))
	for _, tc := range []struct {
		name string
		cfg  tack.SessionConfig
		err  string
	}{
		{"bob's script", tack.SessionConfig{ID: "s1", User: "bob", Model: "script:demo"},
			"forbidden: a scripted session in a cluster (its members give it shell) is not granted to bob"},
		{"bob's shell", tack.SessionConfig{ID: "s2", User: "bob", Model: "local/good", Tools: []string{"shell"}},
			`forbidden: the tool "shell" is not granted to bob`},
		{"bob's model", tack.SessionConfig{ID: "s3", User: "bob", Model: "local/bad"}, `forbidden: the model "local/bad" is not granted to bob`},
		{"bob's granted model", tack.SessionConfig{ID: "s4", User: "bob", Model: "local/good", Tools: []string{"echo"}}, ""},
		{"alice's script", tack.SessionConfig{ID: "s5", User: "alice", Script: json.RawMessage(shellScript)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rt.Spawn(tc.cfg)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || err.Error() != tc.err) {
				t.Fatalf("Spawn = %v, want %q", err, tc.err)
			}
		})
	}
	s, err := rt.Session("b")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AttachTools(ctx, "shell"); err == nil || err.Error() != `forbidden: the tool "shell" is not granted to bob` {
		t.Fatalf("attach shell: %v", err)
	}
	if err := s.SwitchModel(ctx, "local/bad"); err == nil || tack.Code(err) != "forbidden" {
		t.Fatalf("switch: %v", err)
	}
	if err := s.AttachTools(ctx, "echo"); err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(cluster.created, cluster.sent), "[s4 s5] [b:AttachTools]"; got != want {
		t.Fatalf("what reached the members: %s, want %s", got, want)
	}
}
