package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	eventsv1 "github.com/tack-run/tack/events/v1"
)

// Message is one entry of a conversation history. It is the protobuf type
// of the event vocabulary, so a committed message crosses process and actor
// boundaries unchanged. Treat a committed Message as immutable.
type Message = eventsv1.Message

// ToolCall is one call an assistant message asks for.
type ToolCall = eventsv1.ToolCall

// Usage counts tokens and dollars.
type Usage = eventsv1.Usage

// Roles of a Message.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Stop reasons of a Response.
const (
	StopEnd       = "end_turn"
	StopToolCalls = "tool_calls"
	StopLength    = "length"
	StopRefusal   = "refusal"
	StopError     = "error"
	StopAborted   = "aborted"
)

// ToolSpec describes a tool to the model.
type ToolSpec struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments.
	Parameters json.RawMessage
}

// Request is one model request.
type Request struct {
	// Model is the model's name as its provider knows it.
	Model    string
	System   string
	Messages []*Message
	Tools    []ToolSpec
	// CallsBefore counts the tool calls of the session's history that
	// Messages leaves out (trimmed, or replaced by compaction). Providers
	// ignore it; the scripted model numbers its call ids after them.
	CallsBefore int
}

// ChunkKind tells what a Chunk carries.
type ChunkKind uint8

// Kinds of Chunk.
const (
	// ChunkText carries assistant text in Text.
	ChunkText ChunkKind = iota + 1
	// ChunkThinkingStart marks the start of reasoning output.
	ChunkThinkingStart
	// ChunkThinking carries reasoning text in Text.
	ChunkThinking
	// ChunkToolCall carries one complete tool call in ToolCall.
	ChunkToolCall
	// ChunkRetry reports a failed attempt that will be retried after Delay:
	// Attempt numbers the retry (1 for the first), Text gives the reason.
	// It comes only before any output.
	ChunkRetry
	// ChunkStalled reports that no data has arrived for Elapsed.
	ChunkStalled
)

// Chunk is one streamed piece of a response.
type Chunk struct {
	Kind     ChunkKind
	Text     string
	ToolCall *ToolCall
	Attempt  int
	Delay    time.Duration
	Elapsed  time.Duration
}

// Response is a finished model response.
type Response struct {
	// Message is the assistant message, tool calls included. A call's id
	// may be one the session's history holds already (a provider sees
	// only the request's messages): the session makes each id unique in
	// its history before it commits the message.
	Message    *Message
	StopReason string
	// Usage is nil when the provider did not report any.
	Usage *Usage
}

// Provider streams model responses. Stream calls emit, on the calling
// goroutine, for each chunk as it arrives, and returns the whole response
// once the model is done. It returns promptly with ctx's error when ctx is
// cancelled. A failed request returns an *Error. A session's emit may
// wait while the session is behind (backpressure: over a thousand chunks
// not yet taken); it returns once ctx is done.
type Provider interface {
	Stream(ctx context.Context, req *Request, emit func(Chunk)) (*Response, error)
}

// Error is a failed model request.
type Error struct {
	// Status is the HTTP status, 0 for a transport failure.
	Status  int
	Message string
	// Overflow marks a request the model refused because the context
	// window is exceeded.
	Overflow bool
}

func (e *Error) Error() string {
	if e.Status == 0 {
		return e.Message
	}
	return fmt.Sprintf("HTTP %d: %s", e.Status, e.Message)
}

// Cost is a model's price in dollars per million tokens.
type Cost struct {
	Input       float64
	Output      float64
	CachedInput float64
}

// Model is a model resolved for one session: its name, the provider that
// streams it (a per-session instance, so scripted models keep a position
// per session), its context window and its price.
type Model struct {
	// Name is how the session and its events name the model
	// ("script:demo.json", "local/qwen3-8b").
	Name string
	// ID is the model's name as its provider knows it.
	ID       string
	Provider Provider
	// ContextWindow is 0 when unknown.
	ContextWindow int64
	Cost          Cost
	// ProvidesTools lists tool names this model brings along (the demo tools
	// for scripted models); the session attaches them.
	ProvidesTools []string
}

// Resolver turns a model name (and, for inline scripts, a script) into a
// Model for one session. It returns an error wrapping ErrUnknownModel when
// the name means nothing to it.
//
// A session keeps its model by the name the resolver gave it (Model.Name,
// with its inline script), and a session taken up again — restored from a
// store after a restart, woken after passivation, or started from the
// parked record a runtime that parks makes for a new session — is
// resolved anew from that name. A resolver should therefore resolve the
// names of the models it returns to the same models. A session whose
// model does not resolve again (ResolvesAgain) is kept loaded: it neither
// passivates nor parks, and a runtime that parks makes it loaded; after
// a restart, restoring it from a store fails with unknown_model.
type Resolver interface {
	Resolve(name string, inline json.RawMessage) (*Model, error)
}

// ResolvesAgain reports whether m, which r gave for the name asked (with
// the inline script inline), is had again by resolving its own name with
// inline, as a session taken up again resolves it. A model named as it
// was asked for is, with no second call to r.
func ResolvesAgain(r Resolver, m *Model, asked string, inline json.RawMessage) bool {
	if m.Name == asked {
		return true
	}
	_, err := r.Resolve(m.Name, inline)
	return err == nil
}

// ErrUnknownModel is wrapped by Resolver errors for names that resolve to no model.
var ErrUnknownModel = fmt.Errorf("unknown model")

// Stateful is a Provider that keeps state of its own for its session, such
// as the scripted model's position in its script. The session stores that
// state with every write, so a session restored after a restart goes on
// where it had got to rather than from the start. Both methods are safe to
// call while a request streams.
type Stateful interface {
	// SaveState returns the state to store; nil means nothing to keep.
	SaveState() []byte
	// LoadState takes up a state SaveState returned, before any request.
	LoadState(state []byte) error
}
