package remote_test

import (
	"path/filepath"
	"testing"

	eventsv1 "github.com/tack-run/tack/events/v1"
)

// hello answers once, in two chunks.
const hello = `{"turns":[{"text":"Hello there","chunk_size":6}]}`

// TestRemoteRun: a session created and driven from another actor system;
// its subscriber gets every event, in order, with exact types.
func TestRemoteRun(t *testing.T) {
	n := startNode(t, "--store", "sqlite:"+filepath.Join(t.TempDir(), "tack.db"))
	c := newClient(t, n.addr)
	s := c.create(t, "r1", hello)
	sub := c.subscribe(t, s, 0)
	if r := c.reply(t, s, &eventsv1.Prompt{Text: "hi"}); r.GetPrompt().GetQueued() {
		t.Fatal("prompt queued at idle")
	}
	evs := sub.until(t, "agent_end")
	wantTypes(t, evs, "session_created", "prompt_received", "agent_start", "message_committed", "state_changed", "agent_status",
		"turn_start", "request_start", "state_changed", "message_start", "message_delta", "message_delta", "response_complete",
		"message_committed", "token_usage", "turn_end", "state_changed", "agent_status", "agent_end")
	consecutive(t, evs, 1)
	if d := evs[10].GetMessageDelta().GetDelta() + evs[11].GetMessageDelta().GetDelta(); d != "Hello there" {
		t.Errorf("deltas %q", d)
	}
	if st := c.state(t, s); st.State != "idle" || st.MessageCount != 2 {
		t.Errorf("state %v", st)
	}
}
