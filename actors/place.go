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
	// Passivate takes session id, whose actor is pid, out of the place
	// and asks it to stop (PassivateNow) if it stayed quiet since mark.
	// The session calls it on a goroutine of its own.
	Passivate(id string, pid *actor.PID, mark uint64)
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
