package remote

import (
	"context"
	"strings"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/server/command"
)

// kindProps are the props of SessionKind: protoactor's activator spawns
// them under "Remote$<name>", and the spawn answers the PID of session
// <name> instead of starting an actor — an existing session (restored if
// stored), else a new one on the node's default model. A failure answers
// the activator's ERROR status (the caller sees no reason: CreateSession
// at the gateway tells more).
func (n *Node) kindProps() *actor.Props {
	return actor.PropsFromFunc(func(actor.Context) {}, actor.WithSpawnFunc(
		func(_ *actor.ActorSystem, id string, _ *actor.Props, _ actor.SpawnerContext) (*actor.PID, error) {
			name := id[strings.LastIndex(id, "Remote$")+len("Remote$"):]
			if _, err := n.rt.Session(name); err == nil {
				return n.route(name), nil
			}
			if _, err := command.RunMessage(context.Background(), n.env(), "", &eventsv1.CreateSession{Session: name}); err != nil {
				n.log.Sugar().Infof("spawn of %s %q failed: %v", SessionKind, name, err)
				return nil, &remote.ActivatorError{Code: remote.ResponseStatusCodeERROR.ToInt32(), DoNotPanic: true}
			}
			return n.route(name), nil
		}))
}
