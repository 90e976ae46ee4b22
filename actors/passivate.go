package actors

import (
	"context"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/fsm"
)

// Passivation: with a store and Env.PassivateAfter set, a session that
// has been quiet that long — idle, no run (so nothing waits for an
// approval or an answer), nothing queued, no compaction, every write
// acknowledged, no tool left running, and no in-process subscriber such as
// an SSE stream or a channel — is stopped and its lease given up; what it
// was is in the store. Its next command, through Registry.Get or
// Registry.Deliver, restores it as after a restart. Actor subscribers
// (SubscribePID, remote ones included) are not a reason to stay: the
// registry keeps them and attaches them to the restored session, from the
// last event they were sent, so they learn of the gap in numbering with
// events_lost and then get the restored session's events.
//
// Stopping is agreed in two steps so that no command is lost: the session
// asks the registry, which takes it out of its map (what Deliver gets from
// then on waits) and then asks the session again; only a session that saw
// nothing in between stops. A command sent straight to a stopped
// session's PID (an old handle) reaches no one, and its sender gets a
// dead-letter answer; Deliver and Get never hand out such a PID.

// lull is what a session keeps to learn that it has been quiet: the
// messages it took (passivation's own aside), its pending passivation
// timer, and its pending idle trim (run.go).
type lull struct {
	activity    uint64
	passivation *time.Timer
	trim        *time.Timer
}

// passivateDue says a session may have been quiet for PassivateAfter;
// mark is its activity count when the timer was set.
type passivateDue struct{ mark uint64 }

// passivateNow asks a session the registry took out of its map to stop,
// if it is still quiet since mark.
type passivateNow struct{ mark uint64 }

// passivated answers passivateNow: ok when the session stops, with the
// actor subscriptions its next actor takes over.
type passivated struct {
	ok   bool
	subs []*SubscribePID
}

// dormant is what a passivated session leaves to its next actor.
type dormant struct {
	subs []*SubscribePID
}

// counts reports whether msg is activity that keeps a session loaded (a
// listing's summary is not).
func counts(msg any) bool {
	switch msg.(type) {
	case *passivateDue, *passivateNow, *GetSummary:
		return false
	}
	return true
}

// passivateLater sets the passivation timer: when it fires, the session
// stops if nothing happened since.
func (s *session) passivateLater() {
	d := s.env.PassivateAfter
	if d <= 0 || s.env.Store == nil || s.home.reg == nil {
		return
	}
	if s.lull.passivation != nil {
		s.lull.passivation.Stop()
	}
	mark, home := s.lull.activity, s.home
	s.lull.passivation = time.AfterFunc(d, func() { home.post(&passivateDue{mark: mark}) })
}

// passivateDue asks the registry to passivate the session if it stayed
// quiet since the timer was set, or sets the timer again.
func (s *session) passivateDue(m *passivateDue) {
	if m.mark == s.lull.activity && s.quiet() {
		go s.home.reg.passivate(s.spec.ID, s.home.self, m.mark)
		return
	}
	s.passivateLater()
}

// passivateNow stops the session if nothing happened since the timer's
// mark; otherwise it stays and the timer starts again.
func (s *session) passivateNow(ctx actor.Context, m *passivateNow) {
	if m.mark != s.lull.activity || !s.quiet() {
		ctx.Respond(&passivated{})
		s.passivateLater()
		return
	}
	p := &passivated{ok: true}
	for _, k := range s.out.sinks {
		if ps, ok := k.(*pidSink); ok {
			p.subs = append(p.subs, &SubscribePID{PID: ps.pid, Since: s.out.log.LastSeq(), Filter: ps.filter})
		}
	}
	ctx.Respond(p)
}

// quiet reports whether the session may be passivated.
func (s *session) quiet() bool {
	if s.run != nil || s.machine.Current() != fsm.Idle || !s.q.Empty() ||
		s.compaction.running != nil || s.compaction.wanted || s.load.abandoned.Load() > 0 {
		return false
	}
	if !s.p.j.Settled() {
		return false
	}
	for _, k := range s.out.sinks {
		if _, ok := k.(*pidSink); !ok {
			return false
		}
	}
	return true
}

// passivate takes session id out of the registry and asks its actor to
// stop; see the comment at the top of this file. What Deliver and Get ask
// meanwhile waits, and restores the session once it has stopped.
func (r *Registry) passivate(id string, pid *actor.PID, mark uint64) {
	r.mu.Lock()
	if cur, ok := r.pids[id]; !ok || !cur.Equal(pid) {
		r.mu.Unlock()
		return
	}
	_, user, _ := r.unregisterLocked(id)
	c := &restoring{done: make(chan struct{}), user: user, passivating: true}
	r.restoring[id] = c
	r.mu.Unlock()

	res, err := r.system.Root.RequestFuture(pid, &passivateNow{mark: mark}, r.answerWait).Result()
	p, _ := res.(*passivated)
	if err != nil || p == nil || !p.ok {
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
			r.system.Root.Send(pid, &passivateDue{mark: mark})
		}
		return
	}
	_ = r.system.Root.StopFuture(pid).Wait()
	r.release(id)
	r.mu.Lock()
	if len(p.subs) > 0 {
		r.dormant[id] = &dormant{subs: p.subs}
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
