package storetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/tack-run/tack/store"
)

func testConcurrentSessions(t *testing.T, e *env) {
	const sessions, batches = 100, 10
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for i := range sessions {
		wg.Go(func() {
			id := fmt.Sprintf("s%03d", i)
			if err := e.st.Create(e.ctx, id, store.Config{Model: "m"}); err != nil {
				errs <- err
				return
			}
			for k := range batches {
				b := &store.Batch{From: 2 * k, Messages: msgs(2*k, 2), State: "running",
					Volatile: &store.Volatile{PromptQueue: []string{id}}}
				if err := e.st.Apply(e.ctx, id, b); err != nil {
					errs <- fmt.Errorf("%s batch %d: %w", id, k, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i := range sessions {
		id := fmt.Sprintf("s%03d", i)
		snap := e.load(t, id)
		wantMessages(t, id, snap.Messages, msgs(0, 2*batches))
		if snap.Volatile.PromptQueue[0] != id {
			t.Fatalf("%s: volatile %v", id, snap.Volatile.PromptQueue)
		}
	}
	var listed int
	for cursor := ""; ; {
		page, err := e.st.List(e.ctx, store.Page{Limit: 30, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		listed += len(page.Sessions)
		if cursor = page.Next; cursor == "" {
			break
		}
	}
	if listed != sessions {
		t.Fatalf("listed %d sessions, want %d", listed, sessions)
	}
}
