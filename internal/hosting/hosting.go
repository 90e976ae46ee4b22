// Package hosting is what a tack.Runtime lends the one package that
// serves its sessions to other actor systems (server/remote, `tack
// node`) beyond the public API: the actor system the sessions run in,
// and delivery to a session by id of a message with its sender, which
// restores a stored session or waits out its passivation first. Nothing
// of it is for programs embedding Tack: delivery by id skips what the
// public API checks (grants, limits), and a remote caller's messages are
// the node's to pass on.
//
// Package tack registers how to get a runtime's Host when it is loaded,
// so whoever can name a *tack.Runtime can call Of.
package hosting

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/events"
)

// Host is what a runtime lends server/remote.
type Host interface {
	// System is the actor system the runtime's sessions run in: its own,
	// or the one given with tack.WithActorSystem.
	System() *actor.ActorSystem
	// Deliver hands msg — an events/v1 command the session actor takes,
	// or an *actor.MessageEnvelope naming the sender its Reply goes to —
	// to session id, in the order of the calls: at once when the session
	// is loaded, else once it is restored (a stored session) or its
	// passivation is over. A request that cannot reach its session is
	// answered with a Reply whose error says why (invalid_session for an
	// unknown id). It never blocks.
	Deliver(id string, msg any)
	// Subscribe delivers to session id, from sender (its Reply goes
	// there; nil for none), the subscription of the actor pid to the
	// session's events: those after since that f lets through, then the
	// live ones. Subscribing the same PID again replaces its filter and
	// keeps one subscription, which never gets an event twice. The
	// session watches pid and drops it when it stops or its node goes
	// away. For a user (not ""), a session that is not theirs answers
	// invalid_session and subscribes nothing.
	Subscribe(id, user string, sender, pid *actor.PID, since uint64, f events.Filter)
	// Unsubscribe delivers to session id, from sender, the end of the
	// subscription of the actor pid.
	Unsubscribe(id string, sender, pid *actor.PID)
}

// of is what Register was given.
var of func(rt any) Host

// Register is package tack's, when it is loaded: f returns the Host of a
// *tack.Runtime.
func Register(f func(rt any) Host) { of = f }

// Of returns the Host of rt, a *tack.Runtime.
func Of(rt any) Host { return of(rt) }
