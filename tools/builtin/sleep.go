package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tack-run/tack/tools"
)

// sleepSchema caps ms at one day, far beyond any demo and far below the
// overflow of time.Duration.
const sleepSchema = `{
  "type": "object",
  "properties": {
    "ms": {"type": "integer", "minimum": 0, "maximum": 86400000, "description": "How long to wait, in milliseconds."}
  },
  "required": ["ms"],
  "additionalProperties": false
}`

// Sleep returns the killable tool "sleep": it waits ms milliseconds and
// answers "slept <ms> ms", or returns ctx.Err() as soon as it is cancelled.
func Sleep() tools.Tool {
	return tools.Define(tools.Spec{
		Name:        "sleep",
		Description: "Wait for the given number of milliseconds, then report how long it waited. It stops early when the call is cancelled.",
		Schema:      json.RawMessage(sleepSchema),
		Kind:        tools.Killable,
	}, func(ctx context.Context, args json.RawMessage, _ func(string)) (string, error) {
		return sleepFor(ctx, args, true)
	})
}

// SleepStubborn returns the killable tool "sleep_stubborn", which ignores
// cancellation and always sleeps the full time: it shows that the runtime
// abandons a tool that does not stop when asked.
func SleepStubborn() tools.Tool {
	return tools.Define(tools.Spec{
		Name:        "sleep_stubborn",
		Description: "Wait for the given number of milliseconds, then report how long it waited. It ignores cancellation: a demo of a tool that does not stop when asked.",
		Schema:      json.RawMessage(sleepSchema),
		Kind:        tools.Killable,
	}, func(ctx context.Context, args json.RawMessage, _ func(string)) (string, error) {
		return sleepFor(ctx, args, false)
	})
}

// SleepImmune returns the immune tool "sleep_immune": abort and steering
// let it finish; it still stops when its ctx is cancelled, which only an
// abort with kill_tools all does.
func SleepImmune() tools.Tool {
	return tools.Define(tools.Spec{
		Name:        "sleep_immune",
		Description: "Wait for the given number of milliseconds, then report how long it waited. Steering messages and ordinary aborts do not interrupt it.",
		Schema:      json.RawMessage(sleepSchema),
		Kind:        tools.Immune,
	}, func(ctx context.Context, args json.RawMessage, _ func(string)) (string, error) {
		return sleepFor(ctx, args, true)
	})
}

// sleepFor sleeps for the ms of args, until ctx is done if honourCtx.
func sleepFor(ctx context.Context, args json.RawMessage, honourCtx bool) (string, error) {
	var a struct {
		MS float64 `json:"ms"` // float: JSON Schema counts 1.0 as an integer
	}
	if err := decodeArgs(args, &a); err != nil {
		return "", err
	}
	ms := int64(a.MS)
	if ms < 0 {
		return "", fmt.Errorf("invalid arguments: ms is %d, want at least 0", ms)
	}
	d := time.Duration(ms) * time.Millisecond
	if !honourCtx {
		time.Sleep(d)
	} else {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-t.C:
		}
	}
	return fmt.Sprintf("slept %d ms", ms), nil
}
