package actors

import (
	"fmt"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/events/eventstest"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/tools"
	"github.com/tack-run/tack/tools/builtin"
)

// The command × state table (docs/protocol.md, docs/control.md), one named test per cell
// (TestCommandTable/<command>/<state>[/<variant>]).
//
// Each cell brings a session into its state and holds it there: the model
// request behind a gate (idle, running: before the first chunk; streaming:
// after the first of two chunks) or a batch of two tools that wait for the
// test ("hold", killable, and "hold_immune"). It then sends the command
// and asserts the reply, the exact events the command caused, get_state
// right after it, and, once the test has opened the gates and the run has
// ended, the exact events up to idle, the history (which must pass
// llm.Validate) and the final get_state.

// Scripts of the table's sessions.
const (
	// tableText is the first turn in idle, running and streaming: two
	// chunks, "abcd" and "efgh".
	tableText = `{"turns":[{"text":"abcdefgh","chunk_size":4},{"text":"A2"},{"text":"A3"}]}`
	// tableTools is the first turn in executing_tools.
	tableTools = `{"turns":[{"tool_calls":[{"name":"hold"},{"name":"hold_immune"}]},{"text":"A2"},{"text":"A3"}]}`
	// tableB is the model switch_model switches to.
	tableB = `{"turns":[{"text":"B1"}]}`
)

// Sequences of the table, besides runStart, nextTurn, answer and runEnd.
var (
	// heldPrefix is what a session has emitted once in each state.
	heldPrefix = map[string][]string{
		"idle":            one("session_created"),
		"running":         seq(one("session_created"), runStart),
		"streaming":       seq(one("session_created"), runStart, one("state_changed", "message_start", "message_delta")),
		"executing_tools": seq(one("session_created"), runStart, toolAnswer, batchStart),
	}
	// toolAnswer is a response with tool calls and no text.
	toolAnswer = one("state_changed", "message_start", "response_complete", "message_committed", "token_usage")
	batchStart = one("tool_calls", "state_changed", "agent_status", "tool_execution_start", "tool_execution_start")
	toolEnd    = one("tool_execution_end", "tool_execution_metrics")
	twoResults = one("message_committed", "message_committed")
	// answer2 is the two-chunk answer of tableText from running, stream2
	// its rest from streaming.
	answer2 = one("state_changed", "message_start", "message_delta", "message_delta",
		"response_complete", "message_committed", "token_usage")
	stream2 = one("message_delta", "response_complete", "message_committed", "token_usage")
	// abortEnd ends a run on abort, after agent_abort and what it killed.
	abortEnd = one("state_changed", "agent_status", "agent_end")
)

// rest is how each state's held run goes on to idle when the command
// changed nothing.
var rest = map[string][]string{
	"idle":            nil,
	"running":         seq(answer2, runEnd),
	"streaming":       seq(stream2, runEnd),
	"executing_tools": seq(toolEnd, toolEnd, twoResults, one("turn_end"), nextTurn, answer, runEnd),
}

// restHistory is the history after rest.
var restHistory = map[string][]string{
	"idle":            nil,
	"running":         {"user:go", "assistant:abcdefgh"},
	"streaming":       {"user:go", "assistant:abcdefgh"},
	"executing_tools": {"user:go", "assistant:", "tool:hold done", "tool:hold_immune done", "assistant:A2"},
}

var tableStates = []string{"idle", "running", "streaming", "executing_tools"}
var busyStates = tableStates[1:]

// cell is one session held in a state of the table.
type cell struct {
	*harness
	t     *testing.T
	req   gate // holds the first model request
	gates map[string]gate
}

// newCell starts a session and brings it into state (with the prompt
// "go" unless state is idle), held there.
func newCell(t *testing.T, state string, env *Env) *cell {
	t.Helper()
	c := &cell{t: t, req: newGate(), gates: map[string]gate{"hold": newGate(), "hold_immune": newGate()}}
	hold := []tools.Tool{holdTool("hold", tools.Killable, c.gates["hold"]), holdTool("hold_immune", tools.Immune, c.gates["hold_immune"])}
	var model *llm.Model
	switch state {
	case "idle", "running":
		model = held(t, "", tableText, c.req, 0)
	case "streaming":
		model = held(t, "", tableText, c.req, 1)
	case "executing_tools":
		model = scriptModel(t, "", tableTools)
	}
	c.harness = newHarnessModel(t, model, env, hold...)
	if state == "idle" {
		return c
	}
	c.ok(&eventsv1.Prompt{Text: "go"})
	switch state {
	case "running":
		c.waitFor("request_start", 1)
	case "streaming":
		c.waitFor("message_delta", 1)
	case "executing_tools":
		c.waitFor("tool_execution_start", 2)
	}
	c.expect(heldPrefix[state]...)
	return c
}

// finish opens what holds the run, tools in call order (each one's end
// awaited, so the order of events is fixed), and waits for the run's end.
func (c *cell) finish() {
	c.t.Helper()
	st := c.state()
	if st.RunId == nil {
		return
	}
	c.req.open()
	for _, rt := range st.RunningTools {
		c.gates[rt.Name].open()
		c.waitToolEnd(rt.CallId)
	}
	c.waitRunEnd(*st.RunId)
}

// want is what get_state must say.
type want struct {
	state    string
	run      string // "" for no run
	prompts  []string
	steering []string // texts
	tools    []string // names of the running tools
	model    string   // "" for script:inline
}

// check compares get_state with w.
func (w want) check(t *testing.T, st *eventsv1.SessionState) {
	t.Helper()
	var steering, running []string
	for _, s := range st.SteeringQueue {
		steering = append(steering, s.Text)
	}
	for _, r := range st.RunningTools {
		running = append(running, r.Name)
	}
	model := w.model
	if model == "" {
		model = "script:inline"
	}
	if st.State != w.state || st.GetRunId() != w.run || !slices.Equal(st.PromptQueue, w.prompts) ||
		!slices.Equal(steering, w.steering) || !slices.Equal(running, w.tools) || st.Model != model {
		t.Errorf("get_state = %v\nwant state %s, run %q, prompts %q, steering %q, running tools %q, model %s",
			st, w.state, w.run, w.prompts, steering, w.tools, model)
	}
}

// busyWant is get_state of a cell still held in its busy state.
func busyWant(state string) want {
	w := want{state: state, run: "r-1"}
	if state == "executing_tools" {
		w.tools = []string{"hold", "hold_immune"}
	}
	return w
}

// step is one cell's expectations from the command on.
type step struct {
	now     []string // events the command caused
	st      want     // get_state right after the command
	after   []string // events once the gates are open, up to idle
	history []string // history at the end
	final   want     // get_state at the end; zero: idle, empty queues
	// lastRun is the run to wait for at the end when it is not the one
	// get_state shows after the command (a run started later).
	lastRun string
}

// run sends cmd (checking its reply with reply), then checks s.
func (c *cell) run(cmd any, reply replyCheck, s step) {
	c.t.Helper()
	mark := c.rec.Len()
	reply(c.t, c.send(cmd))
	c.check(mark, s)
}

// check asserts s from the events after mark on.
func (c *cell) check(mark int, s step) {
	c.t.Helper()
	s.st.check(c.t, c.state())
	eventsNow := c.since(mark)
	expectLabelled(c.t, "after the command", eventsNow, s.now)
	c.finish()
	if s.lastRun != "" {
		c.waitRunEnd(s.lastRun)
	}
	expectLabelled(c.t, "up to idle", c.since(mark+len(eventsNow)), s.after)
	if got := contents(c.history()); !slices.Equal(got, s.history) {
		c.t.Errorf("history = %q\nwant %q", got, s.history)
	}
	final := s.final
	if final.state == "" {
		final.state = "idle"
	}
	final.check(c.t, c.state())
	checkLog(c.t, c.rec.Events())
}

// expectLabelled is ExpectTypes saying where in the cell it failed.
func expectLabelled(t *testing.T, label string, got []*eventsv1.Event, want []string) {
	t.Helper()
	if !slices.Equal(eventstest.Types(got), want) {
		t.Errorf("%s:", label)
		eventstest.ExpectTypes(t, got, want...)
	}
}

func TestCommandTable(t *testing.T) {
	t.Run("prompt", testPromptCells)
	t.Run("steer", testSteerCells)
	t.Run("steer_queue_full", testSteerQueueFullCells)
	t.Run("abort", testAbortCells)
	t.Run("approve", func(t *testing.T) {
		testRejectedCells(t, &eventsv1.Approve{ApprovalId: "ap-1"}, events.CodeNoPendingApproval)
	})
	t.Run("reject", func(t *testing.T) {
		testRejectedCells(t, &eventsv1.Reject{ApprovalId: "ap-1", Reason: "no"}, events.CodeNoPendingApproval)
	})
	t.Run("respond", func(t *testing.T) {
		testRejectedCells(t, &eventsv1.Respond{Ref: "q-1", Response: "yes"}, events.CodeNoPendingQuestion)
	})
	t.Run("switch_model", testSwitchModelCells)
	t.Run("attach_tools", func(t *testing.T) {
		testToolsCells(t, &eventsv1.AttachTools{Names: []string{"todo_write"}}, "+todo_write -")
	})
	t.Run("detach_tools", func(t *testing.T) { testToolsCells(t, &eventsv1.DetachTools{Names: []string{"echo"}}, "+ -echo") })
	t.Run("prompt_if_busy", testIfBusyCells)
	t.Run("abort_at", testAbortAtCells)
}

// testToolsCells: attach_tools and detach_tools answer at once in every
// state with tools_updated (told as "+attached -detached"), and leave the
// state and the run as they were.
func testToolsCells(t *testing.T, cmd any, told string) {
	catalog, err := tools.NewCatalog(builtin.TodoWrite())
	if err != nil {
		t.Fatal(err)
	}
	for _, state := range tableStates {
		t.Run(state, func(t *testing.T) {
			c := newCell(t, state, &Env{Tools: catalog})
			mark := c.rec.Len()
			c.run(cmd, succeeds, step{now: one("tools_updated"), st: busyOrIdle(state), after: rest[state], history: restHistory[state]})
			if got := toolsUpdated(c.since(mark)); !slices.Equal(got, []string{told}) {
				t.Errorf("tools_updated %q, want %q", got, told)
			}
		})
	}
}

// replyCheck checks a command's reply.
type replyCheck func(t testing.TB, r *eventsv1.Reply)

func promptQueued(queued bool) replyCheck {
	return func(t testing.TB, r *eventsv1.Reply) {
		t.Helper()
		if r.Error != nil || r.GetPrompt() == nil || r.GetPrompt().Queued != queued {
			t.Errorf("prompt reply = %v, want queued %v", r, queued)
		}
	}
}

func steerRef(ref string) replyCheck {
	return func(t testing.TB, r *eventsv1.Reply) {
		t.Helper()
		if r.Error != nil || r.GetSteer().GetRef() != ref {
			t.Errorf("steer reply = %v, want ref %s", r, ref)
		}
	}
}

func failsWith(code string) replyCheck {
	return func(t testing.TB, r *eventsv1.Reply) {
		t.Helper()
		if r.GetError().GetCode() != code {
			t.Errorf("reply = %v, want error %s", r, code)
		}
	}
}

func succeeds(t testing.TB, r *eventsv1.Reply) {
	t.Helper()
	if r.Error != nil {
		t.Errorf("reply = %v, want success", r)
	}
}

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

// testRejectedCells: a command that needs something pending fails in
// every state, emits nothing and leaves the state as it was.
func testRejectedCells(t *testing.T, cmd any, code string) {
	for _, state := range tableStates {
		t.Run(state, func(t *testing.T) {
			c := newCell(t, state, nil)
			before := c.state()
			mark := c.rec.Len()
			failsWith(code)(t, c.send(cmd))
			if after := c.state(); !proto.Equal(before, after) {
				t.Errorf("get_state changed:\nbefore %v\nafter  %v", before, after)
			}
			c.check(mark, step{st: busyOrIdle(state), after: rest[state], history: restHistory[state]})
		})
	}
}

func busyOrIdle(state string) want {
	if state == "idle" {
		return want{state: "idle"}
	}
	return busyWant(state)
}

// testSwitchModelCells: model_switched at once; a request in flight
// finishes on the old model and the next one uses the new model.
func testSwitchModelCells(t *testing.T) {
	for _, state := range tableStates {
		t.Run(state, func(t *testing.T) {
			c := newCell(t, state, nil)
			mark := c.rec.Len()
			succeeds(t, c.send(&SwitchModel{Model: scriptModel(t, "script:b", tableB)}))
			st := busyOrIdle(state)
			st.model = "script:b"
			st.check(t, c.state())
			eventstest.ExpectTypes(t, c.since(mark), "model_switched")
			if m := c.rec.Events()[mark].GetModelSwitched(); m.GetFrom() != "script:inline" || m.GetTo() != "script:b" {
				t.Errorf("model_switched = %v", m)
			}
			// A prompt gives the model a next request to serve.
			mark = c.rec.Len()
			switch state {
			case "idle":
				// The prompt starts a run on model b at once.
				c.ok(&eventsv1.Prompt{Text: "next"})
				c.waitRunEnd("r-1")
				expectLabelled(t, "up to idle", c.since(mark), seq(runStart, answer, runEnd))
				if got, want := contents(c.history()), []string{"user:next", "assistant:B1"}; !slices.Equal(got, want) {
					t.Errorf("history = %q\nwant %q", got, want)
				}
				want{state: "idle", model: "script:b"}.check(t, c.state())
				checkLog(t, c.rec.Events())
			case "running", "streaming":
				c.ok(&eventsv1.Prompt{Text: "next"})
				c.check(mark, step{
					now: one("prompt_queued"), st: want{state: state, run: "r-1", prompts: []string{"next"}, model: "script:b"},
					after:   seq(rest[state][:len(rest[state])-len(runEnd)], one("turn_end", "message_committed"), nextTurn, answer, runEnd),
					history: []string{"user:go", "assistant:abcdefgh", "user:next", "assistant:B1"},
					final:   want{state: "idle", model: "script:b"},
				})
			case "executing_tools":
				c.check(mark, step{
					st:      want{state: state, run: "r-1", tools: []string{"hold", "hold_immune"}, model: "script:b"},
					after:   seq(toolEnd, toolEnd, twoResults, one("turn_end"), nextTurn, answer, runEnd),
					history: []string{"user:go", "assistant:", "tool:hold done", "tool:hold_immune done", "assistant:B1"},
					final:   want{state: "idle", model: "script:b"},
				})
			}
			var requests, usages []string
			for _, ev := range c.rec.Events() {
				if r := ev.GetRequestStart(); r != nil {
					requests = append(requests, r.Model)
				}
				if u := ev.GetTokenUsage(); u != nil {
					usages = append(usages, u.Model)
				}
			}
			models := []string{"script:inline", "script:b"}
			if state == "idle" {
				models = models[1:]
			}
			if !slices.Equal(requests, models) {
				t.Errorf("request_start models = %q, want %q", requests, models)
			}
			if !slices.Equal(usages, models) {
				t.Errorf("token_usage models = %q, want %q (usage is reported for the model that served it)", usages, models)
			}
		})
	}
}
