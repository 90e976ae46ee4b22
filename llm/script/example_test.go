package script_test

import (
	"context"
	"fmt"

	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/llm/script"
)

func Example() {
	s, err := script.Parse([]byte(`{
		"turns": [
			{"text": "Let me look.", "chunk_size": 4,
			 "tool_calls": [{"name": "shell", "args": {"command": "ls"}}]},
			{"text": "Done."}
		],
		"when_exhausted": "error"
	}`))
	if err != nil {
		panic(err)
	}
	p := script.New(s)
	req := &llm.Request{Messages: []*llm.Message{llm.UserMessage("look around")}}
	for range 3 {
		resp, err := p.Stream(context.Background(), req, func(c llm.Chunk) {
			if c.Kind == llm.ChunkText {
				fmt.Printf("%q ", c.Text)
			}
		})
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println(resp.StopReason)
		req.Messages = append(req.Messages, resp.Message)
		for _, c := range resp.Message.GetToolCalls() {
			fmt.Printf("call %s %s %s\n", c.GetId(), c.GetName(), c.GetArgs().GetJson())
			req.Messages = append(req.Messages, llm.ToolResultMessage(c.GetId(), "README.md", false))
		}
	}
	// Output:
	// "Let " "me l" "ook." tool_calls
	// call c-1 shell {"command":"ls"}
	// "Done." end_turn
	// error: HTTP 400: script exhausted
}
