package actors

import (
	"fmt"
	"runtime/debug"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/plugins"
)

// recoverPanic turns a panic in a handler into an error event: the session
// survives with its committed history.
func (s *session) recoverPanic() {
	if r := recover(); r != nil {
		s.home.env.logger().Error("session handler panicked", zap.String("session", s.spec.ID), zap.Any("panic", r), zap.ByteString("stack", debug.Stack()))
		s.emit(&eventsv1.Error{Code: events.CodeInternal, Message: fmt.Sprintf("internal error: %v", r)})
	}
}

// newChain builds a session's plugin chain; nil when it has no plugins.
func newChain(env *Env, ps []plugins.Plugin) *plugins.Chain {
	if len(ps) == 0 {
		return nil
	}
	return plugins.NewChain(env.PluginBudget, ps...)
}

// startHook asks session_start; a plugin that aborts refuses the session,
// whose commands then fail with not_alive.
func (s *session) startHook() {
	if d := s.hook(&plugins.Event{Hook: plugins.SessionStart}).Stop; d != nil {
		l := s.hooks.keep()
		l.refused = fmt.Sprintf("plugin %s refused the session: %s", d.Plugin, orAborted(d.Action.Reason))
		s.emit(&eventsv1.Error{Code: events.CodeNotAlive, Message: l.refused})
	}
}

// shutdown cancels whatever is running and closes channel subscribers.
func (s *session) shutdown() {
	if s.load.passivation != nil {
		s.load.passivation.Stop()
	}
	if s.load.trim != nil {
		s.load.trim.Stop()
	}
	if s.run != nil {
		s.cancelRun(s.run)
	}
	// A summary request started with no run is the session's too: it
	// kept its connection open for the request's timeout after a close.
	s.cancelCompaction()
	// What the session holds is stored before it stops: the write under
	// way lands, then one more holds what changed since (a cancelled
	// run's commit among it). What they store is answered and told as
	// usual; what a failed write held, or what waits behind one, is
	// refused below.
	if s.land() && s.home.env.Store != nil {
		s.write()
		s.land()
	}
	// A reply still waiting for its write would never go, and a command
	// held while the store was down would never be tried: their callers
	// hear not_alive now instead of waiting out their timeout.
	waiting, held := s.p.j.Drop()
	for _, it := range waiting {
		if it.To != nil && it.Reply != nil {
			s.home.send(it.To, &eventsv1.Reply{Error: &eventsv1.ErrorInfo{Code: events.CodeNotAlive, Message: "the session stopped before its answer was stored"}})
		}
	}
	for _, h := range held {
		if h.Sender != nil {
			s.home.send(h.Sender, &eventsv1.Reply{Error: &eventsv1.ErrorInfo{Code: events.CodeNotAlive, Message: "the session stopped while its store was down"}})
		}
	}
	for _, c := range append([]events.Sink(nil), s.out.sinks...) {
		s.out.detach(c)
	}
}

// stopped reports whether the actor has stopped, or is past its shutdown
// as it stops: its mailbox then hands what it still holds, and what
// reaches it later, to tooLate.
func (s *session) stopped() bool { return s.load.stopped }

// tooLate answers a request that reached the session after it stopped
// with a dead letter, at once: its caller hears not_alive (or, over a
// cluster, looks for the session again) instead of waiting out its
// timeout. Other messages have no one to tell.
func (s *session) tooLate(msg any) {
	if env, ok := msg.(*actor.MessageEnvelope); ok && env.Sender != nil {
		s.home.root().Send(env.Sender, &actor.DeadLetterResponse{Target: s.home.self})
	}
}

// lifecycle handles the actor's start and stop.
func (s *session) lifecycle(ctx actor.Context) bool {
	switch ctx.Message().(type) {
	case *actor.Started:
		s.home.self = ctx.Self()
		s.home.env.observer().SessionStarted()
		s.notes.updated = s.stamp()
		if r := s.spec.Restore; r != nil {
			s.p.kept, s.spec.Restore = &r.Volatile, nil
			if r.Volatile.Unstarted {
				s.startUnstarted(r)
			} else {
				s.recover(r)
			}
		} else {
			s.emit(sessionCreated(s.spec.Model.Name))
			s.startFork()
		}
		s.startHook()
		s.passivateLater()
	case *actor.Stopping:
		s.hook(&plugins.Event{Hook: plugins.SessionEnd})
		s.shutdown()
		// From here on nothing is written (flush): what shutdown did not
		// land was refused. A session has no children, so its Stopped
		// follows within the same Stop.
		s.load.stopped = true
	case *actor.Stopped:
		// No session restarts (resume, session.go): it stops once.
		s.home.env.observer().SessionStopped(s.machine.Current())
		s.leaveRun()
		if s.load.left {
			s.home.place.Gone(s.spec.ID)
		}
	default:
		return false
	}
	return true
}
