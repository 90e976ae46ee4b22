package placement

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/internal/replies"
)

// stopWait bounds the wait for a session to stop, as protoactor's
// StopFuture does.
const stopWait = 10 * time.Second

// ask sends msg to the session pid and waits up to timeout for its
// answer, with the errors of a protoactor future. The answer comes to a
// reply slot of the registry's (internal/replies) rather than to a future
// of its own: a process registered, a timer and a condition variable made
// for one answer. Every restore asks its session once and every
// passivation stops one (halt); with futures, a process that parked many
// sessions at once did not keep up with them (issue 30, finding 16).
func (r *Registry) ask(pid *actor.PID, msg any, timeout time.Duration) (any, error) {
	c := r.replies.Open()
	r.system.Root.Send(pid, &actor.MessageEnvelope{Message: msg, Sender: c.Sender})
	return c.Wait(timeout)
}

// halt stops the session pid and waits until it has stopped, its name
// free again, or for stopWait: what StopFuture(pid).Wait() does, with a
// reply slot watching the session instead of a future. A pid already
// stopped answers at once (protoactor tells a watcher of a dead letter
// that it is gone).
func (r *Registry) halt(pid *actor.PID) { r.stopping(pid).wait() }

// stopping tells the session pid to stop and returns what waits for it to
// have stopped (halt's wait), so that many can be told before any is
// waited for.
func (r *Registry) stopping(pid *actor.PID) stopped {
	c := r.replies.Open()
	proc, _ := r.system.ProcessRegistry.Get(pid)
	proc.SendSystemMessage(pid, &actor.Watch{Watcher: c.Sender})
	r.system.Root.Stop(pid)
	return stopped{c}
}

// stopped waits for a session told to stop (stopping).
type stopped struct{ c replies.Call }

func (s stopped) wait() { _, _ = s.c.Wait(stopWait) }
