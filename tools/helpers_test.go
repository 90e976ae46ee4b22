package tools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/tack-run/tack/tools"
)

// fake returns a tool called name with the given schema that answers "ok".
func fake(name, schema string) tools.Tool {
	return tools.Define(tools.Spec{Name: name, Description: "test tool", Schema: json.RawMessage(schema)},
		func(context.Context, json.RawMessage, func(string)) (string, error) { return "ok", nil })
}

const sleepSchema = `{"type":"object","properties":{"ms":{"type":"integer","minimum":0}},"required":["ms"],"additionalProperties":false}`

const shellSchema = `{"type":"object","properties":{"command":{"type":"string"}},"required":["command"],"additionalProperties":false}`

func mustSet(t *testing.T, ts ...tools.Tool) *tools.Set {
	t.Helper()
	s, err := tools.NewSet(ts...)
	if err != nil {
		t.Fatalf("NewSet: %v", err)
	}
	return s
}
