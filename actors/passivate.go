package actors

import (
	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"

	"github.com/tack-run/tack/fsm"
	"github.com/tack-run/tack/internal/workers"
)

// Passivation: with a store (or a Park, park.go) and Env.PassivateAfter
// set, a session that has been quiet that long — idle, no run (so nothing waits for an
// approval or an answer), nothing queued, no compaction, every write
// acknowledged, no tool left running, and no in-process subscriber such as
// an SSE stream or a channel — is stopped and its lease given up; what it
// was is in the store. Its next command, through its Place (placement.Registry's Get or
// Deliver), restores it as after a restart. Actor subscribers
// (SubscribePID, remote ones included) are not a reason to stay: the
// registry keeps them and attaches them to the restored session, from the
// last event they were sent, so they learn of the gap in numbering with
// events_lost and then get the restored session's events. (A parked
// session is in the Park and goes on with no gap: park.go.)
//
// Stopping is agreed in two steps so that no command is lost: the session
// asks the registry, which takes it out of its map (what Deliver gets from
// then on waits) and then asks the session again; only a session that saw
// nothing in between stops. A command sent straight to a stopped
// session's PID (an old handle) reaches no one, and its sender gets a
// dead-letter answer; Deliver and Get never hand out such a PID.

// PassivateDue says a session may have been quiet for PassivateAfter;
// Mark is its activity count when the timer was set. The session sends it
// to itself; its Place sends it again when the session did not answer
// PassivateNow in time.
type PassivateDue struct{ Mark uint64 }

// PassivateNow asks a session its Place took out of its map to stop, if
// it is still quiet since Mark. The session answers Passivated.
type PassivateNow struct{ Mark uint64 }

// Passivated answers PassivateNow: OK when the session stops, with the
// actor subscriptions its next actor takes over (the Place sends them to
// it before anything else).
type Passivated struct {
	OK   bool
	Subs []*SubscribePID
}

// counts reports whether msg is activity that keeps a session loaded (a
// listing's summary is not).
func counts(msg any) bool {
	switch msg.(type) {
	case *PassivateDue, *PassivateNow, *GetSummary:
		return false
	}
	return true
}

// passivateLater sets the passivation timer: when it fires, the session
// stops if nothing happened since.
func (s *session) passivateLater() {
	if s.home.env.PassivateAfter <= 0 || s.home.env.Unloaded() == nil || s.home.place == nil {
		return
	}
	if s.load.passivation == nil {
		home := s.home
		s.load.passivation = s.home.env.passivateLine().Entry(func(mark uint64) { home.post(&PassivateDue{Mark: mark}) })
	}
	s.load.passivation.Start(s.load.activity)
}

// passivateDue asks the registry to passivate the session if it stayed
// quiet since the timer was set, or sets the timer again.
func (s *session) passivateDue(m *PassivateDue) {
	if m.Mark == s.load.activity && s.quiet() {
		// On a worker, whose stack has grown already, as a restore's is.
		place, id, self, mark := s.home.place, s.spec.ID, s.home.self, m.Mark
		workers.Go(func() { place.Passivate(id, self, mark) })
		return
	}
	s.passivateLater()
}

// passivateNow stops the session if nothing happened since the timer's
// mark; otherwise it stays and the timer starts again.
func (s *session) passivateNow(ctx actor.Context, m *PassivateNow) {
	if m.Mark != s.load.activity || !s.quiet() {
		ctx.Respond(&Passivated{})
		s.passivateLater()
		return
	}
	if err := s.park(); err != nil {
		s.home.env.logger().Warn("parking a quiet session failed: it stays loaded", zap.String("session", s.spec.ID), zap.Error(err))
		ctx.Respond(&Passivated{})
		s.passivateLater()
		return
	}
	p := &Passivated{OK: true}
	for _, k := range s.out.sinks {
		if ps, ok := k.(*pidSink); ok {
			p.Subs = append(p.Subs, &SubscribePID{PID: ps.pid, Since: s.out.log.LastSeq(), Filter: ps.filter})
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
