package actors

import (
	"slices"
	"strings"
	"testing"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/spec"
	"github.com/tack-run/tack/tools"
	"github.com/tack-run/tack/tools/builtin"
)

// toolsHarness starts a session on scriptJSON with the tools named and
// own, in a runtime whose catalog holds the demo tools and todo_write; it
// records the requests sent.
func toolsHarness(t *testing.T, scriptJSON string, own []tools.Tool, names ...string) (*harness, *sentRequests) {
	t.Helper()
	catalog, err := tools.NewCatalog(append(builtin.Demo(), builtin.TodoWrite())...)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range own {
		names = append(names, o.Spec().Name)
	}
	set, err := ToolSet(catalog, names, own)
	if err != nil {
		t.Fatal(err)
	}
	sent := &sentRequests{}
	model := scriptModel(t, "", scriptJSON)
	model.Provider = &checkedProvider{Provider: model.Provider, sent: sent}
	sys := newSystem(t)
	return spawnSpec(t, sys, newPlace(sys, &Env{Tools: catalog}, nil), Spec{ID: "s1", Model: model, Tools: set, Stored: &spec.Session{System: "be brief"}}), sent
}

// offered lists the tool names of each request sent.
func offered(sent *sentRequests) [][]string {
	sent.mu.Lock()
	defer sent.mu.Unlock()
	var out [][]string
	for _, r := range sent.reqs {
		var names []string
		for _, ts := range r.Tools {
			names = append(names, ts.Name)
		}
		out = append(out, names)
	}
	return out
}

// toolsUpdated lists the tools_updated events as "+attached -detached".
func toolsUpdated(evs []*eventsv1.Event) []string {
	var out []string
	for _, ev := range findAll(evs, "tools_updated") {
		u := ev.GetToolsUpdated()
		out = append(out, "+"+strings.Join(u.Attached, ",")+" -"+strings.Join(u.Detached, ","))
	}
	return out
}

// TestToolsChangeMidRun: tools attached and detached while a batch runs
// are what the run's next request offers; the model's call to the
// detached tool gets tool_call_unknown and an error result listing the
// tools there are, and the run goes on.
func TestToolsChangeMidRun(t *testing.T) {
	g := newGate()
	h, sent := toolsHarness(t, `{"turns":[
		{"tool_calls":[{"name":"hold"}]},
		{"tool_calls":[{"name":"echo","args":{"text":"x"}}]},
		{"text":"done"}]}`, []tools.Tool{holdTool("hold", tools.Killable, g)}, "echo")
	h.ok(&eventsv1.Prompt{Text: "go"})
	h.waitFor("tool_execution_start", 1)
	mark := h.rec.Len()
	h.ok(&eventsv1.DetachTools{Names: []string{"echo"}})
	h.ok(&eventsv1.AttachTools{Names: []string{"todo_write"}})
	g.open()
	h.waitFor("agent_end", 1)

	toolCall := one("state_changed", "message_start", "response_complete", "message_committed", "token_usage", "tool_calls", "state_changed", "agent_status")
	h.expect(seq(one("session_created"), runStart, toolCall, one("tool_execution_start", "tools_updated", "tools_updated",
		"tool_execution_end", "tool_execution_metrics", "message_committed", "turn_end"),
		nextTurn, toolCall, one("tool_call_unknown", "message_committed", "turn_end"),
		nextTurn, answer, runEnd)...)
	if got := toolsUpdated(h.since(mark)); !slices.Equal(got, []string{"+ -echo", "+todo_write -"}) {
		t.Fatalf("tools_updated %q", got)
	}
	want := [][]string{{"echo", "hold"}, {"hold", "todo_write"}, {"hold", "todo_write"}}
	if got := offered(sent); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("requests offered %q, want %q", got, want)
	}
	if u := findAll(h.rec.Events(), "tool_call_unknown")[0].GetToolCallUnknown(); u.Name != "echo" {
		t.Fatalf("tool_call_unknown %v", u)
	}
	msgs := h.history()
	if r := msgs[4]; r.Role != "tool" || !r.IsError || r.Content != `unknown tool "echo"; available tools: hold, todo_write` {
		t.Fatalf("result of the detached tool's call: %v", r)
	}
	if got := contents(msgs[5:]); !slices.Equal(got, []string{"assistant:done"}) {
		t.Fatalf("the run did not go on: %q", got)
	}
}

// TestToolsChangeBadInput: unknown names, names the session does not
// have and no names change nothing and tell nothing; names already
// attached (or given twice) change nothing but are answered, and
// tools_updated says nothing changed.
func TestToolsChangeBadInput(t *testing.T) {
	h, _ := toolsHarness(t, `{"turns":[{"text":"ok"}]}`, nil, "echo")
	for _, c := range []struct {
		cmd        any
		code, text string
	}{
		{&eventsv1.AttachTools{Names: []string{"grep", "sleep", "nope"}}, "unknown_tool", `unknown tool "grep", "nope"; nothing was changed`},
		{&eventsv1.DetachTools{Names: []string{"echo", "sleep"}}, "unknown_tool", `the session has no tool "sleep"; nothing was changed`},
		{&eventsv1.AttachTools{}, "bad_request", `attach_tools needs at least one name in "names"`},
		{&eventsv1.DetachTools{Names: []string{}}, "bad_request", `detach_tools needs at least one name in "names"`},
	} {
		r := h.send(c.cmd)
		if r.GetError().GetCode() != c.code || r.GetError().GetMessage() != c.text {
			t.Errorf("%T%v: %v; want %s %q", c.cmd, c.cmd, r.GetError(), c.code, c.text)
		}
	}
	h.ok(&eventsv1.AttachTools{Names: []string{"echo", "sleep", "sleep"}})
	h.ok(&eventsv1.AttachTools{Names: []string{"echo"}})
	h.ok(&eventsv1.DetachTools{Names: []string{"sleep", "sleep"}})
	h.waitFor("tools_updated", 3)
	h.expect("session_created", "tools_updated", "tools_updated", "tools_updated")
	if got := toolsUpdated(h.rec.Events()); !slices.Equal(got, []string{"+sleep -", "+ -", "+ -sleep"}) {
		t.Fatalf("tools_updated %q", got)
	}
	if u := h.rec.Events()[2].GetToolsUpdated(); u.Attached == nil || u.Detached == nil {
		t.Fatal("tools_updated lists must be [] rather than absent")
	}
}

// TestHeldCallOfADetachedTool: a call held for approval whose tool is
// detached meanwhile is answered, once approved, with an error result
// saying so, and the run goes on.
func TestHeldCallOfADetachedTool(t *testing.T) {
	catalog, err := tools.NewCatalog(builtin.Demo()...)
	if err != nil {
		t.Fatal(err)
	}
	model := scriptModel(t, "", `{"turns":[{"tool_calls":[{"name":"echo","args":{"text":"x"}}]},{"text":"done"}]}`)
	sys := newSystem(t)
	h := spawnSpec(t, sys, newPlace(sys, &Env{Tools: catalog}, nil), Spec{ID: "s1", Model: model, Tools: demoSet(t),
		Plugins: []plugins.Plugin{&oncePlugin{hook: plugins.BeforeTool, act: plugins.Action{Kind: plugins.HoldForApproval}}}})
	h.ok(&eventsv1.Prompt{Text: "go"})
	ap := h.waitFor("approval_required", 1).GetApprovalRequired()
	h.ok(&eventsv1.DetachTools{Names: []string{"echo"}})
	h.ok(&eventsv1.Approve{ApprovalId: ap.ApprovalId})
	h.waitFor("agent_end", 1)
	end := findAll(h.rec.Events(), "tool_execution_end")[0].GetToolExecutionEnd()
	if end.Ok || end.Result != `tool "echo" was detached before the call could run` {
		t.Fatalf("tool_execution_end %v", end)
	}
	if got := contents(h.history()); !slices.Equal(got, []string{"user:go", "assistant:", `tool:tool "echo" was detached before the call could run`, "assistant:done"}) {
		t.Fatalf("history %q", got)
	}
}
