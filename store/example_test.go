package store_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/memory"
)

// A session's life in the store: create, commit a turn, take ownership,
// restore.
func Example() {
	ctx := context.Background()
	var st store.Store = memory.New()
	defer st.Close()

	st.Create(ctx, "s1", store.Config{Model: "script:demo", Spec: []byte(`{"tools":["shell"]}`)})
	st.Acquire(ctx, "s1", "node-a", time.Minute)

	// One commit point: the messages, the state and the queue, atomically.
	err := st.Apply(ctx, "s1", &store.Batch{
		Owner: "node-a",
		From:  0,
		Messages: []*eventsv1.Message{
			{Role: "user", Content: "list files"},
			{Role: "assistant", ToolCalls: []*eventsv1.ToolCall{{Id: "c1", Name: "shell"}}},
		},
		State:    "executing_tools",
		Volatile: &store.Volatile{PromptQueue: []string{"then summarise"}},
	})
	fmt.Println("apply:", err)

	// Another node cannot take the session while node-a's lease lasts.
	err = st.Acquire(ctx, "s1", "node-b", time.Minute)
	fmt.Println("node-b:", errors.Is(err, store.ErrOwned))

	snap, _ := st.Load(ctx, "s1")
	fmt.Println(snap.State, len(snap.Messages), snap.Volatile.PromptQueue, snap.Owner)
	// Output:
	// apply: <nil>
	// node-b: true
	// executing_tools 2 [then summarise] node-a
}
