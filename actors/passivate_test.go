package actors

import (
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// TestPassivateAnswerTooLate: a session that does not answer passivateNow
// in time (one behind a long mailbox) stays registered, and the registry
// sends it passivateDue with the same mark. Without that, a session that
// said ok after the registry stopped waiting was left loaded with no
// passivation timer, for good: a million idle sessions never all
// passivated.
func TestPassivateAnswerTooLate(t *testing.T) {
	sys := newSystem(t)
	reg := NewRegistry(sys, &Env{})
	reg.answerWait = 20 * time.Millisecond
	got := make(chan any, 4)
	pid := sys.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *passivateNow, *passivateDue:
			got <- m // never answered
		}
	}))
	reg.mu.Lock()
	reg.registerLocked("s1", pid, "")
	reg.mu.Unlock()

	reg.passivate("s1", pid, 7)
	if m, ok := (<-got).(*passivateNow); !ok || m.mark != 7 {
		t.Fatalf("first %v, want passivateNow{7}", m)
	}
	select {
	case m := <-got:
		if d, ok := m.(*passivateDue); !ok || d.mark != 7 {
			t.Fatalf("then %v, want passivateDue{7}", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the session was never asked again: it would stay loaded with no timer")
	}
	reg.mu.Lock()
	cur := reg.pids["s1"]
	reg.mu.Unlock()
	if !cur.Equal(pid) {
		t.Fatalf("the session is registered as %v, want %v", cur, pid)
	}
}
