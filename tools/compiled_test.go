package tools

import (
	"context"
	"encoding/json"
	"testing"
)

// TestSetsShareACompiledSchema: the Sets that hold a tool made with
// Define, or one whose type embeds Compiled, share its compiled schema;
// another tool's is compiled for each Set.
func TestSetsShareACompiledSchema(t *testing.T) {
	spec := Spec{Name: "t", Schema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)}
	run := func(context.Context, json.RawMessage, func(string)) (string, error) { return "", nil }
	entries := func(tool Tool) (*entry, *entry) {
		t.Helper()
		a, err := NewSet(tool)
		if err != nil {
			t.Fatal(err)
		}
		b, err := (*Set)(nil).With(tool)
		if err != nil {
			t.Fatal(err)
		}
		return a.byName["t"], b.byName["t"]
	}
	if a, b := entries(Define(spec, run)); a != b {
		t.Error("two Sets of a defined tool compiled its schema twice")
	}
	if a, b := entries(&plainTool{spec: spec}); a == b || a.schema == b.schema {
		t.Error("a tool that does not embed Compiled shares an entry") // the test's own premise
	}
}

// plainTool is a Tool that does not embed Compiled.
type plainTool struct{ spec Spec }

func (p *plainTool) Spec() Spec { return p.spec }
func (p *plainTool) Run(context.Context, json.RawMessage, func(string)) (string, error) {
	return "", nil
}
