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
	// Left says the session has parked or stored itself as its
	// passivation, which Leave began, ends: its next actor takes over
	// subs. The session then stops, and tells Gone once it has.
	Left(id string, subs []*SubscribePID)
	// Gone ends the passivation: the session's actor, which Left, has
	// stopped, and its name is free for a next one. The session calls it
	// as it stops.
	Gone(id string)
	// Create starts a new session (a sub-agent), recording it in the
	// store first when there is one.
	Create(ctx context.Context, spec Spec) (*actor.PID, error)
	// Close stops a session (a sub-agent whose task is done) and gives up
	// its lease; it reports whether the session was loaded.
	Close(id string) bool
	// ChildRespec is how the configuration of a sub-agent is resolved
	// into its Spec; nil when the place cannot resolve one.
	ChildRespec() Respec
	// Get returns the actor of session id, restored (or woken) first if
	// it is not loaded.
	Get(ctx context.Context, id string) (*actor.PID, error)
}

// Respec resolves a stored session's configuration (spec.FromStored
// reads it from the store) into the Spec of its actor: its model, tools
// and plugins. A Place calls it to restore a session.
type Respec func(id string, cfg spec.Session) (Spec, error)
