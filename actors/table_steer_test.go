package actors

import (
	"fmt"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/tools"
)

// steerSteps are the steer "s"'s cells.
func steerSteps() map[string]step {
	applied := one("turn_end", "message_committed", "steering_applied")
	return map[string]step{
		"idle": {
			now: runStart, st: want{state: "running", run: "r-1"},
			after: seq(answer2, runEnd), history: []string{"user:s", "assistant:abcdefgh"},
		},
		"running": {
			now: one("steering_received"), st: want{state: "running", run: "r-1", steering: []string{"s"}},
			after:   seq(answer2, applied, nextTurn, answer, runEnd),
			history: []string{"user:go", "assistant:abcdefgh", "user:s", "assistant:A2"},
		},
		"streaming": {
			now: one("steering_received"), st: want{state: "streaming", run: "r-1", steering: []string{"s"}},
			after:   seq(stream2, applied, nextTurn, answer, runEnd),
			history: []string{"user:go", "assistant:abcdefgh", "user:s", "assistant:A2"},
		},
		"executing_tools": {
			// The killable tool is cancelled at once; the immune one
			// finishes and its real result is committed.
			now:   seq(one("steering_received", "tool_skipped_for_steering"), toolEnd),
			st:    want{state: "executing_tools", run: "r-1", steering: []string{"s"}, tools: []string{"hold_immune"}},
			after: seq(toolEnd, twoResults, applied, nextTurn, answer, runEnd),
			history: []string{"user:go", "assistant:", "tool:" + tools.SkippedForSteering, "tool:hold_immune done",
				"user:s", "assistant:A2"},
		},
	}
}

func testSteerCells(t *testing.T) {
	applied := one("turn_end", "message_committed", "steering_applied")
	steps := steerSteps()
	for _, state := range tableStates {
		t.Run(state, func(t *testing.T) {
			c := newCell(t, state, nil)
			mark := c.rec.Len()
			c.run(&eventsv1.Steer{Text: "s"}, steerRef("st-1"), steps[state])
			if state == "idle" {
				return
			}
			got := c.rec.Events()[mark].GetSteeringReceived()
			if got.GetRef() != "st-1" || got.GetText() != "s" || got.GetStatus() != "accepted" {
				t.Errorf("steering_received = %v", got)
			}
			if a := findType(c.rec.Events(), "steering_applied"); !slices.Equal(a.GetSteeringApplied().Refs, []string{"st-1"}) {
				t.Errorf("steering_applied = %v", a)
			}
		})
	}
	// After an abort the run only waits for the tools that survived it; a
	// steer cancels nothing more and waits for the next run.
	t.Run("executing_tools/after_abort", func(t *testing.T) {
		c := newCell(t, "executing_tools", nil)
		c.ok(&eventsv1.Abort{KillTools: string(events.KillNone)})
		c.run(&eventsv1.Steer{Text: "s"}, steerRef("st-1"), step{
			now:     one("steering_received"),
			st:      want{state: "executing_tools", run: "r-1", steering: []string{"s"}, tools: []string{"hold", "hold_immune"}},
			after:   seq(toolEnd, toolEnd, twoResults, one("turn_end"), abortEnd),
			history: []string{"user:go", "assistant:", "tool:hold done", "tool:hold_immune done"},
			final:   want{state: "idle", steering: []string{"s"}},
		})
	})
	t.Run("executing_tools/interrupt_tools=false", func(t *testing.T) {
		c := newCell(t, "executing_tools", nil)
		no := false
		c.run(&eventsv1.Steer{Text: "s", InterruptTools: &no}, steerRef("st-1"), step{
			now:   one("steering_received"),
			st:    want{state: "executing_tools", run: "r-1", steering: []string{"s"}, tools: []string{"hold", "hold_immune"}},
			after: seq(toolEnd, toolEnd, twoResults, applied, nextTurn, answer, runEnd),
			history: []string{"user:go", "assistant:", "tool:hold done", "tool:hold_immune done",
				"user:s", "assistant:A2"},
		})
	})
}

func testSteerQueueFullCells(t *testing.T) {
	applied3 := one("turn_end", "message_committed", "message_committed", "message_committed", "steering_applied")
	texts := []string{"s1", "s2", "s3"}
	afterSteers := func(state string) []string {
		h := []string{"user:go", "assistant:abcdefgh"}
		if state == "executing_tools" {
			h = []string{"user:go", "assistant:", "tool:" + tools.SkippedForSteering, "tool:hold_immune done"}
		}
		return append(h, "user:s1", "user:s2", "user:s3", "assistant:A2")
	}
	steps := map[string]step{
		"running": {
			now: one("steering_received"), st: want{state: "running", run: "r-1", steering: texts},
			after: seq(answer2, applied3, nextTurn, answer, runEnd), history: afterSteers("running"),
		},
		"streaming": {
			now: one("steering_received"), st: want{state: "streaming", run: "r-1", steering: texts},
			after: seq(stream2, applied3, nextTurn, answer, runEnd), history: afterSteers("streaming"),
		},
		"executing_tools": {
			now:   one("steering_received"),
			st:    want{state: "executing_tools", run: "r-1", steering: texts, tools: []string{"hold_immune"}},
			after: seq(toolEnd, twoResults, applied3, nextTurn, answer, runEnd), history: afterSteers("executing_tools"),
		},
	}
	// In idle a steer starts a run: the table has no queue-full row there.
	for _, state := range busyStates {
		t.Run(state, func(t *testing.T) {
			c := newCell(t, state, &Env{Settings: Settings{SteeringLimit: 3}})
			for i, text := range texts {
				steerRef(fmt.Sprintf("st-%d", i+1))(t, c.send(&eventsv1.Steer{Text: text}))
			}
			before := c.state()
			mark := c.rec.Len()
			c.run(&eventsv1.Steer{Text: "s4"}, failsWith(events.CodeQueueFull), steps[state])
			got := c.rec.Events()[mark].GetSteeringReceived()
			if got.GetRef() != "st-4" || got.GetText() != "s4" || got.GetStatus() != "rejected_full" {
				t.Errorf("steering_received = %v", got)
			}
			if !slices.EqualFunc(before.SteeringQueue, []*eventsv1.SteeringItem{{Ref: "st-1", Text: "s1"}, {Ref: "st-2", Text: "s2"}, {Ref: "st-3", Text: "s3"}},
				func(a, b *eventsv1.SteeringItem) bool { return proto.Equal(a, b) }) {
				t.Errorf("steering queue = %v", before.SteeringQueue)
			}
		})
	}
}
