package placement

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/actors"
	"github.com/tack-run/tack/internal/liveheap"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/memory"
)

// TestPassivateStay: a session that takes itself out (Leave) and then
// finds it was not quiet (Stay) is registered again, and gets what was
// delivered to it meanwhile, in order; Leave with a pid that is not the
// session's changes nothing.
func TestPassivateStay(t *testing.T) {
	sys, reg := testRegistry(t, &actors.Env{})
	got := make(chan string, 4)
	pid := sys.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if s, ok := c.Message().(string); ok {
			got <- s
		}
	}))
	register(reg, "s1", pid)

	if reg.Leave("s1", actor.NewPID(sys.Address(), "other")) {
		t.Fatal("Leave took s1 out for an actor that is not its own")
	}
	if !reg.Leave("s1", pid) {
		t.Fatal("Leave refused the session's own actor")
	}
	if reg.Loaded("s1") {
		t.Fatal("s1 is registered while it passivates")
	}
	reg.Deliver("s1", "first")
	reg.Deliver("s1", "second")
	select {
	case m := <-got:
		t.Fatalf("%q reached the session while it passivated", m)
	case <-time.After(20 * time.Millisecond):
	}
	reg.Stay("s1", pid)
	if !reg.Loaded("s1") {
		t.Fatal("s1 is not registered again after Stay")
	}
	for _, want := range []string{"first", "second"} {
		select {
		case m := <-got:
			if m != want {
				t.Fatalf("got %q, want %q", m, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%q never reached the session", want)
		}
	}
}

// TestPassivateRegistersNoProcess: a session passivates itself (Leave,
// Left, then it stops and calls Gone) and the registry neither waits for
// it to stop nor registers a process to hear of it: protoactor futures
// registered a process, started a timer and made a condition variable
// twice for every session that went quiet, and a wait on a reply slot
// held a worker for each (finding 19). Gone forgets the session.
func TestPassivateRegistersNoProcess(t *testing.T) {
	sys, reg := testRegistry(t, &actors.Env{})
	passivate := func(i int) {
		id := fmt.Sprintf("s%d", i)
		// The session's part: it stops itself and says so as it stops.
		props := actor.PropsFromFunc(func(ctx actor.Context) {
			if _, ok := ctx.Message().(*actor.Stopped); ok {
				reg.Gone(id)
			}
		})
		pid, err := sys.Root.SpawnNamed(props, id)
		if err != nil {
			t.Fatal(err)
		}
		register(reg, id, pid)
		if !reg.Leave(id, pid) {
			t.Fatalf("Leave refused session %s", id)
		}
		reg.mu.Lock()
		done := reg.restoring[id].done
		reg.mu.Unlock()
		reg.Left(id, nil)
		sys.Root.Stop(pid)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("the passivation of session %s never ended", id)
		}
		if _, ok := sys.ProcessRegistry.GetLocal(pid.Id); ok {
			t.Fatalf("session %s was not stopped", id)
		}
		if reg.Loaded(id) {
			t.Fatalf("session %s is still loaded", id)
		}
	}
	before := atomic.LoadUint64(&sys.ProcessRegistry.SequenceID)
	for i := range 10 {
		passivate(i)
	}
	if made := atomic.LoadUint64(&sys.ProcessRegistry.SequenceID) - before; made != 0 {
		t.Fatalf("10 passivations registered %d processes, want none", made)
	}
}

// TestRegistryGivesBackRoom: once the sessions loaded fall to a quarter
// of the most it held, the registry makes its maps anew, so a burst of
// sessions that then passivated does not leave the room they took (a Go
// map keeps what it grew to: about 40 bytes a session here).
func TestRegistryGivesBackRoom(t *testing.T) {
	_, reg := testRegistry(t, &actors.Env{})
	const n = 20_000
	ids := make([]string, n)
	pids := make([]*actor.PID, n)
	for i := range n {
		ids[i], pids[i] = fmt.Sprintf("s%d", i), actor.NewPID("nonhost", fmt.Sprintf("session/s%d", i))
	}
	before := liveheap.Bytes()
	reg.mu.Lock()
	for i := range n {
		reg.registerLocked(ids[i], pids[i], "")
	}
	reg.mu.Unlock()
	full := liveheap.Bytes()
	reg.mu.Lock()
	for i := range n - 10 {
		reg.unregisterLocked(ids[i])
	}
	reg.mu.Unlock()
	after := liveheap.Bytes()
	runtime.KeepAlive(pids)
	if kept, took := int64(after)-int64(before), int64(full)-int64(before); kept > took/10 {
		t.Fatalf("%d sessions took %d bytes of map; with 10 left, %d are kept, want a tenth at most", n, took, kept)
	}
	if !reg.Loaded(ids[n-1]) || reg.Loaded(ids[0]) {
		t.Fatal("the remade maps lost a session or kept one unregistered")
	}
	reg.mu.Lock()
	for _, id := range ids[n-10:] { // no actors behind them for Shutdown to stop
		reg.unregisterLocked(id)
	}
	reg.mu.Unlock()
}

// TestCloseWaitsForPassivation: Close meeting a session that passivates
// into the Park waits for it to park, then forgets the record, so the
// closed session does not come back at its next use. It found nothing to
// close and returned at once, and the session parked after it.
func TestCloseWaitsForPassivation(t *testing.T) {
	lot := memory.New()
	sys, reg := testRegistry(t, &actors.Env{Park: lot})
	pid := sys.Root.Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	register(reg, "s1", pid)
	if !reg.Leave("s1", pid) {
		t.Fatal("Leave refused the session's own actor")
	}
	closed := make(chan bool)
	go func() { closed <- reg.Close("s1") }()
	select {
	case <-closed:
		t.Fatal("Close returned while the session passivated")
	case <-time.After(20 * time.Millisecond):
	}
	// The session parks and stops, as passivateNow does.
	if err := lot.Put("s1", store.Config{}, &store.Snapshot{}); err != nil {
		t.Fatal(err)
	}
	reg.Left("s1", nil)
	sys.Root.Stop(pid)
	reg.Gone("s1")
	if !<-closed {
		t.Fatal("Close reported the parked session as neither loaded nor parked")
	}
	if lot.Remove("s1") {
		t.Fatal("the closed session is still parked")
	}
}
