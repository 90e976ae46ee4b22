package builtin

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/tack-run/tack/tools"
)

// Demo returns the five demo tools of docs/protocol.md#demo-tools: sleep,
// sleep_stubborn, sleep_immune, echo and shell (running in the process's
// working directory).
func Demo() []tools.Tool {
	return []tools.Tool{Sleep(), SleepStubborn(), SleepImmune(), Echo(), Shell()}
}

// DemoNames returns the names of the tools of [Demo], sorted.
func DemoNames() []string {
	return []string{"echo", "shell", "sleep", "sleep_immune", "sleep_stubborn"}
}

// decodeArgs unmarshals a call's arguments into v; empty args leave v as is.
func decodeArgs(args json.RawMessage, v any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		return nil
	}
	if err := json.Unmarshal(args, v); err != nil {
		return fmt.Errorf("invalid arguments: %w", err)
	}
	return nil
}
