package plugins

import (
	"encoding/json"
	"time"

	"google.golang.org/protobuf/proto"
)

// Kind is what an action does.
type Kind string

// The actions. Which hook may answer with which is Allowed.
const (
	// Continue changes nothing.
	Continue Kind = "continue"
	// Intervene injects Text into the context before the next request
	// (an intervention event and a user message).
	Intervene Kind = "intervene"
	// Abort ends the run like the user's abort, with agent_end carrying
	// Reason (default "aborted"); when Text is set an error event with code
	// Reason and message Text says why.
	Abort Kind = "abort"
	// Skip skips the step the hook guards (Reason: why).
	Skip Kind = "skip"
	// Emit publishes Event (a payload of the events/v1 vocabulary, such as
	// LoopDetected) when set, else a plugin_event with Name and Payload.
	Emit Kind = "emit"
	// SwitchModel switches the session to Model for the next request.
	SwitchModel Kind = "switch_model"
	// BlockTool answers the call with an error result (Reason) instead of
	// running it; tool_blocked.
	BlockTool Kind = "block_tool"
	// ReplaceToolArgs runs the call with Args instead.
	ReplaceToolArgs Kind = "replace_tool_args"
	// HoldForApproval holds the call until a person approves or rejects
	// it (approval_required, with Hint); Family is the command family an
	// "always" approval records; Timeout is how long to wait (0: the
	// runtime's default); AutoResume continues the run after a rejection.
	HoldForApproval Kind = "hold_for_approval"
	// Ask holds the call as a question to a person (ask_user, with Text
	// and Options); the answer becomes the call's result. Tack's extension
	// of the hook table, for the ask_user tool.
	Ask Kind = "ask"
	// Retry runs the failed call again.
	Retry Kind = "retry"
	// ReplaceToolResult commits Result (IsError) instead of the tool's.
	ReplaceToolResult Kind = "replace_tool_result"
	// Reject refuses the steering message (Reason).
	Reject Kind = "reject"
	// ReplaceSummary makes Text the summary a compaction commits
	// (before_compact).
	ReplaceSummary Kind = "replace_summary"
)

// Action is a plugin's answer to a hook.
type Action struct {
	Kind       Kind
	Text       string
	Reason     string
	AutoResume bool
	Event      proto.Message
	Args       json.RawMessage
	Result     string
	IsError    bool
	Model      string
	Hint       string
	Family     string
	Options    []string
	Timeout    time.Duration
	Name       string
	Payload    json.RawMessage
}

// Allowed lists, for each hook, the actions it may answer with (Continue
// and Emit everywhere).
var Allowed = map[Hook][]Kind{
	SessionStart:   {Abort},
	SessionEnd:     {},
	BeforePrompt:   {Intervene, Abort, Skip},
	BeforeRequest:  {Intervene, Abort, Skip, SwitchModel},
	AfterResponse:  {Intervene, Abort, Skip, SwitchModel},
	BeforeTool:     {BlockTool, ReplaceToolArgs, HoldForApproval, Ask, Abort},
	OnToolError:    {Retry, Abort, Skip, SwitchModel},
	AfterTool:      {ReplaceToolResult, Intervene, Abort, SwitchModel},
	AfterToolBatch: {Intervene, Abort, SwitchModel},
	BeforeFinish:   {Intervene, Abort},
	BeforeCompact:  {Skip, ReplaceSummary},
	BeforeSteering: {Reject, Intervene},
	AfterTurn:      {},
}

// allowed reports whether hook h may answer with kind k.
func allowed(h Hook, k Kind) bool {
	if k == Continue || k == Emit {
		return true
	}
	for _, a := range Allowed[h] {
		if a == k {
			return true
		}
	}
	return false
}
