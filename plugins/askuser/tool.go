package askuser

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/tack-run/tack/tools"
)

// ToolName is the name of the tool the plugin brings.
const ToolName = "ask_user"

// schema is the ask_user tool's argument schema.
const schema = `{
  "type": "object",
  "properties": {
    "question": {"type": "string", "minLength": 1, "description": "The question, as the person will read it."},
    "options": {"type": "array", "items": {"type": "string"}, "description": "Answers to offer; the person may still answer in their own words."}
  },
  "required": ["question"],
  "additionalProperties": false
}`

// ErrAnsweredByPerson is what the tool's Run returns: the runtime never
// runs it while the plugin is configured.
var ErrAnsweredByPerson = errors.New("ask_user is answered by a person through respond")

// Tool returns the killable tool "ask_user". Its Run only returns
// ErrAnsweredByPerson: the plugin's before_tool answer (ask) stands in
// for it. It holds no state, so every session's plugin brings the same
// one: its compiled schema, most of its size, is about 6 KiB, which each
// session kept when the tool was made anew for it.
func Tool() tools.Tool { return tool() }

var tool = sync.OnceValue(func() tools.Tool {
	return tools.Define(tools.Spec{
		Name:        ToolName,
		Description: "Ask the person you are working for a question and wait for the answer, which comes back as this tool's result. Use it when you need a decision or information only they have; offer options when the answer is a choice.",
		Schema:      json.RawMessage(schema),
		Kind:        tools.Killable,
	}, func(context.Context, json.RawMessage, func(string)) (string, error) {
		return "", ErrAnsweredByPerson
	})
})
