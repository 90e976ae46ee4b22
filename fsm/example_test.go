package fsm_test

import (
	"fmt"

	"github.com/tack-run/tack/fsm"
)

func Example() {
	m := fsm.New()
	for _, e := range []fsm.Event{fsm.Start, fsm.FirstChunk, fsm.ToolCalls, fsm.NextTurn, fsm.Finish, fsm.Finish} {
		from, to, err := m.Fire(e)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s: %s -> %s\n", e, from, to)
	}
	// Output:
	// start: idle -> running
	// first_chunk: running -> streaming
	// tool_calls: streaming -> executing_tools
	// next_turn: executing_tools -> running
	// finish: running -> idle
	// fsm: event "finish" is not allowed in state "idle"
}
