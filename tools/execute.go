package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
)

// Execute runs t on the calling goroutine and turns the outcome into a
// Result: a returned error becomes an error result carrying the error text,
// and a panic inside Run becomes an error result "tool panicked: <value>"
// instead of crashing the process. (A panic on a goroutine that the tool
// starts itself cannot be caught here.)
//
// Execute blocks until Run returns, which a tool that ignores ctx may delay
// indefinitely: the runtime calls it on a goroutine of its own and abandons
// that goroutine when it stops waiting. Empty or null args are passed to Run
// as {}; a nil update is replaced by one that drops the partials.
func Execute(ctx context.Context, t Tool, args json.RawMessage, update func(string)) (res Result) {
	if update == nil {
		update = func(string) {}
	}
	defer func() {
		if v := recover(); v != nil {
			res = Result{Content: fmt.Sprintf("tool panicked: %v", v), IsError: true}
		}
	}()
	out, err := t.Run(ctx, normalizeArgs(args), update)
	if err != nil {
		return Result{Content: err.Error(), IsError: true}
	}
	return Result{Content: out}
}

// normalizeArgs maps absent arguments (nil, blank, null) to {}.
func normalizeArgs(args json.RawMessage) json.RawMessage {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return json.RawMessage(`{}`)
	}
	return args
}
