package placement

import (
	"log/slog"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/actors"
)

// TestPassivateAnswerTooLate: a session that does not answer passivateNow
// in time (one behind a long mailbox) stays registered, and the registry
// sends it passivateDue with the same mark. Without that, a session that
// said ok after the registry stopped waiting was left loaded with no
// passivation timer, for good: a million idle sessions never all
// passivated.
func TestPassivateAnswerTooLate(t *testing.T) {
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return slog.New(slog.DiscardHandler) }))
	defer sys.Shutdown()
	reg := New(sys, &actors.Env{})
	reg.answerWait = 20 * time.Millisecond
	got := make(chan any, 4)
	pid := sys.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *actors.PassivateNow, *actors.PassivateDue:
			got <- m // never answered
		}
	}))
	reg.mu.Lock()
	reg.registerLocked("s1", pid, "")
	reg.mu.Unlock()

	reg.Passivate("s1", pid, 7)
	if m, ok := (<-got).(*actors.PassivateNow); !ok || m.Mark != 7 {
		t.Fatalf("first %v, want passivateNow{7}", m)
	}
	select {
	case m := <-got:
		if d, ok := m.(*actors.PassivateDue); !ok || d.Mark != 7 {
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
