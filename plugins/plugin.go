package plugins

import (
	"encoding/json"
	"time"

	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/tools"
)

// Hook names a point in a session's flow where plugins are asked.
type Hook string

// The hooks, in the order a run meets them.
const (
	SessionStart   Hook = "session_start"
	BeforePrompt   Hook = "before_prompt"
	BeforeSteering Hook = "before_steering"
	BeforeRequest  Hook = "before_request"
	AfterResponse  Hook = "after_response"
	BeforeTool     Hook = "before_tool"
	OnToolError    Hook = "on_tool_error"
	AfterTool      Hook = "after_tool"
	AfterToolBatch Hook = "after_tool_batch"
	BeforeFinish   Hook = "before_finish"
	BeforeCompact  Hook = "before_compact"
	AfterTurn      Hook = "after_turn"
	SessionEnd     Hook = "session_end"
)

// Plugin is something that hooks into sessions. A session gets its own
// instance (from a Factory), so a plugin may keep per-session state in its
// fields; Handle is called from one goroutine at a time.
type Plugin interface {
	// Name identifies the plugin in events and configuration.
	Name() string
	// Priority orders plugins: 1–1000, lower runs first.
	Priority() int
	// Hooks lists the hooks Handle wants; others are never called.
	Hooks() []Hook
	// Handle answers one hook with actions; nil means continue. It must
	// return within the session's hook budget: a plugin that needs to wait
	// (for a person, a network call) answers with an action that defers
	// the decision — hold_for_approval or ask — and never blocks.
	Handle(ev *Event) []Action
}

// ToolProvider is a Plugin that brings tools of its own (ask_user does);
// the session attaches them when the plugin is configured.
type ToolProvider interface {
	Tools() []tools.Tool
}

// Event is what a hook sees. Only the fields of the hook are set; every
// slice and message is shared with the session and must not be changed.
type Event struct {
	Hook    Hook
	Session string
	RunID   string
	Turn    int32
	// Text is the prompt (before_prompt), steering text (before_steering)
	// or the summary a compaction would commit (before_compact).
	Text string
	// Messages is the history (before_request), or the messages a
	// compaction would replace (before_compact).
	Messages []*llm.Message
	// Message is the model's response (after_response).
	Message *llm.Message
	// Call is the tool call (before_tool, on_tool_error, after_tool); its
	// arguments already carry earlier plugins' replacements.
	Call *llm.ToolCall
	// Result is the tool's result (after_tool, on_tool_error), with earlier
	// plugins' replacements.
	Result *tools.Result
	// Attempt counts the tries of the call, 1 for the first (on_tool_error).
	Attempt int
	// Results are the batch's results in call order (after_tool_batch).
	Results []CallResult
	// Reason is how the turn ended (after_turn): "completed", "aborted", ...
	Reason string
	// Usage is what the run and the session have spent so far.
	Usage Usage
	// Workspace is where the session's tools work (its directory is
	// Workspace.Dir of a context marked with tools.WithSession), nil when
	// the runtime has none: a plugin that leaves files for the model to
	// read puts them there.
	Workspace tools.Workspace
}

// CallResult is one call of a batch and its result.
type CallResult struct {
	Call   *llm.ToolCall
	Result tools.Result
}

// Usage is what a run and its session have spent.
type Usage struct {
	RunTurns         int32
	RunTokens        int64
	RunCostUSD       float64
	SessionTokens    int64
	SessionCostUSD   float64
	ContextUsed      int64
	ContextWindow    int64
	SessionStartedAt time.Time
}

// Factory makes a plugin instance for one session from its configuration
// (the raw "config" object of create_session; empty when absent).
type Factory func(config json.RawMessage) (Plugin, error)
