package replies

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newSystem returns an actor system with an actor that answers each
// string it is sent with the string twice over, unless the string is
// "silent" (no answer), "twice" (two answers) or "late" (an answer once
// a value comes on late).
func newSystem(t *testing.T) (*actor.ActorSystem, *actor.PID, chan struct{}) {
	t.Helper()
	system := actor.NewActorSystem(actor.WithDeadLetterThrottleInterval(time.Millisecond))
	late := make(chan struct{})
	pid := system.Root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
		s, ok := ctx.Message().(string)
		if !ok {
			return
		}
		switch s {
		case "silent":
		case "twice":
			ctx.Respond("first")
			ctx.Respond("second")
		case "late":
			sender := ctx.Sender()
			go func() {
				<-late
				system.Root.Send(sender, "late answer")
			}()
		default:
			ctx.Respond(s + s)
		}
	}))
	t.Cleanup(func() {
		system.Root.StopFuture(pid).Wait()
		system.Shutdown()
	})
	return system, pid, late
}

func ask(p *Pool, system *actor.ActorSystem, pid *actor.PID, msg string, timeout time.Duration) (any, error) {
	c := p.Open()
	system.Root.Send(pid, &actor.MessageEnvelope{Message: msg, Sender: c.Sender})
	return c.Wait(timeout)
}

func TestAnswer(t *testing.T) {
	system, pid, _ := newSystem(t)
	p := New(system)
	for i := range 3 {
		got, err := ask(p, system, pid, fmt.Sprint(i), time.Second)
		if want := fmt.Sprint(i) + fmt.Sprint(i); err != nil || got != want {
			t.Fatalf("answer %d: %v, %v; want %q", i, got, err, want)
		}
	}
	if len(p.free) != 1 {
		t.Errorf("%d idle slots after three requests one after the other, want 1 reused", len(p.free))
	}
}

func TestTimeoutRetiresSlot(t *testing.T) {
	system, pid, _ := newSystem(t)
	p := New(system)
	c := p.Open()
	slotID := c.Sender.Id
	system.Root.Send(pid, &actor.MessageEnvelope{Message: "silent", Sender: c.Sender})
	_, err := c.Wait(20 * time.Millisecond)
	if !errors.Is(err, actor.ErrTimeout) {
		t.Fatalf("unanswered request: %v, want %v", err, actor.ErrTimeout)
	}
	if len(p.free) != 0 {
		t.Fatalf("a slot that timed out went back to the pool")
	}
	if registered(system, slotID) {
		t.Errorf("a slot that timed out is still in the process table")
	}
}

func registered(system *actor.ActorSystem, id string) bool {
	_, ok := system.ProcessRegistry.GetLocal(id)
	return ok
}

// A late answer to a request that timed out reaches no later request.
func TestLateAnswerReachesNoLaterRequest(t *testing.T) {
	system, pid, late := newSystem(t)
	p := New(system)
	if _, err := ask(p, system, pid, "late", 20*time.Millisecond); !errors.Is(err, actor.ErrTimeout) {
		t.Fatalf("late request: %v, want %v", err, actor.ErrTimeout)
	}
	close(late)
	for i := range 20 {
		got, err := ask(p, system, pid, "x", time.Second)
		if err != nil || got != "xx" {
			t.Fatalf("request %d after a late answer: %v, %v; want xx", i, got, err)
		}
	}
}

// A second answer to one request reaches no later request.
func TestSecondAnswerReachesNoLaterRequest(t *testing.T) {
	system, pid, _ := newSystem(t)
	p := New(system)
	for i := range 50 {
		got, err := ask(p, system, pid, "twice", time.Second)
		if err != nil || got != "first" {
			t.Fatalf("request %d answered twice: %v, %v; want first", i, got, err)
		}
		if got, err := ask(p, system, pid, "y", time.Second); err != nil || got != "yy" {
			t.Fatalf("request after %d answered twice: %v, %v; want yy", i, got, err)
		}
	}
}

// A timeout that fires as the answer comes, and reaches the answers
// channel after it, reaches no later request: the request gets its
// answer, and so do the ones after it on the same pool.
func TestTimeoutBehindTheAnswerReachesNoLaterRequest(t *testing.T) {
	system, pid, _ := newSystem(t)
	p := New(system)
	for i := range 20 {
		c := p.Open()
		system.Root.Send(pid, &actor.MessageEnvelope{Message: "z", Sender: c.Sender})
		for len(c.s.answers) == 0 {
			time.Sleep(time.Millisecond)
		}
		c.s.expire() // the timer, firing just after the answer came
		if got, err := c.Wait(time.Second); err != nil || got != "zz" {
			t.Fatalf("request %d: %v, %v; want zz", i, got, err)
		}
		if got, err := ask(p, system, pid, "w", time.Second); err != nil || got != "ww" {
			t.Fatalf("request after %d: %v, %v; want ww", i, got, err)
		}
	}
}

func TestDeadLetter(t *testing.T) {
	system, _, _ := newSystem(t)
	p := New(system)
	gone := system.Root.Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	if err := system.Root.StopFuture(gone).Wait(); err != nil {
		t.Fatal(err)
	}
	if _, err := ask(p, system, gone, "x", time.Second); !errors.Is(err, actor.ErrDeadLetter) {
		t.Fatalf("request to a stopped actor: %v, want %v", err, actor.ErrDeadLetter)
	}
}

// Requests from many goroutines at once each get their own answer, and
// the pool keeps no more slots than were in use at once.
func TestConcurrent(t *testing.T) {
	system, pid, _ := newSystem(t)
	p := New(system)
	const callers, each = 16, 200
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for c := range callers {
		wg.Go(func() {
			for i := range each {
				msg := fmt.Sprintf("%d.%d", c, i)
				got, err := ask(p, system, pid, msg, 5*time.Second)
				if err != nil || got != msg+msg {
					errs <- fmt.Errorf("%s: %v, %v", msg, got, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(p.free) > callers {
		t.Errorf("%d idle slots after %d callers", len(p.free), callers)
	}
}

// A pool keeps at most keep idle slots; the others leave the process table.
func TestKeep(t *testing.T) {
	system, pid, _ := newSystem(t)
	p := New(system)
	slots := make([]*slot, keep+10)
	for i := range slots {
		slots[i], _, _ = p.get()
	}
	for _, s := range slots {
		p.put(s)
	}
	if len(p.free) != keep {
		t.Errorf("%d idle slots, want %d", len(p.free), keep)
	}
	for i, s := range slots {
		if kept := i < keep; registered(system, s.pid.Id) != kept {
			t.Errorf("slot %d given back: in the process table %v, want %v", i, !kept, kept)
		}
	}
	if got, err := ask(p, system, pid, "z", time.Second); err != nil || got != "zz" {
		t.Errorf("request from a kept slot: %v, %v", got, err)
	}
}

// Close leaves no slot in the process table: not the idle ones, nor one
// lent at the time, once its request ends.
func TestClose(t *testing.T) {
	system, pid, _ := newSystem(t)
	p := New(system)
	idle, _, _ := p.get()
	p.put(idle)
	lent, _, _ := p.get()
	p.Close()
	p.put(lent)
	for _, s := range []*slot{idle, lent} {
		if registered(system, s.pid.Id) {
			t.Errorf("slot %s is in the process table after Close", s.pid.Id)
		}
	}
	if got, err := ask(p, system, pid, "w", time.Hour); !errors.Is(err, actor.ErrDeadLetter) {
		t.Errorf("request after Close: %v, %v; want %v at once", got, err, actor.ErrDeadLetter)
	}
	if len(p.free) != 0 {
		t.Errorf("%d idle slots kept after Close", len(p.free))
	}
}

// TestCloseAnswersWhatWaits: a request still waiting when the Pool closes
// (its actor stopping, say, with the request unread) gets
// actor.ErrDeadLetter then, not at the end of its timeout.
func TestCloseAnswersWhatWaits(t *testing.T) {
	system, pid, _ := newSystem(t)
	p := New(system)
	got := make(chan error, 1)
	c := p.Open()
	system.Root.Send(pid, &actor.MessageEnvelope{Message: "silent", Sender: c.Sender})
	go func() {
		_, err := c.Wait(time.Hour)
		got <- err
	}()
	p.Close()
	select {
	case err := <-got:
		if !errors.Is(err, actor.ErrDeadLetter) {
			t.Fatalf("waiting request: %v, want %v", err, actor.ErrDeadLetter)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a request waiting as the Pool closed was not answered")
	}
	if registered(system, c.Sender.Id) {
		t.Errorf("the slot of the request is in the process table after Close")
	}
}
