package tack_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/store/memory"
)

// TestPastDeadlineDoesNotWaitForever: a command whose context's deadline
// has already passed when it is sent fails at once, even when its answer
// would never come (here a prompt's reply, held until a write lands, to a
// store that hangs). It used to wait forever: the time left was negative,
// which protoactor takes for no timeout. Under load a 100 ms deadline can
// pass before the command is sent.
func TestPastDeadlineDoesNotWaitForever(t *testing.T) {
	st := &crashable{Store: memory.New(), dead: make(chan struct{})}
	rt, err := tack.New(tack.WithStore(st), tack.WithNode("n"))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	defer close(st.dead) // before Close: the hung writes fail
	s, err := rt.Spawn(tack.SessionConfig{Script: json.RawMessage(`{"turns":[{"text":"ok"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	st.crash()
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Millisecond))
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := s.Prompt(ctx, "hi")
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a prompt past its deadline, to a hung store, succeeded")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a prompt past its deadline still waits after 5 s")
	}
}
