package eventjson_test

import (
	"fmt"

	"github.com/tack-run/tack/events/eventjson"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

func ExampleUnmarshal() {
	var steer eventsv1.Steer
	err := eventjson.Unmarshal([]byte(`{"text":"stop that"}`), &steer)
	fmt.Println(steer.GetText(), steer.InterruptTools == nil, err)

	err = eventjson.Unmarshal([]byte(`{"text":42}`), &steer)
	fmt.Println(err)

	err = eventjson.Unmarshal([]byte(`{"text":"stop","interupt_tools":false}`), &steer)
	fmt.Println(err)
	// Output:
	// stop that true <nil>
	// field "text": expected a string
	// unknown field "interupt_tools"
}

func ExampleMarshal() {
	data, _ := eventjson.Marshal(&eventsv1.MessageList{Messages: []*eventsv1.Message{
		{Role: "user", Content: "hi"},
		{Role: "tool", ToolCallId: "c-1", Content: "done"},
	}})
	fmt.Println(string(data))
	// Output:
	// {"messages":[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"c-1","content":"done","is_error":false}]}
}
