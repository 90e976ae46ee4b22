package actors

import (
	"fmt"
	"testing"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/tools"
)

func testAbortCells(t *testing.T) {
	for _, state := range tableStates {
		for _, kill := range []string{string(events.KillKillable), string(events.KillAll), string(events.KillNone)} {
			for _, clear := range []bool{false, true} {
				name := fmt.Sprintf("%s/kill_tools=%s,clear_queue=%v", state, kill, clear)
				t.Run(name, func(t *testing.T) { testAbortCell(t, state, kill, clear) })
			}
		}
	}
	t.Run("idle/with_leftover_queue,clear_queue=true", func(t *testing.T) {
		c := leftoverCell(t)
		c.run(&eventsv1.Abort{ClearQueue: true}, succeeds, step{
			now: one("agent_abort", "prompt_dropped", "steering_dropped"), st: want{state: "idle"},
			history: []string{"user:go"},
		})
		evs := c.rec.Events()
		if d := findType(evs, "prompt_dropped").GetPromptDropped(); d.GetText() != "p" {
			t.Errorf("prompt_dropped = %v", d)
		}
		if d := findType(evs, "steering_dropped").GetSteeringDropped(); d.GetText() != "s" || d.GetRef() != "st-1" {
			t.Errorf("steering_dropped = %v", d)
		}
	})
}

// testAbortCell aborts a cell in state whose queues hold the prompt "p"
// and the steering "s" (but in idle, where they are empty).
func testAbortCell(t *testing.T, state, kill string, clear bool) {
	c := newCell(t, state, nil)
	no := false
	if state != "idle" {
		c.ok(&eventsv1.Prompt{Text: "p"})
		c.ok(&eventsv1.Steer{Text: "s", InterruptTools: &no})
	}
	var drops []string
	left := want{state: "idle", prompts: []string{"p"}, steering: []string{"s"}}
	if clear || state == "idle" {
		left = want{state: "idle"}
	}
	if clear && state != "idle" {
		drops = one("prompt_dropped", "steering_dropped")
	}
	interrupted := "tool:" + tools.InterruptedByAbort
	var s step
	switch state {
	case "idle":
		s = step{now: one("agent_abort"), st: want{state: "idle"}}
	case "running":
		s = step{
			now: seq(one("agent_abort", "turn_end"), drops, abortEnd), st: left,
			history: []string{"user:go"}, final: left,
		}
	case "streaming":
		s = step{
			now: seq(one("agent_abort", "message_committed", "turn_end"), drops, abortEnd), st: left,
			history: []string{"user:go", "assistant:abcd" + interruptedSuffix}, final: left,
		}
	case "executing_tools":
		busy := want{state: "executing_tools", run: "r-1", prompts: left.prompts, steering: left.steering}
		switch kill {
		case string(events.KillKillable):
			busy.tools = []string{"hold_immune"}
			s = step{
				now: seq(one("agent_abort"), drops, one("tool_killed"), toolEnd), st: busy,
				after:   seq(toolEnd, twoResults, one("turn_end"), abortEnd),
				history: []string{"user:go", "assistant:", interrupted, "tool:hold_immune done"}, final: left,
			}
		case string(events.KillAll):
			s = step{
				now: seq(one("agent_abort"), drops, one("tool_killed"), toolEnd, one("tool_killed"), toolEnd,
					twoResults, one("turn_end"), abortEnd),
				st: left, history: []string{"user:go", "assistant:", interrupted, interrupted}, final: left,
			}
		case string(events.KillNone):
			busy.tools = []string{"hold", "hold_immune"}
			s = step{
				now: seq(one("agent_abort"), drops), st: busy,
				after:   seq(toolEnd, toolEnd, twoResults, one("turn_end"), abortEnd),
				history: []string{"user:go", "assistant:", "tool:hold done", "tool:hold_immune done"}, final: left,
			}
		}
	}
	c.run(&eventsv1.Abort{KillTools: kill, ClearQueue: clear}, succeeds, s)

	evs := c.rec.Events()
	abort := findType(evs, "agent_abort").GetAgentAbort()
	if state == "idle" {
		if abort.GetRunId() != "" {
			t.Errorf("agent_abort in idle = %v, want no run_id", abort)
		}
		return
	}
	if abort.GetRunId() != "r-1" || abort.GetReason() != abortReason {
		t.Errorf("agent_abort = %v", abort)
	}
	if end := findType(evs, "agent_end").GetAgentEnd(); end.GetReason() != string(events.EndAborted) || end.GetRunId() != "r-1" {
		t.Errorf("agent_end = %v", end)
	}
	for _, ev := range evs {
		if k := ev.GetToolKilled(); k != nil && k.Name == "hold_immune" && kill != string(events.KillAll) {
			t.Errorf("immune tool killed with kill_tools %s", kill)
		}
	}
}
