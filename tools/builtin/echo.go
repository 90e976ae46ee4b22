package builtin

import (
	"context"
	"encoding/json"

	"github.com/tack-run/tack/tools"
)

const echoSchema = `{
  "type": "object",
  "properties": {
    "text": {"type": "string", "description": "The text to return."}
  },
  "required": ["text"],
  "additionalProperties": false
}`

// Echo returns the killable tool "echo", which answers with its text.
func Echo() tools.Tool {
	return tools.Define(tools.Spec{
		Name:        "echo",
		Description: "Return the given text unchanged.",
		Schema:      json.RawMessage(echoSchema),
		Kind:        tools.Killable,
	}, func(_ context.Context, args json.RawMessage, _ func(string)) (string, error) {
		var a struct {
			Text string `json:"text"`
		}
		if err := decodeArgs(args, &a); err != nil {
			return "", err
		}
		return a.Text, nil
	})
}
