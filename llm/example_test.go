package llm_test

import (
	"fmt"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
)

func ExampleRepair() {
	asked := llm.AssistantMessage("Checking both.")
	asked.ToolCalls = []*llm.ToolCall{
		{Id: "c-1", Name: "shell", Args: &eventsv1.RawJSON{Json: []byte(`{"command":"ls"}`)}},
		{Id: "c-2", Name: "sleep", Args: &eventsv1.RawJSON{Json: []byte(`{"ms":500}`)}},
	}
	history := []*llm.Message{
		llm.UserMessage("look around"),
		asked,
		llm.ToolResultMessage("c-1", "README.md", false),
		llm.ToolResultMessage("c-9", "stray", false),
		llm.UserMessage("and now?"),
	}
	fmt.Println(llm.Validate(history))
	repaired, fixes := llm.Repair(history)
	for _, f := range fixes {
		fmt.Println("fix:", f)
	}
	for _, m := range repaired {
		fmt.Printf("%s %s %q\n", m.GetRole(), m.GetToolCallId(), m.GetContent())
	}
	fmt.Println(llm.Validate(repaired))
	// Output:
	// llm: invalid history: message 3 is a tool result for "c-9", which the assistant message before it did not call
	// fix: message 3 is a tool result for "c-9", which the assistant message before it did not call: dropped the result
	// fix: tool call "c-2" of message 1 has no result: added an error result "interrupted: no result was recorded"
	// user  "look around"
	// assistant  "Checking both."
	// tool c-1 "README.md"
	// tool c-2 "interrupted: no result was recorded"
	// user  "and now?"
	// <nil>
}

func ExampleMergeSameRole() {
	merged := llm.MergeSameRole([]*llm.Message{
		llm.UserMessage("first"),
		llm.UserMessage("second"),
		llm.AssistantMessage("answer"),
	})
	for _, m := range merged {
		fmt.Printf("%s %q\n", m.GetRole(), m.GetContent())
	}
	// Output:
	// user "first\n\nsecond"
	// assistant "answer"
}
