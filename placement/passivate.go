package placement

import (
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
// has stopped (Gone). It reports false, and changes nothing, when pid is
// no longer the session's actor or a Delete has the session. The session
// calls it from its handler:
// it takes the registry's lock and waits on nothing else, and allocates
// before it takes the lock.
func (r *Registry) Leave(id string, pid *actor.PID) bool {
	c := &restoring{done: make(chan struct{}), passivating: true, leaving: pid}
	r.mu.Lock()
	defer r.mu.Unlock()
	if cur, ok := r.pids[id]; !ok || !cur.Equal(pid) || r.deletingLocked(id) {
		// Not while a Delete has the id: it waited only for the
		// passivations under way as it began, and would find the session
		// neither loaded nor parked. The session tries again later.
		return false
	}
	r.standInLocked(id, c)
	return true
}

// standInLocked takes session id out of the registry and leaves c, a
// passivation under way (or a Close's), in its place: what asks for the
// session meanwhile waits for c, and c keeps the session's user, whom
// it still counts for. It returns the session's actor, or false when id
// is not loaded.
func (r *Registry) standInLocked(id string, c *restoring) (*actor.PID, bool) {
	pid, user, ok := r.unregisterLocked(id)
	if ok {
		c.user = user
		r.restoring[id] = c
	}
	return pid, ok
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

// Left records, as session id parks or stores itself to end the
// passivation Leave began, the actor subscriptions its next actor takes
// over (subs). The session calls it from its handler, then stops itself
// and calls Gone.
func (r *Registry) Left(id string, subs []*actors.SubscribePID) {
	if len(subs) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.restoring[id]; ok && c.passivating {
		r.dormant[id] = &dormant{subs: subs}
	}
}

// Gone ends the passivation of session id, whose actor has parked or
// stored it (Left) and stopped: it gives up the lease and forgets the
// session, or, if something waited for it meanwhile, restores it on a
// worker and hands it what waited. The session calls it as it stops,
// once protoactor has taken its name out of the process table, so a next
// actor may take the name. Nothing waits for the actor to stop: a
// goroutine parked for each session that went quiet made a storm of
// passivations start a worker for nearly every one (issue 30, finding
// 19). With a store, giving the lease up is a write, which waits: it runs
// on a worker, not in the stopping session's handler, which must not
// block. A parked session has no lease, and Gone does its part at once.
func (r *Registry) Gone(id string) {
	if r.env.Store != nil {
		workers.Go(func() { r.gone(id) })
		return
	}
	r.gone(id)
}

// gone is Gone's part, and Close's once the session stopped: the lease
// given up first, so that a restore it starts takes the lease anew.
func (r *Registry) gone(id string) {
	r.release(id)
	r.mu.Lock()
	c, ok := r.restoring[id]
	if !ok || !c.passivating {
		r.mu.Unlock()
		return
	}
	if len(c.queue) == 0 && c.waiters == 0 {
		delete(r.restoring, id)
		close(c.done)
		r.mu.Unlock()
		return
	}
	c.user, c.leaving = "", nil // stopped: it counts again once admitted (claim)
	r.mu.Unlock()
	workers.Go(func() { r.finishRestore(id, c) })
}
