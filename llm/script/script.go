package script

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/tack-run/tack/internal/strictjson"
)

// Script is a parsed script (docs/protocol.md#the-scripted-model). Build
// one with Parse, Load or Demo; do not modify it once a Provider plays it.
type Script struct {
	// ContextWindow is the context window the model claims; 0 is unknown.
	ContextWindow int64 `json:"context_window,omitempty"`
	// Turns are played in order, one per model request.
	Turns []Turn `json:"turns"`
	// WhenExhausted says what requests get after the last turn; Parse turns
	// an absent value into RepeatLast.
	WhenExhausted Exhausted `json:"when_exhausted,omitempty"`
}

// Turn is one scripted model response. Its parts play in this order:
// DelayMS, thinking, text (StallMS after the first of their chunks), tool
// calls, then Error or success.
type Turn struct {
	// DelayMS is the wait before the first chunk (the session stays running).
	DelayMS int64 `json:"delay_ms,omitempty"`
	// Thinking streams as ChunkThinkingStart, then ChunkThinking chunks.
	Thinking string `json:"thinking,omitempty"`
	// Text streams as ChunkText chunks, after the thinking.
	Text string `json:"text,omitempty"`
	// ChunkSize is the length of thinking and text chunks in characters
	// (runes); 0 sends each whole in one chunk.
	ChunkSize int `json:"chunk_size,omitempty"`
	// ChunkDelayMS is the wait before each thinking or text chunk but the
	// first.
	ChunkDelayMS int64 `json:"chunk_delay_ms,omitempty"`
	// ToolCalls are emitted, one ChunkToolCall each, right after the text.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// Usage is reported as given; when nil it is estimated at 4 characters
	// a token.
	Usage *Usage `json:"usage,omitempty"`
	// Error, when set, fails the request once the rest of the turn played.
	Error *Failure `json:"error,omitempty"`
	// StallMS is a silence after the first thinking or text chunk (after
	// DelayMS when there is none), before the rest of the turn.
	StallMS int64 `json:"stall_ms,omitempty"`
	// Report appends to Text what the request received, as one line of
	// JSON: {"message_count": N, "images": [{"url": ..., "detail": ...}]},
	// the images of every message in order; so a test sees, over any
	// transport, what reached the model.
	Report bool `json:"report,omitempty"`
}

// ToolCall is a tool call a turn makes. Its id is assigned when played.
type ToolCall struct {
	// Name is the tool's name; required.
	Name string `json:"name"`
	// Args is a JSON object; absent means {}.
	Args json.RawMessage `json:"args,omitempty"`
}

// Usage is the token usage a turn reports.
type Usage struct {
	// InputTokens is the prompt's size in tokens.
	InputTokens int64 `json:"input_tokens"`
	// OutputTokens is the response's size in tokens.
	OutputTokens int64 `json:"output_tokens"`
}

// Failure makes a turn fail like an HTTP error of the provider.
type Failure struct {
	// Status is the HTTP status (100-599), or 0 for a transport failure.
	Status int `json:"status"`
	// Message defaults to the status text.
	Message string `json:"message,omitempty"`
}

// Exhausted says what a Provider answers once a script has no turns left.
type Exhausted string

// Values of Script.WhenExhausted.
const (
	// RepeatLast plays the last turn again (the default).
	RepeatLast Exhausted = "repeat_last"
	// Fail fails each request with *llm.Error{Status: 400, Message: "script exhausted"}.
	Fail Exhausted = "error"
	// Echo answers with the text of the last user message of the request.
	Echo Exhausted = "echo"
)

// Parse reads a script from JSON. Unknown fields are errors naming where
// they are (`unknown field "delay" in turns[0]`), so that a misspelt field
// does not silently do nothing.
func Parse(data []byte) (*Script, error) {
	s, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("script: %w", err)
	}
	return s, nil
}

// Load reads and parses the script file at path.
func Load(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("script: %w", err)
	}
	s, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("script %s: %w", path, err)
	}
	return s, nil
}

func parse(data []byte) (*Script, error) {
	var s Script
	if err := strictjson.Decode(data, &s); err != nil {
		return nil, err
	}
	if s.WhenExhausted == "" {
		s.WhenExhausted = RepeatLast
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	for i := range s.Turns {
		if err := s.Turns[i].compactArgs(); err != nil {
			return nil, fmt.Errorf("turn %d: %w", i+1, err)
		}
	}
	return &s, nil
}

// compactArgs removes insignificant space from the arguments, keeping key
// order and number spelling, and fills absent ones with {}.
func (t *Turn) compactArgs() error {
	for j := range t.ToolCalls {
		c := &t.ToolCalls[j]
		if len(c.Args) == 0 {
			c.Args = json.RawMessage("{}")
			continue
		}
		var b bytes.Buffer
		if err := json.Compact(&b, c.Args); err != nil {
			return fmt.Errorf("tool call %d: %w", j+1, err)
		}
		c.Args = b.Bytes()
	}
	return nil
}
