package events_test

import (
	"fmt"
	"time"

	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/events/eventjson"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

func Example() {
	clock := func() time.Time { return time.Date(2026, 11, 21, 10, 0, 0, 123456000, time.UTC) }
	s := events.NewStream("s1", events.WithClock(clock))
	s.Emit(&eventsv1.SessionCreated{Model: "script:demo.json"})
	s.Emit(&eventsv1.ToolExecutionStart{Name: "sleep", CallId: "c-1", Args: &eventsv1.RawJSON{Json: []byte(`{"ms":500}`)}})

	// A subscriber reconnecting after seq 1, interested in tool events.
	ch := events.NewChannel(16)
	s.Subscribe(ch, 1, events.MustFilter("tool_*"))
	s.Emit(&eventsv1.ToolExecutionEnd{Name: "sleep", CallId: "c-1", Ok: true, Result: "slept 500ms"})
	s.Unsubscribe(ch)
	ch.Close()

	for ev := range ch.C() {
		fmt.Println(string(eventjson.Append(nil, ev)))
	}
	// Output:
	// {"type":"tool_execution_start","session":"s1","seq":2,"ts":"2026-11-21T10:00:00.123456Z","name":"sleep","call_id":"c-1","args":{"ms":500}}
	// {"type":"tool_execution_end","session":"s1","seq":3,"ts":"2026-11-21T10:00:00.123456Z","name":"sleep","call_id":"c-1","ok":true,"result":"slept 500ms"}
}

func ExampleNewFilter() {
	f, err := events.NewFilter([]string{"tool_*", "agent_end"})
	fmt.Println(f.Match(events.New(&eventsv1.ToolKilled{})), f.Match(events.New(&eventsv1.MessageDelta{})), err)

	_, err = events.NewFilter([]string{"tool_exec"})
	fmt.Println(err)
	// Output:
	// true false <nil>
	// unknown event type: "tool_exec"
}
