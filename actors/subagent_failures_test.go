package actors

import (
	"strings"
	"testing"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/spec"
)

// TestSubagentFailures: a call that cannot start, or a child that fails,
// is an error result; the parent's run goes on.
func TestSubagentFailures(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  string
		sub   *spec.Subagents
		child string
		// started: the child was made (subagent_start ... subagent_end).
		started bool
		want    string
	}{
		{name: "unknown tool", args: `{"task":"t","tools":["shell"]}`,
			want: `unknown tool "shell" for a sub-agent; it may have: echo, subagent`},
		{name: "tools past the depth", args: `{"task":"t","tools":["subagent"]}`,
			want: "a sub-agent at depth 1 may not start sub-agents: they nest at most 1 deep"},
		{name: "depth 0", args: `{"task":"t"}`, sub: &spec.Subagents{Model: "child", MaxDepth: new(0)},
			want: "sub-agents nest at most 0 deep, and this session is at depth 0"},
		{name: "unknown model", args: `{"task":"t","model":"nope"}`,
			want: `sub-agent s1/sub-1: unknown_model: no model "nope"`},
		{name: "child model fails", args: `{"task":"t"}`, child: `{"turns":[{"error":{"status":400,"message":"bad request"}}]}`, started: true,
			want: "sub-agent s1/sub-1 ended: error: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			child := tc.child
			if child == "" {
				child = `{"turns":[{"text":"fine"}]}`
			}
			f := newFamily(t, nil, map[string]string{
				"parent": `{"turns":[{"tool_calls":[{"name":"subagent","args":` + tc.args + `}]},{"text":"carried on"}]}`,
				"child":  child,
			})
			sub := tc.sub
			if sub == nil {
				sub = &spec.Subagents{Model: "child"}
			}
			h := f.parent("parent", []string{"subagent", "echo"}, sub)
			h.ok(&eventsv1.Prompt{Text: "go"})
			h.waitFor("agent_end", 1)
			evs := h.rec.Events()
			if got := findType(evs, "subagent_start") != nil; got != tc.started {
				t.Errorf("subagent_start told: %v, want %v", got, tc.started)
			}
			if end := findType(evs, "tool_execution_end").GetToolExecutionEnd(); end.Ok || !strings.HasPrefix(end.Result, tc.want) {
				t.Errorf("result %q (ok %v), want an error starting %q", end.Result, end.Ok, tc.want)
			}
			if got := findType(evs, "agent_end").GetAgentEnd().Reason; got != string(events.EndCompleted) {
				t.Errorf("the parent's run ended %s", got)
			}
			if got := contents(h.history()); got[len(got)-1] != "assistant:carried on" {
				t.Errorf("history %q", got)
			}
			checkLog(t, evs)
		})
	}
}

// TestSubagentDepth: with max_depth 2 a child has the subagent tool and
// starts a grandchild <parent>/sub-1/sub-1, which has it no more.
func TestSubagentDepth(t *testing.T) {
	f := newFamily(t, nil, map[string]string{
		"parent": parentScript,
		"child":  `{"turns":[{"tool_calls":[{"name":"subagent","args":{"task":"deeper","model":"leaf"}}]},{"text":"the grandchild said: fine"}]}`,
		"leaf":   `{"turns":[{"text":"fine"}]}`,
	})
	h := f.parent("parent", []string{"subagent", "echo"}, &spec.Subagents{Model: "child", MaxDepth: new(2)})
	h.ok(&eventsv1.Prompt{Text: "go"})
	h.waitFor("agent_end", 1)
	if end := findType(h.rec.Events(), "subagent_end").GetSubagentEnd(); end.Result != "the grandchild said: fine" {
		t.Fatalf("subagent_end = %v", end)
	}
	var grand []string
	for _, ev := range h.rec.Events() {
		if inner := ev.GetSubAgentEvent().GetEvent().GetSubAgentEvent(); inner != nil {
			grand = append(grand, inner.ChildSession)
		}
	}
	if len(grand) == 0 || grand[0] != "s1/sub-1/sub-1" {
		t.Fatalf("no events of the grandchild s1/sub-1/sub-1 nested twice: %q", grand)
	}
	g := f.child("s1/sub-1/sub-1")
	st := g.state()
	if st.State != "idle" {
		t.Fatalf("grandchild state %v", st)
	}
}
