package actors

import (
	"go.uber.org/zap"

	"github.com/tack-run/tack/fsm"
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
// takes itself out of its place (Place.Leave: what is sent to it by id
// from then on waits there) and posts itself PassivateNow, which comes
// after whatever was sent to it before; only a session that saw nothing
// in between parks, tells its place (Place.Left) and stops itself, and
// one that saw something goes back into its place, which hands it what
// waited (Place.Stay). Once stopped, its name free for a next actor, it
// tells its place (Place.Gone), which then restores it if a command came
// for it meanwhile. It all happens on the session's own mailbox and the
// place's lock: no goroutine and no question waits between the steps,
// so a process that parks many sessions at once keeps up with them
// (issue 30, findings 16 and 19). A command sent straight to a stopped session's
// PID (an old handle) reaches no one, and its sender gets a dead-letter
// answer; Deliver and Get never hand out such a PID.

// PassivateDue says a session may have been quiet for PassivateAfter;
// Mark is its activity count when the timer was set. The session sends it
// to itself.
type PassivateDue struct{ Mark uint64 }

// PassivateNow is the second step: the session, out of its place since
// it took PassivateDue, parks and stops if it is still quiet since Mark.
// The session sends it to itself.
type PassivateNow struct{ Mark uint64 }

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
	if !s.home.env.Passivates() || s.home.place == nil {
		return
	}
	if s.load.passivation == nil {
		home := s.home
		s.load.passivation = s.home.env.passivateLine().Entry(func(mark uint64) { home.post(&PassivateDue{Mark: mark}) })
	}
	s.load.passivation.Start(s.load.activity)
}

// passivateDue takes the session out of its place if it stayed quiet
// since the timer was set, and asks itself to stop behind whatever was
// sent to it before; or it sets the timer again, also when its place did
// not let it go (a restored session is registered only once it has
// settled, which can take longer than a short quiet period).
func (s *session) passivateDue(m *PassivateDue) {
	if m.Mark == s.load.activity && s.quiet() && s.home.place.Leave(s.spec.ID, s.home.self) {
		s.home.post(&PassivateNow{Mark: m.Mark})
		return
	}
	s.passivateLater()
}

// passivateNow parks the session and has its place stop it if nothing
// happened since the timer's mark; otherwise it goes back into its place
// and the timer starts again.
func (s *session) passivateNow(m *PassivateNow) {
	if m.Mark != s.load.activity || !s.quiet() {
		s.home.place.Stay(s.spec.ID, s.home.self)
		s.passivateLater()
		return
	}
	if err := s.park(); err != nil {
		s.home.env.logger().Warn("parking a quiet session failed: it stays loaded", zap.String("session", s.spec.ID), zap.Error(err))
		s.home.place.Stay(s.spec.ID, s.home.self)
		s.passivateLater()
		return
	}
	var subs []*SubscribePID
	for _, k := range s.out.sinks {
		if ps, ok := k.(*pidSink); ok {
			subs = append(subs, &SubscribePID{PID: ps.pid, Since: s.out.log.LastSeq(), Filter: ps.filter})
		}
	}
	s.home.place.Left(s.spec.ID, subs)
	s.load.left = true
	s.home.root().Stop(s.home.self)
}

// quiet reports whether the session may be passivated. One whose model
// would not be had again (Spec.StaysLoaded) never is; its timer still
// runs, for a switch to a model that would.
func (s *session) quiet() bool {
	if s.spec.StaysLoaded || s.run != nil || s.machine.Current() != fsm.Idle || !s.q.Empty() ||
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
