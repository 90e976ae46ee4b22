package actors

import (
	"slices"
	"testing"
	"time"

	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/events/eventstest"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/spec"
	"github.com/tack-run/tack/tools"
)

// TestSubagentAbortThroughStubbornTool: aborting the parent while its
// child runs a tool that ignores cancellation tells agent_abort within
// the bound, settles the call as interrupted (subagent_end first) and
// ends the parent's run at once; the child is aborted too, its stubborn
// tool abandoned, and its usage still counted.
func TestSubagentAbortThroughStubbornTool(t *testing.T) {
	f := newFamily(t, &Env{Settings: Settings{ToolGrace: 20 * time.Millisecond}}, map[string]string{
		"parent": parentScript,
		"child":  `{"turns":[{"tool_calls":[{"name":"sleep_stubborn","args":{"ms":600}}]},{"text":"never"}]}`,
	})
	h := f.parent("parent", []string{"subagent", "sleep", "sleep_stubborn", "sleep_immune"}, &spec.Subagents{Model: "child"})
	ch := events.NewChannel(1024)
	h.ok(&SubscribeSink{Sink: ch})
	h.ok(&eventsv1.Prompt{Text: "go"})
	h.waitMatch(func(ev *eventsv1.Event) bool {
		return ev.GetSubAgentEvent().GetEvent().GetToolExecutionStart() != nil
	})
	mark := h.rec.Len()

	start := time.Now()
	h.sys.Root.Send(h.pid, &eventsv1.Abort{})
	timeout := time.After(wait)
	for latency := time.Duration(-1); latency < 0; {
		select {
		case ev := <-ch.C():
			if ev.GetAgentAbort() != nil {
				latency = time.Since(start)
				t.Logf("agent_abort delivered in %v", latency)
				if latency > abortBound {
					t.Errorf("agent_abort took %v, want at most %v", latency, abortBound)
				}
			}
		case <-timeout:
			t.Fatal("agent_abort not delivered")
		}
	}
	end := h.waitFor("agent_end", 1)
	if !eventstest.ExpectTypes(t, h.since(mark), seq(one("agent_abort", "tool_killed", "subagent_end"), toolEnd,
		one("message_committed", "turn_end"), abortEnd)...) {
		t.FailNow()
	}
	if got := end.GetAgentEnd().Reason; got != string(events.EndAborted) {
		t.Errorf("agent_end reason %s", got)
	}
	if r := findType(h.since(mark), "subagent_end").GetSubagentEnd(); r.Result != tools.InterruptedByAbort || r.ChildSession != "s1/sub-1" {
		t.Errorf("subagent_end = %v", r)
	}

	// The child was aborted (killable, as the parent's abort said): its
	// run ended and its stubborn tool is abandoned, then returns.
	c := f.child("s1/sub-1")
	c.waitRunEnd("r-1")
	if got := findType(c.rec.Events(), "agent_end").GetAgentEnd().Reason; got != string(events.EndAborted) {
		t.Errorf("child agent_end reason %s", got)
	}
	// Counted first: polling for 0 alone could end the test before the
	// grace, with the tool still running when goleak looks.
	c.pollState("the stubborn tool abandoned", func(st *eventsv1.SessionState) bool { return st.AbandonedTools == 1 })
	c.pollState("the stubborn tool returned", func(st *eventsv1.SessionState) bool { return st.AbandonedTools == 0 })
	h.pollState("the child's usage", func(st *eventsv1.SessionState) bool { return st.SubagentUsage != nil })
	checkLog(t, h.rec.Events())
	checkLog(t, c.rec.Events())
}

// TestSubagentKillAll: an abort with kill_tools all aborts the child
// alike, so its immune tool is cancelled too.
func TestSubagentKillAll(t *testing.T) {
	f := newFamily(t, nil, map[string]string{
		"parent": parentScript,
		"child":  `{"turns":[{"tool_calls":[{"name":"sleep_immune","args":{"ms":60000}}]},{"text":"never"}]}`,
	})
	h := f.parent("parent", []string{"subagent", "sleep", "sleep_stubborn", "sleep_immune"}, &spec.Subagents{Model: "child"})
	h.ok(&eventsv1.Prompt{Text: "go"})
	h.waitMatch(func(ev *eventsv1.Event) bool {
		return ev.GetSubAgentEvent().GetEvent().GetToolExecutionStart() != nil
	})
	h.ok(&eventsv1.Abort{KillTools: string(events.KillAll)})
	h.waitFor("agent_end", 1)
	c := f.child("s1/sub-1")
	c.waitRunEnd("r-1")
	if k := findType(c.rec.Events(), "tool_killed").GetToolKilled(); k.GetName() != "sleep_immune" {
		t.Errorf("the child's immune tool was not killed: %v", k)
	}
}

// TestSubagentSteer: steering the parent cancels the child as a killable
// tool: the call's result is the steering text, the child is aborted,
// and the parent's run goes on with the steering message.
func TestSubagentSteer(t *testing.T) {
	f := newFamily(t, nil, map[string]string{
		"parent": parentScript,
		"child":  `{"turns":[{"tool_calls":[{"name":"sleep","args":{"ms":60000}}]},{"text":"never"}]}`,
	})
	h := f.parent("parent", []string{"subagent", "sleep", "sleep_stubborn", "sleep_immune"}, &spec.Subagents{Model: "child"})
	h.ok(&eventsv1.Prompt{Text: "go"})
	h.waitMatch(func(ev *eventsv1.Event) bool {
		return ev.GetSubAgentEvent().GetEvent().GetToolExecutionStart() != nil
	})
	mark := h.rec.Len()
	h.ok(&eventsv1.Steer{Text: "never mind"})
	h.waitFor("agent_end", 1)
	if !eventstest.ExpectTypes(t, h.since(mark), seq(one("steering_received", "tool_skipped_for_steering", "subagent_end"), toolEnd,
		one("message_committed", "turn_end", "message_committed", "steering_applied"), nextTurn, answer, runEnd)...) {
		t.FailNow()
	}
	if r := findType(h.since(mark), "subagent_end").GetSubagentEnd(); r.Result != tools.SkippedForSteering {
		t.Errorf("subagent_end = %v", r)
	}
	c := f.child("s1/sub-1")
	c.waitRunEnd("r-1")
	if got := findType(c.rec.Events(), "agent_end").GetAgentEnd().Reason; got != string(events.EndAborted) {
		t.Errorf("child agent_end reason %s", got)
	}
}

// TestSubagentAbortKeepingTools: an abort with kill_tools none leaves the
// call running and asks the child to stop after its own tools: the child
// ends aborted once its tool is done, without another request, and the
// call's result says so.
func TestSubagentAbortKeepingTools(t *testing.T) {
	f := newFamily(t, nil, map[string]string{
		"parent": parentScript,
		"child":  `{"turns":[{"tool_calls":[{"name":"sleep","args":{"ms":200}}]},{"text":"never"}]}`,
	})
	h := f.parent("parent", []string{"subagent", "sleep"}, &spec.Subagents{Model: "child"})
	h.ok(&eventsv1.Prompt{Text: "go"})
	h.waitMatch(func(ev *eventsv1.Event) bool {
		return ev.GetSubAgentEvent().GetEvent().GetToolExecutionStart() != nil
	})
	h.ok(&eventsv1.Abort{KillTools: string(events.KillNone)})
	end := h.waitFor("agent_end", 1)
	if got := end.GetAgentEnd().Reason; got != string(events.EndAborted) {
		t.Errorf("agent_end reason %s", got)
	}
	res := findType(h.rec.Events(), "subagent_end").GetSubagentEnd().GetResult()
	if res != "sub-agent s1/sub-1 ended: aborted" {
		t.Errorf("subagent_end result %q", res)
	}
	c := f.child("s1/sub-1")
	if got := contents(c.history()); !slices.Equal(got, []string{"user:Count the files.", "assistant:", "tool:slept 200 ms"}) {
		t.Errorf("child history %q", got)
	}
	checkLog(t, h.rec.Events())
}
