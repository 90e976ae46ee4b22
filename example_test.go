package tack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// A session on a scripted model: the model calls the echo tool, then
// answers; the events tell the whole run.
func Example() {
	rt, err := tack.New()
	if err != nil {
		panic(err)
	}
	defer rt.Close()

	s, err := rt.Spawn(tack.SessionConfig{Script: json.RawMessage(`{"turns":[
		{"text":"Checking.","tool_calls":[{"name":"echo","args":{"text":"pong"}}]},
		{"text":"The tool said pong."}]}`)})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	sub, err := s.Subscribe(ctx, tack.SubscribeOptions{Types: []string{"agent_start", "agent_end", "state_changed", "message_committed"}})
	if err != nil {
		panic(err)
	}
	if _, err := s.Prompt(ctx, "ping"); err != nil {
		panic(err)
	}
	for ev := range sub.C {
		fmt.Println(events.Type(ev), describe(ev))
		if ev.GetAgentEnd() != nil {
			break
		}
	}
	// Output:
	// agent_start r-1
	// message_committed user: ping
	// state_changed idle → running
	// state_changed running → streaming
	// message_committed assistant: Checking.
	// state_changed streaming → executing_tools
	// message_committed tool: pong
	// state_changed executing_tools → running
	// state_changed running → streaming
	// message_committed assistant: The tool said pong.
	// state_changed streaming → idle
	// agent_end completed
}

func describe(ev *eventsv1.Event) string {
	switch e := ev.Payload.(type) {
	case *eventsv1.Event_AgentStart:
		return e.AgentStart.RunId
	case *eventsv1.Event_AgentEnd:
		return e.AgentEnd.Reason
	case *eventsv1.Event_StateChanged:
		return e.StateChanged.From + " → " + e.StateChanged.To
	case *eventsv1.Event_MessageCommitted:
		return e.MessageCommitted.Message.Role + ": " + e.MessageCommitted.Message.Content
	}
	return ""
}

// An actor of the program's own actor system subscribed to a session:
// the runtime runs its sessions in that system (WithActorSystem), and
// the session sends its events to the actor as messages.
func ExampleSession_SubscribePID() {
	sys := actor.NewActorSystem()
	defer sys.Shutdown()
	rt, err := tack.New(tack.WithActorSystem(sys))
	if err != nil {
		panic(err)
	}
	defer rt.Close()

	done := make(chan struct{})
	subscriber := sys.Root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
		if ev, ok := ctx.Message().(*eventsv1.Event); ok {
			fmt.Println(events.Type(ev), describe(ev))
			if ev.GetAgentEnd() != nil {
				close(done)
			}
		}
	}))
	s, err := rt.Spawn(tack.SessionConfig{Script: json.RawMessage(`{"turns":[{"text":"Hello."}]}`)})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	if err := s.SubscribePID(ctx, subscriber, 0, "agent_start", "agent_end", "message_committed"); err != nil {
		panic(err)
	}
	if _, err := s.Prompt(ctx, "hi"); err != nil {
		panic(err)
	}
	<-done
	// Output:
	// agent_start r-1
	// message_committed user: hi
	// message_committed assistant: Hello.
	// agent_end completed
}

// Readers of one session, each on a goroutine of its own, sharing one
// buffer: the session hands each event to it once, however many read.
func ExampleSession_Read() {
	rt, err := tack.New()
	if err != nil {
		panic(err)
	}
	defer rt.Close()

	s, err := rt.Spawn(tack.SessionConfig{Script: json.RawMessage(`{"turns":[{"text":"Hello, all of you.","chunk_size":4}]}`)})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	texts := make([]string, 3)
	var wg sync.WaitGroup
	for i := range texts {
		r, err := s.Read(ctx, tack.SubscribeOptions{Types: []string{"message_delta", "agent_end"}})
		if err != nil {
			panic(err)
		}
		wg.Go(func() {
			defer r.Close()
			for {
				ev, err := r.Next(ctx)
				if err != nil || ev.GetAgentEnd() != nil {
					return
				}
				texts[i] += ev.GetMessageDelta().GetDelta()
			}
		})
	}
	if _, err := s.Prompt(ctx, "hi"); err != nil {
		panic(err)
	}
	wg.Wait()
	for i, text := range texts {
		fmt.Printf("reader %d: %s\n", i, text)
	}
	// Output:
	// reader 0: Hello, all of you.
	// reader 1: Hello, all of you.
	// reader 2: Hello, all of you.
}
