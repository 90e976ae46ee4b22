package actors

import (
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/events/eventstest"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/tools"
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
