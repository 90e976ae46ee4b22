package agui

import "encoding/json"

// EventType is the discriminator every AG-UI event carries in "type".
type EventType string

// The AG-UI event types this package sends (AG-UI 1.0, @ag-ui/core 1.0.0).
const (
	RunStarted              EventType = "RUN_STARTED"
	RunFinished             EventType = "RUN_FINISHED"
	RunError                EventType = "RUN_ERROR"
	TextMessageStart        EventType = "TEXT_MESSAGE_START"
	TextMessageContent      EventType = "TEXT_MESSAGE_CONTENT"
	TextMessageEnd          EventType = "TEXT_MESSAGE_END"
	ReasoningStart          EventType = "REASONING_START"
	ReasoningMessageStart   EventType = "REASONING_MESSAGE_START"
	ReasoningMessageContent EventType = "REASONING_MESSAGE_CONTENT"
	ReasoningMessageEnd     EventType = "REASONING_MESSAGE_END"
	ReasoningEnd            EventType = "REASONING_END"
	ToolCallStart           EventType = "TOOL_CALL_START"
	ToolCallArgs            EventType = "TOOL_CALL_ARGS"
	ToolCallEnd             EventType = "TOOL_CALL_END"
	ToolCallResult          EventType = "TOOL_CALL_RESULT"
	Custom                  EventType = "CUSTOM"
)

// Event is one AG-UI event: one of the structs below, each written as the
// JSON object the AG-UI schema describes for its type.
type Event interface {
	// EventType names the event.
	EventType() EventType
}

// RunStartedEvent opens a run.
type RunStartedEvent struct {
	Type     EventType `json:"type"`
	ThreadID string    `json:"threadId"`
	RunID    string    `json:"runId"`
}

// RunFinishedEvent closes a run that did not fail.
type RunFinishedEvent struct {
	Type     EventType    `json:"type"`
	ThreadID string       `json:"threadId"`
	RunID    string       `json:"runId"`
	Result   *RunResult   `json:"result,omitempty"`
	Outcome  Outcome      `json:"outcome"`
	Usage    []TokenUsage `json:"usage,omitempty"`
}

// RunResult is the result of a run that Tack ended: why it ended.
type RunResult struct {
	// Reason is agent_end's reason: completed, aborted, rejected, ...
	Reason string `json:"reason"`
}

// Outcome says why a run finished: "success", "interrupt" (with the
// interrupts waiting for a person) or "cancelled".
type Outcome struct {
	Type       string      `json:"type"`
	Interrupts []Interrupt `json:"interrupts,omitempty"`
}

// The outcome types.
const (
	OutcomeSuccess   = "success"
	OutcomeInterrupt = "interrupt"
	OutcomeCancelled = "cancelled"
)

// Interrupt is an approval or a question the run waits on. ID is the
// approval_id or the question's ref; Metadata carries Tack's own fields
// (tool, call_id, args and hint, or question and options), since the
// AG-UI client strips properties its schema does not describe.
type Interrupt struct {
	ID             string          `json:"id"`
	Reason         string          `json:"reason"`
	Message        string          `json:"message,omitempty"`
	ToolCallID     string          `json:"toolCallId,omitempty"`
	ResponseSchema json.RawMessage `json:"responseSchema,omitempty"`
	Metadata       map[string]any  `json:"metadata,omitempty"`
}

// The interrupt reasons.
const (
	ReasonApproval = "tool_approval"
	ReasonQuestion = "question"
)

// TokenUsage is a run's token counts in AG-UI's accounting.
type TokenUsage struct {
	InputTokens       int64 `json:"inputTokens"`
	OutputTokens      int64 `json:"outputTokens"`
	TotalTokens       int64 `json:"totalTokens"`
	ReasoningTokens   int64 `json:"reasoningTokens,omitempty"`
	CachedInputTokens int64 `json:"cachedInputTokens,omitempty"`
}

// RunErrorEvent ends a run that failed.
type RunErrorEvent struct {
	Type    EventType `json:"type"`
	Message string    `json:"message"`
	Code    string    `json:"code,omitempty"`
}

// StartEvent opens a message: TEXT_MESSAGE_START (role "assistant") or
// REASONING_MESSAGE_START (role "reasoning").
type StartEvent struct {
	Type      EventType `json:"type"`
	MessageID string    `json:"messageId"`
	Role      string    `json:"role"`
}

// ContentEvent appends a delta to a message: TEXT_MESSAGE_CONTENT or
// REASONING_MESSAGE_CONTENT.
type ContentEvent struct {
	Type      EventType `json:"type"`
	MessageID string    `json:"messageId"`
	Delta     string    `json:"delta"`
}

// MessageEvent is an event that names only a message: TEXT_MESSAGE_END,
// REASONING_START, REASONING_MESSAGE_END, REASONING_END.
type MessageEvent struct {
	Type      EventType `json:"type"`
	MessageID string    `json:"messageId"`
}

// ToolCallStartEvent opens a tool call of an assistant message.
type ToolCallStartEvent struct {
	Type            EventType `json:"type"`
	ToolCallID      string    `json:"toolCallId"`
	ToolCallName    string    `json:"toolCallName"`
	ParentMessageID string    `json:"parentMessageId"`
}

// ToolCallArgsEvent carries a tool call's arguments (as JSON text).
type ToolCallArgsEvent struct {
	Type       EventType `json:"type"`
	ToolCallID string    `json:"toolCallId"`
	Delta      string    `json:"delta"`
}

// ToolCallEndEvent closes a tool call: its arguments are complete.
type ToolCallEndEvent struct {
	Type       EventType `json:"type"`
	ToolCallID string    `json:"toolCallId"`
}

// ToolCallResultEvent carries a tool's committed result.
type ToolCallResultEvent struct {
	Type       EventType `json:"type"`
	MessageID  string    `json:"messageId"`
	ToolCallID string    `json:"toolCallId"`
	Content    string    `json:"content"`
	Role       string    `json:"role"`
}

// CustomEvent carries a Tack event AG-UI has no event for: Name is its
// type, Value its JSON (PROTOCOL §1).
type CustomEvent struct {
	Type  EventType       `json:"type"`
	Name  string          `json:"name"`
	Value json.RawMessage `json:"value"`
}

// EventType implements Event.
func (e *RunStartedEvent) EventType() EventType { return e.Type }

// EventType implements Event.
func (e *RunFinishedEvent) EventType() EventType { return e.Type }

// EventType implements Event.
func (e *RunErrorEvent) EventType() EventType { return e.Type }

// EventType implements Event.
func (e *StartEvent) EventType() EventType { return e.Type }

// EventType implements Event.
func (e *ContentEvent) EventType() EventType { return e.Type }

// EventType implements Event.
func (e *MessageEvent) EventType() EventType { return e.Type }

// EventType implements Event.
func (e *ToolCallStartEvent) EventType() EventType { return e.Type }

// EventType implements Event.
func (e *ToolCallArgsEvent) EventType() EventType { return e.Type }

// EventType implements Event.
func (e *ToolCallEndEvent) EventType() EventType { return e.Type }

// EventType implements Event.
func (e *ToolCallResultEvent) EventType() EventType { return e.Type }

// EventType implements Event.
func (e *CustomEvent) EventType() EventType { return e.Type }
