package agui

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/events/eventjson"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// Translator turns the events of one Tack session into the AG-UI events of
// one AG-UI run: Start opens the run, Next translates each Tack event in
// seq order, and the run is over once Done reports true (RUN_FINISHED or
// RUN_ERROR has been returned). It does no I/O and reads no clock, so the
// same events always give the same AG-UI events.
type Translator struct {
	threadID, runID string

	response  string          // the assistant response in progress ("msg-<seq>"), "" when none
	text      string          // the open text message, "" when none
	streamed  strings.Builder // what the open text message holds so far
	reasoning string          // the open reasoning message, "" when none
	thought   strings.Builder // what the open reasoning message holds so far

	waiting   []Interrupt // approvals and questions waiting, in the order asked
	lastError *eventsv1.Error
	done      bool
}

// NewTranslator starts the translation of the AG-UI run runID of thread
// threadID. waiting names approvals and questions that were pending before
// the run and still are: when the session next goes idle they end the run
// as its interrupts.
func NewTranslator(threadID, runID string, waiting ...Interrupt) *Translator {
	return &Translator{threadID: threadID, runID: runID, waiting: waiting}
}

// Start returns the run's first event, RUN_STARTED.
func (t *Translator) Start() []Event {
	return []Event{&RunStartedEvent{Type: RunStarted, ThreadID: t.threadID, RunID: t.runID}}
}

// Done reports whether the run has ended.
func (t *Translator) Done() bool { return t.done }

// Next translates one Tack event. After the run has ended it returns
// nothing.
func (t *Translator) Next(ev *eventsv1.Event) []Event {
	if t.done {
		return nil
	}
	var out []Event
	switch p := ev.GetPayload().(type) {
	case *eventsv1.Event_MessageStart:
		out = t.closeResponse(out, nil)
		t.response = "msg-" + seqString(ev)
	case *eventsv1.Event_ThinkingStart:
		out = t.openReasoning(out, ev)
	case *eventsv1.Event_ThinkingDelta:
		out = t.think(t.openReasoning(out, ev), p.ThinkingDelta.GetDelta())
	case *eventsv1.Event_MessageDelta:
		out = t.write(t.openText(t.closeReasoning(out, ""), ev), p.MessageDelta.GetDelta())
	case *eventsv1.Event_ResponseComplete:
		out = t.closeResponse(out, p.ResponseComplete.GetMessage())
	case *eventsv1.Event_MessageCommitted:
		out = t.committed(out, ev, p.MessageCommitted.GetMessage())
	case *eventsv1.Event_AgentEnd:
		out = t.end(t.closeResponse(out, nil), p.AgentEnd)
	default:
		out = append(out, custom(ev))
		out = t.track(out, ev)
	}
	return out
}

// track follows what decides how the run ends: holds asked and answered,
// errors, and the session going idle with holds waiting.
func (t *Translator) track(out []Event, ev *eventsv1.Event) []Event {
	switch p := ev.GetPayload().(type) {
	case *eventsv1.Event_ApprovalRequired:
		t.waiting = append(t.waiting, ApprovalInterrupt(p.ApprovalRequired.GetApprovalId(), p.ApprovalRequired.GetTool(),
			p.ApprovalRequired.GetCallId(), p.ApprovalRequired.GetArgs().GetJson(), p.ApprovalRequired.GetHint()))
	case *eventsv1.Event_AskUser:
		t.waiting = append(t.waiting, QuestionInterrupt(p.AskUser.GetRef(), p.AskUser.GetQuestion(), p.AskUser.GetOptions()))
	case *eventsv1.Event_ApprovalResolved:
		t.answered(p.ApprovalResolved.GetApprovalId())
	case *eventsv1.Event_UserResponded:
		t.answered(p.UserResponded.GetRef())
	case *eventsv1.Event_Error:
		t.lastError = p.Error
	case *eventsv1.Event_StateChanged:
		if p.StateChanged.GetTo() == "idle" && len(t.waiting) > 0 {
			out = append(out, t.Idle()...)
		}
	}
	return out
}

// answered forgets the hold id.
func (t *Translator) answered(id string) {
	for i, w := range t.waiting {
		if w.ID == id {
			t.waiting = append(t.waiting[:i:i], t.waiting[i+1:]...)
			return
		}
	}
}

// committed handles a message entering the history: a tool result becomes
// TOOL_CALL_RESULT; an assistant message cut short (no response_complete,
// as when a run is aborted mid-stream) completes its response; a user
// message the client did not send itself travels as CUSTOM.
func (t *Translator) committed(out []Event, ev *eventsv1.Event, m *eventsv1.Message) []Event {
	switch m.GetRole() {
	case "tool":
		content := m.GetContent()
		if m.GetIsError() {
			content = "error: " + content
		}
		return append(out, &ToolCallResultEvent{Type: ToolCallResult, MessageID: "result-" + seqString(ev),
			ToolCallID: m.GetToolCallId(), Content: content, Role: "tool"})
	case "assistant":
		return t.closeResponse(out, m)
	default:
		return append(out, custom(ev))
	}
}

// end closes the run on agent_end: RUN_ERROR when it failed, else
// RUN_FINISHED, cancelled when it was aborted.
func (t *Translator) end(out []Event, e *eventsv1.AgentEnd) []Event {
	t.done = true
	if e.GetReason() == "error" {
		code, msg := "error", "the run ended with an error"
		if t.lastError != nil {
			code, msg = t.lastError.GetCode(), t.lastError.GetMessage()
		}
		return append(out, &RunErrorEvent{Type: RunError, Message: msg, Code: code})
	}
	outcome := OutcomeSuccess
	if e.GetReason() == "aborted" {
		outcome = OutcomeCancelled
	}
	fin := &RunFinishedEvent{Type: RunFinished, ThreadID: t.threadID, RunID: t.runID,
		Result: &RunResult{Reason: e.GetReason()}, Outcome: Outcome{Type: outcome}}
	if u := e.GetUsage(); u != nil {
		fin.Usage = []TokenUsage{{InputTokens: u.GetInputTokens(), OutputTokens: u.GetOutputTokens(),
			TotalTokens: u.GetTotalTokens(), ReasoningTokens: u.GetReasoningTokens(), CachedInputTokens: u.GetCachedInputTokens()}}
	}
	return append(out, fin)
}

// Idle ends the run because the session is idle and nothing more will
// come of it: with the approvals and questions waiting as its interrupts,
// or, when none wait, as a success. After the run has ended it returns
// nothing.
func (t *Translator) Idle() []Event {
	if t.done {
		return nil
	}
	out := t.closeResponse(nil, nil)
	t.done = true
	outcome := Outcome{Type: OutcomeSuccess}
	if len(t.waiting) > 0 {
		outcome = Outcome{Type: OutcomeInterrupt, Interrupts: t.waiting}
	}
	return append(out, &RunFinishedEvent{Type: RunFinished, ThreadID: t.threadID, RunID: t.runID, Outcome: outcome})
}

// Fail ends the run with RUN_ERROR for a reason outside the session's
// events (the session closed under it). After the run has ended it
// returns nothing.
func (t *Translator) Fail(code, message string) []Event {
	if t.done {
		return nil
	}
	out := t.closeResponse(nil, nil)
	t.done = true
	return append(out, &RunErrorEvent{Type: RunError, Message: message, Code: code})
}

// openReasoning opens a reasoning message unless one is open.
func (t *Translator) openReasoning(out []Event, ev *eventsv1.Event) []Event {
	if t.reasoning != "" {
		return out
	}
	t.reasoning = "reasoning-" + seqString(ev)
	t.thought.Reset()
	return append(out, &MessageEvent{Type: ReasoningStart, MessageID: t.reasoning},
		&StartEvent{Type: ReasoningMessageStart, MessageID: t.reasoning, Role: "reasoning"})
}

// think appends a delta to the open reasoning message.
func (t *Translator) think(out []Event, delta string) []Event {
	if delta == "" {
		return out
	}
	t.thought.WriteString(delta)
	return append(out, &ContentEvent{Type: ReasoningMessageContent, MessageID: t.reasoning, Delta: delta})
}

// closeReasoning sends what full holds beyond what was streamed, then
// closes the open reasoning message.
func (t *Translator) closeReasoning(out []Event, full string) []Event {
	if t.reasoning == "" {
		return out
	}
	out = t.think(out, rest(full, t.thought.String()))
	out = append(out, &MessageEvent{Type: ReasoningMessageEnd, MessageID: t.reasoning},
		&MessageEvent{Type: ReasoningEnd, MessageID: t.reasoning})
	t.reasoning = ""
	return out
}

// openText opens the response's text message unless it is open.
func (t *Translator) openText(out []Event, ev *eventsv1.Event) []Event {
	if t.text != "" {
		return out
	}
	if t.response == "" { // a delta without message_start
		t.response = "msg-" + seqString(ev)
	}
	t.text = t.response
	t.streamed.Reset()
	return append(out, &StartEvent{Type: TextMessageStart, MessageID: t.text, Role: "assistant"})
}

// write appends a delta to the open text message.
func (t *Translator) write(out []Event, delta string) []Event {
	if delta == "" {
		return out
	}
	t.streamed.WriteString(delta)
	return append(out, &ContentEvent{Type: TextMessageContent, MessageID: t.text, Delta: delta})
}

// closeResponse completes the assistant response in progress, if any: m,
// when known, is the whole message, whose text beyond what was streamed is
// sent (such as the "[interrupted]" mark of an aborted stream) and whose
// tool calls are announced. A response is completed once, by whichever of
// response_complete, its message_committed, the next message_start or the
// end of the run comes first.
func (t *Translator) closeResponse(out []Event, m *eventsv1.Message) []Event {
	out = t.closeReasoning(out, m.GetThinking())
	if t.response == "" {
		return out
	}
	if t.text == "" && m.GetContent() != "" {
		t.text = t.response
		t.streamed.Reset()
		out = append(out, &StartEvent{Type: TextMessageStart, MessageID: t.text, Role: "assistant"})
	}
	if t.text != "" {
		out = t.write(out, rest(m.GetContent(), t.streamed.String()))
		out = append(out, &MessageEvent{Type: TextMessageEnd, MessageID: t.text})
		t.text = ""
	}
	for _, tc := range m.GetToolCalls() {
		args := string(tc.GetArgs().GetJson())
		if args == "" {
			args = "{}"
		}
		out = append(out,
			&ToolCallStartEvent{Type: ToolCallStart, ToolCallID: tc.GetId(), ToolCallName: tc.GetName(), ParentMessageID: t.response},
			&ToolCallArgsEvent{Type: ToolCallArgs, ToolCallID: tc.GetId(), Delta: args},
			&ToolCallEndEvent{Type: ToolCallEnd, ToolCallID: tc.GetId()})
	}
	t.response = ""
	return out
}

// ApprovalInterrupt is the interrupt of a tool call held for approval.
func ApprovalInterrupt(id, tool, callID string, args []byte, hint string) Interrupt {
	if len(args) == 0 {
		args = []byte("{}")
	}
	return Interrupt{ID: id, Reason: ReasonApproval, Message: hint, ToolCallID: callID,
		ResponseSchema: approvalSchema,
		Metadata:       map[string]any{"tool": tool, "call_id": callID, "args": json.RawMessage(args), "hint": hint}}
}

// QuestionInterrupt is the interrupt of an ask_user question.
func QuestionInterrupt(ref, question string, options []string) Interrupt {
	if options == nil {
		options = []string{}
	}
	return Interrupt{ID: ref, Reason: ReasonQuestion, Message: question, ResponseSchema: questionSchema,
		Metadata: map[string]any{"question": question, "options": options}}
}

// The resume payloads each kind of interrupt takes, as JSON Schemas.
var (
	approvalSchema = json.RawMessage(`{"type":"object","properties":{"approved":{"type":"boolean"},"always":{"type":"boolean"},"reason":{"type":"string"}},"required":["approved"]}`)
	questionSchema = json.RawMessage(`{"type":"object","properties":{"response":{"type":"string"}},"required":["response"]}`)
)

// custom wraps a Tack event as a CUSTOM event: its type and its JSON.
func custom(ev *eventsv1.Event) Event {
	return &CustomEvent{Type: Custom, Name: events.Type(ev), Value: eventjson.Append(nil, ev)}
}

// rest is what full holds beyond prefix: "" unless full extends prefix.
func rest(full, prefix string) string {
	if len(full) > len(prefix) && strings.HasPrefix(full, prefix) {
		return full[len(prefix):]
	}
	return ""
}

// seqString is the event's seq in decimal, the base of the ids this
// package gives messages: unique within a session.
func seqString(ev *eventsv1.Event) string { return strconv.FormatUint(ev.GetSeq(), 10) }
