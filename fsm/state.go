package fsm

import "slices"

// State is a session state.
type State string

// The session states (docs/state-machine.md).
const (
	// Idle: no run in progress; the session waits for a prompt.
	Idle State = "idle"
	// Running: a model request was sent and no chunk has arrived yet.
	Running State = "running"
	// Streaming: chunks of the model's response are arriving.
	Streaming State = "streaming"
	// ExecutingTools: the model finished and a batch of tool calls is running.
	ExecutingTools State = "executing_tools"
)

// states are the states in their order; the compiled table is indexed by it.
var states = [...]State{Idle, Running, Streaming, ExecutingTools}

// States returns every state, idle first.
func States() []State { return slices.Clone(states[:]) }

// Event is something that happened to a session and may move its state.
type Event string

// The events of a session and the transitions they cause.
const (
	// Start begins a run: idle -> running.
	Start Event = "start"
	// FirstChunk marks the first chunk of a response: running -> streaming.
	FirstChunk Event = "first_chunk"
	// ToolCalls starts the tool batch a response asked for:
	// running, streaming -> executing_tools.
	ToolCalls Event = "tool_calls"
	// NextTurn sends the next model request of the run:
	// running, streaming, executing_tools -> running.
	NextTurn Event = "next_turn"
	// Finish ends the run (completed or failed):
	// running, streaming, executing_tools -> idle.
	Finish Event = "finish"
	// Abort ends the run on an abort command:
	// running, streaming, executing_tools -> idle.
	Abort Event = "abort"
	// Resume takes up a run that paused, idle, for a person's answer (an
	// approval or a question): idle -> executing_tools.
	Resume Event = "resume"
)

// events are the events in the order of the transition table; the compiled
// table is indexed by it.
var events = [...]Event{Start, FirstChunk, ToolCalls, NextTurn, Finish, Abort, Resume}

// Events returns every event, in the order of the transition table.
func Events() []Event { return slices.Clone(events[:]) }
