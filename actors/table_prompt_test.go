package actors

import (
	"testing"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

func testPromptCells(t *testing.T) {
	steps := promptSteps()
	for _, state := range tableStates {
		t.Run(state, func(t *testing.T) {
			c := newCell(t, state, nil)
			mark := c.rec.Len()
			c.run(&eventsv1.Prompt{Text: "p"}, promptQueued(state != "idle"), steps[state])
			if q := c.rec.Events()[mark].GetPromptQueued(); state != "idle" && (q.GetText() != "p" || q.GetPosition() != 1) {
				t.Errorf("prompt_queued = %v, want p at position 1", q)
			}
		})
	}
	testPromptVariants(t)
}

// promptSteps are the prompt "p"'s cells.
func promptSteps() map[string]step {
	return map[string]step{
		"idle": {
			now: runStart, st: want{state: "running", run: "r-1"},
			after: seq(answer2, runEnd), history: []string{"user:p", "assistant:abcdefgh"},
		},
		"running": {
			now: one("prompt_queued"), st: want{state: "running", run: "r-1", prompts: []string{"p"}},
			after:   seq(answer2, one("turn_end", "message_committed"), nextTurn, answer, runEnd),
			history: []string{"user:go", "assistant:abcdefgh", "user:p", "assistant:A2"},
		},
		"streaming": {
			now: one("prompt_queued"), st: want{state: "streaming", run: "r-1", prompts: []string{"p"}},
			after:   seq(stream2, one("turn_end", "message_committed"), nextTurn, answer, runEnd),
			history: []string{"user:go", "assistant:abcdefgh", "user:p", "assistant:A2"},
		},
		"executing_tools": {
			now: one("prompt_queued"),
			st:  want{state: "executing_tools", run: "r-1", prompts: []string{"p"}, tools: []string{"hold", "hold_immune"}},
			after: seq(toolEnd, toolEnd, twoResults, one("turn_end"), nextTurn, answer,
				one("turn_end", "message_committed"), nextTurn, answer, runEnd),
			history: []string{"user:go", "assistant:", "tool:hold done", "tool:hold_immune done", "assistant:A2", "user:p", "assistant:A3"},
		},
	}
}

// testPromptVariants are the prompt cells of particular situations.
func testPromptVariants(t *testing.T) {
	// A prompt while an aborted run waits for its surviving tools is
	// queued, and stays queued once the run has ended.
	t.Run("executing_tools/after_abort", func(t *testing.T) {
		c := newCell(t, "executing_tools", nil)
		c.ok(&eventsv1.Abort{KillTools: string(events.KillNone)})
		c.run(&eventsv1.Prompt{Text: "p"}, promptQueued(true), step{
			now:     one("prompt_queued"),
			st:      want{state: "executing_tools", run: "r-1", prompts: []string{"p"}, tools: []string{"hold", "hold_immune"}},
			after:   seq(toolEnd, toolEnd, twoResults, one("turn_end"), abortEnd),
			history: []string{"user:go", "assistant:", "tool:hold done", "tool:hold_immune done"},
			final:   want{state: "idle", prompts: []string{"p"}},
		})
	})
	// What an abort left queued is delivered when the next run starts:
	// queued prompts, the new prompt, then the steering.
	t.Run("idle/with_leftover_queue", func(t *testing.T) {
		c := leftoverCell(t)
		c.run(&eventsv1.Prompt{Text: "q"}, promptQueued(false), step{
			now: one("prompt_received", "agent_start", "message_committed", "message_committed",
				"message_committed", "steering_applied", "state_changed", "agent_status", "turn_start", "request_start"),
			st:      want{state: "running", run: "r-2"},
			after:   seq(answer2, runEnd),
			history: []string{"user:go", "user:p", "user:q", "user:s", "assistant:abcdefgh"},
		})
	})
}

// leftoverCell is an idle cell whose run was aborted with the prompt "p"
// and the steering "s" queued; they survive the abort.
func leftoverCell(t *testing.T) *cell {
	t.Helper()
	c := newCell(t, "running", nil)
	c.ok(&eventsv1.Prompt{Text: "p"})
	c.ok(&eventsv1.Steer{Text: "s"})
	c.ok(&eventsv1.Abort{})
	want{state: "idle", prompts: []string{"p"}, steering: []string{"s"}}.check(t, c.state())
	c.expect(seq(heldPrefix["running"], one("prompt_queued", "steering_received", "agent_abort", "turn_end"), abortEnd)...)
	return c
}
