package loopdetect

import (
	"bytes"
	"encoding/json"

	"github.com/tack-run/tack/llm"
)

// call is what makes two calls the same: the tool and its arguments.
type call struct {
	tool string
	key  string // tool and canonical arguments
}

// callOf returns the identity of c.
func callOf(c *llm.ToolCall) call {
	return call{tool: c.GetName(), key: c.GetName() + "\x00" + canonical(c.GetArgs().GetJson())}
}

// canonical returns args as JSON with sorted keys and no insignificant
// space, numbers kept as written; absent arguments are {}, and arguments
// that are not JSON are returned as they are.
func canonical(args []byte) string {
	args = bytes.TrimSpace(args)
	if len(args) == 0 {
		return "{}"
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return string(args)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return string(args)
	}
	return string(out)
}
