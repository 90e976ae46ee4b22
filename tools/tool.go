package tools

import (
	"context"
	"encoding/json"
)

// Kind tells how a tool reacts to an abort or a steering message.
type Kind uint8

const (
	// Killable tools are cancelled by abort (kill_tools killable or all) and by steering.
	Killable Kind = iota
	// Immune tools run to the end unless abort says kill_tools all.
	Immune
)

// String returns "killable" or "immune", the words used in logs and docs.
func (k Kind) String() string {
	switch k {
	case Killable:
		return "killable"
	case Immune:
		return "immune"
	default:
		return "unknown"
	}
}

// Spec describes a tool.
type Spec struct {
	Name        string
	Description string
	// Schema is the JSON Schema of the arguments (an object schema).
	Schema json.RawMessage
	Kind   Kind
}

// Tool is something a model can call. Run gets arguments already validated
// against Spec().Schema (never empty: [Execute] passes {} for absent
// arguments). It should return promptly once ctx is cancelled; a tool that
// does not is abandoned by the runtime. update streams partial output
// (tool_execution_update); it is safe to call from any goroutine until Run
// returns. A returned error becomes an error tool result.
type Tool interface {
	Spec() Spec
	Run(ctx context.Context, args json.RawMessage, update func(partial string)) (string, error)
}
