package tack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/tools"
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

// chatty is a killable tool that reports progress as fast as it can until
// it is cancelled, counting its reports.
type chatty struct{ reports *atomic.Int64 }

func (chatty) Spec() tools.Spec {
	return tools.Spec{Name: "chatty", Description: "reports progress until cancelled", Schema: json.RawMessage(`{"type":"object"}`), Kind: tools.Killable}
}

func (c chatty) Run(ctx context.Context, _ json.RawMessage, update func(string)) (string, error) {
	for ctx.Err() == nil {
		update("progress\n")
		c.reports.Add(1)
	}
	return "", ctx.Err()
}

// TestAbortBehindChattyTool: a tool that reports progress faster than the
// session relays it (a shell running `yes` sends a line at a time) must
// not hold an abort behind its reports: after a million reports the
// abort reaches a subscriber within 100 ms. Before, each report was a
// message in the session's mailbox, ahead of the abort, and an abort
// after a second of them was seen 3.7 – 8.9 s later. The reports reach
// subscribers gathered (TestProgress).
func TestAbortBehindChattyTool(t *testing.T) {
	ctx := t.Context()
	reports := &atomic.Int64{}
	rt, err := tack.New(tack.WithTools(chatty{reports}))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	script := `{"turns":[{"tool_calls":[{"name":"chatty","args":{}}]},{"text":"never"}]}`
	s, err := rt.Spawn(tack.SessionConfig{Script: []byte(script), Tools: []string{"chatty"}})
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
	var updates, relayed atomic.Int64
	aborted := make(chan time.Time, 1)
	go func() {
		for ev := range sub.C {
			if u := ev.GetToolExecutionUpdate(); u != nil {
				updates.Add(1)
				relayed.Add(int64(len(u.GetPartial())))
			}
			if ev.GetAgentAbort() != nil {
				aborted <- time.Now()
				return
			}
		}
	}()
	eventually.Within(t, 10*time.Second, func() error {
		if n := reports.Load(); n < 1_000_000 {
			return fmt.Errorf("the tool reported %d times", n)
		}
		return nil
	})
	start := time.Now()
	if err := s.Abort(ctx, tack.AbortOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case seen := <-aborted:
		if d := seen.Sub(start); d > 100*time.Millisecond {
			t.Errorf("agent_abort seen %v after Abort, want within 100 ms", d)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no agent_abort within 30 s of Abort")
	}
	if updates.Load() == 0 || relayed.Load() == 0 {
		t.Errorf("%d tool_execution_update events relayed %d bytes, want some", updates.Load(), relayed.Load())
	}
}
