package placement

import (
	"context"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/actors"
	"github.com/tack-run/tack/internal/workers"
)

// dormant is what a passivated session leaves to its next actor: the
// actor subscriptions it hands on.
type dormant struct {
	subs []*actors.SubscribePID
}

// Leave takes session id, whose actor is pid, out of the registry as
// it passivates: what Deliver and Get ask from then on waits, and is
// handed to the session if it stays (Stay), or to its next actor once it
// has stopped (Left). It reports false, and changes nothing, when pid is
// no longer the session's actor. The session calls it from its handler:
// it takes the registry's lock and waits on nothing else.
func (r *Registry) Leave(id string, pid *actor.PID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if cur, ok := r.pids[id]; !ok || !cur.Equal(pid) {
		return false
	}
	_, user, _ := r.unregisterLocked(id)
	r.restoring[id] = &restoring{done: make(chan struct{}), user: user, passivating: true}
	return true
}

// Stay ends the passivation of session id, which Leave began, with the
// session still loaded (it was no longer quiet, or could not park): it is
// registered again and handed what waited, in order. The session calls
// it from its handler, so a hand-over Release asked for meanwhile, which
// asks the session to settle, runs on a worker.
func (r *Registry) Stay(id string, pid *actor.PID) {
	r.mu.Lock()
	c, ok := r.restoring[id]
	if !ok || !c.passivating {
		r.mu.Unlock()
		return
	}
	c.pid = pid
	handover := r.settleQueueLocked(id, c)
	r.mu.Unlock()
	if handover != nil {
		workers.Go(func() { r.handOver(id, handover) })
	}
}

// Left ends the passivation of session id, which Leave began, with the
// session parked or stored: on a worker, it stops the actor pid and waits
// for it, gives up the lease, keeps subs (the actor subscriptions its next
// actor takes over), and restores the session at once if something waited
// for it meanwhile.
func (r *Registry) Left(id string, pid *actor.PID, subs []*actors.SubscribePID) {
	workers.Go(func() { r.left(id, pid, subs) })
}

func (r *Registry) left(id string, pid *actor.PID, subs []*actors.SubscribePID) {
	r.halt(pid)
	r.release(id)
	r.mu.Lock()
	c, ok := r.restoring[id]
	if !ok || !c.passivating {
		r.mu.Unlock()
		return
	}
	if len(subs) > 0 {
		r.dormant[id] = &dormant{subs: subs}
	}
	wanted := len(c.queue) > 0 || c.waiters > 0
	if !wanted {
		delete(r.restoring, id)
		close(c.done)
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	c.pid, c.user, c.err = r.restore(context.Background(), id)
	r.mu.Lock()
	handover := r.settleQueueLocked(id, c)
	r.mu.Unlock()
	r.handOver(id, handover)
}
