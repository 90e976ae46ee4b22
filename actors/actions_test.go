package actors

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/tools"
)

// oncePlugin answers one hook with one action, the first time only, and
// continues after that (an intervention at before_finish would otherwise
// keep a run going for ever).
type oncePlugin struct {
	hook plugins.Hook
	act  plugins.Action
	done atomic.Bool
}

func (p *oncePlugin) Name() string          { return "once" }
func (p *oncePlugin) Priority() int         { return 100 }
func (p *oncePlugin) Hooks() []plugins.Hook { return []plugins.Hook{p.hook} }
func (p *oncePlugin) Handle(*plugins.Event) []plugins.Action {
	if p.done.Swap(true) {
		return nil
	}
	return []plugins.Action{p.act}
}

// flaky fails its first call and succeeds after.
func flaky() tools.Tool {
	var calls atomic.Int32
	return tools.Define(tools.Spec{Name: "flaky", Description: "fails once", Schema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, json.RawMessage, func(string)) (string, error) {
			if calls.Add(1) == 1 {
				return "", errors.New("first call fails")
			}
			return "worked", nil
		})
}

// otherModel resolves the model plugins switch to.
type otherModel struct{ t *testing.T }

func (r otherModel) Resolve(string, json.RawMessage) (*llm.Model, error) {
	return scriptModel(r.t, "script:other", `{"turns":[{"text":"from the other model"}]}`), nil
}

// actionScript: a turn calling echo (c-1, the first call before_tool
// sees) and flaky (c-2, the call that fails), then plain answers.
const actionScript = `{"turns":[
	{"text":"t1","tool_calls":[{"name":"echo","args":{"text":"orig"}},{"name":"flaky","args":{}}]},
	{"text":"t2"}],"when_exhausted":"repeat_last"}`

// TestEveryActionOfEveryHook drives each hook's every action through a
// session and checks what it does there. before_compact is reserved:
// compaction is not built, so nothing asks it yet.
func TestEveryActionOfEveryHook(t *testing.T) {
	type check func(t *testing.T, h *harness)
	ended := func(reason string) check {
		return func(t *testing.T, h *harness) {
			if got := h.waitFor("agent_end", 1).GetAgentEnd().Reason; got != reason {
				t.Fatalf("agent_end reason %q, want %q", got, reason)
			}
		}
	}
	has := func(name string) check {
		return func(t *testing.T, h *harness) { h.waitFor(name, 1) }
	}
	// result checks the committed result of call callID ("" for whichever
	// call a hook met first: the batch's calls run concurrently).
	result := func(callID, want string) check {
		return func(t *testing.T, h *harness) {
			h.waitFor("agent_end", 1)
			var got []string
			for _, m := range h.history() {
				if m.Role == "tool" && (callID == "" || m.ToolCallId == callID) {
					if strings.Contains(m.Content, want) {
						return
					}
					got = append(got, m.Content)
				}
			}
			t.Fatalf("results %q (call %q): none contains %q", got, callID, want)
		}
	}
	intervened := func(t *testing.T, h *harness) {
		text := h.waitFor("intervention", 1).GetIntervention().Text
		h.waitFor("agent_end", 1)
		for _, m := range h.history() {
			if m.Role == "user" && m.Content == text {
				return
			}
		}
		t.Fatalf("the intervention %q never reached the context", text)
	}
	switched := func(t *testing.T, h *harness) {
		if got := h.waitFor("model_switched", 1).GetModelSwitched().To; got != "script:other" {
			t.Fatalf("switched to %q", got)
		}
	}
	abort := plugins.Action{Kind: plugins.Abort, Reason: "plugin_stop", Text: "a plugin stopped the run"}
	cases := []struct {
		hook  plugins.Hook
		act   plugins.Action
		steer bool // send a steer instead of a prompt
		check check
	}{
		{plugins.SessionStart, abort, false, func(t *testing.T, h *harness) {
			h.fails(&eventsv1.Prompt{Text: "x"}, "not_alive")
		}},
		{plugins.SessionStart, plugins.Action{Kind: plugins.Emit, Name: "hello"}, false, has("plugin_event")},
		{plugins.BeforePrompt, plugins.Action{Kind: plugins.Intervene, Text: "be careful"}, false, intervened},
		{plugins.BeforePrompt, abort, false, has("prompt_rejected")},
		{plugins.BeforePrompt, plugins.Action{Kind: plugins.Skip, Reason: "no"}, false, has("prompt_rejected")},
		{plugins.BeforeSteering, plugins.Action{Kind: plugins.Reject, Reason: "no"}, true, func(t *testing.T, h *harness) {
			if got := h.waitFor("steering_received", 1).GetSteeringReceived().Status; got != "rejected_plugin" {
				t.Fatalf("status %q", got)
			}
		}},
		{plugins.BeforeSteering, plugins.Action{Kind: plugins.Intervene, Text: "mind the steer"}, true, intervened},
		{plugins.BeforeRequest, plugins.Action{Kind: plugins.Intervene, Text: "add this"}, false, intervened},
		{plugins.BeforeRequest, abort, false, ended("plugin_stop")},
		{plugins.BeforeRequest, plugins.Action{Kind: plugins.Skip}, false, ended("skipped")},
		{plugins.BeforeRequest, plugins.Action{Kind: plugins.SwitchModel, Model: "other"}, false, switched},
		{plugins.AfterResponse, plugins.Action{Kind: plugins.Intervene, Text: "look again"}, false, intervened},
		{plugins.AfterResponse, abort, false, ended("plugin_stop")},
		{plugins.AfterResponse, plugins.Action{Kind: plugins.Skip, Reason: "not these"}, false, result("c-2", "skipped by plugin once")},
		{plugins.AfterResponse, plugins.Action{Kind: plugins.SwitchModel, Model: "other"}, false, switched},
		{plugins.BeforeTool, plugins.Action{Kind: plugins.BlockTool, Reason: "not allowed"}, false, result("c-1", "blocked: not allowed")},
		{plugins.BeforeTool, plugins.Action{Kind: plugins.ReplaceToolArgs, Args: json.RawMessage(`{"text":"new"}`)}, false, result("c-1", "new")},
		{plugins.BeforeTool, plugins.Action{Kind: plugins.HoldForApproval, Hint: "flaky"}, false, has("approval_required")},
		{plugins.BeforeTool, plugins.Action{Kind: plugins.Ask, Text: "sure?"}, false, has("ask_user")},
		{plugins.BeforeTool, abort, false, ended("plugin_stop")},
		{plugins.OnToolError, plugins.Action{Kind: plugins.Retry}, false, result("c-2", "worked")},
		{plugins.OnToolError, abort, false, ended("plugin_stop")},
		{plugins.OnToolError, plugins.Action{Kind: plugins.Skip}, false, result("c-2", "first call fails")},
		{plugins.OnToolError, plugins.Action{Kind: plugins.SwitchModel, Model: "other"}, false, switched},
		{plugins.AfterTool, plugins.Action{Kind: plugins.ReplaceToolResult, Result: "replaced"}, false, result("", "replaced")},
		{plugins.AfterTool, plugins.Action{Kind: plugins.Intervene, Text: "note the tool"}, false, intervened},
		{plugins.AfterTool, abort, false, ended("plugin_stop")},
		{plugins.AfterTool, plugins.Action{Kind: plugins.SwitchModel, Model: "other"}, false, switched},
		{plugins.AfterToolBatch, plugins.Action{Kind: plugins.Intervene, Text: "after the batch"}, false, intervened},
		{plugins.AfterToolBatch, abort, false, ended("plugin_stop")},
		{plugins.AfterToolBatch, plugins.Action{Kind: plugins.SwitchModel, Model: "other"}, false, switched},
		{plugins.BeforeFinish, plugins.Action{Kind: plugins.Intervene, Text: "one more thing"}, false, intervened},
		{plugins.BeforeFinish, abort, false, ended("plugin_stop")},
		{plugins.AfterTurn, plugins.Action{Kind: plugins.Emit, Name: "turned"}, false, has("plugin_event")},
		{plugins.SessionEnd, plugins.Action{Kind: plugins.Emit, Name: "bye"}, false, func(t *testing.T, h *harness) {
			h.waitFor("agent_end", 1)
			h.reg.Close("s1")
			h.waitFor("plugin_event", 1)
		}},
	}
	for _, c := range cases {
		t.Run(string(c.hook)+"/"+string(c.act.Kind), func(t *testing.T) {
			sys := newSystem(t)
			h := spawnSpec(t, sys, newPlace(sys, &Env{Models: otherModel{t}}, nil), Spec{ID: "s1",
				Model: scriptModel(t, "", actionScript), Tools: demoSet(t, flaky()),
				Plugins: []plugins.Plugin{&oncePlugin{hook: c.hook, act: c.act}}})
			if c.steer {
				h.send(&eventsv1.Steer{Text: "go"})
			} else {
				h.send(&eventsv1.Prompt{Text: "go"})
			}
			c.check(t, h)
			if errs := eventsOf(h, "error"); len(errs) > 0 && errs[0].GetError().Code == codePluginDisabled {
				t.Fatalf("the plugin was disabled: %v", errs[0])
			}
		})
	}
}
