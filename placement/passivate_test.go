package placement

import (
	"fmt"
	"log/slog"
	"sync/atomic"
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

// TestPassivateRegistersNoProcess: passivating a session asks it and
// stops it through the registry's reply slots (ask.go), not through a
// protoactor future each, which registered a process, started a timer
// and made a condition variable twice for every session that went quiet.
func TestPassivateRegistersNoProcess(t *testing.T) {
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return slog.New(slog.DiscardHandler) }))
	defer sys.Shutdown()
	reg := New(sys, &actors.Env{})
	defer reg.Shutdown()
	props := actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*actors.PassivateNow); ok {
			c.Respond(&actors.Passivated{OK: true})
		}
	})
	passivate := func(i int) {
		id := fmt.Sprintf("s%d", i)
		pid, err := sys.Root.SpawnNamed(props, id)
		if err != nil {
			t.Fatal(err)
		}
		reg.mu.Lock()
		reg.registerLocked(id, pid, "")
		reg.mu.Unlock()
		reg.Passivate(id, pid, 0)
		if reg.Loaded(id) {
			t.Fatalf("session %s is still loaded", id)
		}
		if _, ok := sys.ProcessRegistry.GetLocal(pid.Id); ok {
			t.Fatalf("session %s was not stopped", id)
		}
	}
	passivate(0) // the registry's first reply slot
	before := atomic.LoadUint64(&sys.ProcessRegistry.SequenceID)
	for i := 1; i <= 10; i++ {
		passivate(i)
	}
	if made := atomic.LoadUint64(&sys.ProcessRegistry.SequenceID) - before; made != 0 {
		t.Fatalf("10 passivations registered %d processes, want none", made)
	}
}
