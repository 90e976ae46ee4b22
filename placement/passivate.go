package placement

import (
	"context"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/actors"
)

// dormant is what a passivated session leaves to its next actor: the
// actor subscriptions it hands on.
type dormant struct {
	subs []*actors.SubscribePID
}

// passivate takes session id out of the registry and asks its actor to
// stop; see the comment at the top of this file. What Deliver and Get ask
// meanwhile waits, and restores the session once it has stopped.
func (r *Registry) Passivate(id string, pid *actor.PID, mark uint64) {
	r.mu.Lock()
	if cur, ok := r.pids[id]; !ok || !cur.Equal(pid) {
		r.mu.Unlock()
		return
	}
	_, user, _ := r.unregisterLocked(id)
	c := &restoring{done: make(chan struct{}), user: user, passivating: true}
	r.restoring[id] = c
	r.mu.Unlock()

	res, err := r.ask(pid, &actors.PassivateNow{Mark: mark}, r.answerWait)
	p, _ := res.(*actors.Passivated)
	if err != nil || p == nil || !p.OK {
		r.mu.Lock()
		c.pid = pid
		handover := r.settleQueueLocked(id, c)
		r.mu.Unlock()
		r.handOver(id, handover)
		if p == nil && handover == nil {
			// No answer in time (a session behind a long mailbox): it may
			// still say ok, and then wait to be stopped with no timer of
			// its own, loaded for good. It stays, so it judges afresh
			// whether it is quiet: passivated again, or its timer set.
			r.system.Root.Send(pid, &actors.PassivateDue{Mark: mark})
		}
		return
	}
	r.halt(pid)
	r.release(id)
	r.mu.Lock()
	if len(p.Subs) > 0 {
		r.dormant[id] = &dormant{subs: p.Subs}
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
