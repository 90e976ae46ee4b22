package tack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
)

// "Edit and resend": while the first answer is still on its way, the
// user sends a corrected prompt with IfBusy events.IfBusyRollback. The
// first run is aborted and its messages leave the working history
// (AllMessages keeps them, marked RolledBack); the corrected prompt starts
// a run of its own.
func ExampleSession_Prompt_rollback() {
	rt, err := tack.New()
	if err != nil {
		panic(err)
	}
	defer rt.Close()
	s, err := rt.Spawn(tack.SessionConfig{Script: json.RawMessage(`{"turns":[
		{"text":"A long answer to the wrong question.","chunk_size":1,"chunk_delay_ms":1000},
		{"text":"Paris."}]}`)})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	sub, err := s.Subscribe(ctx, tack.SubscribeOptions{Types: []string{"message_delta", "agent_end"}})
	if err != nil {
		panic(err)
	}
	if _, err := s.Prompt(ctx, "capital of Frence?"); err != nil {
		panic(err)
	}
	<-sub.C // the wrong answer is on its way
	if _, err := s.Prompt(ctx, "capital of France?", tack.PromptOptions{IfBusy: events.IfBusyRollback}); err != nil {
		panic(err)
	}
	for ev := range sub.C {
		if ev.GetAgentEnd().GetRunId() == "r-2" {
			break
		}
	}
	all, err := s.AllMessages(ctx)
	if err != nil {
		panic(err)
	}
	for _, m := range all { // the cut answer's text ends "\n\n[interrupted]"
		fmt.Printf("%s: %s (rolled back: %v)\n", m.Role, m.Content, m.RolledBack)
	}
	// Output:
	// user: capital of Frence? (rolled back: true)
	// assistant: A
	//
	// [interrupted] (rolled back: true)
	// user: capital of France? (rolled back: false)
	// assistant: Paris. (rolled back: false)
}

// Stop once the running tool is done: Abort with At "after_tools" lets
// the batch finish and ends the run before the next model request;
// agent_abort is told at once, agent_end when the run has stopped.
func ExampleSession_Abort_afterTools() {
	rt, err := tack.New()
	if err != nil {
		panic(err)
	}
	defer rt.Close()
	s, err := rt.Spawn(tack.SessionConfig{Script: json.RawMessage(`{"turns":[
		{"text":"Working.","tool_calls":[{"name":"sleep","args":{"ms":50}}]},
		{"text":"Never asked for."}]}`)})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	sub, err := s.Subscribe(ctx, tack.SubscribeOptions{Types: []string{"tool_execution_start", "tool_execution_end", "agent_abort", "agent_end"}})
	if err != nil {
		panic(err)
	}
	if _, err := s.Prompt(ctx, "work"); err != nil {
		panic(err)
	}
	<-sub.C // tool_execution_start
	if err := s.Abort(ctx, tack.AbortOptions{At: events.AtAfterTools, Timeout: 10 * time.Second}); err != nil {
		panic(err)
	}
	for ev := range sub.C {
		switch {
		case ev.GetAgentAbort() != nil:
			fmt.Println("agent_abort")
		case ev.GetToolExecutionEnd() != nil:
			fmt.Println("tool result:", ev.GetToolExecutionEnd().Result)
		case ev.GetAgentEnd() != nil:
			fmt.Println("agent_end", ev.GetAgentEnd().Reason)
		}
		if ev.GetAgentEnd() != nil {
			break
		}
	}
	msgs, _ := s.Messages(ctx)
	fmt.Println(len(msgs), "messages")
	// Output:
	// agent_abort
	// tool result: slept 50 ms
	// agent_end aborted
	// 3 messages
}

// Explore two answers from one point: Fork copies the configuration and
// the first messages of the history (cut back to a turn boundary) into a
// new session.
func ExampleSession_Fork() {
	rt, err := tack.New()
	if err != nil {
		panic(err)
	}
	defer rt.Close()
	s, err := rt.Spawn(tack.SessionConfig{ID: "main", Script: json.RawMessage(`{"turns":[{"text":"Two options: A or B."}],"when_exhausted":"echo"}`)})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	sub, err := s.Subscribe(ctx, tack.SubscribeOptions{Types: []string{"agent_end"}})
	if err != nil {
		panic(err)
	}
	if _, err := s.Prompt(ctx, "what can we do?"); err != nil {
		panic(err)
	}
	<-sub.C
	b, err := s.Fork(ctx, 2, "main-b")
	if err != nil {
		panic(err)
	}
	msgs, _ := b.Messages(ctx)
	fmt.Println(b.ID(), len(msgs), "messages, the last:", msgs[1].Content)
	// Output:
	// main-b 2 messages, the last: Two options: A or B.
}
