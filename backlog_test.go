package tack_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/internal/eventually"
)

// TestAbortBehindFastStream: a model that streams faster than the session
// publishes (here a script of 500,000 one-character chunks with no
// delay) must not hold an abort, nor any command, behind the chunks it
// piles up: the abort reaches a subscriber within the 100 ms the design
// promises, and the stream is cut short. Before the stream's chunks waited
// in a lane of their own behind commands, and at most 1,024 of them in
// the mailbox, the abort came seconds later, after every chunk.
func TestAbortBehindFastStream(t *testing.T) {
	const chunks = 500_000
	ctx := t.Context()
	rt, err := tack.New()
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	script := `{"turns":[{"text":"` + strings.Repeat("a", chunks) + `","chunk_size":1}]}`
	s, err := rt.Spawn(tack.SessionConfig{Script: []byte(script)})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := s.Subscribe(ctx, tack.SubscribeOptions{Buffer: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if _, err := s.Prompt(ctx, "go"); err != nil {
		t.Fatal(err)
	}
	deltas, aborted := 0, make(chan time.Time, 1)
	go func() {
		for ev := range sub.C {
			if ev.GetMessageDelta() != nil {
				deltas++
			}
			if ev.GetAgentAbort() != nil {
				aborted <- time.Now()
				return
			}
		}
	}()
	// Let the stream run ahead of the session for a while.
	eventually.Within(t, 10*time.Second, func() error {
		st, err := s.State(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.GetState() != "streaming" {
			return fmt.Errorf("never streaming: %v", st)
		}
		return nil
	})
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	if err := s.Abort(ctx, tack.AbortOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case seen := <-aborted:
		if d := seen.Sub(start); d > 100*time.Millisecond {
			t.Errorf("agent_abort seen %v after Abort, want within 100 ms", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no agent_abort within 10 s of Abort")
	}
	if deltas >= chunks {
		t.Errorf("%d deltas before agent_abort: the whole stream went out first", deltas)
	}
}
