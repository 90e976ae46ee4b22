package actors

import (
	"context"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/spec"
)

// Place is where sessions run: what spawns their actors, finds them by
// id, restores and passivates them (package placement's Registry). A
// session asks its place to passivate it, and to start and stop its
// sub-agents; a session spawned with no place never passivates and starts
// no sub-agents.
type Place interface {
	// Leave takes session id, whose actor is pid, out of the place as it
	// passivates (passivate.go): what is sent to it by id from then on
	// waits. It reports false when pid is no longer the session's actor.
	Leave(id string, pid *actor.PID) bool
	// Stay ends the passivation Leave began with the session loaded: it
	// is in the place again, and what waited is handed to it.
	Stay(id string, pid *actor.PID)
	// Left ends the passivation Leave began with the session parked or
	// stored: the place stops the actor pid, and its next actor takes
	// over subs.
	Left(id string, pid *actor.PID, subs []*SubscribePID)
	// Create starts a new session (a sub-agent), recording it in the
	// store first when there is one.
	Create(ctx context.Context, spec Spec) (*actor.PID, error)
	// Close stops a session (a sub-agent whose task is done) and gives up
	// its lease; it reports whether the session was loaded.
	Close(id string) bool
	// ChildRespec is how the configuration of a sub-agent is resolved
	// into its Spec; nil when the place cannot resolve one.
	ChildRespec() Respec
}

// Respec resolves a stored session's configuration (spec.FromStored
// reads it from the store) into the Spec of its actor: its model, tools
// and plugins. A Place calls it to restore a session.
type Respec func(id string, cfg spec.Session) (Spec, error)
