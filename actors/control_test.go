package actors

import (
	"slices"
	"strings"
	"testing"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/spec"
	"github.com/tack-run/tack/tools"
)

// The conversation-control cells of the command × state table: every
// if_busy of prompt and every at of abort, in every state.

var ifBusyValues = []string{string(events.IfBusyQueue), string(events.IfBusySteer), string(events.IfBusyReject), string(events.IfBusyInterrupt), string(events.IfBusyRollback)}

func testIfBusyCells(t *testing.T) {
	prompt, steer := promptSteps(), steerSteps()
	interrupted := "tool:" + tools.InterruptedByAbort
	// restarted is the new run r-2 of interrupt and rollback, by state:
	// what the command causes, what follows, and the history it leaves
	// without and with the rollback.
	type restarted struct {
		now, after   []string
		st           want
		kept, rolled []string
		reply        bool // queued
	}
	cells := map[string]restarted{
		"running": {
			now: seq(one("agent_abort", "turn_end"), abortEnd, runStart), st: want{state: "running", run: "r-2"},
			after: seq(answer2, runEnd),
			kept:  []string{"user:go", "user:p", "assistant:abcdefgh"}, rolled: []string{"user:p", "assistant:abcdefgh"},
		},
		"streaming": {
			now: seq(one("agent_abort", "message_committed", "turn_end"), abortEnd, runStart), st: want{state: "running", run: "r-2"},
			after:  seq(answer, runEnd),
			kept:   []string{"user:go", "assistant:abcd" + interruptedSuffix, "user:p", "assistant:A2"},
			rolled: []string{"user:p", "assistant:A2"},
		},
		"executing_tools": {
			// The immune tool finishes first; the prompt waits in the queue.
			now:    seq(one("agent_abort", "tool_killed"), toolEnd, one("prompt_queued")),
			st:     want{state: "executing_tools", run: "r-1", prompts: []string{"p"}, tools: []string{"hold_immune"}},
			after:  seq(toolEnd, twoResults, one("turn_end"), abortEnd, runStart, answer, runEnd),
			kept:   []string{"user:go", "assistant:", interrupted, "tool:hold_immune done", "user:p", "assistant:A2"},
			rolled: []string{"user:p", "assistant:A2"}, reply: true,
		},
	}
	for _, state := range tableStates {
		for _, ifBusy := range ifBusyValues {
			t.Run(state+"/"+ifBusy, func(t *testing.T) {
				c := newCell(t, state, nil)
				cmd := &eventsv1.Prompt{Text: "p", IfBusy: ifBusy}
				switch {
				case state == "idle":
					c.run(cmd, promptQueued(false), prompt["idle"])
				case ifBusy == string(events.IfBusyQueue):
					c.run(cmd, promptQueued(true), prompt[state])
				case ifBusy == string(events.IfBusySteer):
					s := steer[state]
					s.history = slices.Clone(s.history)
					for i, h := range s.history {
						if h == "user:s" {
							s.history[i] = "user:p"
						}
					}
					s.st.steering = []string{"p"}
					c.run(cmd, promptQueued(true), s)
				case ifBusy == string(events.IfBusyReject):
					c.run(cmd, failsWith(events.CodeBusy), step{st: busyWant(state), after: rest[state], history: restHistory[state]})
				default:
					r := cells[state]
					history := r.kept
					if ifBusy == string(events.IfBusyRollback) {
						history = r.rolled
					}
					if state == "streaming" {
						// r-2 streams its first chunk unheld: when it comes
						// relative to the reply is not fixed, so the
						// sequence is checked as a whole.
						mark := c.rec.Len()
						promptQueued(r.reply)(t, c.send(cmd))
						c.finish()
						c.waitRunEnd("r-2")
						expectLabelled(t, "up to idle", c.since(mark), seq(r.now, r.after))
						if got := contents(c.history()); !slices.Equal(got, history) {
							t.Errorf("history = %q\nwant %q", got, history)
						}
						want{state: "idle"}.check(t, c.state())
					} else {
						c.run(cmd, promptQueued(r.reply), step{now: r.now, st: r.st, after: r.after, history: history, lastRun: "r-2"})
					}
					ends := []string{}
					for _, ev := range c.rec.Events() {
						if e := ev.GetAgentEnd(); e != nil {
							ends = append(ends, e.RunId+":"+e.Reason)
						}
					}
					if want := []string{"r-1:" + string(events.EndAborted), "r-2:" + string(events.EndCompleted)}; !slices.Equal(ends, want) {
						t.Errorf("agent_end = %q, want %q", ends, want)
					}
					if ifBusy == string(events.IfBusyRollback) {
						checkRolledBack(t, c.harness, len(r.kept)-len(r.rolled))
					}
				}
			})
		}
	}
	t.Run("running/unknown", func(t *testing.T) {
		c := newCell(t, "running", nil)
		mark := c.rec.Len()
		r := c.send(&eventsv1.Prompt{Text: "p", IfBusy: "later"})
		if r.GetError().GetCode() != events.CodeBadRequest || !strings.Contains(r.GetError().GetMessage(), `not "later"`) {
			t.Errorf("reply = %v, want bad_request naming \"later\"", r)
		}
		c.check(mark, step{st: busyWant("running"), after: rest["running"], history: restHistory["running"]})
	})
}

// checkRolledBack checks get_messages with all: the first n messages of
// the run r-1 are marked rolled back and come before the working history.
func checkRolledBack(t *testing.T, h *harness, n int) {
	t.Helper()
	all := h.ok(&eventsv1.GetMessages{All: true}).GetMessages().GetMessages()
	working := h.history()
	if len(all) != n+len(working) {
		t.Fatalf("get_messages all has %d messages, want %d rolled back and the %d of the history", len(all), n, len(working))
	}
	for i, m := range all {
		if m.RolledBack != (i < n) {
			t.Errorf("message %d (%s) rolled_back = %v", i, m.Content, m.RolledBack)
		}
	}
	for _, m := range working {
		if m.RolledBack {
			t.Errorf("working history holds a rolled-back message: %v", m)
		}
	}
}

func testAbortAtCells(t *testing.T) {
	interrupted := "tool:" + tools.InterruptedByAbort
	steps := map[string]map[string]step{
		string(events.AtAfterResponse): {
			"running":   {now: one("agent_abort"), st: busyWant("running"), after: seq(answer2, runEnd), history: restHistory["running"]},
			"streaming": {now: one("agent_abort"), st: busyWant("streaming"), after: seq(stream2, runEnd), history: restHistory["streaming"]},
			// The response is in: the abort acts now.
			"executing_tools": {
				now: seq(one("agent_abort", "tool_killed"), toolEnd), st: want{state: "executing_tools", run: "r-1", tools: []string{"hold_immune"}},
				after:   seq(toolEnd, twoResults, one("turn_end"), abortEnd),
				history: []string{"user:go", "assistant:", interrupted, "tool:hold_immune done"},
			},
		},
		string(events.AtAfterTools): {
			"running":   {now: one("agent_abort"), st: busyWant("running"), after: seq(answer2, runEnd), history: restHistory["running"]},
			"streaming": {now: one("agent_abort"), st: busyWant("streaming"), after: seq(stream2, runEnd), history: restHistory["streaming"]},
			"executing_tools": {
				now: one("agent_abort"), st: busyWant("executing_tools"),
				after:   seq(toolEnd, toolEnd, twoResults, one("turn_end"), abortEnd),
				history: []string{"user:go", "assistant:", "tool:hold done", "tool:hold_immune done"},
			},
		},
	}
	for _, at := range []string{string(events.AtAfterResponse), string(events.AtAfterTools)} {
		for _, state := range tableStates {
			t.Run(state+"/"+at, func(t *testing.T) {
				c := newCell(t, state, nil)
				s, ok := steps[at][state]
				if !ok { // idle: nothing runs, the abort is told
					s = step{now: one("agent_abort"), st: want{state: "idle"}}
				}
				c.run(&eventsv1.Abort{At: at}, succeeds, s)
				if end := findType(c.rec.Events(), "agent_end").GetAgentEnd(); state != "idle" && end.GetReason() != string(events.EndAborted) {
					t.Errorf("agent_end = %v, want reason aborted", end)
				}
			})
		}
	}
	// A response with tool calls, aborted after_response while it is in
	// flight: committed, its calls answered as aborted, none run.
	t.Run("running/after_response,tool_calls", func(t *testing.T) {
		c := &cell{t: t, req: newGate(), gates: map[string]gate{}}
		c.harness = newHarnessModel(t, held(t, "", tableTools, c.req, 0), nil)
		c.ok(&eventsv1.Prompt{Text: "go"})
		c.waitFor("request_start", 1)
		c.run(&eventsv1.Abort{At: string(events.AtAfterResponse)}, succeeds, step{
			now: one("agent_abort"), st: busyWant("running"),
			after:   seq(toolAnswer, twoResults, one("turn_end"), abortEnd),
			history: []string{"user:go", "assistant:", interrupted, interrupted},
		})
	})
	// after_tools with tool calls in flight: the response is committed and
	// its batch runs to the end; the run stops before the next request.
	t.Run("running/after_tools,tool_calls", func(t *testing.T) {
		c := &cell{t: t, req: newGate(), gates: map[string]gate{"hold": newGate(), "hold_immune": newGate()}}
		c.harness = newHarnessModel(t, held(t, "", tableTools, c.req, 0), nil,
			holdTool("hold", tools.Killable, c.gates["hold"]), holdTool("hold_immune", tools.Immune, c.gates["hold_immune"]))
		c.ok(&eventsv1.Prompt{Text: "go"})
		c.waitFor("request_start", 1)
		mark := c.rec.Len()
		succeeds(t, c.send(&eventsv1.Abort{At: string(events.AtAfterTools)}))
		busyWant("running").check(t, c.state())
		expectLabelled(t, "after the command", c.since(mark), one("agent_abort"))
		c.req.open()
		c.waitFor("tool_execution_start", 2)
		c.gates["hold"].open()
		c.waitToolEnd("c-1")
		c.gates["hold_immune"].open()
		c.waitRunEnd("r-1")
		expectLabelled(t, "up to idle", c.since(mark+1), seq(toolAnswer, batchStart, toolEnd, toolEnd, twoResults, one("turn_end"), abortEnd))
		if got, want := contents(c.history()), []string{"user:go", "assistant:", "tool:hold done", "tool:hold_immune done"}; !slices.Equal(got, want) {
			t.Errorf("history = %q, want %q", got, want)
		}
	})
	// A waiting abort is upgraded by a later now, and by its timeout.
	t.Run("executing_tools/after_tools,then_now", func(t *testing.T) {
		c := newCell(t, "executing_tools", nil)
		c.ok(&eventsv1.Abort{At: string(events.AtAfterTools)})
		c.run(&eventsv1.Abort{}, succeeds, steps[string(events.AtAfterResponse)]["executing_tools"])
	})
	t.Run("executing_tools/after_tools,then_after_response", func(t *testing.T) {
		c := newCell(t, "executing_tools", nil)
		c.ok(&eventsv1.Abort{At: string(events.AtAfterTools)})
		c.run(&eventsv1.Abort{At: string(events.AtAfterResponse)}, succeeds, steps[string(events.AtAfterResponse)]["executing_tools"])
	})
	t.Run("running/after_response,then_after_tools", func(t *testing.T) {
		// The weaker abort leaves the stronger one waiting.
		c := &cell{t: t, req: newGate(), gates: map[string]gate{}}
		c.harness = newHarnessModel(t, held(t, "", tableTools, c.req, 0), nil)
		c.ok(&eventsv1.Prompt{Text: "go"})
		c.waitFor("request_start", 1)
		c.ok(&eventsv1.Abort{At: string(events.AtAfterResponse)})
		c.run(&eventsv1.Abort{At: string(events.AtAfterTools)}, succeeds, step{
			now: one("agent_abort"), st: busyWant("running"),
			after:   seq(toolAnswer, twoResults, one("turn_end"), abortEnd),
			history: []string{"user:go", "assistant:", interrupted, interrupted},
		})
	})
	t.Run("executing_tools/after_tools,timeout", func(t *testing.T) {
		c := newCell(t, "executing_tools", nil)
		mark := c.rec.Len()
		c.ok(&eventsv1.Abort{At: string(events.AtAfterTools), TimeoutMs: 20, KillTools: string(events.KillAll)})
		c.waitRunEnd("r-1")
		expectLabelled(t, "after the timeout", c.since(mark), seq(one("agent_abort", "tool_killed"), toolEnd, one("tool_killed"), toolEnd,
			twoResults, one("turn_end"), abortEnd))
		if got, want := contents(c.history()), []string{"user:go", "assistant:", interrupted, interrupted}; !slices.Equal(got, want) {
			t.Errorf("history = %q, want %q", got, want)
		}
	})
	// rollback: true takes the run's messages out once it has stopped.
	for _, state := range busyStates {
		t.Run(state+"/rollback", func(t *testing.T) {
			c := newCell(t, state, nil)
			s := map[string]step{
				"running":   {now: seq(one("agent_abort", "turn_end"), abortEnd), st: want{state: "idle"}},
				"streaming": {now: seq(one("agent_abort", "message_committed", "turn_end"), abortEnd), st: want{state: "idle"}},
				"executing_tools": {
					now: seq(one("agent_abort", "tool_killed"), toolEnd), st: want{state: "executing_tools", run: "r-1", tools: []string{"hold_immune"}},
					after: seq(toolEnd, twoResults, one("turn_end"), abortEnd),
				},
			}[state]
			s.history = []string{}
			c.run(&eventsv1.Abort{Rollback: true}, succeeds, s)
			checkRolledBack(t, c.harness, map[string]int{"running": 1, "streaming": 2, "executing_tools": 4}[state])
		})
	}
	t.Run("running/unknown", func(t *testing.T) {
		c := newCell(t, "running", nil)
		mark := c.rec.Len()
		r := c.send(&eventsv1.Abort{At: "soon"})
		if r.GetError().GetCode() != events.CodeBadRequest || !strings.Contains(r.GetError().GetMessage(), `not "soon"`) {
			t.Errorf("reply = %v, want bad_request naming \"soon\"", r)
		}
		c.check(mark, step{st: busyWant("running"), after: rest["running"], history: restHistory["running"]})
	})
}

// TestQueueModeAll: every queued prompt goes into the next turn as one
// user message, joined in order.
func TestQueueModeAll(t *testing.T) {
	g := newGate()
	sys := newSystem(t)
	h := spawnSpec(t, sys, newPlace(sys, &Env{}, nil), Spec{ID: "s1", Model: held(t, "", tableText, g, 0),
		Tools: demoSet(t), Stored: &spec.Session{QueueMode: events.QueueAll}})
	h.ok(&eventsv1.Prompt{Text: "go"})
	h.waitFor("request_start", 1)
	h.ok(&eventsv1.Prompt{Text: "p1"})
	h.ok(&eventsv1.Prompt{Text: "p2"})
	g.open()
	h.waitRunEnd("r-1")
	want := []string{"user:go", "assistant:abcdefgh", "user:p1" + QueueJoin + "p2", "assistant:A2"}
	if got := contents(h.history()); !slices.Equal(got, want) {
		t.Errorf("history = %q, want %q", got, want)
	}
	if st := h.state(); len(st.PromptQueue) != 0 || st.State != "idle" {
		t.Errorf("get_state = %v", st)
	}
}

// TestFork: the fork point moves back to a turn boundary, the fork starts
// with session_created and session_forked and that history, and an index
// out of range is bad_request.
func TestFork(t *testing.T) {
	sys := newSystem(t)
	reg := newPlace(sys, &Env{}, nil)
	src := spawnHarness(t, sys, reg, "s1", scriptModel(t, "", `{"turns":[{"tool_calls":[{"name":"echo","args":{"text":"x"}},{"name":"echo","args":{"text":"y"}}]},{"text":"done"}]}`), demoSet(t))
	src.ok(&eventsv1.Prompt{Text: "go"})
	src.waitRunEnd("r-1")
	hist := src.history() // user, assistant(calls), tool, tool, assistant
	for _, tc := range []struct{ index, want int }{{0, 0}, {1, 1}, {2, 1}, {3, 1}, {4, 4}, {5, 5}} {
		res, err := sys.Root.RequestFuture(src.pid, &ForkPoint{Index: tc.index}, wait).Result()
		if err != nil {
			t.Fatal(err)
		}
		f, ok := res.(*ForkSource)
		if !ok || f.Fork.Index != tc.want || f.Fork.From != "s1" || len(f.Fork.Messages) != tc.want {
			t.Errorf("ForkPoint{%d} = %v, want index %d", tc.index, res, tc.want)
		}
	}
	for _, bad := range []int{-1, 6} {
		res, _ := sys.Root.RequestFuture(src.pid, &ForkPoint{Index: bad}, wait).Result()
		if r, ok := res.(*eventsv1.Reply); !ok || r.GetError().GetCode() != events.CodeBadRequest {
			t.Errorf("ForkPoint{%d} = %v, want bad_request", bad, res)
		}
	}
	fork := spawnSpec(t, sys, reg, Spec{ID: "s2", Model: scriptModel(t, "", `{"turns":[{"text":"again"}]}`), Tools: demoSet(t),
		Fork: &Fork{From: "s1", Index: 4, Messages: hist[:4]}})
	fork.waitFor("session_forked", 1)
	fork.expect("session_created", "session_forked")
	if f := findType(fork.rec.Events(), "session_forked").GetSessionForked(); f.GetFromSession() != "s1" || f.GetIndex() != 4 {
		t.Errorf("session_forked = %v", f)
	}
	fork.ok(&eventsv1.Prompt{Text: "more"})
	fork.waitRunEnd("r-1")
	want := []string{"user:go", "assistant:", "tool:x", "tool:y", "user:more", "assistant:again"}
	if got := contents(fork.history()); !slices.Equal(got, want) {
		t.Errorf("fork history = %q, want %q", got, want)
	}
	if got := contents(src.history()); !slices.Equal(got, contents(hist)) {
		t.Errorf("source history changed: %q", got)
	}
}

// TestTurnBoundary: a cut never leaves a call without its results.
func TestTurnBoundary(t *testing.T) {
	call := &llm.Message{Role: llm.RoleAssistant, ToolCalls: []*llm.ToolCall{{Id: "c-1", Name: "echo"}, {Id: "c-2", Name: "echo"}}}
	msgs := []*llm.Message{llm.UserMessage("go"), call, llm.ToolResultMessage("c-1", "x", false)} // c-2 still open
	for index, want := range []int{0, 1, 1, 1} {
		if got := TurnBoundary(msgs, index); got != want {
			t.Errorf("TurnBoundary(%d) = %d, want %d", index, got, want)
		}
	}
}
